"""The index cache: what reading a session file found, kept in the user's cache folder
so the next read costs only the bytes appended since.

Owns where caches live (``$JSONL_SESSION_CACHE_DIR``, else the platform's user cache
folder; ``JSONL_SESSION_NO_CACHE=1`` turns caching off), how a cache file is named (a
hash of the session file's real path, one folder per kind of record), how records are
written (whole, to a temporary file renamed in; a failure to write is ignored) and the
check that a record still describes its file: the same path, device and inode, a
file no shorter than the part the record covers, the same bytes at the head and
at the end of that part (hashes), and a new mtime only with a new size (the size
and mtime last read sit beside a record left as it was: ``<record>.seen``). Files are
append-only, so such a record plus the bytes after it is the whole file. A record
that fails a check, cannot be decoded or belongs to another file is not used and is
written again. What a record holds is the caller's business (loader.py and table.py:
entries; catalog/listing.py: listing facts; catalog/search.py: texts).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec

from jsonl_session.storage.paths import ensure_dir, user_folder
from jsonl_session.storage.portable import pread

CacheOption = bool | str | Path | None
"""Where to cache: None or True for the default folder, False for no cache, or a folder."""

_FORMAT = 1
_TAIL_BYTES = 4096
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
    covered: int  # the record describes bytes [0, covered): whole lines only
    head: bytes  # hash of the first bytes (the header line)
    tail: bytes  # hash of the last bytes before ``covered``


def stamp(fd: int, covered: int) -> Stamp:
    """A stamp for the first ``covered`` bytes of the open file ``fd``."""
    info = os.fstat(fd)
    head, tail = _hashes(fd, covered)
    return Stamp(info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, covered, head, tail)


def still_valid(mark: Stamp, fd: int, seen: Seen | None = None) -> bool:
    """Whether the open file ``fd`` still starts with the bytes ``mark`` describes.

    A file that grew is trusted to have been appended to (the head and the end of the
    covered part are checked); one of the same size as when the record was made, or
    as when it was last read (``seen``), but with a new mtime was rewritten."""
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != (mark.device, mark.inode) or info.st_size < mark.covered:
        return False
    known = [(mark.size, mark.mtime_ns)]
    if seen is not None:
        known.append((seen.size, seen.mtime_ns))
    if any(info.st_size == size and info.st_mtime_ns != mtime for size, mtime in known):
        return False
    return _hashes(fd, mark.covered) == (mark.head, mark.tail)


class Seen(msgspec.Struct, array_like=True, frozen=True):
    """The file's size and mtime when it was last read with a record left as it was
    (kept beside the record, so a record need not be rewritten for every append)."""

    checksum: int  # of the record this speaks for
    size: int
    mtime_ns: int


def _hashes(fd: int, covered: int) -> tuple[bytes, bytes]:
    head = pread(fd, min(covered, _TAIL_BYTES), 0)
    start = max(0, covered - _TAIL_BYTES)
    tail = pread(fd, covered - start, start)
    return _digest(head), _digest(tail)


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
        self._loaded: dict[Path, tuple[int, Seen | None]] = {}  # record file: checksum, seen
        self._real_paths: dict[Path, str] = {}

    def file_for(self, session_path: Path) -> Path:
        key = hashlib.blake2b(self._real(session_path).encode(), digest_size=16).hexdigest()
        return self.folder / f"{key}.bin"

    def _real(self, session_path: Path) -> str:
        real = self._real_paths.get(session_path)
        if real is None:
            real = self._real_paths[session_path] = os.path.realpath(session_path)
        return real

    def load(self, session_path: Path, fd: int) -> tuple[Stamp, _T] | None:
        """The record for the file open as ``fd``, if there is one and it still holds."""
        target = self.file_for(session_path)
        try:
            data = target.read_bytes()
            envelope = _envelope_decoder.decode(data)
            if envelope.format != _FORMAT or envelope.path != self._real(session_path):
                return None
            if zlib.crc32(envelope.record) != envelope.checksum:
                return None
            seen = None
            if os.fstat(fd).st_size != envelope.stamp.size:  # else the stamp tells it all
                seen = _read_seen(target, envelope.checksum)
            if not still_valid(envelope.stamp, fd, seen):
                return None
            record: _T = self._decoder.decode(envelope.record)
        except (OSError, ValueError, msgspec.MsgspecError):
            # None yet, unreadable, or damaged (UnicodeDecodeError is a ValueError):
            # read the file instead.
            return None
        self._loaded[target] = (envelope.checksum, seen)
        return envelope.stamp, record

    def note_read(self, session_path: Path, fd: int) -> None:
        """Keep the size and mtime of the file open as ``fd``, whose record (just
        loaded) is left as it is although the file grew: a later rewrite that keeps
        this size is then noticed (see still_valid)."""
        target = self.file_for(session_path)
        loaded = self._loaded.get(target)
        if loaded is None:
            return
        checksum, seen = loaded
        info = os.fstat(fd)
        now = Seen(checksum, info.st_size, info.st_mtime_ns)
        if now != seen:
            _write_whole(target.with_suffix(_SEEN), _seen_encoder.encode(now))

    def save(self, session_path: Path, mark: Stamp, record: _T) -> None:
        """Write the record; a cache that cannot be written is simply not kept."""
        try:
            payload = self._encoder.encode(record)
        except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
            return  # values msgpack cannot hold (integers beyond 64 bits): no cache
        real = self._real(session_path)
        envelope = _Envelope(_FORMAT, real, mark, zlib.crc32(payload), payload)
        target = self.file_for(session_path)
        if _write_whole(target, _envelope_encoder.encode(envelope)):
            with contextlib.suppress(OSError):
                target.with_suffix(_SEEN).unlink(missing_ok=True)  # it spoke for the old one
            for older in range(1, self._version):  # records of an older layout
                shutil.rmtree(self.folder.with_name(f"{self._kind}-{older}"), ignore_errors=True)


def _read_seen(record: Path, checksum: int) -> Seen | None:
    try:
        seen = _seen_decoder.decode(record.with_suffix(_SEEN).read_bytes())
    except (OSError, ValueError, msgspec.MsgspecError):
        return None
    return seen if seen.checksum == checksum else None


def _write_whole(target: Path, data: bytes) -> bool:
    """Write ``data`` to a temporary file renamed to ``target``; False if it failed."""
    folder = target.parent
    if os.path.islink(folder):  # a link planted at our record folder: never write through it
        return False
    try:
        ensure_dir(folder)  # the records hold message text: private, like the sessions
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return False
    return True


_SEEN = ".seen"
_seen_decoder = msgspec.msgpack.Decoder(Seen)
_seen_encoder = msgspec.msgpack.Encoder()
_envelope_decoder = msgspec.msgpack.Decoder(_Envelope)
_envelope_encoder = msgspec.msgpack.Encoder()
