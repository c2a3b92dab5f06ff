"""The HTML export: one self-contained page that reads without JavaScript or network.

Owns the page: the title and facts, the branch index (html_tree.py; only when the
session branches), then each entry as a section with an anchor (``#e-<id>``): user
and assistant messages with their Markdown rendered, tool results under the call
they answer, compactions and branch summaries folded, and small one-line notes for
model and thinking-level changes, labels, names and extension state. The pieces
inside an entry are html_parts.py's, Markdown and highlighting markup.py's, the
stylesheet html_style.py's, which call a result answers html_calls.py's; what the
export shows is plan.py's. The common messages, when nothing is redacted, are written
straight from their bodies by html_lean.py, the same HTML as through their views.

A long page is rendered here until nothing more is highlighted (markup.py's budget,
and `HIGHLIGHT_SPAN`), then by worker processes, a slice of entries each
(views/slices.py; `html_entry` is what a worker runs): the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonl_session.export.html_calls import CallFinder, CallsSaid, call_told, told_call
from jsonl_session.export.html_lean import lean_message
from jsonl_session.export.html_parts import CallSeen, PartRenderer, entry_meta
from jsonl_session.export.html_style import page_css
from jsonl_session.export.html_tree import branch_index, run_anchor
from jsonl_session.export.markup import escape, json_html
from jsonl_session.export.plan import ExportPlan, Spread
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import as_text, loads_text
from jsonl_session.views.pieces import Piece, joined, piece_size
from jsonl_session.views.redact import Redactor
from jsonl_session.views.runs import Run
from jsonl_session.views.transcript import EntryView, view_entry

HIGHLIGHT_SPAN = 64 << 20
"""Code is highlighted only in the entries within this many bytes of lines from the
page's start (and within markup.py's budget): past it a page is long enough to be
rendered by worker processes, which have no budget to share."""


def iter_html(plan: ExportPlan, workers: int | None = 1) -> Iterator[Piece]:
    """The page in pieces, one entry at a time (memory bounded by the largest entry);
    the pieces joined are the whole page. A long page is rendered by this process
    until nothing more is highlighted, the rest by ``workers`` processes
    (views/slices.py): the same text, their pieces as the workers wrote them
    (`Utf8Piece`: a file takes them as they are)."""
    figures = plan.figures_later()  # read by a worker meanwhile, when one waits already
    title = escape(plan.title())
    index = branch_index(plan)
    plan.forget_lookups()  # the index's, not needed by the entries
    body = _body(plan, workers)
    # While the worker reads, this process renders the page's start (held: the
    # facts come first), up to HELD_CHARS.
    held: list[Piece] = []
    size = 0
    while not figures.ready() and size < HELD_CHARS:
        piece = next(body, None)
        if piece is None:
            break
        held.append(piece)
        size += piece_size(piece)
    facts = plan.facts(figures.get())
    listed = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts)
    yield (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>{title}</title><style>{page_css()}</style></head><body>"
    )
    yield f'<header class="top"><h1>{title}</h1><dl class="facts">{listed}</dl></header>'
    yield "\n" + index
    yield "\n<main>"
    yield from held
    del held
    yield from body
    yield "\n</main></body></html>\n"


HELD_CHARS = 4 << 20
"""At most this much of a page's start is held while a worker reads the figures of
its facts (the header): past it, this process waits for them."""


def _body(plan: ExportPlan, workers: int | None) -> Iterator[Piece]:
    parts = PartRenderer()
    finder = CallFinder(plan.session.get, plan.redactor.enabled)
    lean = not plan.redactor.enabled  # (messages written without their views: html_lean.py)

    def answered(entry: StoredEntry, ref: str) -> CallSeen | None:
        return finder.answered(entry, ref, parts)

    spread: Spread | None = None
    may_spread = workers != 1
    before = 0  # bytes of the lines of the entries rendered so far
    for index, (run, entries) in enumerate(plan.shown):
        yield "\n" + ("<h2>Conversation</h2>" if run is None else _run_heading(plan, run))
        if spread is not None:
            yield from spread.pieces_of(index)
            continue
        bodies = plan.take_bodies(entries)
        for at in range(len(entries)):
            if before >= HIGHLIGHT_SPAN:
                parts.markup.budget = 0
            if may_spread and parts.markup.spent:
                # what is left has nothing highlighted: each slice renders on its own
                may_spread = False
                state = SliceState(plan.labels)
                context = finder.slice_context(parts)
                spread = plan.spread(html_entry, state, workers, (index, at), context, utf8=True)
                if spread is not None:
                    bodies.close()  # its batch of lines read ahead is the workers' now
                    yield from spread.pieces_of(index)
                    break
            entry, view, data = next(bodies)
            before += entry.length
            pieces = None
            if view is None and lean:
                assert data is not None
                pieces = lean_message(plan.labels, parts, entry, data, answered)
            if pieces is None:
                if view is None:
                    view = view_entry(entry, plan.redactor, data)
                pieces = _entry(plan.labels, parts, view, finder.call(view, parts))
            yield from joined(["\n", *pieces])


class SliceState:
    """What the entries of one worker's slice share: the labels, and the renderer
    the worker makes for the slice (it remembers the slice's calls; nothing is
    highlighted). Only the labels travel to the worker."""

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels
        self._parts: PartRenderer | None = None

    @property
    def parts(self) -> PartRenderer:
        if self._parts is None:
            self._parts = PartRenderer(budget=0)
        return self._parts

    def __getstate__(self) -> dict[str, str]:
        return self.labels

    def __setstate__(self, labels: dict[str, str]) -> None:
        self.labels = labels
        self._parts = None


def html_entry(
    entry: StoredEntry | bytes,
    data: dict[str, Any] | None,
    said: CallsSaid,
    state: SliceState,
    redactor: Redactor,
) -> list[str]:
    """One entry of the page, from its body, in a worker (views/slices.py's `Render`),
    in pieces (a long output's text not joined)."""
    assert isinstance(entry, StoredEntry)
    parts = state.parts
    if data is not None and not redactor.enabled:
        pieces = lean_message(
            state.labels, parts, entry, data, lambda _result, ref: told_call(said, ref, parts)
        )
        if pieces is not None:
            return joined(["\n", *pieces])
    view = view_entry(entry, redactor, data)
    return joined(["\n", *_entry(state.labels, parts, view, call_told(said, view, parts))])


def _run_heading(plan: ExportPlan, run: Run) -> str:
    title = f"Branch {escape(run.number)}"
    if run.from_id is not None:
        title += f' · from <a href="#e-{escape(run.from_id)}">{escape(run.from_id)}</a>'
    badge = ' <span class="badge">active</span>' if run is plan.leaf_run else ""
    return f'<h2 id="{escape(run_anchor(run))}">{title}{badge}</h2>'


def _entry(
    labels: dict[str, str], parts: PartRenderer, view: EntryView, call: CallSeen | None
) -> list[str]:
    """One entry, in pieces; ``call`` is the call it answers (a tool result)."""
    entry = view.entry
    anchor, meta = entry_meta(labels, entry)
    if entry.role == "system":
        return [_system(view, anchor, meta)]
    if view.is_note or view.kind == "unknown":
        return [_note(parts, view, anchor, meta)]
    heading = f'<span class="who">{escape(view.heading)}</span>'
    detail = escape(view.detail)
    if call is not None and call.main:
        detail += f" · <code>{escape(call.main)}</code>"
    detail = f"{detail} · " if detail else ""
    body = parts.parts(view, call)
    if view.kind == "summary":
        words = sum(len(p.text.split()) for p in view.parts if p.kind == "text")
        body = [f"<details><summary>The summary · {words} words</summary>", *body, "</details>"]
    return [
        f'<section class="entry {escape(view.kind)}" id="{anchor}">'
        f'<div class="meta">{heading}{detail}{meta}</div>',
        *body,
        "</section>",
    ]


def _note(parts: PartRenderer, view: EntryView, anchor: str, meta: str) -> str:
    """A small one-line entry: its text, once (no heading repeating it); data it
    carries folded under the line."""
    said = " · ".join(p.text for p in view.parts if p.kind == "note") or view.heading
    line = f'<span class="note-text">{escape(said)}</span> <span class="meta">{meta}</span>'
    rest = [p for p in view.parts if p.kind != "note"]
    if len(rest) == 1 and rest[0].kind == "json":
        line = f'<details class="data"><summary>{line}</summary>{json_html(rest[0].text)}</details>'
    else:
        for part in rest:
            html = parts.part(part)
            line += html if isinstance(html, str) else "".join(html)
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
