"""The HTML export: one self-contained page that reads without JavaScript or network.

Owns the page: the title and facts, the branch index (html_tree.py; only when the
session branches), then each entry as a section with an anchor (``#e-<id>``): user
and assistant messages with their Markdown rendered, tool results under the call
they answer, compactions and branch summaries folded, and small one-line notes for
model and thinking-level changes, labels, names and extension state. The pieces
inside an entry are html_parts.py's, Markdown and highlighting markup.py's, the
stylesheet html_style.py's; what the export shows is plan.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonl_session.export.html_parts import PartRenderer
from jsonl_session.export.html_style import page_css
from jsonl_session.export.html_tree import branch_index, run_anchor
from jsonl_session.export.markup import escape, json_html
from jsonl_session.export.plan import ExportPlan
from jsonl_session.format.walk import as_text, loads_text
from jsonl_session.views.runs import Run
from jsonl_session.views.transcript import EntryView


def render_html(plan: ExportPlan) -> str:
    return "".join(iter_html(plan))


def iter_html(plan: ExportPlan) -> Iterator[str]:
    """The page in pieces, one entry at a time (memory bounded by the largest entry);
    the pieces joined are the whole page."""
    title = escape(plan.title())
    facts = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in plan.facts())
    yield (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{title}</title><style>{page_css()}</style></head><body>"
    )
    yield f'<header class="top"><h1>{title}</h1><dl class="facts">{facts}</dl></header>'
    yield "\n" + branch_index(plan)
    yield "\n<main>"
    parts = PartRenderer()
    for run, entries in plan.shown:
        yield "\n" + ("<h2>Conversation</h2>" if run is None else _run_heading(plan, run))
        for view in plan.take_views(entries):
            yield "\n" + _entry(plan, parts, view)
    yield "\n</main></body></html>\n"


def _run_heading(plan: ExportPlan, run: Run) -> str:
    title = f"Branch {escape(run.number)}"
    if run.from_id is not None:
        title += f' · from <a href="#e-{escape(run.from_id)}">{escape(run.from_id)}</a>'
    badge = ' <span class="badge">active</span>' if run is plan.leaf_run else ""
    return f'<h2 id="{escape(run_anchor(run))}">{title}{badge}</h2>'


def _entry(plan: ExportPlan, parts: PartRenderer, view: EntryView) -> str:
    entry = view.entry
    anchor = escape(f"e-{entry.id}")
    ident = f'<a class="id mono" href="#{anchor}" title="link to this entry">{escape(entry.id)}</a>'
    label = plan.labels.get(entry.id)
    chip = f'<span class="label">{escape(label)}</span>' if label else ""
    meta = _time(entry.timestamp) + ident + chip
    if entry.role == "system":
        return _system(view, anchor, meta)
    if view.is_note or view.kind == "unknown":
        return _note(parts, view, anchor, meta)
    heading = f'<span class="who">{escape(view.heading)}</span>'
    detail = escape(view.detail)
    call_id = ""
    if view.kind == "tool-result":
        call_id = as_text(entry.data().get("message", {}).get("toolCallId", ""))
        call = parts.call_of(call_id)
        if call is not None and call.main:
            detail += f" · <code>{escape(call.main)}</code>"
    detail = f"{detail} · " if detail else ""
    body = parts.parts(view, call_id)
    if view.kind == "summary":
        words = sum(len(p.text.split()) for p in view.parts if p.kind == "text")
        body = f"<details><summary>The summary · {words} words</summary>{body}</details>"
    return (
        f'<section class="entry {escape(view.kind)}" id="{anchor}">'
        f'<div class="meta">{heading}{detail}{meta}</div>{body}</section>'
    )


def _note(parts: PartRenderer, view: EntryView, anchor: str, meta: str) -> str:
    """A small one-line entry: its text, once (no heading repeating it); data it
    carries folded under the line."""
    said = " · ".join(p.text for p in view.parts if p.kind == "note") or view.heading
    line = f'<span class="note-text">{escape(said)}</span> <span class="meta">{meta}</span>'
    rest = [p for p in view.parts if p.kind != "note"]
    if len(rest) == 1 and rest[0].kind == "json":
        line = f'<details class="data"><summary>{line}</summary>{json_html(rest[0].text)}</details>'
    else:
        line += "".join(parts.part(p) for p in rest)
    return f'<div class="entry note" id="{anchor}">{line}</div>'


def _system(view: EntryView, anchor: str, meta: str) -> str:
    """A system message (pi 1.5): the prompt's sections set or removed, tools
    added or removed, folded under one line saying which."""
    raw = next((p.text for p in view.parts if p.kind == "json"), "{}")
    try:
        loaded = loads_text(raw)
    except ValueError:
        loaded = None
    message: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    found = message.get("sections")
    sections: dict[str, Any] = found if isinstance(found, dict) else {}
    said = [f"sections {', '.join(map(str, sections))}"] if sections else []
    for key, verb in (("toolsAdded", "tools added"), ("toolsRemoved", "tools removed")):
        tools = message.get(key)
        names = (
            [t.get("name") for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        )
        said += [f"{verb} {', '.join(as_text(name, 100) for name in names)}"] if names else []
    line = f'<span class="note-text">System prompt · {escape(" · ".join(said) or "set")}</span>'
    shown = []
    if isinstance(message.get("content"), str) and message["content"].strip():
        shown.append(f'<pre class="out">{escape(message["content"])}</pre>')
    for key, text in sections.items():
        value = escape(text) if isinstance(text, str) else "<em>removed</em>"
        shown.append(
            f'<div class="section"><b>{escape(str(key))}</b><pre class="out">{value}</pre></div>'
        )
    body = (
        "".join(shown)
        + f'<details class="data"><summary>message (JSON)</summary>{json_html(raw)}</details>'
    )
    summary = f'{line} <span class="meta">{meta}</span>'
    folded = f"<details><summary>{summary}</summary>{body}</details>"
    return f'<div class="entry note system" id="{anchor}">{folded}</div>'


def _time(timestamp: str) -> str:
    if not timestamp:
        return ""
    shown = timestamp.replace("T", " ").split(".")[0].removesuffix("Z")
    return f'<time datetime="{escape(timestamp)}" title="UTC">{escape(shown)}</time>'
