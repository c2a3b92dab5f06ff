"""Exporting a session as Markdown, one self-contained HTML page, or JSON.

plan.py decides what a readable export shows; markdown.py and html.py render that
plan (the page's parts in html_parts.py, its branch index in html_tree.py, its
stylesheet in html_style.py, Markdown and highlighting in markup.py); json.py builds
the JSON document from the session itself; render.py picks the format and writes the
file. Entry views, runs and redaction are views/'s.
"""

from jsonl_session.export.json import export_json
from jsonl_session.export.plan import FORMATS, ExportFormat, ExportPlan, ExportResult
from jsonl_session.export.render import (
    ExportChunks,
    export_chunks,
    export_html,
    export_markdown,
    export_session,
    write_export,
)

__all__ = [
    "FORMATS",
    "ExportChunks",
    "ExportFormat",
    "ExportPlan",
    "ExportResult",
    "export_chunks",
    "export_html",
    "export_json",
    "export_markdown",
    "export_session",
    "write_export",
]
