"""The index cache: what reading a session file found, kept in the user's cache folder
so the next read costs only the bytes appended since.

Owns where caches live (``$JSONL_SESSION_CACHE_DIR``, else the platform's user cache
folder; ``JSONL_SESSION_NO_CACHE=1`` turns caching off), how a cache file is named (a
hash of the session file's real path, one folder per kind of record), how records are
written (whole, to a temporary file renamed in; a failure to write is ignored) and the
check that a record still describes its file: the same path, device and inode, a
file no shorter than the part the record covers, and the same bytes at the head and
at the end of that part (hashes). Files are append-only, so such a record plus the
bytes after it is the whole file. A record that fails a check, cannot be decoded or
belongs to another file is not used and is written again. What a record holds is the
caller's business (loader.py: entries; listing.py: listing facts; search.py: texts).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec

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
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Caches"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", home / "AppData" / "Local"))
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")
    return base / "jsonl-session"


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


def still_valid(mark: Stamp, fd: int) -> bool:
    """Whether the open file ``fd`` still starts with the bytes ``mark`` describes.

    A file that grew is trusted to have been appended to (the head and the end of the
    covered part are checked); one of the same size but a new mtime was rewritten."""
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != (mark.device, mark.inode) or info.st_size < mark.covered:
        return False
    if info.st_size == mark.size and info.st_mtime_ns != mark.mtime_ns:
        return False
    return _hashes(fd, mark.covered) == (mark.head, mark.tail)


def _hashes(fd: int, covered: int) -> tuple[bytes, bytes]:
    head = os.pread(fd, min(covered, _TAIL_BYTES), 0)
    start = max(0, covered - _TAIL_BYTES)
    tail = os.pread(fd, covered - start, start)
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
        self._decoder = msgspec.msgpack.Decoder(record_type)
        self._encoder = msgspec.msgpack.Encoder(enc_hook=enc_hook)

    def file_for(self, session_path: Path) -> Path:
        key = hashlib.blake2b(_real(session_path).encode(), digest_size=16).hexdigest()
        return self.folder / f"{key}.bin"

    def load(self, session_path: Path, fd: int) -> tuple[Stamp, _T] | None:
        """The record for the file open as ``fd``, if there is one and it still holds."""
        try:
            data = self.file_for(session_path).read_bytes()
            envelope = _envelope_decoder.decode(data)
            if envelope.format != _FORMAT or envelope.path != _real(session_path):
                return None
            if zlib.crc32(envelope.record) != envelope.checksum:
                return None
            if not still_valid(envelope.stamp, fd):
                return None
            record: _T = self._decoder.decode(envelope.record)
        except (OSError, ValueError, msgspec.MsgspecError):
            # None yet, unreadable, or damaged (UnicodeDecodeError is a ValueError):
            # read the file instead.
            return None
        return envelope.stamp, record

    def save(self, session_path: Path, mark: Stamp, record: _T) -> None:
        """Write the record; a cache that cannot be written is simply not kept."""
        try:
            payload = self._encoder.encode(record)
        except (TypeError, ValueError, OverflowError, msgspec.MsgspecError):
            return  # values msgpack cannot hold (integers beyond 64 bits): no cache
        envelope = _Envelope(_FORMAT, _real(session_path), mark, zlib.crc32(payload), payload)
        data = _envelope_encoder.encode(envelope)
        target = self.file_for(session_path)
        with contextlib.suppress(OSError):
            # The records hold message text: private folders, like the sessions'.
            self.folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.folder.mkdir(exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(temporary, target)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise


_envelope_decoder = msgspec.msgpack.Decoder(_Envelope)
_envelope_encoder = msgspec.msgpack.Encoder()


def _real(path: Path) -> str:
    return os.path.realpath(path)
