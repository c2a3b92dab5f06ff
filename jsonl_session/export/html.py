"""The HTML export: one self-contained page (no network, no JavaScript) with the
session's facts, the branch tree with labels, and the conversation, tool calls and
outputs folded in ``<details>``, images as ``data:`` URLs, every session text escaped.

What the export shows is plan.py's; this module only renders an ExportPlan as HTML.
"""

from __future__ import annotations

import html
import re

from jsonl_session.export.plan import ExportPlan
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views.runs import Run
from jsonl_session.views.transcript import EntryView, Part

_CSS = (
    "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;"
    "color:#1f2328;background:#fff}h1{font-size:1.5rem}h2{border-bottom:1px solid #d0d7de}"
    "dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem}dt{font-weight:600}"
    "dd{margin:0}code,pre{font:13px/1.4 ui-monospace,monospace}pre{background:#f6f8fa;"
    "padding:.6rem;white-space:pre-wrap;word-break:break-word}.entry{margin:.8rem 0;"
    "border-left:4px solid #d0d7de;padding:.2rem .8rem}.user{border-color:#0969da}"
    ".assistant{border-color:#8250df}.tool-result,.bash{border-color:#9a6700}"
    ".summary{border-color:#1a7f37;background:#f0fff4}.custom,.unknown{border-color:#bf8700}"
    ".entry.note{border:0;color:#57606a;font-size:.9em;margin:.3rem 0}.meta{color:#57606a;"
    "font-size:.85em}.who{font-weight:600;color:#1f2328}.text{white-space:pre-wrap}"
    ".thinking .text{color:#57606a;font-style:italic}.error{color:#cf222e}.label{"
    "background:#fff8c5;border:1px solid #d4a72c;border-radius:1em;padding:0 .5em}"
    "summary{cursor:pointer;color:#57606a}ul.tree,ul.tree ul{list-style:none;padding-left:1rem}"
    "ol{margin:0;color:#57606a}li.on-path{color:#1f2328;font-weight:600}"
    ".run-name{font-weight:600;color:#8250df}img{max-width:100%;border:1px solid #d0d7de}"
)
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def render_html(plan: ExportPlan) -> str:
    title = _e(plan.title())
    facts = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in plan.facts())
    body = [f'<header><h1>{title}</h1><dl class="facts">{facts}</dl></header>']
    body.append(f"<nav><h2>Branches</h2>{_html_tree(plan)}</nav><main>")
    for run, entries in plan.shown:
        if run is None:
            body.append("<h2>Conversation</h2>")
        else:
            body.append(f"<h2>{_e(plan.run_title(run))}</h2>")
        body.extend(_html_entry(plan, plan.view(entry)) for entry in entries)
    body.append("</main>")
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}</style></head><body>"
    )
    return head + "\n".join(body) + "</body></html>\n"


def _html_tree(plan: ExportPlan) -> str:
    out: list[str] = ['<ul class="tree">']
    stack: list[Run | str] = ["</ul>", *reversed(plan.runs)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        out.append(f'<li><span class="run-name">{_e(item.number)}</span><ol class="chain">')
        for node in item.nodes:
            out.append(_html_node(plan, node.entry))
        out.append("</ol>")
        if item.branches:
            out.append("<ul>")
            stack.append("</ul></li>")
            stack.extend(reversed(item.branches))
        else:
            out.append("</li>")
    return "".join(out)


def _html_node(plan: ExportPlan, entry: StoredEntry) -> str:
    ident = f"<code>{_e(entry.id)}</code>"
    if entry.id in plan.anchors:
        ident = f'<a href="#e-{_e(entry.id)}">{ident}</a>'
    label = plan.labels.get(entry.id)
    extra = f' <span class="label">{_e(label)}</span>' if label else ""
    if entry.id == plan.leaf_id:
        extra += " ◀ leaf"
    css = ' class="on-path"' if entry.id in plan.active else ""
    return f"<li{css}>{ident} {_e(plan.view(entry).summary(70))}{extra}</li>"


def _html_entry(plan: ExportPlan, view: EntryView) -> str:
    entry = view.entry
    label = plan.labels.get(entry.id)
    tag = f' <span class="label">{_e(label)}</span>' if label else ""
    detail = f" · {_e(view.detail)}" if view.detail else ""
    meta = (
        f'<div class="meta"><span class="who">{_e(view.heading)}</span>{detail} · '
        f"<code>{_e(entry.id)}</code> · {_e(entry.timestamp)}{tag}</div>"
    )
    parts = "".join(_html_part(part) for part in view.parts)
    return f'<section class="entry {view.kind}" id="e-{_e(entry.id)}">{meta}{parts}</section>'


def _html_part(part: Part) -> str:
    text = _e(part.text)
    if part.kind == "text":
        return f'<div class="text">{text}</div>'
    if part.kind == "thinking":
        return _details("Thinking", f'<div class="text">{text}</div>', ' class="thinking"')
    if part.kind == "tool-call":
        call = f"Tool call <code>{_e(part.title)}</code> <small>{_e(part.ref)}</small>"
        return _details(call, f"<pre>{text}</pre>")
    if part.kind == "output":
        lines = len(part.text.splitlines())
        what = "Error output" if part.title == "error" else "Output"
        # short outputs open, long ones folded
        return _details(f"{what} ({lines} lines)", f"<pre>{text}</pre>", " open" * (lines <= 12))
    if part.kind == "command":
        return f'<pre class="command">$ {text}</pre>'
    if part.kind == "image":
        if part.mime in _IMAGE_TYPES and _BASE64.fullmatch(part.text):
            return f'<img alt="image" src="data:{part.mime};base64,{part.text}">'
        return f'<p class="note">[image: {_e(part.mime)}]</p>'
    if part.kind in ("error", "note"):
        return f'<p class="{part.kind}">{text}</p>'
    return _details(_e(part.title or "data"), f"<pre>{text}</pre>")


def _details(summary: str, body: str, attributes: str = "") -> str:
    return f"<details{attributes}><summary>{summary}</summary>{body}</details>"
