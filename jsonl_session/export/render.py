"""Exporting a session: choosing the format's renderer, and writing an export to a
file safely (never over the session, over another file only when asked).

What the readable formats show is plan.py's; the renderers are markdown.py and
html.py (the self-contained page, imported only when a page is made, as it loads
the Markdown and highlighting libraries); the JSON document is json.py's `export_json`.
"""

from __future__ import annotations

import os
from pathlib import Path

from jsonl_session.errors import SessionWriteError
from jsonl_session.export.json import export_json
from jsonl_session.export.markdown import render_markdown
from jsonl_session.export.plan import ExportFormat, ExportPlan, ExportResult
from jsonl_session.session import Session


def export_session(
    session: Session,
    fmt: ExportFormat,
    *,
    leaf_id: str | None = None,
    all_branches: bool = False,
    redact: bool = False,
) -> ExportResult:
    """Export in ``fmt``; see export_markdown, export_html and export_json."""
    if fmt == "json":
        return export_json(session, leaf_id, redact=redact)
    plan = ExportPlan(session, leaf_id, all_branches, redact)
    if fmt == "html":
        # Markdown and highlighting libraries load only for the page
        from jsonl_session.export.html import render_html

        return ExportResult(render_html(plan), plan.redactor.summary())
    return ExportResult(render_markdown(plan), plan.redactor.summary())


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
    text: str, output: Path, *, force: bool = False, source: Path | None = None
) -> Path:
    """Write an export to ``output``: never over ``source`` (the session), and over an
    existing file only with ``force``. Raises SessionWriteError when refused."""
    if source is not None and output.exists() and os.path.samefile(output, source):
        raise SessionWriteError(f"{output}: is the session being exported; choose another file")
    if output.is_dir():
        raise SessionWriteError(f"{output}: is a directory")
    data = text.encode("utf-8", errors="backslashreplace")
    try:
        with open(output, "wb" if force else "xb") as handle:
            handle.write(data)
    except FileExistsError:
        raise SessionWriteError(f"{output}: already exists; use --force to replace it") from None
    return output
