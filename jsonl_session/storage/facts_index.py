"""The facts index: small records of many session files in one SQLite database per
cache folder, so a warm listing of N files costs about N ``stat`` calls.

Owns the database (``<cache>/<kind>-<version>.sqlite``, mode 0600, WAL so listings
read while another writes) and the rule for trusting a row without opening its file:
the file's device, inode, size, mtime and ctime are those the row's stamp was taken
with, *and* the file had been quiet for `QUIET_NS` before that stamp was taken. A file
written again within one tick of the clock that stamps files could otherwise keep its
times; such a row is checked as storage/cache.py checks a record (head and tail hashes,
and the CRC-32 of the covered part when the times changed) by the caller, which then
stamps it anew. What a record holds is the caller's (catalog/listing.py: listing facts).

Like every cache here it is never needed: a database that is locked past a short
wait, damaged, unwritable or of another layout is read as empty or left unwritten
(said once, through cache.py's `on_record_not_kept` listener), and deleting it at any
time is safe. Several processes may list and write at once: rows are replaced whole
in one transaction per listing.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import msgspec

from jsonl_session.storage.cache import Stamp, tell_not_kept
from jsonl_session.storage.paths import ensure_dir
from jsonl_session.storage.portable import BINARY, NOFOLLOW

QUIET_NS = 2_000_000_000
"""A row is trusted on its file's times alone only if the file's mtime and ctime were
this much older than the stamp: a write within one tick of a coarse file clock (a
second on some file systems) could leave the times as they were."""
_WAIT_SECONDS = 2.0  # for another process's transaction, then go on without the index
_stamp_encoder = msgspec.msgpack.Encoder()
_stamp_decoder = msgspec.msgpack.Decoder(Stamp)


@dataclass(frozen=True, slots=True)
class IndexedRecord:
    """A row: the stamp of the part of the file the record covers, when that stamp
    was taken (ns since the epoch), and the record's bytes."""

    stamp: Stamp
    taken_ns: int
    record: bytes

    def trusted_for(self, info: os.stat_result) -> bool:
        """Whether the file whose stat is ``info`` is, by its times and quiet before
        the stamp, the file the record was made from (no need to open it)."""
        mark = self.stamp
        return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns) == (
            mark.device,
            mark.inode,
            mark.size,
            mark.mtime_ns,
            mark.ctime_ns,
        ) and max(mark.mtime_ns, mark.ctime_ns) <= self.taken_ns - QUIET_NS


class FactsIndex:
    """The rows of one kind of record, read once, written back in one transaction."""

    def __init__(self, root: Path, kind: str, version: int, *, many: bool = True) -> None:
        """``many``: every row is read at the first `get` (for a listing of many
        files); else each `get` reads its own row (for one file)."""
        self.path = root / f"{kind}-{version}.sqlite"
        self._kind = kind
        self._many = many
        self._rows: dict[str, IndexedRecord] | None = None
        self._pending: dict[str, IndexedRecord] = {}

    def get(self, file: str) -> IndexedRecord | None:
        """The row of ``file`` (an absolute path), if the index has one."""
        if self._rows is None and self._many:
            self._rows = self._read(None)
        if self._rows is None or (not self._many and file not in self._rows):
            self._rows = {**(self._rows or {}), **self._read(file)}
        return self._rows.get(file)

    def put(self, file: str, stamp: Stamp, taken_ns: int, record: bytes) -> None:
        """Keep ``record`` for ``file`` (written by `save`). ``taken_ns``: when the
        stat in ``stamp`` was taken, before the file was read."""
        self._pending[file] = IndexedRecord(stamp, taken_ns, record)

    def save(self) -> None:
        """Write the records put since the last save, all in one transaction."""
        if not self._pending:
            return
        rows = [
            (name, _stamp_encoder.encode(row.stamp), row.taken_ns, row.record)
            for name, row in self._pending.items()
        ]
        self._pending = {}
        for attempt in (1, 2):
            try:
                with contextlib.closing(self._connect(create=True)) as db, db:
                    db.executemany("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?)", rows)
                return
            except sqlite3.DatabaseError as exc:
                if attempt == 1 and not isinstance(exc, sqlite3.OperationalError):
                    self._remove()  # not a database (damaged): it is only a cache
                    continue
                failure: Exception = exc
            except OSError as exc:
                failure = exc
            tell_not_kept(
                f"{self._kind} index: {len(rows)} records not kept in {self.path}: {failure}"
            )
            return

    def _remove(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(f"{self.path}{suffix}")

    def _read(self, file: str | None) -> dict[str, IndexedRecord]:
        """The rows of every file (``file`` None) or of one."""
        if not self.path.exists():
            return {}
        query = "SELECT file, stamp, taken_ns, record FROM records"
        try:
            with contextlib.closing(self._connect(create=False)) as db:
                if file is None:
                    found = db.execute(query).fetchall()
                else:
                    found = db.execute(query + " WHERE file = ?", (file,)).fetchall()
        except (sqlite3.Error, OSError):
            return {}  # locked, damaged or another layout: listed as if empty
        rows = {}
        for file, stamp, taken_ns, record in found:
            try:
                rows[file] = IndexedRecord(_stamp_decoder.decode(stamp), taken_ns, record)
            except (msgspec.MsgspecError, TypeError):
                continue  # a damaged row: its file is read
        return rows

    def _connect(self, *, create: bool) -> sqlite3.Connection:
        if create and not self.path.exists():
            ensure_dir(self.path.parent)
            with contextlib.suppress(FileExistsError):
                # made here, owner-only, never through a link planted at the name
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | BINARY
                os.close(os.open(self.path, flags, 0o600))
        db = sqlite3.connect(self.path, timeout=_WAIT_SECONDS, isolation_level="DEFERRED")
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS records"
                " (file TEXT PRIMARY KEY, stamp BLOB, taken_ns INTEGER, record BLOB)"
            )
        except sqlite3.Error:
            db.close()
            raise
        return db


def now_ns() -> int:
    """The time a stamp is taken (the wall clock, as file times are)."""
    return time.time_ns()
