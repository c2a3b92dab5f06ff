"""The index cache: what reading a session file found, kept in the user's cache folder
so the next read costs only the bytes appended since.

Owns where caches live (``$JSONL_SESSION_CACHE_DIR``, else the platform's user cache
folder; ``JSONL_SESSION_NO_CACHE=1`` turns caching off), how a cache file is named (a
hash of the session file's real path, one folder per kind of record), how records are
written (whole, to a temporary file renamed in) and read back: a record is used only
for the same path and while its stamp holds (stamps.py's check: the bytes it covers
are still the file's first). A file whose size and times changed since it was stamped
is checked over the whole covered part once, after which its new size and times are
kept in ``<record>.seen`` and the next open is cheap again. Files are append-only, so
such a record plus the bytes after it is the whole file. A record that fails a check,
cannot be decoded or belongs to another file is not used and is written again.

A record that cannot be written (a value msgpack cannot hold, a full disk, no
permission, a file size limit, a link in the way) is skipped: the caller reads the
file as if there were no cache, and the first such failure of a process is told to the
listener set with `on_record_not_kept` (the CLI prints it as a note on stderr). What a
record holds is the caller's business (loader.py and table.py: entries). The listing's
facts and search's texts are rows of storage/facts_index.py, stamped the same way.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable
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
    try_lock,
    write_all,
)
from jsonl_session.storage.stamps import Seen, Stamp, check

CacheOption = bool | str | Path | None
"""Where to cache: None or True for the default folder, False for no cache, or a folder."""

_FORMAT = 2  # 1 had no ctime and no CRC-32 of the covered part
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
            checked = check(mark, fd, seen, read=not unchanged_only)
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

    The temporary file has our name and is locked while it exists, as new_files.py's,
    so what a killed write left is told from a live one: the first record written to a
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
        write_all(fd, data)
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


_SEEN = ".seen"
_seen_decoder = msgspec.msgpack.Decoder(Seen)
_seen_encoder = msgspec.msgpack.Encoder()
_envelope_decoder = msgspec.msgpack.Decoder(_Envelope)
_envelope_encoder = msgspec.msgpack.Encoder()
