"""The entries of an index-cache record, kept as the record holds them and turned into
StoredEntry objects only when asked for.

Owns the record's form of a run of entries (their ids as one byte string, each
entry's parent as a position, the entries themselves in msgpack blocks) and the
questions it answers without building an object per entry: how many entries, where
an id is, the parent chain of a position, whether any is an assistant message, which
ones are labels and names. A block of entries is decoded the first time one of them
is needed. A table can also stand over entries just read from the file (a first
open): it then answers from them, and its record's blocks are encoded only if a
record is to be kept. Making records from entries (`table_record`, `fresh_table`,
`kept_record`) is table_build.py's; whether a record still describes its file is
cache.py's business; the tree rules (what a duplicate or a missing parent means) are
tree.py's.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence
from itertools import compress
from operator import attrgetter, methodcaller

import msgspec

from jsonl_session.format.entry import StoredEntry
from jsonl_session.storage.lines import LineSource

NO_PARENT = -1
MISSING_PARENT = -2
SEPARATOR = b"\xff"  # never part of UTF-8 text, so it cannot occur inside an id
_DICT_AFTER = 64  # id lookups by search before a dict of every id is built
_WORDS_KEPT = 256
_ID = attrgetter("id")
_TO_TEXT = methodcaller("decode", "utf-8", "surrogatepass")  # as `_text`


class TableRecord(msgspec.Struct, array_like=True):
    """A run of entries in file order as the index cache keeps it.

    ``clean``: no id is used twice and every parent comes before its child (so the
    parent links have no cycle); only then are ``ids``, ``parents`` and ``missing``
    filled, and the entries can be used without building them all.
    """

    count: int
    block: int  # entries per block
    blocks: list[bytes]  # msgpack lists of ``block`` entries (the last one shorter)
    noted: list[StoredEntry]  # label and session_info entries, in order
    has_assistant: bool
    clean: bool
    ids: bytes = b""  # SEPARATOR + each id + SEPARATOR, in order
    parents: bytes = b""  # int32 little-endian per entry: a position, NO_PARENT or MISSING_PARENT
    missing: list[str] = []  # parent ids that no entry has
    starts: list[int] = []  # where each block's first line starts (none: a record made before)


def no_source(value: object) -> None:
    """Entries are kept without their LineSource: the next reader brings its own."""
    if not isinstance(value, LineSource):
        raise NotImplementedError(type(value).__name__)


_block_decoder = msgspec.msgpack.Decoder(list[StoredEntry])


class EntryTable:
    """Positions 0..len-1 over a TableRecord, for entries read from ``source``."""

    def __init__(
        self,
        record: TableRecord,
        source: LineSource | None,
        entries: list[StoredEntry] | None = None,
        positions: dict[str, int] | None = None,
    ) -> None:
        """``entries``: the record's entries when the caller has them already (it
        just read them), so none is decoded; ``positions``: the position of each id,
        when the caller has counted them (a clean record only)."""
        self.record = record
        self.source = source
        self._blocks: list[list[StoredEntry] | None] = [None] * len(record.blocks)
        self._flat = entries  # every entry, once each block is at hand
        self._parents = _positions_from(record.parents)
        self._positions = positions
        self._lookups = 0
        self._words: dict[str, str] = {}  # types and roles, see `_decode`
        self.missing = frozenset(record.missing)
        for entry in record.noted:
            self._attach(entry)

    def __len__(self) -> int:
        return self.record.count

    @property
    def clean(self) -> bool:
        return self.record.clean

    @property
    def has_assistant(self) -> bool:
        return self.record.has_assistant

    @property
    def noted(self) -> list[StoredEntry]:
        """The label and session_info entries, in file order (objects of their own,
        not those `__getitem__` gives)."""
        return self.record.noted

    def __getitem__(self, position: int) -> StoredEntry:
        if position < 0:
            position += self.record.count
        if not 0 <= position < self.record.count:
            raise IndexError(position)
        if self._flat is not None:
            return self._flat[position]
        block, at = divmod(position, self.record.block)
        entries = self._blocks[block]
        if entries is None:
            entries = self._decode(block)
        return entries[at]

    def materialise(self) -> list[StoredEntry]:
        """Every entry, in order."""
        if self._flat is None:
            out: list[StoredEntry] = []
            for block in range(len(self._blocks)):
                out.extend(self._blocks[block] or self._decode(block))
            self._flat = out
        return list(self._flat)

    def at(self, positions: list[int]) -> list[StoredEntry]:
        """The entries at ``positions``. Asked for many (a long path), every block is
        decoded once and they are taken from one list."""
        if self._flat is None and len(positions) * 4 < self.record.count:
            return [self[position] for position in positions]
        if self._flat is None:
            self.materialise()
        assert self._flat is not None
        return list(map(self._flat.__getitem__, positions))

    def position(self, entry_id: str) -> int | None:
        """Where the entry with ``entry_id`` is (a clean table has each id once)."""
        if self._positions is not None:
            return self._positions.get(entry_id)
        self._lookups += 1
        if self._lookups > _DICT_AFTER:
            if self._flat is not None:
                every_id = map(_ID, self._flat)
                self._positions = dict(zip(every_id, range(len(self._flat)), strict=True))
            else:
                every = self.record.ids[1:-1].split(SEPARATOR) if self.record.count else []
                texts = map(_TO_TEXT, every)  # (decoded in C, one call per id)
                self._positions = dict(zip(texts, range(len(every)), strict=True))
            return self._positions.get(entry_id)
        ids = self.record.ids
        at = ids.find(SEPARATOR + utf8(entry_id) + SEPARATOR)
        return None if at < 0 else ids.count(SEPARATOR, 0, at + 1) - 1

    def expect_lookups(self) -> None:
        """Many lookups are coming (the session is being written: each new id is
        looked for): the next one builds the dict of every id, so that each later one
        costs the same whatever the number of entries, not a search of them all."""
        self._lookups = max(self._lookups, _DICT_AFTER)

    def packed_blocks(self) -> list[tuple[bytes, int]] | None:
        """Each block as the record holds it (msgpack: views/slices.py's packed records)
        with where its first line starts; None when the record did not keep them, or
        once entries are in memory (a fresh table: nothing to spare decoding)."""
        record = self.record
        if self._flat is not None or len(record.starts) != len(record.blocks):
            return None
        return list(zip(record.blocks, record.starts, strict=True))

    def block_previous_ids(self) -> list[str | None]:
        """For each block, the id of the entry before its first (None for the first):
        read from the ids of a clean record, none decoded."""
        record = self.record  # (its own block size: a record made with another stays read)
        ids = record.ids.split(SEPARATOR)[1:-1]
        return [None, *(_text(ids[i - 1]) for i in range(record.block, record.count, record.block))]

    def orphans(self) -> list[int]:
        """The positions of the entries whose parent no entry has, in order."""
        if not self.missing:
            return []
        return list(compress(range(len(self._parents)), map(MISSING_PARENT.__eq__, self._parents)))

    def chain(self, position: int) -> list[int]:
        """``position`` and the positions of its ancestors, up to one with no parent
        or whose parent is missing (a clean table has no cycles)."""
        parents = self._parents
        out = []
        while position >= 0:
            out.append(position)
            position = parents[position]
        return out

    def _decode(self, block: int) -> list[StoredEntry]:
        entries = _block_decoder.decode(self.record.blocks[block])
        source = self.source
        words = self._words
        previous = None
        # msgpack gives each entry strings of its own; the same type and role, and a
        # parent's id, as one object each: a third less memory for a whole session
        for entry in entries:
            if entry.inline is None:
                entry.source = source
            entry.type = words.setdefault(entry.type, entry.type)
            role = entry.role
            if role is not None:
                entry.role = words.setdefault(role, role)
            if previous is not None and entry.parent_id == previous.id:
                entry.parent_id = previous.id
            previous = entry
        if len(words) > _WORDS_KEPT:  # (a file of many types: none kept for the next)
            words.clear()
        self._blocks[block] = entries
        return entries

    def _attach(self, entry: StoredEntry) -> None:
        if entry.inline is None:
            entry.source = self.source


def _positions_from(data: bytes) -> Sequence[int]:
    if sys.byteorder == "little":
        return memoryview(data).cast("B").cast("i")  # read in place
    positions = array("i", data)
    positions.byteswap()
    return positions


def utf8(text: str) -> bytes:
    # JSON can hold a lone surrogate (\ud800); keep it rather than fail.
    return text.encode("utf-8", "surrogatepass")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")
