"""Index-cache table records made from entries: a record of entries just read, one
grown by the entries appended after a table, and the blocks a kept record needs.

Owns how a record is built (table.py says what it holds): whole columns at a time,
each parent taken to be the entry before and only the others looked up; a grown
record re-encodes only the blocks that change while the entries stay clean; a table
over entries just read (`fresh_table`) gets its blocks only when its record is to be
kept (`kept_record`). Answering from a record, and decoding its blocks, is table.py's;
whether a record still describes its file is cache.py's.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Sequence
from itertools import compress
from operator import attrgetter, ne

import msgspec

from jsonl_session.format.entry import StoredEntry
from jsonl_session.storage.lines import LineSource
from jsonl_session.storage.table import (
    MISSING_PARENT,
    NO_PARENT,
    SEPARATOR,
    EntryTable,
    TableRecord,
    no_source,
    utf8,
)

BLOCK = 1024  # entries per msgpack block: the unit decoded on first use
_NOTED_TYPES = frozenset(("label", "session_info"))
_ID, _PARENT_ID = attrgetter("id"), attrgetter("parent_id")
_TYPE, _ROLE = attrgetter("type"), attrgetter("role")

_encoder = msgspec.msgpack.Encoder(enc_hook=no_source)


def table_record(entries: Sequence[StoredEntry], base: EntryTable | None = None) -> TableRecord:
    """The record of ``base``'s entries followed by ``entries``. Only the blocks that
    change are encoded again when ``base`` is clean and ``entries`` keep it so."""
    if base is None or not base.clean or base.record.block != BLOCK:
        everything = [*(base.materialise() if base is not None else ()), *entries]
        return _fresh(everything)
    record = base.record
    count = record.count
    new_ids: dict[str, int] = {}
    parents = array("i")
    missing: dict[str, None] = {}  # in order, and quick to ask
    clean = True
    for offset, entry in enumerate(entries):
        own = count + offset
        if (
            entry.id in new_ids
            or entry.id in base.missing
            or entry.id in missing
            or base.position(entry.id) is not None
        ):
            clean = False
            break
        new_ids[entry.id] = own
        code = _parent_code(entry.parent_id, new_ids, base)
        if code >= own:
            clean = False
            break
        if code == MISSING_PARENT:
            missing[str(entry.parent_id)] = None
        parents.append(code)
    if not clean:
        return _fresh([*base.materialise(), *entries])
    full, rest = divmod(count, BLOCK)
    tail = [base[i] for i in range(full * BLOCK, count)] if rest else []
    return TableRecord(
        count=count + len(entries),
        block=BLOCK,
        blocks=[*record.blocks[:full], *_blocks([*tail, *entries])],
        noted=[*record.noted, *_noted(entries)],
        has_assistant=record.has_assistant or _any_assistant(entries),
        clean=True,
        ids=record.ids + _id_bytes([entry.id for entry in entries], lead=False),
        parents=record.parents + _positions_bytes(parents),
        missing=[*record.missing, *missing],
        starts=[*record.starts[:full], *_starts([*tail, *entries])] if record.starts else [],
    )


def _fresh(entries: list[StoredEntry]) -> TableRecord:
    return fresh_columns(entries)[0]


def fresh_table(entries: list[StoredEntry], source: LineSource | None) -> EntryTable:
    """A table over ``entries`` (in file order, just read), answering from them with
    no decoding. Its record lacks the blocks a cache record keeps: `kept_record`."""
    record, positions = fresh_columns(entries, blocks=False)
    return EntryTable(record, source, entries, positions)


def kept_record(table: EntryTable) -> TableRecord:
    """The record of ``table`` as the cache keeps it: with every block encoded.
    Raises what msgpack raises for a value it cannot hold (a lone surrogate...)."""
    if table.record.blocks or not table.record.count:
        return table.record
    entries = table.materialise()
    return msgspec.structs.replace(table.record, blocks=_blocks(entries), starts=_starts(entries))


def fresh_columns(
    entries: list[StoredEntry], *, blocks: bool = True
) -> tuple[TableRecord, dict[str, int] | None]:
    """The record of ``entries``, and the position of each id if it was counted.

    Whole columns at a time (map, set, compress over them): no Python loop per
    entry. In a session nearly every entry's parent is the entry before it, so every
    parent is first taken to be that one, and only the others are looked up: a few
    entries back, and else in a dict of every id, made once."""
    ids = list(map(_ID, entries))
    count = len(ids)
    known = set(ids)
    clean = len(known) == count
    parents = array("i")
    missing: list[str] = []
    positions: dict[str, int] | None = None
    if clean:
        parent_ids = list(map(_PARENT_ID, entries))
        parents.extend(range(-1, count - 1))  # NO_PARENT for the first: checked below
        for own in compress(range(count), map(ne, parent_ids, [None, *ids[:-1]])):
            parent = parent_ids[own]
            if parent is None:
                code = NO_PARENT
            elif parent not in known:
                code = MISSING_PARENT
                missing.append(parent)
            else:
                near = _recent(ids, parent, own)
                if near is None:
                    if positions is None:
                        positions = dict(zip(ids, range(count), strict=True))
                    near = positions[parent]
                code = near
                if code >= own:
                    clean = False
                    break
            parents[own] = code
    if not clean:
        positions, parents, missing = None, array("i"), []
    record = TableRecord(
        count=count,
        block=BLOCK,
        blocks=_blocks(entries) if blocks else [],
        starts=_starts(entries) if blocks else [],
        noted=_noted(entries),
        has_assistant=_any_assistant(entries),
        clean=clean,
        ids=_id_bytes(ids, lead=True) if clean else b"",
        parents=_positions_bytes(parents),
        missing=missing,
    )
    return record, positions


_RECENT = 64  # entries looked back through for a parent before asking a dict


def _recent(ids: list[str], wanted: str, own: int) -> int | None:
    """Where ``wanted`` is among the few ids just before ``own``, or None."""
    for position in range(own - 1, max(-1, own - 1 - _RECENT), -1):
        if ids[position] == wanted:
            return position
    return None


def _parent_code(parent_id: str | None, known: dict[str, int], base: EntryTable | None) -> int:
    if parent_id is None:
        return NO_PARENT
    found = known.get(parent_id)
    if found is None and base is not None:
        found = base.position(parent_id)
    return MISSING_PARENT if found is None else found


def _blocks(entries: Sequence[StoredEntry]) -> list[bytes]:
    return [_encoder.encode(entries[i : i + BLOCK]) for i in range(0, len(entries), BLOCK)]


def _starts(entries: Sequence[StoredEntry]) -> list[int]:
    return [entry.offset for entry in entries[::BLOCK]]


def _noted(entries: Sequence[StoredEntry]) -> list[StoredEntry]:
    return list(compress(entries, map(_NOTED_TYPES.__contains__, map(_TYPE, entries))))


def _any_assistant(entries: Iterable[StoredEntry]) -> bool:
    return "assistant" in map(_ROLE, entries)


def _id_bytes(ids: list[str], *, lead: bool) -> bytes:
    """The ids, each followed by SEPARATOR (and one before the first with ``lead``)."""
    joined = "\n".join(ids)
    if joined.count("\n") == len(ids) - 1:  # no id holds a newline: join, then swap
        text = utf8(joined).replace(b"\n", SEPARATOR)
    else:
        text = SEPARATOR.join(utf8(entry_id) for entry_id in ids)
    if not ids:
        return SEPARATOR if lead else b""
    return (SEPARATOR if lead else b"") + text + SEPARATOR


def _positions_bytes(positions: array[int]) -> bytes:
    """Little-endian, so a cache folder shared between machines reads the same."""
    if sys.byteorder == "little":
        return positions.tobytes()
    swapped = array("i", positions)
    swapped.byteswap()
    return swapped.tobytes()
