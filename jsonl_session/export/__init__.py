"""Exporting a session as Markdown, one self-contained HTML page, or JSON.

plan.py decides what an export shows; markdown.py, html.py and json.py render it;
render.py picks the format and writes the file.
"""

from jsonl_session.export.json import export_json
from jsonl_session.export.plan import FORMATS, ExportFormat, ExportPlan, ExportResult
from jsonl_session.export.render import export_html, export_markdown, export_session, write_export

__all__ = [
    "FORMATS",
    "ExportFormat",
    "ExportPlan",
    "ExportResult",
    "export_html",
    "export_json",
    "export_markdown",
    "export_session",
    "write_export",
]
