"""Durable writes: locked appends, torn-tail sealing, atomic rewrites, paths.

Owns every byte the library writes to a session file and the rules that keep a
user's data safe: an append is one ``write()`` of whole lines on an ``O_APPEND``
descriptor under an exclusive advisory lock; a torn last line is copied to a
sidecar before it is cut off; a rewrite goes through a temporary file in the same
folder, fsync and rename, with the original kept as a backup. It does not decide
*what* to write (session.py) and never parses entries (loader.py).

Locking uses ``fcntl.flock`` (POSIX). After taking the lock the writer checks that
the path still names the inode it locked, because a rewrite renames a new file
into place; if not, it reopens and locks again.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from jsonl_session.errors import SessionWriteError
from jsonl_session.jsonio import NotJson, decode_any

FsyncPolicy = Literal["always", "never"]
FSYNC_POLICIES: tuple[FsyncPolicy, ...] = ("always", "never")
FILE_MODE = 0o600
DIR_MODE = 0o700
_TAIL_PROBE = 64 * 1024


def session_root() -> Path:
    """``$JSONL_SESSION_DIR``, else the platform's user data folder for sessions."""
    configured = os.environ.get("JSONL_SESSION_DIR")
    if configured:
        return Path(configured).expanduser()
    home = Path.home()
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", home / "AppData" / "Local"))
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "jsonl-session" / "sessions"


def encode_cwd(cwd: str) -> str:
    """The folder name for a working directory, as pi names it."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    for char in "/\\:":
        trimmed = trimmed.replace(char, "-")
    return f"--{trimmed}--"


def session_dir_for(cwd: str, root: Path | None = None) -> Path:
    return (root if root is not None else session_root()) / encode_cwd(cwd)


def ensure_dir(path: Path) -> None:
    """Create ``path`` and missing parents with mode 0700 (existing ones are left)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, DIR_MODE)


def check_fsync_policy(fsync: str) -> None:
    if fsync not in FSYNC_POLICIES:
        raise SessionWriteError(f"fsync policy must be 'always' or 'never', not {fsync!r}")


def write_new_file(path: Path, data: bytes, fsync: FsyncPolicy) -> None:
    """Create ``path`` (it must not exist) with mode 0600 holding ``data``."""
    check_fsync_policy(fsync)
    ensure_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        raise SessionWriteError(f"{path}: already exists; refusing to overwrite it") from None
    try:
        os.fchmod(fd, FILE_MODE)
        _write_all(fd, data)
        if fsync == "always":
            os.fsync(fd)
    finally:
        os.close(fd)
    if fsync == "always":
        _fsync_dir(path.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def free_sidecar(path: Path, kind: str) -> Path:
    """The first ``<file>.<kind>-<n>`` that does not exist yet."""
    n = 1
    while True:
        candidate = path.with_name(f"{path.name}.{kind}-{n}")
        if not candidate.exists():
            return candidate
        n += 1


@dataclass(slots=True)
class SealResult:
    """What sealing the tail did: the sidecar holding a torn fragment, or that a
    newline had to be added after a whole entry that lacked one."""

    sidecar: Path | None = None
    fragment: bytes = b""
    needs_newline: bool = False


class LockedFile:
    """An open, exclusively locked session file for appending (see `locked`)."""

    def __init__(self, path: Path, fd: int, fsync: FsyncPolicy) -> None:
        check_fsync_policy(fsync)
        self.path = path
        self.fd = fd
        self.fsync = fsync

    @property
    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def byte_at(self, offset: int) -> bytes:
        return os.pread(self.fd, 1, offset)

    def read_from(self, offset: int) -> bytes:
        """Bytes from ``offset`` to the end (for picking up other writers' lines)."""
        chunks: list[bytes] = []
        position = offset
        while True:
            chunk = os.pread(self.fd, 1 << 20, position)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            position += len(chunk)

    def seal_tail(self) -> SealResult:
        """Make the file end with a newline without losing a byte.

        A last line with no newline that is not valid JSON is copied to a sidecar
        (fsynced) and only then cut off. A last line with no newline that *is* valid
        JSON is a whole entry: the caller adds the newline in its next write.
        """
        size = self.size
        if size == 0 or os.pread(self.fd, 1, size - 1) == b"\n":
            return SealResult()
        start = self._start_of_last_line(size)
        fragment = self.read_from(start)
        body = fragment[:-1] if fragment.endswith(b"\r") else fragment
        if body.strip():
            try:
                decode_any(body)
            except NotJson:
                pass
            else:
                return SealResult(needs_newline=True)
        sidecar = free_sidecar(self.path, "torn")
        write_new_file(sidecar, fragment, "always")
        os.ftruncate(self.fd, start)
        if self.fsync == "always":
            os.fsync(self.fd)
        return SealResult(sidecar=sidecar, fragment=fragment)

    def _start_of_last_line(self, size: int) -> int:
        end = size
        while end > 0:
            begin = max(0, end - _TAIL_PROBE)
            chunk = os.pread(self.fd, end - begin, begin)
            newline = chunk.rfind(b"\n")
            if newline != -1:
                return begin + newline + 1
            end = begin
        return 0

    def append(self, data: bytes) -> int:
        """Write whole lines in one ``write()``; return the offset they start at."""
        if not data.endswith(b"\n"):
            raise SessionWriteError("internal: appends must be whole lines")
        offset = self.size
        written = os.write(self.fd, data)
        if written != len(data):  # a short write on a regular file: disk full or a limit
            raise SessionWriteError(
                f"{self.path}: only {written} of {len(data)} bytes could be written"
            )
        if self.fsync == "always":
            os.fsync(self.fd)
        return offset

    def replace_contents(self, data: bytes, backup_kind: str) -> Path:
        """Atomically replace the file's bytes, keeping the original as a backup.

        The new content goes to a temporary file in the same folder, is fsynced and
        renamed over the original; the original stays reachable at the returned
        backup path. The lock moves to the new file.
        """
        backup = free_sidecar(self.path, backup_kind)
        temp = self.path.with_name(f".{self.path.name}.tmp-{os.getpid()}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            os.fchmod(fd, os.fstat(self.fd).st_mode & 0o777)
            _write_all(fd, data)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            temp.unlink(missing_ok=True)
            raise
        os.close(fd)
        try:
            os.link(self.path, backup)
        except OSError:
            shutil.copy2(self.path, backup)
        os.replace(temp, self.path)
        _fsync_dir(self.path.parent)
        new_fd = _open_locked(self.path)
        os.close(self.fd)  # releases the lock on the old inode, now the backup
        self.fd = new_fd
        return backup


def _open_locked(path: Path) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise SessionWriteError(f"{path}: the session file no longer exists") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            return fd
        os.close(fd)  # renamed over while we waited: lock the file now at the path


@contextmanager
def locked(path: Path, fsync: FsyncPolicy = "always") -> Iterator[LockedFile]:
    """Hold an exclusive lock on an existing session file for the duration."""
    try:
        fd = _open_locked(path)
    except PermissionError:
        raise SessionWriteError(f"{path}: permission denied") from None
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise SessionWriteError(f"{path}: is a directory") from None
        raise
    handle = LockedFile(path, fd, fsync)
    try:
        yield handle
    finally:
        os.close(handle.fd)
