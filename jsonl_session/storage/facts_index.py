"""The facts index: small records of many session files in one SQLite database per
cache folder, so a warm listing of N files costs about N ``stat`` calls.

Owns reading and writing the database (``<cache>/<kind>-<version>.sqlite``, mode 0600,
WAL so listings read while another writes; the file itself is facts_db.py's) and the
rule for trusting a row without opening its file: the
file's device, inode, size, mtime and ctime are those the row's stamp was taken with,
*and* the file had been quiet for `QUIET_NS` before that stamp was taken. A file written
again within one tick of the clock that stamps files could otherwise keep its times;
such a row is checked as storage/stamps.py checks a record (head and tail hashes, and the
CRC-32 of the covered part when the times changed; a small covered part has no CRC-32,
stamps.NOT_SUMMED, and is read again whole) by the caller, which then stamps it anew.
A row trusted on the times alone carries them as one text column (`unchanged`), with a
CRC-32 of the row's stamp and record (a row damaged, or given another row's record, is
then not trusted), so a warm listing reads those rows in one query and checks each file
with one comparison and one CRC of a small record. Any other row's `unchanged` holds
that CRC-32 alone, after "-" (facts_rows.py), so that a row is never read through with
a record or stamp not its own either (`get`). What a record holds is the caller's
(catalog/listing.py: listing facts; catalog/search.py: texts).

Like every cache here it is never needed: a database that is locked past a short wait,
damaged, unwritable or of another layout is read as empty; one damaged or of another
layout is made again, one that cannot be written is left (said once, through cache.py's
`on_record_not_kept` listener), and deleting it at any time is safe. The databases of
earlier layouts of a kind are removed when its current one is made. Several processes
may list and write at once: rows are replaced whole, in one transaction per listing
or per `SAVE_FROM_BYTES` of records, written as they come through one connection kept
until the listing or search ends (opened again if another process removed the
database meanwhile).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.storage.cache import tell_not_kept
from jsonl_session.storage.facts_db import connect, file_id, remade_for, remove
from jsonl_session.storage.facts_rows import (
    TRUSTED_ROWS,
    bindable,
    bindable_only,
    check_only,
    own_check_holds,
    record_if_unchanged,
    unchanged_candidate,
)
from jsonl_session.storage.stamps import Stamp

QUIET_NS = 2_000_000_000
"""A row is trusted on its file's times alone only if the file's mtime and ctime were
this much older than the stamp: a write within one tick of a coarse file clock (a
second on some file systems) could leave the times as they were."""
SAVE_FROM_BYTES = 2 * 2**20
"""Records waiting to be written past this many bytes are written at once (a
transaction of their own), so that reading many files keeps a bounded part of them."""
_ROW = "file, unchanged, stamp, record, taken_ns"  # a row as `get` reads it
_PARAMETERS = 500  # files named in one query (SQLite before 3.32 allows 999 values)
_stamp_encoder = msgspec.msgpack.Encoder()
_stamp_decoder = msgspec.msgpack.Decoder(Stamp)


@dataclass(frozen=True, slots=True)
class IndexedRecord:
    """A row: the stamp of the part of the file the record covers, when that stamp
    was taken (ns since the epoch), and the record's bytes."""

    stamp: Stamp
    taken_ns: int
    record: bytes


PendingRow = tuple[str, bytes, int, bytes, str | None, int]
"""A row made for `FactsIndex.save`: file, stamp (encoded), taken_ns, record, what
its `unchanged` column holds if the file was quiet, and the file's last change (ns)."""
PendingRows = dict[str, PendingRow]


