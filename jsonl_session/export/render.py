"""Exporting a session: choosing the format's renderer, and writing an export to a
file safely (never over the session, over another file only when asked; the writing
itself is storage/outputs.py's: whole or nothing, mode 0600, links never followed).

What the readable formats show is plan.py's; the renderers are markdown.py and
html.py (the self-contained page, imported only when a page is made, as it loads
the Markdown and highlighting libraries); the JSON document is json.py's `export_json`.
A long export's workers are started here once it knows what it shows, and let go if
no one took them; the pieces they wrote reach a file as their bytes.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from jsonl_session.export.json import iter_json
from jsonl_session.export.markdown import iter_markdown
from jsonl_session.export.plan import ExportFormat, ExportPlan, ExportResult
from jsonl_session.processes import WarmHelpers, drop_warm_pool
from jsonl_session.session import Session
from jsonl_session.storage.outputs import check_output, output_file
from jsonl_session.views.pieces import Piece, encoded_pieces, file_pieces, texts_of
from jsonl_session.views.redact import Redactor
from jsonl_session.views.slices import lines_size, warm_workers
from jsonl_session.views.spool import SpooledPiece

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


class ExportChunks:
    """An export as it is made, piece by piece (iterate once): a large session is
    written as it goes, holding one entry at a time. ``redactions`` (by kind) is
    complete once every piece was taken. ``warm``: the workers started for it, let
    go once the pieces are done with (or this object is), if none took them."""

    def __init__(
        self, pieces: Iterator[Piece], redactor: Redactor, warm: ProcessPoolExecutor | None = None
    ) -> None:
        self._pieces = _then_let_go(pieces, warm) if warm is not None else pieces
        self._redactor = redactor
        if warm is not None:  # (never iterated: its generator's `finally` never runs)
            weakref.finalize(self, drop_warm_pool, warm)

    def __iter__(self) -> Iterator[str]:
        return texts_of(self._pieces)

    def encoded(self) -> Iterator[bytes]:
        """The pieces as `write_export` writes them (UTF-8; a lone surrogate as a
        backslash escape), small ones joined: a worker's pieces as it wrote them,
        never decoded here (views/slices.py's `encoded_pieces`)."""
        return encoded_pieces(self._pieces)

    def _file_pieces(self) -> Iterator[bytes | SpooledPiece]:
        """`encoded`, a piece a worker left in a file passed on as that file, for
        `write_export` to copy (views/slices.py's `file_pieces`)."""
        return file_pieces(self._pieces)

    @property
    def redactions(self) -> dict[str, int]:
        return self._redactor.summary()


def export_chunks(
    session: Session,
    fmt: ExportFormat,
    *,
    leaf_id: str | None = None,
    all_branches: bool = False,
    redact: bool = False,
    workers: int | None = 1,
) -> ExportChunks:
    """The export of `export_session`, in pieces to write as they come. ``workers``:
    processes a long export is rendered by (None: one per core; the text is the
    same). They are spawned, so a script asking for more than one must
    keep its work under ``if __name__ == "__main__":`` (see catalog/parallel.py)."""
    if fmt == "json":
        redactor = Redactor(enabled=redact, helpers=WarmHelpers() if workers != 1 else None)
        # every entry is shown: the file's size, which its lines nearly fill, says
        # whether they spread, so the workers start before the entries are made (a
        # fifth of a second from a cache record of a long session)
        warm = _warm(session, _file_size(session), workers, fmt, redact)
        return ExportChunks(iter_json(session, leaf_id, redactor, workers), redactor, warm)
    # The workers start while the plan and the export's head are made: at once for a
    # Markdown export of every branch or of the active path, which in a file long
    # enough to spread is nearly all of it; once the path is known for a leaf named
    # (a branch left long ago may be short), and for a page, whose workers import the
    # Markdown and highlighting libraries: started for a short path, they would take
    # the cores from this process for longer than the page takes.
    early = fmt == "markdown" and (all_branches or leaf_id is None)
    warm = _warm(session, _file_size(session), workers, fmt, redact) if early else None
    try:
        plan = ExportPlan(session, leaf_id, all_branches, redact)
        if workers != 1:  # a huge text met before the spread: its scans to a waiting worker
            plan.redactor.helpers = WarmHelpers()
        if not early:
            warm = _warm(session, lines_size(plan.shown_entries()), workers, fmt, redact)
        if fmt == "html":
            # Markdown and highlighting libraries load only for the page
            from jsonl_session.export.html import iter_html

            return ExportChunks(iter_html(plan, workers), plan.redactor, warm)
        return ExportChunks(iter_markdown(plan, workers), plan.redactor, warm)
    except BaseException:
        if warm is not None:  # (None would let go of another caller's waiting pool)
            drop_warm_pool(warm)
        raise


def _warm(
    session: Session, size: int, workers: int | None, fmt: ExportFormat, redact: bool
) -> ProcessPoolExecutor | None:
    if session.dialect != "pi":  # another agent's lines are not the file's: one process
        return None
    # the rules, which a redactor loads at its first text, compiled as the workers start
    rules = ("jsonl_session.redaction.finding",) if redact else ()
    return warm_workers(workers, size, _RENDERERS[fmt], *rules)


def _file_size(session: Session) -> int:
    try:
        return os.stat(session.path).st_size
    except OSError:
        return 0  # (not written yet: the export decides by its entries)


_RENDERERS = {
    "markdown": "jsonl_session.export.markdown",
    "html": "jsonl_session.export.html",
    "json": "jsonl_session.export.json",
}


def _then_let_go(pieces: Iterator[Piece], warm: ProcessPoolExecutor) -> Iterator[Piece]:
    """``pieces``, then the workers started for them let go if none took them (the
    lines after a page's highlighted start were too few to spread)."""
    try:
        yield from pieces
    finally:
        drop_warm_pool(warm)


def export_session(
    session: Session,
    fmt: ExportFormat,
    *,
    leaf_id: str | None = None,
    all_branches: bool = False,
    redact: bool = False,
) -> ExportResult:
    """Export in ``fmt``; see export_markdown, export_html and export_json. For a large
    session, `export_chunks` and `write_export` write it without holding it whole."""
    chunks = export_chunks(session, fmt, leaf_id=leaf_id, all_branches=all_branches, redact=redact)
    text = "".join(chunks)
    return ExportResult(text, chunks.redactions)


def export_markdown(
    session: Session, leaf_id: str | None = None, all_branches: bool = False, redact: bool = False
) -> ExportResult:
    """Markdown readable on its own: title, facts, then the path to the leaf (default:
    the active leaf) or, with ``all_branches``, an outline and every branch."""
    return export_session(
        session, "markdown", leaf_id=leaf_id, all_branches=all_branches, redact=redact
    )


def export_html(
    session: Session, leaf_id: str | None = None, all_branches: bool = False, redact: bool = False
) -> ExportResult:
    """One self-contained HTML page: facts, the branch tree, the conversation."""
    return export_session(
        session, "html", leaf_id=leaf_id, all_branches=all_branches, redact=redact
    )


def write_export(
    text: str | Iterable[str], output: Path, *, force: bool = False, source: Path | None = None
) -> Path:
    """Write an export (its text, or its pieces as `export_chunks` makes them) to
    ``output``: never over ``source`` (the session), and over an existing file only
    with ``force`` (a symbolic link there is replaced, never followed). The file is
    mode 0600 and appears whole or not at all (storage/outputs.py). Raises
    SessionWriteError when refused or when writing fails."""
    output = Path(output)
    check_output(output, replace=force, source=source)
    if isinstance(text, ExportChunks):
        pieces: Iterable[bytes | SpooledPiece] = text._file_pieces()
    else:
        pieces = encoded_pieces([text] if isinstance(text, str) else text)
    with output_file(output, replace=force) as out:
        for piece in pieces:
            if isinstance(piece, bytes):
                out.write(piece)
            else:  # a worker's text, copied from its file by the kernel
                piece.copy_to(out)
    return output
