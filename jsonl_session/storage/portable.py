"""The few operating-system calls storage/ makes that differ between POSIX and Windows,
each behind one name, so the modules that read and write session files have no
platform branches and nothing here needs a POSIX-only module to import.

- ``lock_exclusive``, ``try_lock``, ``close_locked``: the exclusive lock on an open
  file: ``flock`` on the whole file where ``fcntl`` imports (POSIX; advisory; the
  lock jsonl-session always took, so older versions and other flock users still
  exclude each other), else filelock's descriptor lock (``LockFileEx`` on the file's
  first byte on Windows). filelock's lock on POSIX is this same ``flock`` call, with
  the same errors taken as "held"; calling it directly spares every process that
  locks the 10 ms filelock's import takes (a first open writing its cache record, an
  append). ``fcntl`` is imported behind ``ImportError``, so the package imports
  where it is missing.
- ``pread``: a read at an offset (``os.pread``; on Windows, which has none, a seek
  and a read on a descriptor no other thread shares); ``write_all``: every byte of a
  buffer to a descriptor (one ``write`` may take only part of it, on any platform).
- ``BINARY``, ``NOFOLLOW``, ``NONBLOCK``: open flags, 0 where the platform has none.
- ``set_mode``: a new file's permission bits.
- ``HOLD_TEMP_LOCK``: whether a temporary file can stay open (and locked) while it is
  renamed into place: not on Windows.

What Windows lacks, and what it costs there: locks are mandatory, so while a writer
holds one (one append, milliseconds) another program reading the file's first byte
gets "permission denied" and must retry; there is no ``O_NOFOLLOW``, so sidecars and
new files are created without refusing a link planted at their name; and an open
file cannot be renamed over, while a rewrite holds the file it replaces open (and
locked), so rewrites (migrate, repair, the first write to a v1/v2 file) fail there
with an error and leave the file as it was.
filelock, where it is the lock, is imported by the first lock.
What the bytes are and when they are written is store.py's.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path

BINARY: int = getattr(os, "O_BINARY", 0)
"""Windows: no newline translation. Every descriptor storage/ opens has it."""
NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)

HOLD_TEMP_LOCK = os.name != "nt"

_FIRST_WAIT = 0.0005
_LONGEST_WAIT = 0.01
"""Waits between tries for a held lock grow from the first to the longest (seconds):
an append holds the lock for about a millisecond, so a waiter gets in soon after."""

_pread: Callable[[int, int, int], bytes] | None = getattr(os, "pread", None)

_flock: Callable[[int, int], object] | None
try:
    import fcntl
except ImportError:  # (Windows) filelock's lock, imported by the first lock
    _flock, _TRY_EXCLUSIVE, _UNLOCK = None, 0, 0
else:
    _flock, _TRY_EXCLUSIVE, _UNLOCK = fcntl.flock, fcntl.LOCK_EX | fcntl.LOCK_NB, fcntl.LOCK_UN
_HELD = frozenset({errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK})
"""What a lock held by another is said as (as filelock reads it: some filesystems say
EACCES); any other error is raised."""


def lock_exclusive(fd: int) -> None:
    """Take the exclusive lock on ``fd``'s file, waiting while another holds it."""
    wait = _FIRST_WAIT
    while not try_lock(fd):
        time.sleep(wait)
        wait = min(wait * 2, _LONGEST_WAIT)


def try_lock(fd: int) -> bool:
    """Take the exclusive lock on ``fd``'s file if no one holds it; whether it was taken."""
    if _flock is None:
        from filelock import lock_descriptor

        return lock_descriptor(fd, blocking=False)
    try:
        _flock(fd, _TRY_EXCLUSIVE)
    except OSError as exc:
        if exc.errno in _HELD:
            return False
        raise
    return True


def close_locked(fd: int) -> None:
    """Give the lock back, then close ``fd``. (Closing alone gives it back, at once on
    POSIX; Windows asks for the explicit unlock.)"""
    try:
        if _flock is None:
            from filelock import unlock_descriptor

            unlock_descriptor(fd)
        else:
            _flock(fd, _UNLOCK)
    finally:
        os.close(fd)


def pread(fd: int, length: int, offset: int) -> bytes:
    """Up to ``length`` bytes at ``offset`` (fewer only at the end of the file)."""
    if _pread is not None:
        return _pread(fd, length, offset)
    return seek_read(fd, length, offset)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``: ``os.write`` again for what one call left."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def seek_read(fd: int, length: int, offset: int) -> bytes:
    """`pread` where the platform has none: moves ``fd``'s position, which appends on
    an ``O_APPEND`` descriptor ignore."""
    os.lseek(fd, offset, os.SEEK_SET)
    chunks: list[bytes] = []
    while length > 0:
        chunk = os.read(fd, length)
        if not chunk:
            break
        chunks.append(chunk)
        length -= len(chunk)
    return b"".join(chunks)


def set_mode(fd: int, path: str | Path, mode: int) -> None:
    """Give the file open as ``fd`` at ``path`` the permission bits ``mode``."""
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows before Python 3.13: only the read-only bit means anything
        os.chmod(path, mode)
