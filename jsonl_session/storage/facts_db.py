"""The facts index's SQLite database as a file: opening it (made owner-only, never
through a link planted at its name; WAL; its one table), removing it with its WAL and
shared-memory files, telling which failures mean it is to be made again, and which
file a connection writes (its device and inode).

What its rows hold and when they are trusted is facts_rows.py's and facts_index.py's;
when it is read, written or made again is facts_index.py's.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from jsonl_session.storage.paths import ensure_dir
from jsonl_session.storage.portable import BINARY, NOFOLLOW

WAIT_SECONDS = 2.0  # for another process's transaction, then go on without the index

# Failures a database of the wrong shape gives (not a database; a table of another
# layout), as against those of a database in use or a disk that is full or read-only.
_REMADE_FOR = {sqlite3.SQLITE_ERROR, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT}


def connect(path: Path, older: Sequence[Path], *, create: bool) -> sqlite3.Connection:
    """A connection to the database at ``path``; with ``create``, made first if it is
    not there (and the databases of earlier layouts, ``older``, removed)."""
    if create and not path.exists():
        for earlier in older:  # what an earlier release kept: never read again
            remove(earlier)
        ensure_dir(path.parent)
        with contextlib.suppress(FileExistsError):
            # made here, owner-only, never through a link planted at the name
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | BINARY
            os.close(os.open(path, flags, 0o600))
    db = sqlite3.connect(path, timeout=WAIT_SECONDS, isolation_level="DEFERRED")
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # a cache: no sync at each commit
        db.execute(
            "CREATE TABLE IF NOT EXISTS records (file TEXT PRIMARY KEY, stamp BLOB,"
            " taken_ns INTEGER, record BLOB, unchanged TEXT)"
        )
    except sqlite3.Error:
        db.close()
        raise
    return db


def remove(path: Path) -> None:
    """The database at ``path`` gone, its WAL and shared memory too (none there: fine)."""
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            os.unlink(f"{path}{suffix}")


def remade_for(error: sqlite3.DatabaseError) -> bool:
    """Whether ``error`` says the database is to be made again rather than waited for."""
    code = getattr(error, "sqlite_errorcode", None)
    return code in _REMADE_FOR or not isinstance(error, sqlite3.OperationalError)


def file_id(path: Path) -> tuple[int, int] | None:
    """The device and inode of the file at ``path``, or None when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino
