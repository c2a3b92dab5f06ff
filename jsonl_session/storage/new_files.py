"""New files beside a session file, made so that none is ever seen half made:
exclusive creation that never follows a link, temporary files locked while they live,
sidecars and backups at the first free ``<file>.<kind>-<n>``, and the fsync of a
folder that makes a new name in it durable.

Owns how each of these files comes to exist. It does not decide when one is made or
what it holds (store.py: new session files, sealing torn tails, rewrites), never
removes an abandoned temporary (leftovers.py, which also knows their names) and opens
no session file for appending (store.py's `locked`).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jsonl_session.errors import SessionWriteError
from jsonl_session.storage.leftovers import TEMP_PREFIX, TEMP_SUFFIX
from jsonl_session.storage.portable import (
    BINARY,
    HOLD_TEMP_LOCK,
    NOFOLLOW,
    close_locked,
    set_mode,
    try_lock,
    write_all,
)

FILE_MODE = 0o600
NO_LINKS = (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK)


def create_exclusive(path: Path, data: bytes, sync: bool) -> None:
    """Create ``path`` exclusively (never through a link) with ``data``; on failure
    remove what was created, so no partial file stays behind. Raises
    FileExistsError when the name is taken (by anything, a dangling link included)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | BINARY
    fd = os.open(path, flags, FILE_MODE)
    try:
        write_all(fd, data)
        if sync:
            os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        os.unlink(path)
        raise SessionWriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    os.close(fd)


@contextmanager
def temporary(folder: Path, data: bytes, sync: bool, mode: int) -> Iterator[str]:
    """A new temporary file in ``folder`` holding ``data``: its path, for the caller
    to link or rename into place. Its lock is held while it exists (where the system
    allows), so it is never taken for an abandoned one (leftovers.py); it is removed
    afterwards if still there."""
    fd, temp = tempfile.mkstemp(dir=folder, prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX)
    try:
        try_lock(fd)
        set_mode(fd, temp, mode)
        write_all(fd, data)
        if sync:
            os.fsync(fd)
        if not HOLD_TEMP_LOCK:  # Windows renames no open file: let it go now
            close_locked(fd)
            fd = -1
        yield temp
    finally:
        try:
            if os.path.lexists(temp):
                os.unlink(temp)
        finally:
            if fd >= 0:
                close_locked(fd)


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # Windows opens no folder this way; there is nothing to sync
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sidecar_names(path: Path, kind: str) -> Iterator[Path]:
    n = 1
    while True:
        yield path.with_name(f"{path.name}.{kind}-{n}")
        n += 1


def create_sidecar(path: Path, kind: str, data: bytes) -> Path:
    """Write ``data`` to the first free ``<file>.<kind>-<n>`` (exclusive, fsynced,
    never through a link) and return its path."""
    for candidate in _sidecar_names(path, kind):
        try:
            create_exclusive(candidate, data, sync=True)
        except FileExistsError:
            continue
        return candidate
    raise AssertionError("unreachable")


def link_backup(path: Path, kind: str) -> Path:
    """Keep the current file at the first free ``<file>.<kind>-<n>``: a hard link
    where the file system allows one, else an exclusive copy."""
    for candidate in _sidecar_names(path, kind):
        try:
            os.link(path, candidate, follow_symlinks=False)
            return candidate
        except FileExistsError:
            continue
        except OSError as exc:
            if exc.errno not in NO_LINKS:
                raise
            return create_sidecar(path, kind, path.read_bytes())
    raise AssertionError("unreachable")
