"""`Session.token_breakdown`'s work: which way a session's stored figures are had
(read back from the cache, or measured, on every core for a long session) and how
the figures of its active path and of what the model sees join them.

Owns the order of that work: the last entries handed to the workers before every
entry is built (breakdown_cache.py's `head_start_unless_kept`), the model's side made
while they measure. What is counted is breakdown.py's; the record is
breakdown_cache.py's; the workers are breakdown_spread.py's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from jsonl_session.breakdown import (
    Breakdown,
    body_entries,
    breakdown,
    model_figures,
    on_path,
)
from jsonl_session.breakdown_cache import head_start_unless_kept, kept_record, stored_figures
from jsonl_session.breakdown_spread import measure_spread
from jsonl_session.context import EMPTY_LEAF, Projection, project_path
from jsonl_session.format.entry import StoredEntry
from jsonl_session.storage.cache import CacheOption
from jsonl_session.tree import TreeIndex


class Measured(Protocol):
    """What of a `Session` its breakdown reads."""

    @property
    def path(self) -> Path: ...

    @property
    def leaf_id(self) -> str | None: ...

    def branch_path(self, leaf: str | None = None) -> list[StoredEntry]: ...

    def projection(self, leaf_id: str | None = None, *, pruning: bool = True) -> Projection: ...


def session_breakdown(
    session: Measured,
    index: TreeIndex,
    opened: bool,
    cache: CacheOption,
    leaf_id: str | None,
    largest: int,
    workers: int | None,
) -> Breakdown:
    """`Session.token_breakdown` of ``session``, whose entries ``index`` holds;
    ``opened``: as read from its file (its figures may be in ``cache``, its record)."""
    target = session.leaf_id if leaf_id is None else leaf_id
    kept = kept_record(session.path, cache) if opened else None  # (read once)
    # the last entries to the workers, if they are to measure, before all are built
    head = (
        head_start_unless_kept(session.path, kept, index.from_the_end(), largest, workers)
        if opened and workers != 1
        else None
    )
    try:
        entries = index.in_file_order()
        path = session.branch_path(target) if target else []  # (a leaf not there: said now)
        along: list[Breakdown] = []
        path_bodies: list[bytes] = []

        def model_side() -> None:
            # the projection is of that same path: walked once (`projection` walks it
            # again). Made while workers measure, if they do, else after: a huge body
            # is then decoded for one at a time
            use_path = bool(target) and target != EMPTY_LEAF
            projection = project_path(path) if use_path else session.projection(leaf_id)
            along.append(model_figures(path, projection))
            path_bodies.append(on_path(entries, path))

        if opened:  # its cached figures, if they stand
            stored = stored_figures(
                session.path, cache, entries, largest, workers, model_side, head, kept
            )
        else:
            stored = measure_spread(body_entries(entries), largest, workers, model_side)
        return breakdown(len(entries), path_bodies[0], along[0], stored)
    finally:
        if head is not None:
            head.release()
        if kept is not None:
            kept.close()
