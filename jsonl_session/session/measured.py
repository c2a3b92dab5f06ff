"""Where a session file's tokens go, from its path: the workers that will measure a
long session are started before it is opened, so that they start while it is read.

Owns `token_breakdown_of` only; the figures are `Session.token_breakdown`'s
(breakdown.py), measuring on every core is breakdown_spread.py's, the pool
processes.py's.
"""

from __future__ import annotations

from pathlib import Path

from jsonl_session.breakdown import Breakdown
from jsonl_session.breakdown_spread import warm_spread
from jsonl_session.processes import drop_warm_pool
from jsonl_session.session.facade import Session
from jsonl_session.storage.cache import CacheOption


def token_breakdown_of(
    path: Path | str,
    leaf: str | None = None,
    *,
    largest: int = 10,
    workers: int | None = 1,
    cache: CacheOption = None,
) -> Breakdown:
    """`Session.token_breakdown` of the session file at ``path`` (opened with
    ``cache`` as `Session.open` takes it), at ``leaf`` (an entry id or a unique prefix
    of one; None: the active leaf). With ``workers`` other than 1, a session long
    enough to spread has its workers started first, while it is opened; they are let
    go unused when the figures come from the cache. Spawned workers import
    ``__main__`` again: a script asking for them keeps its work under
    ``if __name__ == "__main__":``."""
    warm = warm_spread(path, workers) if workers != 1 else None
    try:
        session = Session.open(path, cache=cache)
        leaf_id = session.resolve_id(leaf) if leaf is not None else None
        return session.token_breakdown(leaf_id, largest=largest, workers=workers)
    finally:
        if warm is not None:  # (None would let go of another caller's waiting pool)
            drop_warm_pool(warm)