class FactsIndex:
    """The rows of one kind of record, read as needed, written back in one
    transaction (`save`, which also closes what was opened for reading)."""

    def __init__(self, root: Path, kind: str, version: int, *, many: bool = True) -> None:
        """``many``: the rows trusted on their file's stat alone are read at the first
        `unchanged` (for a listing of many files: their records are small), or those
        of the files `read_rows_of` names (for a search: a run's texts at a time);
        else only the row asked for, or those `read_rows_for` read."""
        self.path = root / f"{kind}-{version}.sqlite"
        self._older = [root / f"{kind}-{older}.sqlite" for older in range(1, version)]
        self._kind = kind
        self._many = many
        self._db: sqlite3.Connection | None = None  # for reading
        self._writer: sqlite3.Connection | None = None  # kept between saves, see `save`
        self._writer_file: tuple[int, int] | None = None  # its database's device and inode
        self._unreadable = False  # none there, or locked or damaged: read as empty
        self._absent: bool | None = None  # none there when first read (None: not read)
        self._unchanged: dict[str, tuple[str, str, bytes, bytes]] | None = None
        self._rows: dict[str, tuple[Any, ...] | None] = {}  # `read_rows_for`'s, by file
        self._pending: PendingRows = {}
        self._pending_bytes = 0

    def unchanged(self, file: str, info: os.stat_result) -> bytes | None:
        """The record of ``file`` (an absolute path) when it covers the whole file and
        the file's stat ``info`` shows it as it was when stamped, after a quiet time
        (no need to open it); else None. The warm path of a listing: one lookup and
        one comparison for each file."""
        if self._many:
            kept = self._known().pop(file, None)  # handed over once: not held twice
        elif not bindable(file):
            return None  # (never kept)
        elif file in self._rows:
            # any row: the `unchanged` of one a stat may not answer for (TRUSTED_ROWS)
            # starts with "-" or is not text, never what a stat makes
            row = self._rows[file]
            kept = row[:4] if row is not None else None
        else:
            found = self._query(
                "SELECT file, unchanged, stamp, record FROM records"
                f" WHERE file = ? AND {TRUSTED_ROWS}",
                file,
            )
            kept = found[0] if found else None
        return record_if_unchanged(kept, info) if kept is not None else None

    def unchanged_each(self, files: Sequence[str]) -> Iterator[tuple[bytes, float] | None]:
        """For each of ``files`` (absolute paths), what `unchanged` answers for it,
        with the mtime of the stat it was given: its record and that mtime, or None
        (no row the stat may answer for, and then, with ``many``, no stat; a file
        gone; a changed or damaged row), made as each is asked for. With ``many``,
        one loop with no call per file but the stat: the warm path of a listing or
        search of many files, where a call per step cost a third of a listing."""
        if not self._many:
            for file in files:
                try:
                    info = os.stat(file)
                except OSError:
                    yield None
                    continue
                record = self.unchanged(file, info)
                yield (record, info.st_mtime) if record is not None else None
            return
        take = self._known().pop  # handed over once: not held twice
        stat = os.stat
        for file in files:
            kept = take(file, None)
            if kept is None:
                yield None  # (a first listing stats none)
                continue
            try:
                info = stat(file)
            except OSError:
                yield None  # described when read, with the reason
                continue
            record = record_if_unchanged(kept, info)
            yield (record, info.st_mtime) if record is not None else None

    @property
    def many(self) -> bool:
        """Whether it reads the rows of many files at once (see ``__init__``)."""
        return self._many

    @staticmethod
    def unchanged_in_all(
        indexes: Sequence[FactsIndex], files: Sequence[str]
    ) -> Iterator[list[bytes] | None]:
        """For each of ``files``, the records of its rows in every one of ``indexes``
        (each reading many: `read_rows_of`) when each answers as `unchanged` would, on
        one stat of the file for all of them; else None (and no stat when one of them
        has no row a stat may answer for). A search with tool output keeps two
        indexes: a stat each cost a second stat of every file."""
        takes = [index._known().pop for index in indexes]  # handed over once
        stat = os.stat
        for file in files:
            found = [take(file, None) for take in takes]
            rows = [row for row in found if row is not None]
            if len(rows) < len(found):
                yield None
                continue
            try:
                info = stat(file)
            except OSError:
                yield None
                continue
            answers = [record_if_unchanged(row, info) for row in rows]
            records = [record for record in answers if record is not None]
            yield records if len(records) == len(answers) else None

    def read_rows_of(self, files: Sequence[str]) -> None:
        """Read the rows a stat may answer for of ``files`` alone, those `unchanged`
        is asked for next, in place of any read before: a search of many files holds
        one run's texts, not every file's."""
        found: list[Any] = []
        for start in range(0, len(files), _PARAMETERS):
            part = bindable_only(files[start : start + _PARAMETERS])
            marks = ", ".join("?" * len(part))
            found += self._query(
                "SELECT file, unchanged, stamp, record FROM records"
                f" WHERE {TRUSTED_ROWS} AND file IN ({marks})",
                *part,
            )
        self._unchanged = {row[0]: row for row in found}

    def get(self, file: str) -> IndexedRecord | None:
        """The row of ``file`` (an absolute path), if the index has one. A row whose
        `unchanged` column holds a row check other than its stamp's and record's is
        none: damaged, or given another row's record or stamp (`own_check_holds`; a
        row an earlier release wrote without one is taken on its stamp, which the
        caller checks against the file)."""
        if file in self._rows:
            row = self._rows[file]
        elif not bindable(file):
            return None  # (never kept)
        else:
            found = self._query(f"SELECT {_ROW} FROM records WHERE file = ?", file)
            row = found[0] if found else None
        if row is None:
            return None
        _, unchanged, stamp, record, taken_ns = row
        if not isinstance(taken_ns, int) or not isinstance(record, bytes):
            return None  # a damaged row: its file is read
        if not isinstance(stamp, bytes) or not own_check_holds(unchanged, stamp, record):
            return None
        try:
            return IndexedRecord(_stamp_decoder.decode(stamp), taken_ns, record)
        except (msgspec.MsgspecError, TypeError):
            return None

    @property
    def absent(self) -> bool:
        """Whether there was no database when this index was first read: a first
        listing or search, whose files have no rows (but those it writes)."""
        return self._absent is True

    def read_rows_for(self, files: Sequence[str], *, ask: bool = True) -> None:
        """Read the rows of ``files`` (absolute paths) now, a query for each
        `_PARAMETERS` of them, for the `get` of each that follows (and `unchanged`,
        when not ``many``), in place of any read so far: a worker's run of files
        whose records are small (a listing's). Asked one at a time, the workers of a
        first listing of 100,000 files made as many queries, once the rows written
        meanwhile had made the database, and found nothing. A file not named is asked
        of the database as before. Without ``ask``, none of them has a row, and
        nothing is opened: the listing or search that hands out the run found no
        database (`absent`); a row another process wrote meanwhile only goes unused."""
        rows: dict[str, tuple[Any, ...] | None] = dict.fromkeys(files)
        for start in range(0, len(files) if ask else 0, _PARAMETERS):
            part = bindable_only(files[start : start + _PARAMETERS])
            marks = ", ".join("?" * len(part))
            for row in self._query(f"SELECT {_ROW} FROM records WHERE file IN ({marks})", *part):
                rows[row[0]] = row
        self._rows = rows

    def _known(self) -> dict[str, tuple[str, str, bytes, bytes]]:
        """The rows a stat may answer for, read at the first call: file -> its row
        (the file, the `unchanged` column, the stamp, the record), as read."""
        if self._unchanged is None:
            found = self._query(
                f"SELECT file, unchanged, stamp, record FROM records WHERE {TRUSTED_ROWS}"
            )
            self._unchanged = {row[0]: row for row in found}
        return self._unchanged

    def put(self, file: str, stamp: Stamp, taken_ns: int, record: bytes) -> None:
        """Keep ``record`` for ``file`` (written by `save`, or sooner once the records
        waiting pass `SAVE_FROM_BYTES`). ``taken_ns``: when the stat in ``stamp`` was
        taken, before the file was read. The row is made here, as `save` writes it:
        in a worker process, so the process that saves only writes. A file whose name
        is not text SQLite takes (bytes that are not UTF-8) is not kept: it is read
        each time."""
        if not bindable(file):
            return
        encoded = _stamp_encoder.encode(stamp)
        candidate = unchanged_candidate(stamp, encoded, record)
        changed_ns = max(stamp.mtime_ns, stamp.ctime_ns)
        self._pending[file] = (file, encoded, taken_ns, record, candidate, changed_ns)
        self._waiting(len(record))

    def take_pending(self) -> PendingRows:
        """The rows put and not saved, handed over (from a worker process to the
        process that saves them), and what was opened closed."""
        self._close()
        self._close_writer()  # (rows it wrote on the way are written)
        pending, self._pending, self._pending_bytes = self._pending, {}, 0
        return pending

    def put_rows(self, rows: PendingRows) -> None:
        """Rows another `FactsIndex` took (`take_pending`), to be written by `save`."""
        self._pending.update(rows)
        self._waiting(sum(len(row[3]) for row in rows.values()))

    def _waiting(self, size: int) -> None:
        self._pending_bytes += size
        if self._pending_bytes >= SAVE_FROM_BYTES:
            # as they come (while workers read on), and bounded: what a first search of
            # many files keeps; the connection stays open for the next ones
            self.save(final=False)

    def save(self, *, final: bool = True) -> None:
        """Write the records put since the last save, all in one transaction; then,
        when ``final``, close the connection written through (else kept for the next)."""
        self._close()
        if self._pending:
            self._write_pending()
        if final:
            self._close_writer()

    def _write_pending(self) -> None:
        self._pending_bytes = 0
        quiet = QUIET_NS
        rows = [
            (
                file,
                stamp,
                taken,
                record,
                candidate
                if candidate is not None and changed <= taken - quiet
                else check_only(stamp, record),
            )
            for file, stamp, taken, record, candidate, changed in self._pending.values()
        ]
        self._pending = {}
        for attempt in (1, 2):
            try:
                if self._writer is not None and not self._writer_in_place():
                    self._close_writer()  # its file was removed or replaced meanwhile
                if self._writer is None:
                    self._writer = self._connect(create=True)
                    self._writer_file = file_id(self.path)
                with self._writer:  # one transaction: committed, or rolled back on an error
                    self._writer.executemany(
                        "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?)", rows
                    )
                return
            except sqlite3.DatabaseError as exc:
                self._close_writer()
                if attempt == 1 and remade_for(exc):
                    self._remove()  # damaged, or of another layout: it is only a cache
                    continue
                failure: Exception = exc
            except OSError as exc:
                self._close_writer()
                failure = exc
            tell_not_kept(
                f"{self._kind} index: {len(rows)} records not kept in {self.path}: {failure}"
            )
            return

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _writer_in_place(self) -> bool:
        """Whether the database the kept connection writes is still the one at
        `path` (another process may remove a damaged one, or one of an older layout:
        rows written into a removed file would be lost)."""
        return file_id(self.path) == self._writer_file

    def _close_writer(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _remove(self) -> None:
        remove(self.path)

    def _query(self, query: str, *values: str) -> list[Any]:
        """The rows a query finds; none when there is no database, or it is locked,
        damaged or of another layout (then listed as if empty)."""
        if self._unreadable:
            return []
        try:
            if self._db is None:
                if not self.path.exists():
                    self._unreadable = True  # none yet: this listing makes it
                    if self._absent is None:
                        self._absent = True
                    return []
                if self._absent is None:
                    self._absent = False
                self._db = self._connect(create=False)
            return self._db.execute(query, values).fetchall()
        except (sqlite3.Error, OSError):
            self._unreadable = True
            self._close()
            return []

    def _connect(self, *, create: bool) -> sqlite3.Connection:
        return connect(self.path, self._older, create=create)


def now_ns() -> int:
    """The time a stamp is taken (the wall clock, as file times are)."""
    return time.time_ns()
