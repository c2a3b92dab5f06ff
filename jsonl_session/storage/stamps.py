"""Stamps: which file, and which of its bytes, a cache record describes, and the check
that a file still starts with those bytes.

Owns the stamp (device, inode, size, mtime and ctime when it was taken, how many bytes
it covers, their CRC-32, and hashes of the head and of the end of the covered part) and
the check: the same device and inode, a file no shorter than the covered part, the same
head and end (hashes), and, unless the file's size and times are the stamp's or those
of the last check (`Seen`), the same CRC-32 of the whole covered part. A covered part of
at most `WHOLE_CHECK_BYTES` has no hashes: it is read and its CRC-32 compared every time
(one read, about the cost of the two, and no hashing when it is stamped: a first
listing of many small files stamps each); the facts index keeps no CRC-32 of one either
(`NOT_SUMMED`: its file is read again whole instead). Where records live and how they
are written is cache.py's; the rows of many small files, facts_index.py's.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Iterator

import msgspec

from jsonl_session.storage.portable import pread

_TAIL_BYTES = 4096
_CRC_CHUNK = 1 << 20
WHOLE_CHECK_BYTES = 1 << 16
"""A covered part this short is checked by its CRC-32 alone (no head and tail hashes)."""
NOT_SUMMED = -2
"""The CRC-32 of a stamp whose covered part, at most WHOLE_CHECK_BYTES, was not
summed: such a part never checks as unchanged (no CRC-32 is negative, and `prefix_crc`
gives -1), so its file is read again whole. The facts index stamps small files so: a
first listing of thousands of them sums none (a tenth of its cost over no cache), and
reading a small file again costs about what checking it did."""
_NO_HASH = b""


class Stamp(msgspec.Struct, array_like=True, frozen=True):
    """Which file, and which of its bytes, a record describes."""

    device: int
    inode: int
    size: int  # of the file when the record was made
    mtime_ns: int
    ctime_ns: int  # a rewrite cannot set it back, as it can the mtime
    covered: int  # the record describes bytes [0, covered): whole lines only
    crc: int  # CRC-32 of bytes [0, covered)
    head: bytes  # hash of the first bytes (the header line)
    tail: bytes  # hash of the last bytes before ``covered``


def stamp(
    fd: int, covered: int, crc: int | None, info: os.stat_result, data: bytes | None = None
) -> Stamp:
    """A stamp for the first ``covered`` bytes of the open file ``fd``.

    ``crc``: their CRC-32 when the caller computed it from the bytes it read (else
    they are read again); ``info``: the file's stat taken *before* the caller read
    it (required: a stat taken after would hide a change made while it read);
    ``data``: the file's bytes from its start as the caller read them, when it has
    them (the hashes are then taken from them, with no read)."""
    if crc is None:
        crc = prefix_crc(fd, covered)
    if covered <= WHOLE_CHECK_BYTES:
        head = tail = _NO_HASH
    elif data is not None and len(data) >= covered:
        head = _digest(data[: min(covered, _TAIL_BYTES)])
        # (a short file's last bytes are its first: hashed once)
        tail = head if covered <= _TAIL_BYTES else _digest(data[covered - _TAIL_BYTES : covered])
    else:
        head, tail = _hashes(fd, covered)
    return Stamp(
        info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns,
        covered, crc, head, tail,
    )  # fmt: skip


def summed(data: bytes, covered: int) -> int:
    """The CRC-32 a facts-index row's stamp keeps of ``data[:covered]``, a file's first
    bytes as read: NOT_SUMMED for a part of at most WHOLE_CHECK_BYTES."""
    if covered <= WHOLE_CHECK_BYTES:
        return NOT_SUMMED
    return zlib.crc32(memoryview(data)[:covered])  # of the bytes read: no second read


def kept_crc(crc: int, covered: int) -> int:
    """`summed` of a file's first ``covered`` bytes given their CRC-32 ``crc``, taken
    as they were read a chunk at a time."""
    return crc if covered > WHOLE_CHECK_BYTES else NOT_SUMMED


def prefix_crc(fd: int, covered: int, start: int = 0, crc: int = 0) -> int:
    """The CRC-32 of bytes [0, covered) of ``fd``, continuing ``crc`` (that of
    bytes [0, start)); a file shorter than ``covered`` gives -1 (matches no stamp)."""
    position = start
    while position < covered:
        chunk = pread(fd, min(_CRC_CHUNK, covered - position), position)
        if not chunk:
            return -1
        crc = zlib.crc32(chunk, crc)
        position += len(chunk)
    return crc


class RunningCrc:
    """The CRC-32 of a file from its start, kept while its regions are read (see
    `over`), so that a stamp's needs no second read of them."""

    def __init__(self, offset: int, crc: int) -> None:
        self._ends = {offset: crc}  # where the last two regions ended: the CRC there

    def over(self, regions: Iterator[tuple[bytes, int]]) -> Iterator[tuple[bytes, int]]:
        """Pass on regions (bytes, and how many of them are the region) as they come."""
        offset, crc = max(self._ends.items())
        for region in regions:
            data, stop = region
            crc = zlib.crc32(memoryview(data)[:stop], crc)
            offset += stop
            self._ends = {**dict([max(self._ends.items())]), offset: crc}
            yield region

    def at(self, covered: int) -> int | None:
        """The CRC-32 of bytes [0, covered) if a region ended there, else None (the
        stamp then reads them again)."""
        return self._ends.get(covered)


def still_valid(mark: Stamp, fd: int, seen: Seen | None = None) -> bool:
    """Whether the open file ``fd`` still starts with the bytes ``mark`` describes."""
    return check(mark, fd, seen) is not None


def check(mark: Stamp, fd: int, seen: Seen | None, *, read: bool = True) -> Seen | None:
    """None if ``fd`` no longer starts with the bytes ``mark`` describes; else the
    file's size and times as checked (to keep in ``.seen``).

    A file whose size, mtime and ctime are those of the stamp or of the last check
    (``seen``) is taken as unchanged once its head and the end of the covered part
    match; any other is checked over the whole covered part (CRC-32): appends and
    rewrites in place both change the times, and only reading tells them apart."""
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != (mark.device, mark.inode) or info.st_size < mark.covered:
        return None
    now = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if mark.covered <= WHOLE_CHECK_BYTES:
        if not read or mark.crc == NOT_SUMMED or prefix_crc(fd, mark.covered) != mark.crc:
            return None
        return Seen(0, *now)
    if _hashes(fd, mark.covered) != (mark.head, mark.tail):
        return None
    known = [(mark.size, mark.mtime_ns, mark.ctime_ns)]
    if seen is not None:
        known.append((seen.size, seen.mtime_ns, seen.ctime_ns))
    if now not in known and (not read or prefix_crc(fd, mark.covered) != mark.crc):
        return None
    return Seen(0, *now)


class Seen(msgspec.Struct, array_like=True, frozen=True):
    """The file's size and mtime when it was last read with a record left as it was
    (kept beside the record, so a record need not be rewritten for every append)."""

    checksum: int  # of the record this speaks for
    size: int
    mtime_ns: int
    ctime_ns: int


def _hashes(fd: int, covered: int) -> tuple[bytes, bytes]:
    head = _digest(pread(fd, min(covered, _TAIL_BYTES), 0))
    if covered <= _TAIL_BYTES:
        return head, head
    return head, _digest(pread(fd, _TAIL_BYTES, covered - _TAIL_BYTES))


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()
