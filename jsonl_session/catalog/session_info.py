"""What a listing gives for each session file: `SessionInfo`, its fields and how they
read as a dict (``to_dict``, what ``list --json`` prints).

Owns the object and its conversions (a Path and datetimes made when asked for, and
taken where the text and milliseconds go). What each field holds, by pi's listing
rules, is listing.py's.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.catalog.listing_facts import EPOCH

_moment = datetime.fromtimestamp

_PLAIN_MOMENTS = frozenset({float, int, type(None)})  # classes of times kept as they are


class SessionInfo(msgspec.Struct, frozen=True, gc=False):
    """One session file described (see listing.py's docstring for each field's rule).

    A listing makes one for each of up to hundreds of thousands of files, so it holds
    nothing the cyclic garbage collector tracks, and is not tracked itself: a frozen
    msgspec struct with ``gc=False``, not a dataclass, with the file's path as text
    (``path_text``, what ``str(path)`` gives) and its times as milliseconds since
    the epoch (``created_ms``, ``modified_ms``), the Path and the datetimes made when
    ``path``, ``created`` and ``modified`` are asked for. The collector's passes over
    100,000 dataclasses, and over a Path and its list of parts for each, took a third
    of a warm listing, making the Paths a tenth, the datetimes another tenth. A time
    is kept only when a datetime holds it (listing.py's `_held`). Change a field with
    ``msgspec.structs.replace``; a Path or datetimes given where the text and the
    milliseconds go are kept as those."""

    path_text: str
    id: str | None
    cwd: str
    name: str | None
    parent_session: str | None
    created_ms: float | None
    modified_ms: float
    message_count: int
    first_message: str
    problem: str | None = None  # why the file could not be read as a session
    agent: str = "pi"  # who wrote the file: pi, claude or codex (storage/foreign.py)

    def __post_init__(self) -> None:
        # A listing's own (text and numbers) pass at once, without the loop below
        if (
            self.path_text.__class__ is str
            and self.modified_ms.__class__ in _PLAIN_MOMENTS
            and self.created_ms.__class__ in _PLAIN_MOMENTS
        ):
            return
        if self.path_text.__class__ is not str:  # a Path given where the text goes
            msgspec.structs.force_setattr(self, "path_text", os.fspath(self.path_text))
        for name in ("created_ms", "modified_ms"):
            moment = getattr(self, name)
            if isinstance(moment, datetime):  # a datetime given where its milliseconds go
                msgspec.structs.force_setattr(self, name, _ms_of(moment))

    @property
    def path(self) -> Path:
        """The session file."""
        return Path(self.path_text)

    @property
    def created(self) -> datetime | None:
        """When the header says the session began, if it says."""
        return None if self.created_ms is None else _moment(self.created_ms / 1000, UTC)

    @property
    def modified(self) -> datetime:
        """When the session last changed, by pi's rules (see listing.py's docstring)."""
        return _moment(self.modified_ms / 1000, UTC)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path_text,
            "id": self.id,
            "cwd": self.cwd,
            "name": self.name,
            "parentSession": self.parent_session,
            "created": _iso(self.created),
            "modified": _iso(self.modified),
            "messageCount": self.message_count,
            "firstMessage": self.first_message,
            "problem": self.problem,
            "agent": self.agent,
        }


def _ms_of(moment: datetime) -> float:
    """``moment``'s milliseconds since the epoch, exact (``timestamp() * 1000`` is not:
    2038-03-31T23:43:03.951 gives ...951.0002); a naive one is local time."""
    aware = moment if moment.tzinfo is not None else moment.astimezone()
    return (aware - EPOCH) / _ONE_MS


_ONE_MS = timedelta(milliseconds=1)


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
