"""Durable writes: locked appends, torn-tail sealing, atomic rewrites, sidecars.

Owns every byte the library writes to a session file and the rules that keep a
user's data safe: an append is one ``write()`` of whole lines on an ``O_APPEND``
descriptor under an exclusive advisory lock; a torn last line is copied to a
sidecar before it is cut off; new files and rewrites go through a temporary file
in the same folder (fsync, then link or rename), a rewrite keeping the original as
a backup (a rewrite killed between linking the backup and renaming the new file in
is completed by the next one, keeping that backup: leftovers.py tells our backup link
from any other, which is refused); temporary files are locked while they live, and
abandoned ones are removed by the next new file or rewrite in their folder;
sidecars and backups are created exclusively and never follow links (how each of
these files is made, temporaries and the folder's fsync included, is new_files.py's).
It does not decide *what* to write (session/) or when to seal and rewrite (writer.py),
and never parses entries (loader.py); where session files live is paths.py's.

The lock is portable.py's (``flock`` on POSIX, filelock's ``LockFileEx`` on Windows;
it also holds the other calls that differ, and says what Windows lacks). After
taking the lock the writer checks that the path still names the inode it locked,
because a rewrite renames a new file into place; if not, it reopens and locks again.
Other programs (pi) append without a lock; the rules below are written so that such
a writer never loses a line.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from jsonl_session.errors import SessionWriteError, UnsyncedWrite
from jsonl_session.format.jsonio import NotJson, decode_any
from jsonl_session.storage.leftovers import (
    own_backup_links,
    own_temp_links,
    remove_abandoned_temps,
)
from jsonl_session.storage.new_files import (
    FILE_MODE,
    NO_LINKS,
    create_exclusive,
    create_sidecar,
    fsync_dir,
    link_backup,
    temporary,
)
from jsonl_session.storage.paths import ensure_dir
from jsonl_session.storage.portable import BINARY, close_locked, lock_exclusive, pread

FsyncPolicy = Literal["always", "never"]
FSYNC_POLICIES: tuple[FsyncPolicy, ...] = ("always", "never")
_TAIL_PROBE = 64 * 1024
TORN_TAIL_QUIET_SECONDS = 2.0
"""An unterminated last line is cut off only if the file has not changed for this
long: a younger one may be a line another program is writing right now (a reader
can see part of a large write), so it is only closed with a newline instead."""
SETTLE_SECONDS = 0.05
"""How long a recent unterminated last line is given to get its newline from the
program writing it before this one closes it: a whole line written in one write()
(as pi writes) is seen part done for microseconds, and a newline appended meanwhile
would land after it, leaving a blank line."""


def check_fsync_policy(fsync: str) -> None:
    if fsync not in FSYNC_POLICIES:
        raise SessionWriteError(f"fsync policy must be 'always' or 'never', not {fsync!r}")


def real_path(path: Path) -> Path:
    """The file a path names, through symbolic links: rewrites and sidecars go
    next to it, so a linked session is not split in two."""
    return Path(os.path.realpath(path))


def write_new_file(path: Path, data: bytes, fsync: FsyncPolicy) -> None:
    """Create ``path`` (it must not exist) with mode 0600 holding ``data``.

    The bytes go to a temporary file first and are linked into place only when
    complete, so a failed write never leaves a partial file at ``path``. Where the
    file system has no hard links, the file is created exclusively and removed
    again if writing it fails.
    """
    check_fsync_policy(fsync)
    try:
        ensure_dir(path.parent)
    except (OSError, ValueError) as exc:  # a file where a folder should be, no permission
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SessionWriteError(f"cannot write {path}: {reason}; nothing was written") from None
    sync = fsync == "always"
    remove_abandoned_temps(path.parent)  # what killed writes left here (leftovers.py)
    with contextlib.ExitStack() as stack:
        try:
            temp = stack.enter_context(temporary(path.parent, data, sync, FILE_MODE))
        except OSError as exc:
            raise SessionWriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
        try:
            os.link(temp, path)
        except FileExistsError:
            raise SessionWriteError(f"{path}: already exists; refusing to overwrite it") from None
        except OSError as exc:
            if exc.errno not in NO_LINKS:
                raise SessionWriteError(f"{path}: cannot create: {exc.strerror}") from None
            try:
                create_exclusive(path, data, sync)
            except FileExistsError:
                message = f"{path}: already exists; refusing to overwrite it"
                raise SessionWriteError(message) from None
    if sync:
        fsync_dir(path.parent)


@dataclass(slots=True)
class SealResult:
    """What sealing the tail did. ``sidecar``: a torn fragment was copied there.
    ``closed``: the last line was ended with a newline and left in the file (a whole
    entry lacking its newline, or a fragment too young to cut); otherwise a torn
    fragment was cut off. ``settled``: the program writing the last line ended it
    while this one waited: the file changed, and nothing was done to it."""

    sidecar: Path | None = None
    fragment: bytes = b""
    closed: bool = False
    settled: bool = False


class LockedFile:
    """An open, exclusively locked session file for appending (see `locked`)."""

    def __init__(self, path: Path, fd: int, fsync: FsyncPolicy) -> None:
        check_fsync_policy(fsync)
        self.path = path
        self.real = real_path(path)
        self.fd = fd
        self.fsync = fsync
        self.recovered: list[Path] = []  # backups left by killed rewrites, now kept as such

    @property
    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def byte_at(self, offset: int) -> bytes:
        return pread(self.fd, 1, offset)

    def read_from(self, offset: int) -> bytes:
        """Bytes from ``offset`` to the end (for picking up other writers' lines)."""
        chunks: list[bytes] = []
        position = offset
        while True:
            chunk = pread(self.fd, 1 << 20, position)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            position += len(chunk)

    def seal_tail(self, *, quiet_seconds: float = TORN_TAIL_QUIET_SECONDS) -> SealResult:
        """Make the file end with a newline without losing a byte.

        A last line with no newline that is valid JSON is a whole entry: it gets its
        newline. One that is not valid JSON is torn: if the file has not changed for
        ``quiet_seconds`` it is copied to a sidecar (fsynced) and then cut off; if it
        has, it may be a line another program is still writing, so it only gets a
        newline and stays in the file (reported as a bad line if it stays torn).
        """
        info = os.fstat(self.fd)
        size = info.st_size
        if size == 0 or pread(self.fd, 1, size - 1) == b"\n":
            return SealResult()
        if quiet_seconds > 0 and time.time() - info.st_mtime < quiet_seconds:
            settled = self._settled()  # (a line another program is writing right now)
            if settled is None:
                return SealResult(settled=True)
            info, size = settled, settled.st_size
        start = self._start_of_last_line(size)
        fragment = self.read_from(start)
        body = fragment[:-1] if fragment.endswith(b"\r") else fragment
        try:
            decode_any(body)
            whole = True
        except NotJson:
            whole = False
        quiet = quiet_seconds <= 0 or time.time() - info.st_mtime >= quiet_seconds
        if whole or not body.strip() or not quiet:
            # A whole entry, blanks readers skip anyway, or a line that may still be
            # being written: it stays, and only gets its newline.
            self.append(b"\n")
            return SealResult(closed=True)
        sidecar = create_sidecar(self.real, "torn", fragment)
        if os.fstat(self.fd).st_size != size:  # someone wrote meanwhile: keep it all
            self.append(b"\n")
            return SealResult(sidecar=sidecar, fragment=fragment, closed=True)
        # A line appended between the check above and the cut would be cut too; it
        # would have fused with the fragment anyway, and the window is microseconds.
        os.ftruncate(self.fd, start)
        if self.fsync == "always":
            os.fsync(self.fd)
        return SealResult(sidecar=sidecar, fragment=fragment)

    def _settled(self) -> os.stat_result | None:
        """None once the file ends with a newline, waiting up to `SETTLE_SECONDS`;
        else the file's state then."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            time.sleep(0.0005)
            info = os.fstat(self.fd)
            if info.st_size and pread(self.fd, 1, info.st_size - 1) == b"\n":
                return None
            if time.monotonic() >= deadline:
                return info

    def _start_of_last_line(self, size: int) -> int:
        end = size
        while end > 0:
            begin = max(0, end - _TAIL_PROBE)
            chunk = pread(self.fd, end - begin, begin)
            newline = chunk.rfind(b"\n")
            if newline != -1:
                return begin + newline + 1
            end = begin
        return 0

    def append(self, data: bytes) -> int:
        """Write whole lines in one ``write()``; return the offset they start at.

        A short or failed write is undone (or closed with a newline if someone
        wrote after it), so no partial line is left for the next writer to fuse with.
        """
        if not data.endswith(b"\n"):
            raise SessionWriteError("internal: appends must be whole lines")
        try:
            written = os.write(self.fd, data)
        except OSError as exc:
            raise SessionWriteError(f"{self.path}: write failed: {exc.strerror}") from None
        end = os.lseek(self.fd, 0, os.SEEK_CUR)
        start = end - written
        if written != len(data):
            self._undo_partial(start, end)
            raise SessionWriteError(
                f"{self.path}: only {written} of {len(data)} bytes could be written "
                "(disk full or a file size limit?); nothing was added"
            )
        if self.fsync == "always":
            try:
                os.fsync(self.fd)
            except OSError as exc:
                raise UnsyncedWrite(self.path, start, exc) from None
        return start

    def read_range(self, offset: int, length: int) -> bytes:
        return pread(self.fd, length, offset) if length > 0 else b""

    def _undo_partial(self, start: int, end: int) -> None:
        try:
            if os.fstat(self.fd).st_size == end:
                os.ftruncate(self.fd, start)
            else:
                os.write(self.fd, b"\n")
        except OSError:
            pass  # the reader skips the fragment; the next append seals it

    def _backup_left_by_a_killed_rewrite(self, info: os.stat_result) -> Path | None:
        """None if the file has one link. Our temporary names of it (a create killed
        between linking it in and removing that name: leftovers.py) are removed: the
        bytes stay under the session's name, and we hold its lock, so no write of ours
        is using them. If the other links are all our backups of it (a rewrite killed
        between linking the backup and renaming the new file in), the first of them,
        which this rewrite keeps as its backup (it holds the same bytes: it is the same
        file). Any other extra link is refused: rewriting would split it from the
        session."""
        if info.st_nlink <= 1:
            return None
        for temp in own_temp_links(self.real, info):
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
        info = os.fstat(self.fd)
        if info.st_nlink <= 1:
            return None
        ours = own_backup_links(self.real, info)
        if ours and len(ours) == info.st_nlink - 1:
            return ours[0]
        raise SessionWriteError(
            f"{self.path}: has {info.st_nlink} hard links; rewriting it would split "
            "them. Migrate a copy instead."
        )

    def replace_contents(
        self, data: bytes, backup_kind: str, *, built_from: int | None = None
    ) -> Path:
        """Atomically replace the file's bytes, keeping the original as a backup.

        The new content goes to a temporary file in the same folder, is fsynced and
        renamed over the original; the original stays reachable at the returned
        backup path. ``built_from`` is the size of the original the content was made
        from (default: its size now): whole lines another program (which takes no
        lock) appended to the original after that are carried over to the end of
        the new file. The lock moves to the new file.
        """
        info = os.fstat(self.fd)
        if built_from is None:
            built_from = info.st_size
        left_backup = self._backup_left_by_a_killed_rewrite(info)
        remove_abandoned_temps(self.real.parent)  # what killed writes left here
        with temporary(self.real.parent, data, True, stat.S_IMODE(info.st_mode)) as temp:
            backup = left_backup or link_backup(self.real, backup_kind)
            try:
                os.replace(temp, self.real)
            except BaseException:
                if left_backup is None:
                    backup.unlink()  # the original is untouched; the link would block retries
                raise
        if left_backup is not None:
            self.recovered.append(left_backup)
        fsync_dir(self.real.parent)
        new_fd = _open_locked(self.path)
        # Writers that opened the old file before the rename may still have added
        # lines to it (now the backup): carry the whole ones over.
        late = self.read_from(built_from)
        late = late[: late.rfind(b"\n") + 1]
        close_locked(self.fd)  # the lock on the old inode, now the backup, goes
        self.fd = new_fd
        if late:
            self.append(late if data.endswith(b"\n") else b"\n" + late)
        return backup


def _open_locked(path: Path) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | BINARY)
        except FileNotFoundError:
            raise SessionWriteError(f"{path}: the session file no longer exists") from None
        try:
            lock_exclusive(fd)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
        except BaseException:
            close_locked(fd)
            raise
        if same:
            return fd
        close_locked(fd)  # renamed over while we waited: lock the file now at the path


@contextmanager
def locked(path: Path, fsync: FsyncPolicy = "always") -> Iterator[LockedFile]:
    """Hold an exclusive lock on an existing session file for the duration."""
    try:
        fd = _open_locked(path)
    except PermissionError:
        raise SessionWriteError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise SessionWriteError(f"{path}: is a directory") from None
    handle = LockedFile(path, fd, fsync)
    try:
        yield handle
    finally:
        close_locked(handle.fd)
