"""A new file written from its lines as they come (`write_lines`): in blocks, with
outputs.py's guarantees (complete or absent, 0600, never over anything), making the
folders it needs and removing those it made when the write fails. What writes its
lines so: conversions (dialects/convert.py) and forks (fork.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from jsonl_session.errors import SessionWriteError
from jsonl_session.storage.outputs import FORCE_HINT, output_file
from jsonl_session.storage.paths import ensure_dir
from jsonl_session.storage.store import FsyncPolicy

LINES_BYTES = 1 << 20  # `write_lines` writes its lines in blocks of about this much


def write_lines(
    target: Path,
    lines: Iterable[bytes],
    *,
    fsync: FsyncPolicy = "always",
    exists_hint: str = FORCE_HINT,
    make_folders: bool = False,
) -> int:
    """Write ``lines`` as a new ``target`` (see `output_file`), each ended by a
    newline, as they come: memory holds a block of them (`LINES_BYTES`; a longer
    line is written as it is), never the file. How many lines were written.
    ``make_folders``: the target's missing folders are made (0700) first, and those
    still empty are removed again when the write fails (a line that could not be
    made): a failed conversion leaves no trace in another agent's folders."""
    with _folders_for(target) if make_folders else contextlib.nullcontext():
        return _write_lines(target, lines, fsync, exists_hint)


@contextmanager
def _folders_for(target: Path) -> Iterator[None]:
    made: list[Path] = []  # only what this call created (ensure_dir says), in order
    try:
        ensure_dir(Path(target).parent, made)
    except (OSError, ValueError) as exc:  # a file where a folder should be, a NUL, no right
        _remove_empty(made)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        shown = str(target).replace("\0", "\\0")
        raise SessionWriteError(f"cannot write {shown}: {reason}; nothing was written") from None
    try:
        yield
    except BaseException:
        _remove_empty(made)
        raise


def _remove_empty(made: list[Path]) -> None:
    """Remove the folders of ``made`` (created in that order) that are still empty."""
    for folder in reversed(made):
        with contextlib.suppress(OSError):  # (not empty: someone else's now)
            os.rmdir(folder)


def _write_lines(target: Path, lines: Iterable[bytes], fsync: FsyncPolicy, hint: str) -> int:
    count = 0
    with output_file(target, fsync=fsync, exists_hint=hint) as out:
        block: list[bytes] = []
        size = 0
        for line in lines:
            count += 1
            if len(line) >= LINES_BYTES:  # not copied into a block
                out.write(b"".join(block))
                block, size = [], 0
                out.write(line)
                out.write(b"\n")
                continue
            block += (line, b"\n")
            size += len(line) + 1
            if size >= LINES_BYTES:
                out.write(b"".join(block))
                block, size = [], 0
        out.write(b"".join(block))
    return count
