"""The index cache: what reading a session file found, kept in the user's cache folder
so the next read costs only the bytes appended since.

Owns where caches live (``$JSONL_SESSION_CACHE_DIR``, else the platform's user cache
folder; ``JSONL_SESSION_NO_CACHE=1`` turns caching off), how a cache file is named (a
hash of the session file's real path, one folder per kind of record), how records are
written (whole, to a temporary file renamed in) and the check that a record still
describes its file: the same path, device and inode, a file no shorter than the part
the record covers, the same bytes at the head and at the end of that part (hashes),
and, unless the file's size, mtime and ctime are those the record was made with (or
last checked with: ``<record>.seen``), the same CRC-32 of the whole covered part. So
an unchanged file costs two small reads, and a changed one (appended to, or rewritten
in place on the same inode) one read of the covered part, after which its new size and
times are kept in ``.seen`` and the next open is cheap again. A covered part of at
most `WHOLE_CHECK_BYTES` has no hashes: it is read and its CRC-32 compared every time
(one read, about the cost of the two, and no hashing when it is stamped: a first
listing of many small files stamps each). Files are append-only,
so such a record plus the bytes after it is the whole file. A record that fails a
check, cannot be decoded or belongs to another file is not used and is written again.

A record that cannot be written (a value msgpack cannot hold, a full disk, no
permission, a file size limit, a link in the way) is skipped: the caller reads the
file as if there were no cache, and the first such failure of a process is told to the
listener set with `on_record_not_kept` (the CLI prints it as a note on stderr). What a
record holds is the caller's business (loader.py and table.py: entries). The listing's
facts and search's texts are rows of storage/facts_index.py, which uses the stamps here.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from stat import S_ISREG
from typing import Any, Generic, TypeVar

import msgspec

from jsonl_session.storage import leftovers
from jsonl_session.storage.leftovers import TEMP_PREFIX, TEMP_SUFFIX
from jsonl_session.storage.paths import ensure_dir, user_folder
from jsonl_session.storage.portable import (
    BINARY,
    HOLD_TEMP_LOCK,
    NOFOLLOW,
    NONBLOCK,
    close_locked,
    pread,
    try_lock,
)

CacheOption = bool | str | Path | None
"""Where to cache: None or True for the default folder, False for no cache, or a folder."""

_FORMAT = 2  # 1 had no ctime and no CRC-32 of the covered part
_TAIL_BYTES = 4096
_CRC_CHUNK = 1 << 20
WHOLE_CHECK_BYTES = 1 << 16
"""A covered part this short is checked by its CRC-32 alone (no head and tail hashes)."""
_NO_HASH = b""
RECORD_ENCODING_ERRORS = (TypeError, ValueError, OverflowError, msgspec.MsgspecError)
"""What building or encoding a record raises for values msgpack cannot hold: a lone
surrogate in a string (UnicodeEncodeError is a ValueError), an integer beyond 64 bits."""
_T = TypeVar("_T")


def cache_root(option: CacheOption = None) -> Path | None:
    """The cache folder ``option`` asks for, or None when caching is off."""
    if option is False:
        return None
    if isinstance(option, str | Path):
        return Path(option).expanduser()
    if os.environ.get("JSONL_SESSION_NO_CACHE", "") not in ("", "0"):
        return None
    configured = os.environ.get("JSONL_SESSION_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return user_folder("cache") / "jsonl-session"


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
    return _check(mark, fd, seen) is not None


def _check(mark: Stamp, fd: int, seen: Seen | None, *, read: bool = True) -> Seen | None:
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
        if not read or prefix_crc(fd, mark.covered) != mark.crc:
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


class _Envelope(msgspec.Struct, array_like=True):
    format: int
    path: str
    stamp: Stamp
    checksum: int  # CRC-32 of ``record``: a damaged record is not used
    record: bytes


class RecordCache(Generic[_T]):
    """Records of one kind (``kind`` and ``version`` name their folder) for session files."""

    def __init__(
        self,
        root: Path,
        kind: str,
        record_type: type[_T],
        enc_hook: Callable[[Any], Any] | None = None,
        *,
        version: int = 1,
    ) -> None:
        # ``version`` names the record's layout: a new layout gets a new folder.
        self.folder = root / f"{kind}-{version}"
        self._kind, self._version = kind, version
        self._decoder = msgspec.msgpack.Decoder(record_type)
        self._encoder = msgspec.msgpack.Encoder(enc_hook=enc_hook)
        self._real_paths: dict[Path, str] = {}

    def file_for(self, session_path: Path) -> Path:
        key = hashlib.blake2b(self._real(session_path).encode(), digest_size=16).hexdigest()
        return self.folder / f"{key}.bin"

    def _real(self, session_path: Path) -> str:
        real = self._real_paths.get(session_path)
        if real is None:
            real = self._real_paths[session_path] = os.path.realpath(session_path)
        return real

    def load(
        self, session_path: Path, fd: int, *, unchanged_only: bool = False
    ) -> tuple[Stamp, _T] | None:
        """The record for the file open as ``fd``, if there is one and it still holds;
        ``unchanged_only``: only while the file's size and times are the stamp's (or
        the last check's), never after reading its covered part for a CRC."""
        target = self.file_for(session_path)
        try:
            data = _read_plain_file(target)
            if data is None:
                return None
            envelope = _envelope_decoder.decode(data)
            if envelope.format != _FORMAT or envelope.path != self._real(session_path):
                return None
            if zlib.crc32(envelope.record) != envelope.checksum:
                return None
            mark = envelope.stamp
            info = os.fstat(fd)
            seen = None
            if (info.st_size, info.st_mtime_ns, info.st_ctime_ns) != (
                mark.size,
                mark.mtime_ns,
                mark.ctime_ns,
            ):  # else the stamp tells it all
                seen = _read_seen(target, envelope.checksum)
            checked = _check(mark, fd, seen, read=not unchanged_only)
            if checked is None:
                return None
            record: _T = self._decoder.decode(envelope.record)
        except (OSError, ValueError, msgspec.MsgspecError):
            # None yet, unreadable, or damaged (UnicodeDecodeError is a ValueError):
            # read the file instead.
            return None
        checked = Seen(envelope.checksum, checked.size, checked.mtime_ns, checked.ctime_ns)
        checked_times = (checked.size, checked.mtime_ns, checked.ctime_ns)
        if checked != seen and checked_times != (mark.size, mark.mtime_ns, mark.ctime_ns):
            # Checked over the whole covered part: keep the times the check saw (taken
            # before it read, never after: a change made since must show as one), so
            # that the next open of the file as it is now is cheap.
            self._write_seen(target, checked)
        return mark, record

    def _write_seen(self, target: Path, seen: Seen) -> None:
        failure = _write_whole(target.with_suffix(_SEEN), _seen_encoder.encode(seen))
        if failure is not None:
            self.not_kept(target, failure)

    def save(self, session_path: Path, mark: Stamp, record: _T) -> bool:
        """Write the record; one that cannot be written is not kept (and said once,
        see `on_record_not_kept`). Whether it was written."""
        try:
            payload = self._encoder.encode(record)
        except RECORD_ENCODING_ERRORS as exc:
            self.not_kept(session_path, f"a value it cannot hold ({exc})")
            return False
        real = self._real(session_path)
        envelope = _Envelope(_FORMAT, real, mark, zlib.crc32(payload), payload)
        target = self.file_for(session_path)
        failure = _write_whole(target, _envelope_encoder.encode(envelope))
        if failure is not None:
            self.not_kept(session_path, failure)
            return False
        with contextlib.suppress(OSError):
            target.with_suffix(_SEEN).unlink(missing_ok=True)  # it spoke for the old one
        for older in range(1, self._version):  # records of an older layout
            shutil.rmtree(self.folder.with_name(f"{self._kind}-{older}"), ignore_errors=True)
        return True

    def not_kept(self, about: Path, reason: str) -> None:
        """Tell (once a process) that a record was not written; results do not change."""
        tell_not_kept(f"{self._kind} cache: no record kept for {about}: {reason}")


_listener: Callable[[str], None] | None = None
_told = False


def on_record_not_kept(listener: Callable[[str], None] | None) -> None:
    """Have ``listener`` told, once per process, that a cache record could not be
    written (what and why). The command's results are the same either way: the file
    is read as without a cache, and the next run tries again. None: tell no one."""
    global _listener, _told
    _listener, _told = listener, False


def tell_not_kept(message: str) -> None:
    """Tell the listener (once per process) that a record was not kept, and why."""
    global _told
    if _listener is not None and not _told:
        _told = True
        _listener(message)


def _read_plain_file(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (never through a link, and never
    waiting on a FIFO planted there); None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | NONBLOCK | BINARY)
    except OSError:
        return None
    try:
        if not S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_seen(record: Path, checksum: int) -> Seen | None:
    try:
        data = _read_plain_file(record.with_suffix(_SEEN))
        seen = _seen_decoder.decode(data) if data is not None else None
    except (ValueError, msgspec.MsgspecError):
        return None
    return seen if seen is not None and seen.checksum == checksum else None


def _write_whole(target: Path, data: bytes) -> str | None:
    """Write ``data`` to a temporary file renamed to ``target``; why not, if it failed.

    The temporary file has our name and is locked while it exists, as store.py's, so
    what a killed write left is told from a live one: the first record written to a
    folder in a process removes the abandoned ones (leftovers.py)."""
    folder = target.parent
    if os.path.islink(folder):  # a link planted at our record folder: never write through it
        return f"{folder} is a symbolic link"
    try:
        ensure_dir(folder)  # the records hold message text: private, like the sessions
        _sweep(folder)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    except OSError as exc:
        return f"{exc.filename or folder}: {exc.strerror or exc}"
    try:
        try_lock(fd)
        _write_all(fd, data)
        if not HOLD_TEMP_LOCK:  # Windows renames no open file: let it go now
            close_locked(fd)
            fd = -1
        # A link or anything else at ``target`` is replaced, never written through.
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return f"{target}: {exc.strerror or exc}"
    finally:
        if fd >= 0:
            close_locked(fd)
    return None


_swept: dict[Path, float] = {}
"""When this process last removed abandoned temporary files from each record folder."""


def _sweep(folder: Path) -> None:
    """Remove the abandoned temporary files of ``folder`` now and then: not for every
    record (a listing writes thousands to one folder), but again once anything left
    since the last sweep could have become abandoned."""
    now = time.monotonic()
    last = _swept.get(folder)
    if last is None or now - last >= leftovers.ABANDONED_AFTER_SECONDS:
        _swept[folder] = now
        leftovers.remove_abandoned_temps(folder)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


_SEEN = ".seen"
_seen_decoder = msgspec.msgpack.Decoder(Seen)
_seen_encoder = msgspec.msgpack.Encoder()
_envelope_decoder = msgspec.msgpack.Decoder(_Envelope)
_envelope_encoder = msgspec.msgpack.Encoder()
