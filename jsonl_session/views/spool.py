"""A long export's text handed from its workers to the writing process through files,
not through the pool's pipes.

Owns the spool (a private temporary folder a rendering makes, removed once neither it
nor any of its pieces is in use), what a worker does with a slice's text when there
is one (`spool_text`: a file of its own there, or None when it cannot write one) and
the piece the writing process gets for it (`SpooledPiece`): the file's bytes reach an
output file by a copy in the kernel (storage/outputs.py's `copy_file_into`), or are
read once when the caller wants them in memory. Through a pipe, the same bytes were
pickled, sent, received and cut up in Python: a third of the writing process's time
on a long export. Which slices go to workers, and in what order their texts are
taken, is views/slices.py's.

A spool holds the lock of a file in its folder (``.lock``) while it lives; a folder
a killed rendering left (its lock free, the folder ours) is removed by the next
spool this user makes (`sweep_spools`, once a process).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import time
import weakref
from typing import TYPE_CHECKING, NamedTuple

from jsonl_session.errors import SessionWriteError
from jsonl_session.storage.portable import BINARY, NOFOLLOW, close_locked, try_lock, write_all

if TYPE_CHECKING:
    from jsonl_session.storage.outputs import OutputWriter

_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | BINARY | getattr(os, "O_CLOEXEC", 0)
_names = itertools.count()


class Spool:
    """A private folder (mode 0700) where the workers of one rendering leave their
    texts; removed with what is left in it once this object and every piece of it
    is gone (or at exit)."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix=SPOOL_PREFIX)
        lock = -1
        try:
            lock = os.open(os.path.join(self.folder, _LOCK), _FILE_FLAGS, 0o600)
            # (a new file of a new private folder: no one else holds it; a file system
            # without locks refuses, and then there is no spool: a sweep would not
            # know this one lives)
            try_lock(lock)
        except OSError:
            if lock >= 0:
                os.close(lock)
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        weakref.finalize(self, _let_go, self.folder, lock)


SPOOL_PREFIX = "jsonl-session-spool-"
_LOCK = ".lock"


def _let_go(folder: str, lock: int) -> None:
    with contextlib.suppress(OSError):
        close_locked(lock)  # (Windows removes no open file)
    shutil.rmtree(folder, ignore_errors=True)


def new_spool() -> Spool | None:
    """A spool, or None where no temporary folder can be made (the texts then come
    through the pipes, as they always may). The first of a process removes the
    spools killed renderings left (`sweep_spools`)."""
    global _swept
    if not _swept:
        _swept = True
        sweep_spools()
    try:
        return Spool()
    except OSError:
        return None


_swept = False
SWEEP_AFTER_SECONDS = 60.0
"""A spool's folder changes each time a worker leaves a text in it or one is taken;
one unchanged this long whose lock is free was left by a rendering that was killed
(a spool takes its lock a moment after making its folder)."""


def sweep_spools(folder: str | None = None) -> list[str]:
    """Remove the spools in ``folder`` (the temporary folder) that no live rendering
    holds: folders of ours (this user's, not a link) named as spools, unchanged for
    `SWEEP_AFTER_SECONDS`, whose lock no one holds; or without a lock (made before
    spools had one) and unchanged for leftovers.py's `ABANDONED_AFTER_SECONDS`. The
    folders removed; one that cannot be looked at is left alone."""
    from jsonl_session.storage.leftovers import ABANDONED_AFTER_SECONDS

    folder = folder if folder is not None else tempfile.gettempdir()
    removed: list[str] = []
    try:
        found = [e for e in os.scandir(folder) if e.name.startswith(SPOOL_PREFIX)]
    except OSError:
        return removed
    user = os.geteuid() if hasattr(os, "geteuid") else None  # (Windows: none)
    for entry in found:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_dir(follow_symlinks=False) or (user is not None and info.st_uid != user):
            continue
        unchanged = time.time() - info.st_mtime
        if unchanged < SWEEP_AFTER_SECONDS:
            continue  # (one being made may not hold its lock yet)
        try:
            lock = os.open(os.path.join(entry.path, _LOCK), os.O_RDWR | BINARY | NOFOLLOW)
        except FileNotFoundError:
            if unchanged < ABANDONED_AFTER_SECONDS:
                continue
            lock = -1
        except OSError:
            continue
        if lock >= 0:
            try:
                taken = try_lock(lock)
            except OSError:
                taken = False
            if not taken:
                os.close(lock)
                continue  # a live rendering's
            close_locked(lock)
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.path)
    return removed


def spool_text(folder: str, data: bytes) -> str | None:
    """A worker's: ``data`` (a slice's text) written to a new file in ``folder``, its
    name; None when the file cannot be written (the folder gone, the disk full): the
    text then goes through the pipe."""
    name = os.path.join(folder, f"{os.getpid()}-{next(_names)}")
    try:
        fd = os.open(name, _FILE_FLAGS, 0o600)
    except OSError:
        return None
    try:
        write_all(fd, data)
    except OSError:
        os.close(fd)
        _remove(name)
        return None
    os.close(fd)
    return name


class SpooledText(NamedTuple):
    """What a worker hands back for a text it spooled: the file and its size."""

    name: str
    size: int


class SpooledPiece:
    """A piece of an export's text that a worker left in a file of the spool: UTF-8
    without a lone surrogate, never only whitespace, ``size`` bytes. Taken once:
    `take` reads it, `copy_to` writes it to an output file; either removes the file."""

    __slots__ = ("_spool", "name", "size")

    def __init__(self, spool: Spool, name: str, size: int) -> None:
        self._spool = spool  # (the folder stays while a piece of it does)
        self.name = name
        self.size = size

    def take(self) -> bytes:
        """The piece's bytes (its file then removed)."""
        try:
            with open(self.name, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise spool_lost(self.name, exc.strerror or str(exc)) from None
        _remove(self.name)
        if len(data) != self.size:
            raise spool_lost(self.name, f"it holds {len(data)} bytes of the {self.size} written")
        return data

    def copy_to(self, out: OutputWriter) -> None:
        """Write the piece's bytes to ``out``, copied by the kernel where it can (the
        file then removed)."""
        fd = self._opened()
        try:
            out.copy_from(fd, self.size)
        finally:
            os.close(fd)
        _remove(self.name)

    def copy_to_fd(self, target: int) -> None:
        """Write the piece's bytes to the open file ``target`` (a stream's: a pipe,
        a terminal, a file) at its position, as `copy_to` does; raises OSError as
        writing there does (the file removed all the same)."""
        from jsonl_session.storage.outputs import copy_file_into  # (the writer's, not a worker's)

        fd = self._opened()
        try:
            copy_file_into(fd, target, self.size)
        finally:
            os.close(fd)
            _remove(self.name)

    def _opened(self) -> int:
        try:
            return os.open(self.name, os.O_RDONLY | BINARY)
        except OSError as exc:
            raise spool_lost(self.name, exc.strerror or str(exc)) from None


def spool_lost(name: str, why: str) -> SessionWriteError:
    """The error for a spool file that cannot be read back as its worker wrote it
    (something else removed or cut it)."""
    return SessionWriteError(f"an export's text kept in {name} was lost: {why}")


def _remove(name: str) -> None:
    # (failing, the file goes with the spool's folder at the end)
    with contextlib.suppress(OSError):
        os.unlink(name)
