"""What a row of the facts index (facts_index.py) holds beside its record: the key a
file is kept under (and whether SQLite can take it), and the `unchanged` column that
lets a stat answer for a row, with the row's own check (a CRC-32 of its stamp and
record) that every row carries.

Owns those texts and the comparisons made of them; reading and writing rows, and when
a row may be trusted on its file's times (the quiet rule), are facts_index.py's.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jsonl_session.storage.stamps import Stamp

__all__ = [
    "TRUSTED_ROWS",
    "bindable",
    "bindable_only",
    "check_only",
    "index_key",
    "index_keys",
    "own_check_holds",
    "record_if_unchanged",
    "row_check",
    "unchanged_candidate",
]


def index_key(path: Path | str) -> str:
    """A file's key in an index: its absolute path (os.path.abspath's answer, without
    its cost for a path that is absolute and normal already, as a folder's files are)."""
    text = os.fspath(path)
    normal = not any(map(text.__contains__, _ODD)) and not text.endswith(_ODD_ENDS)
    if os.sep == "/" and text.startswith("/") and normal:
        return text
    return os.path.abspath(text)


# What os.path.abspath changes in an absolute POSIX path: a doubled separator, a "."
# or ".." between separators, or at the end, or a separator at the end. A dot that
# starts a name (~/.pi, ~/.claude, where sessions live) it leaves alone.
_ODD = ("//", "/./", "/../")
_ODD_ENDS = ("/.", "/..", "/")


def bindable(file: str) -> bool:
    """Whether SQLite can take ``file`` (a key) as text: a path that is not UTF-8 on
    disk holds lone surrogates (Python's surrogateescape), which it refuses. Such a
    file is never kept, and read each time."""
    if file.isascii():
        return True
    try:
        file.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def bindable_only(files: Sequence[str]) -> Sequence[str]:
    """``files`` but those SQLite cannot take (`bindable`): a run of a folder's files,
    all ASCII most often (one test of them all)."""
    if all(map(str.isascii, files)):
        return files
    return [file for file in files if bindable(file)]


def index_keys(files: Sequence[str]) -> list[str]:
    """`index_key` of each of ``files``: ``files`` themselves when every one is
    absolute and normal already, as a folder's files are (one test of them all)."""
    if os.sep != "/":
        return [index_key(file) for file in files]
    joined = "\0" + "\0".join(files) + "\0"  # (no path holds a NUL: stat refuses one)
    every_absolute = joined.count("\0/") == len(files)
    odd = [*_ODD, *(end + "\0" for end in _ODD_ENDS)]
    if every_absolute and "\0\0" not in joined and not any(map(joined.__contains__, odd)):
        return files if isinstance(files, list) else list(files)
    return [index_key(file) for file in files]


def unchanged_candidate(mark: Stamp, stamp: bytes, record: bytes) -> str | None:
    """The file's device, inode, size, mtime and ctime as a row describes them, and
    the row's own check (`row_check`), in one text, when the row covers the whole
    file (text, as an inode may not fit SQLite's signed 64-bit integers); else None.
    It becomes the row's `unchanged` column if the file had been quiet before the
    stamp (`save` decides: the process that writes the rows), else that column holds
    the row's check alone (`check_only`: the row is then checked against the file's
    bytes). A Stamp holds the stat's fields by the same names (stamps.stamp)."""
    if mark.covered != mark.size:
        return None
    seen = f"{mark.device}:{mark.inode}:{mark.size}:{mark.mtime_ns}:{mark.ctime_ns}"
    return f"{seen}:{row_check(stamp, record)}"


def check_only(stamp: bytes, record: bytes) -> str:
    """The `unchanged` column of a row a stat may not answer for: its row check alone,
    after "-", which sorts before the digits every `unchanged_candidate` starts with
    (a device number), so `TRUSTED_ROWS` leaves it out."""
    return f"-:{row_check(stamp, record)}"


def own_check_holds(unchanged: Any, stamp: bytes, record: bytes) -> bool:
    """Whether a row's `unchanged` column, in either form, ends with the check of this
    stamp and record (`row_check`); a row without one (NULL: written by an earlier
    release) is taken as it is."""
    if not isinstance(unchanged, str):
        return unchanged is None
    return unchanged.rpartition(":")[2] == str(row_check(stamp, record))


# The rows a stat may answer for: an `unchanged` column of text made by
# `unchanged_candidate` (a NULL, a number or a `check_only` text compares lower)
TRUSTED_ROWS = "unchanged >= '0'"


def record_if_unchanged(row: tuple[Any, ...], info: os.stat_result) -> bytes | None:
    """The record of ``row`` (file, ``unchanged`` column, stamp, record, as read) when
    that column is what `unchanged_candidate` made of a file stat'ed as ``info`` and
    of this very stamp and record; else None (a changed file, or a damaged row: its
    file is read). One comparison, a column that is not text comparing unequal."""
    _, unchanged, stamp, record = row
    if stamp.__class__ is not bytes or record.__class__ is not bytes:
        return None
    seen = f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
    return record if unchanged == f"{seen}:{row_check(stamp, record)}" else None


def row_check(stamp: bytes, record: bytes) -> int:
    """The CRC-32 of a row's stamp and record, kept in its `unchanged` column: a row
    whose record or stamp was damaged, or is another row's, is not trusted on the
    file's times (they are the only other thing the warm path looks at)."""
    return zlib.crc32(record, zlib.crc32(stamp))
