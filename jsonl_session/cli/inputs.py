"""How commands get at the session file they are given, and what they say when a
write changed more than it appended.

- FILE may be ``-`` for standard input wherever a command only reads (show, tree,
  context, stats, export, textconv, doctor without --repair, the --dry-run of compact
  and migrate): it is copied into a private temporary file that lives while the
  command runs, read without the index cache, and named ``<stdin>`` in messages.
  A command that writes FILE refuses ``-`` (a usage error, exit 2).
- An output named with ``-o`` is refused before any work when it cannot be
  written (it exists, or is a folder), not after reading a large session.
- Appending to a file of an older version first rewrites it as version 3 (the
  original kept as a backup), and appending after a torn last line first moves that
  line to a sidecar; `telling_rewrites` says so on stderr, with where the old bytes
  are.

Shared options, errors and output are in options.py.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from jsonl_session.cli.options import STDIN_COPIES, STDIN_META, existing_file, fail, shown, usage
from jsonl_session.cli.output import err

if TYPE_CHECKING:
    from jsonl_session import Session

STDIN = "-"
NEW_FILE_HINT = "refusing to overwrite it (choose another -o)"  # fork and convert: no --force
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


def session_file(ctx: typer.Context, file: Path, *, writes: str | None = None) -> Path:
    """The file to read for FILE: the path (which must exist), or for ``-`` a copy of
    standard input. ``writes``: what the command would write to FILE (it then refuses
    ``-``), or None when it only reads it."""
    if str(file) != STDIN:
        return existing_file(file)
    if writes is not None:
        raise usage(
            f"{ctx.info_name} {writes}, so FILE cannot be '-' (standard input is only "
            "read); give a session file"
        )
    if sys.stdin is None or sys.stdin.isatty():
        raise fail("'-' reads a session from standard input, which is a terminal: pipe a file in")
    data = sys.stdin.buffer.read()
    copy = ctx.with_resource(_stdin_copy(data))
    ctx.meta[STDIN_META] = True  # cache_for: no index cache for a temporary copy
    return copy


@contextlib.contextmanager
def _stdin_copy(data: bytes) -> Iterator[Path]:
    # mkdtemp makes the folder 0700; the copy is made exclusively, 0600 whatever the
    # umask (it holds the session's text), and a failure says where it was going.
    with tempfile.TemporaryDirectory(prefix="jsonl-session-stdin-") as folder:
        path = Path(folder) / "stdin.jsonl"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except OSError as exc:
            raise fail(
                f"cannot copy standard input to {path}: {exc.strerror or exc} "
                "(set TMPDIR to a folder with room)"
            ) from None
        STDIN_COPIES.add(str(path))
        try:
            yield path
        finally:
            STDIN_COPIES.discard(str(path))


@contextlib.contextmanager
def telling_rewrites(session: Session) -> Iterator[None]:
    """Around writes to ``session``: say on stderr when the file was rewritten (an
    older version migrated, the original kept as a backup) or a torn last line was
    moved to a sidecar, even if the write then failed."""
    version = session.version_read
    backups, tails = len(session.backups), len(session.sealed_tails)
    try:
        yield
    finally:
        path = shown(session.path)
        for backup in session.backups[backups:]:
            err().print(
                f"note: {path} was version {version}: rewritten as version 3 before "
                f"writing; the original is kept as {backup}"
            )
        for tail in session.sealed_tails[tails:]:
            err().print(f"note: {path}: its torn last line was moved to {tail} before writing")
