"""The Markdown export: readable on its own, the title, the facts, then the path to
the leaf or, with every branch, an outline and each branch in turn.

What the export shows is plan.py's; this module only renders an ExportPlan.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from jsonl_session.export.plan import ExportPlan, Spread
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views.redact import Redactor
from jsonl_session.views.runs import iter_runs
from jsonl_session.views.slices import Piece, Utf8Piece, text_of
from jsonl_session.views.transcript import EntryView, Part, view_entry


def render_markdown(plan: ExportPlan) -> str:
    return "".join(map(text_of, iter_markdown(plan)))


def iter_markdown(plan: ExportPlan, workers: int | None = 1) -> Iterator[Piece]:
    """The Markdown export in pieces, one entry at a time (memory bounded by the
    largest entry); the pieces joined are the whole document. A long export is
    rendered by ``workers`` processes (views/slices.py), the same text, their pieces
    as they wrote them (`Utf8Piece`: a file takes them as they are)."""
    head = [f"# {plan.title()}", ""]
    outline = ["## Branches", "", *_outline(plan), ""] if plan.all_branches else []
    # started before the facts are read, so the workers render while this process reads
    spread = plan.spread(markdown_entry, plan.labels, workers, utf8=True)
    head += [f"- **{key}:** {value}" for key, value in plan.facts()] + ["", *outline]
    return _ending_once(_pieces(plan, head, spread))


def _pieces(plan: ExportPlan, head: list[str], spread: Spread | None) -> Iterator[Piece]:
    yield "".join(f"{line}\n" for line in head)
    for index, (run, entries) in enumerate(plan.shown):
        yield f"## {plan.run_title(run) if run else 'Conversation'}\n\n"
        if spread is not None:
            yield from spread.pieces_of(index)
            continue
        for view in plan.take_views(entries):
            yield "".join(f"{line}\n" for line in _md_entry(plan.labels, view))


def markdown_entry(
    entry: StoredEntry | bytes,
    data: dict[str, Any] | None,
    _said: Any,
    labels: dict[str, str],
    redactor: Redactor,
) -> str:
    """One entry's Markdown, from its body (views/slices.py's `Render`)."""
    assert isinstance(entry, StoredEntry)
    view = view_entry(entry, redactor, data)
    return "".join(f"{line}\n" for line in _md_entry(labels, view))


def _ending_once(pieces: Iterable[Piece]) -> Iterator[Piece]:
    """``pieces`` with the whitespace at the very end replaced by one newline: the
    whitespace a piece ends with is held back until more text follows it."""
    held = ""
    for piece in pieces:
        if isinstance(piece, Utf8Piece):
            body, space = _stripped(piece.data)
            if body:
                if held:
                    yield held
                yield Utf8Piece(body)
                held = space
            else:
                held += space
            continue
        text = piece.rstrip()
        if text:
            yield held + text
            held = piece[len(text) :]
        else:
            held += piece
    yield "\n"


_TAIL_BYTES = 64  # of a worker's piece decoded to find the whitespace it ends with


def _stripped(data: bytes) -> tuple[bytes, str]:
    """UTF-8 ``data`` as its text without the whitespace it ends with (``rstrip``,
    whose whitespace is Unicode's), in UTF-8, and that whitespace: only its last
    characters are decoded, unless they are all whitespace."""
    start = max(0, len(data) - _TAIL_BYTES)
    while start > 0 and 0x80 <= data[start] < 0xC0:  # inside a character: go to its start
        start -= 1
    tail = data[start:].decode("utf-8")
    kept = tail.rstrip()
    if not kept and start > 0:  # whitespace all through the tail: the whole piece decides
        text = data.decode("utf-8")
        kept = text.rstrip()
        return kept.encode("utf-8"), text[len(kept) :]
    if len(kept) == len(tail):
        return data, ""
    return data[:start] + kept.encode("utf-8"), tail[len(kept) :]


def _outline(plan: ExportPlan) -> list[str]:
    lines, depth = [], {id(run): 0 for run in plan.runs}
    for run in iter_runs(plan.runs):
        depth.update((id(branch), depth[id(run)] + 1) for branch in run.branches)
        first, last, count = run.entries[0], run.entries[-1], len(run.entries)
        facts = [f"{count} entries" if count > 1 else "1 entry"]
        facts += ["**active**"] if run is plan.leaf_run else []
        facts += ["leaf"] if last.id == plan.leaf_id else []
        labelled = [e.id for e in run.entries if e.id in plan.labels]
        facts += [f"{_code(i)} *{plan.labels[i]}*" for i in labelled]
        summary = plan.view(first).summary(60)
        line = f"**{run.number}** {_code(first.id)} {summary} ({' · '.join(facts)})"
        lines.append("  " * depth[id(run)] + "- " + line)
    return lines


def _md_entry(labels: dict[str, str], view: EntryView) -> list[str]:
    entry = view.entry
    label = labels.get(entry.id)
    tag = f" · label **{label}**" if label else ""
    if view.is_note:
        note = " · ".join(p.text for p in view.parts if p.kind == "note")
        lines = [f"*{note}* · {_code(entry.id)}{tag}", ""]
        parts = [p for p in view.parts if p.kind != "note"]
    else:
        detail = f" · {view.detail}" if view.detail else ""
        lines = [
            f"### {view.heading}{detail}",
            "",
            f"{_code(entry.id)} · {entry.timestamp}{tag}",
            "",
        ]
        parts = view.parts
    for part in parts:
        lines += _md_part(part)
    return lines


def _md_part(part: Part) -> list[str]:
    if part.kind == "text":
        return [part.text, ""]
    if part.kind == "thinking":
        quoted = [f"> {line}" if line else ">" for line in part.text.split("\n")]
        return ["> **Thinking**", ">", *quoted, ""]
    if part.kind == "tool-call":
        call = f"**Tool call** {_code(part.title)}" + (f" · {_code(part.ref)}" if part.ref else "")
        return [call, "", _fence(part.text, "json"), ""]
    if part.kind == "output":
        title = "**Error output**" if part.title == "error" else "**Output**"
        text = part.text.removesuffix("\n")
        return [title, "", _fence(text), ""] if text else ["*(no output)*", ""]
    if part.kind == "command":
        return [_fence(f"$ {part.text}", "sh"), ""]
    if part.kind == "image":
        return [f"*[image: {part.mime or 'unknown type'}, {len(part.text) * 3 // 4} bytes]*", ""]
    if part.kind == "error":
        return [f"**Error:** {part.text}", ""]
    if part.kind == "note":
        return [f"*{part.text}*", ""]
    return [f"**{part.title or 'data'}**", "", _fence(part.text, "json"), ""]


def _fence(text: str, lang: str = "") -> str:
    """``text`` fenced by more backticks than any run of them in it (at least three)."""
    longest = 0
    while "`" * (longest + 1) in text:  # found in C; most texts have no backtick
        longest += 1
    ticks = "`" * max(3, 1 + longest)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"
