"""Output files: exports, conversions and any other file the library makes that is not
a session it appends to. One writer, so every output gets the same guarantees:

- the bytes go to a temporary file in the target's folder (created exclusively,
  mode 0600 whatever the umask), fsynced as the policy says, and are put in place
  only when complete; a failure (disk full, a file size limit, an interrupt) removes
  the temporary file and leaves the target as it was: nothing half written;
- without ``replace`` an existing target is refused, whatever it is (a file, a
  folder, a symbolic link, a dangling one); with ``replace`` the new file is renamed
  over it, so a symbolic link at the target is replaced, never followed;
- every OSError becomes a SessionWriteError naming the target and the reason.

Writers stream: `output_file` is a context manager yielding a binary writer, so a
renderer can write as it goes (and `copy_from` another file's bytes, copied by the
kernel where it can: `copy_file_into`); `write_output` writes bytes at once (and
output_lines.py's `write_lines` lines as they come). A long output is
synced to disk in the background as it is written (every `SYNC_EVERY` bytes), so the
fsync at its end waits only for its last part; a failure of one of those syncs fails
the write as the last fsync's would. Session files themselves are store.py's (appends,
rewrites) and new_files.py's (sidecars, backups); names built from what a file says
are checked by paths.safe_name.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from jsonl_session.errors import SessionWriteError
from jsonl_session.storage.leftovers import TEMP_PREFIX, TEMP_SUFFIX, remove_abandoned_temps
from jsonl_session.storage.portable import BINARY, HOLD_TEMP_LOCK, NOFOLLOW, try_lock, write_all
from jsonl_session.storage.store import FsyncPolicy, check_fsync_policy

OUTPUT_MODE = 0o600
SYNC_EVERY = 64 << 20
"""Bytes written before the disk is asked to catch up, in the background."""
_NO_LINKS = (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK)


class OutputWriter:
    """The binary writer an `output_file` block writes to. A failed write raises
    SessionWriteError naming the target (the temporary file is removed on the way
    out of the block)."""

    def __init__(self, target: Path, handle: BinaryIO, *, sync_early: bool = False) -> None:
        self.target = target
        self._handle = handle
        self.written = 0
        self._sync_early = sync_early
        self._unsynced = 0
        self._syncing: threading.Thread | None = None
        self._sync_failure: OSError | None = None

    def write(self, data: bytes) -> int:
        try:
            count = self._handle.write(data)
        except OSError as exc:
            raise write_failed(self.target, exc) from None
        self._count(count)
        return count

    def _count(self, count: int) -> None:
        self.written += count
        if self._sync_early:
            self._unsynced += count
            if self._unsynced >= SYNC_EVERY and not self._still_syncing():
                self._unsynced = 0
                self._sync_in_background()

    def copy_from(self, source: int, size: int) -> None:
        """Write ``size`` bytes read from the open file ``source`` (from its start),
        copied by the kernel where it can (`copy_file_into`), as `write` would."""
        try:
            self._handle.flush()  # (what was written before goes first)
            copy_file_into(source, self._handle.fileno(), size)
        except OSError as exc:
            raise write_failed(self.target, exc) from None
        self._count(size)

    def settle(self) -> None:
        """Wait for a sync started in the background; raise its failure, if any (the
        error an fsync reports once: the last fsync would not see it again)."""
        if self._syncing is not None:
            self._syncing.join()
            self._syncing = None
        if self._sync_failure is not None:
            failure, self._sync_failure = self._sync_failure, None
            raise write_failed(self.target, failure)

    def _still_syncing(self) -> bool:
        return self._syncing is not None and self._syncing.is_alive()

    def _sync_in_background(self) -> None:
        try:
            self._handle.flush()
        except OSError as exc:
            raise write_failed(self.target, exc) from None
        fd = self._handle.fileno()

        def sync() -> None:
            try:
                _sync_data(fd)
            except OSError as exc:
                self._sync_failure = exc

        self._syncing = threading.Thread(target=sync, name="output sync", daemon=True)
        self._syncing.start()


def _sync_data(fd: int) -> None:
    sync = getattr(os, "fdatasync", os.fsync)  # (no fdatasync on macOS or Windows)
    sync(fd)


_NOT_HERE = frozenset(
    (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EBADF)
)
"""What copy_file_range or sendfile say when they cannot copy between these two files
(another file system, a pipe or terminal, a file open for appending, no such call):
the next way is tried."""


def copy_file_into(source: int, target: int, size: int) -> None:
    """Copy the first ``size`` bytes of the open file ``source`` to ``target`` at its
    position: in the kernel (copy_file_range, else sendfile), else through a buffer.
    Raises OSError, also when ``source`` holds fewer bytes."""
    done = 0
    for way in _kernel_ways():
        try:
            while done < size:
                count = way(source, target, size - done, done)
                if not count:
                    raise _ended(done, size)
                done += count
            return
        except OSError as exc:
            if done or exc.errno not in _NOT_HERE:
                raise
    os.lseek(source, 0, os.SEEK_SET)
    while done < size:
        block = os.read(source, min(size - done, COPY_BLOCK))
        if not block:
            raise _ended(done, size)
        write_all(target, block)
        done += len(block)


COPY_BLOCK = 1 << 20


def _kernel_ways() -> list[Callable[[int, int, int, int], int]]:
    """(source, target, count, offset in source) -> bytes copied, for each call this
    system has that copies between files without a buffer here."""
    ways: list[Callable[[int, int, int, int], int]] = []
    copy_range = getattr(os, "copy_file_range", None)  # (Linux)
    if copy_range is not None:
        ways.append(lambda source, target, count, at: int(copy_range(source, target, count, at)))
    send = getattr(os, "sendfile", None)
    if send is not None and sys.platform.startswith("linux"):  # (macOS: to sockets only)
        ways.append(lambda source, target, count, at: int(send(target, source, at, count)))
    return ways


def _ended(done: int, size: int) -> OSError:
    return OSError(errno.EIO, f"the file copied ended after {done} of its {size} bytes")


def write_failed(target: Path, exc: OSError) -> SessionWriteError:
    """The error for an OSError met while writing ``target``: where, why, and that the
    target was left alone."""
    return SessionWriteError(f"cannot write {target}: {exc.strerror or exc}; nothing was written")


FORCE_HINT = "use --force to replace it"


def refuse_existing(target: Path, hint: str = FORCE_HINT) -> None:
    """Raise SessionWriteError if ``target`` names anything (a dangling link too)."""
    if os.path.lexists(target):
        raise SessionWriteError(f"{target}: already exists; {hint}")


def check_output(
    target: Path,
    *,
    replace: bool = False,
    source: Path | None = None,
    exists_hint: str = FORCE_HINT,
    make_folders: bool = False,
) -> None:
    """Raise SessionWriteError now if writing ``target`` would be refused: it is the
    session ``source`` being exported, a folder, or (unless ``replace``) a name that
    exists, a dangling link too; or its folder is missing (unless the write makes it:
    ``make_folders``, as `write_lines` can). So that a command refuses before its
    work, not after it; the write checks again (the name may be taken meanwhile)."""
    target = Path(target)
    if source is not None and target.exists() and os.path.samefile(target, source):
        raise SessionWriteError(f"{target}: is the session being exported; choose another file")
    if os.path.isdir(target) and not os.path.islink(target):
        raise SessionWriteError(f"{target}: is a directory")
    if not replace:
        refuse_existing(target, exists_hint)
    if not make_folders and not target.parent.is_dir():
        reach = f"no folder {target.parent} (or none it can reach)"
        raise SessionWriteError(f"cannot write {target}: {reach}")


@contextmanager
def output_file(
    target: Path,
    *,
    replace: bool = False,
    fsync: FsyncPolicy = "always",
    exists_hint: str = FORCE_HINT,
) -> Iterator[OutputWriter]:
    """Write a new ``target`` through the block: ``with output_file(p) as out:
    out.write(chunk)``. The file appears whole when the block ends without an error,
    and not at all otherwise (see the module docstring). ``exists_hint``: what the
    refusal of an existing target tells the user to do."""
    check_fsync_policy(fsync)
    target = Path(target)
    if os.path.isdir(target) and not os.path.islink(target):
        raise SessionWriteError(f"{target}: is a directory")
    if not replace:
        refuse_existing(target, exists_hint)  # before any work: the common refusal costs nothing
    folder = target.parent
    remove_abandoned_temps(folder)  # what killed writes left here
    try:
        # mkstemp opens O_EXCL (a planted link at its random name fails it) with mode
        # 0600; the name is the one new_files.py's temporaries have (SPEC), so a leftover
        # from a killed run is recognisably ours
        fd, temp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise write_failed(target, exc) from None
    try:
        # locked while it exists, so no other write's cleanup takes it for abandoned
        try_lock(fd)
    except OSError as exc:  # no locks here (an NFS mount without a lock daemon)
        os.close(fd)
        _remove_quietly(temp)
        raise write_failed(target, exc) from None
    handle = os.fdopen(fd, "wb")
    writer = OutputWriter(target, handle, sync_early=fsync == "always")
    placed = False
    try:
        yield writer
        writer.settle()
        _finish(handle, target, fsync)
        _put_in_place(temp, target, replace, exists_hint)
        placed = True
    finally:
        with contextlib.suppress(SessionWriteError):
            writer.settle()  # never a sync of a descriptor closed (or reused) under it
        _close_quietly(handle)
        if not placed:
            _remove_quietly(temp)
    if fsync == "always":
        _fsync_folder(folder)


def write_output(
    target: Path,
    data: bytes,
    *,
    replace: bool = False,
    fsync: FsyncPolicy = "always",
    exists_hint: str = FORCE_HINT,
) -> Path:
    """Write ``data`` as a new ``target`` (see `output_file`); return the target."""
    with output_file(target, replace=replace, fsync=fsync, exists_hint=exists_hint) as out:
        out.write(data)
    return Path(target)


def _finish(handle: BinaryIO, target: Path, fsync: FsyncPolicy) -> None:
    """Flush and fsync (by the policy) the temporary file; close it where an open file
    cannot be renamed (Windows), else it stays open, and locked, until it is in place."""
    try:
        handle.flush()
        if fsync == "always":
            os.fsync(handle.fileno())
        if not HOLD_TEMP_LOCK:
            handle.close()
    except OSError as exc:
        raise write_failed(target, exc) from None


def _close_quietly(handle: BinaryIO) -> None:
    # A failed flush of what is being thrown away, or of a file already flushed and in
    # place; the descriptor (and the lock with it) goes anyway.
    with contextlib.suppress(OSError):
        handle.close()


def _put_in_place(temp: str, target: Path, replace: bool, exists_hint: str) -> None:
    """Move the finished temporary file to ``target``: renamed over it when replacing
    (a link at the target is replaced, not followed), else linked there, which fails
    if the name was taken meanwhile."""
    try:
        if replace:
            os.replace(temp, target)
            return
        try:
            os.link(temp, target, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
            _claim_then_rename(temp, target)
        else:
            os.unlink(temp)
    except FileExistsError:
        raise SessionWriteError(f"{target}: already exists; {exists_hint}") from None
    except IsADirectoryError:
        raise SessionWriteError(f"{target}: is a directory") from None
    except OSError as exc:
        raise write_failed(target, exc) from None


def _claim_then_rename(temp: str, target: Path) -> None:
    """Where there are no hard links: claim the name with an empty file made
    exclusively (never through a link), then rename the whole file over our claim."""
    claim = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | BINARY, OUTPUT_MODE)
    os.close(claim)
    try:
        os.replace(temp, target)
    except BaseException:
        _remove_quietly(str(target))
        raise


def _remove_quietly(path: str) -> None:
    # Already gone, or the folder went away: nothing of ours is left to keep.
    with contextlib.suppress(OSError):
        os.unlink(path)


def _fsync_folder(folder: Path) -> None:
    """Make the new name durable. Folders cannot be opened on Windows: nothing to do."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # the file is whole and in place; only the name's durability is unsure
    finally:
        os.close(fd)
