"""Entries sent to a worker process as columns: the fields of their envelopes a worker
reads (line, offset, length, type, id, role) and the lines of those held in memory, so
that a worker reads their other lines from the file by offset, each checked to be its
entry's (`StoredEntry.checked`), and never gets the session.

Owns `EntryColumns` (a few MB for a hundred thousand entries, where their records, or
pickled StoredEntry objects, take tens) and rebuilding entries from them in the
worker. What a worker does with the entries is its caller's (breakdown_spread.py:
the figures of `stats`; export/replies.py: an export header's usage).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import attrgetter, is_not
from pathlib import Path

from jsonl_session.format.entry import StoredEntry
from jsonl_session.storage.lines import LineSource


@dataclass(frozen=True, slots=True)
class EntryColumns:
    """Entries of the session file at ``path``, as columns; ``inline``: the line (and
    whether a migration wrote it) of those held in memory, by index."""

    path: str
    lines: bytes  # array("q") of line numbers
    offsets: bytes  # array("q")
    lengths: bytes  # array("q")
    types: list[str]
    ids: list[str]
    roles: list[str | None]
    inline: dict[int, tuple[bytes, bool]]

    def entries(self) -> list[StoredEntry]:
        """The entries again (in a worker), their lines not in memory read from the
        file as they are asked for. Their parents and times are not sent: left empty."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        source = LineSource(Path(self.path), fd)  # closes the file when let go
        lines, offsets, lengths = (_ints(c) for c in (self.lines, self.offsets, self.lengths))
        out = []
        columns = zip(lines, offsets, lengths, self.types, self.ids, self.roles, strict=True)
        for index, (line, offset, length, type_, entry_id, role) in enumerate(columns):
            kept = self.inline.get(index)
            out.append(
                StoredEntry(
                    line=line,
                    offset=offset,
                    type=type_,
                    id=entry_id,
                    parent_id=None,
                    timestamp="",
                    role=role,
                    migrated=kept is not None and kept[1],
                    length=length,
                    inline=kept[0] if kept is not None else None,
                    source=source,
                )
            )
        return out


def entry_columns(path: str, entries: Sequence[StoredEntry]) -> EntryColumns:
    """``entries`` (whose lines not in memory are in the file at ``path``) as columns."""
    return EntryColumns(
        path=path,
        lines=array("q", map(_LINE, entries)).tobytes(),
        offsets=array("q", map(_OFFSET, entries)).tobytes(),
        lengths=array("q", map(_LENGTH, entries)).tobytes(),
        types=list(map(_TYPE, entries)),
        ids=list(map(_ID, entries)),
        roles=list(map(_ROLE, entries)),
        inline=_inline(entries),
    )


def _inline(entries: Sequence[StoredEntry]) -> dict[int, tuple[bytes, bool]]:
    """The line (and whether a migration wrote it) of each entry held in memory, by
    index; the few of them found with no call per entry (100,000s of them)."""
    held = compress(count(), map(is_not, map(_INLINE, entries), repeat(None)))
    out: dict[int, tuple[bytes, bool]] = {}
    for index in held:
        entry = entries[index]
        assert entry.inline is not None
        out[index] = (entry.inline, entry.migrated)
    return out


def _ints(data: bytes) -> array[int]:
    out = array("q")
    out.frombytes(data)
    return out


_LINE, _OFFSET, _LENGTH = attrgetter("line"), attrgetter("offset"), attrgetter("length")
_TYPE, _ID, _ROLE = attrgetter("type"), attrgetter("id"), attrgetter("role")
_INLINE = attrgetter("inline")
