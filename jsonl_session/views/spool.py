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
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import weakref
from typing import TYPE_CHECKING, NamedTuple

from jsonl_session.errors import SessionWriteError
from jsonl_session.storage.portable import BINARY, write_all

if TYPE_CHECKING:
    from jsonl_session.storage.outputs import OutputWriter

_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | BINARY | getattr(os, "O_CLOEXEC", 0)
_names = itertools.count()


class Spool:
    """A private folder (mode 0700) where the workers of one rendering leave their
    texts; removed with what is left in it once this object and every piece of it
    is gone (or at exit)."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="jsonl-session-spool-")
        weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)


def new_spool() -> Spool | None:
    """A spool, or None where no temporary folder can be made (the texts then come
    through the pipes, as they always may)."""
    try:
        return Spool()
    except OSError:
        return None


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
