"""The Markdown export: readable on its own, the title, the facts, then the path to
the leaf or, with every branch, an outline and each branch in turn.

What the export shows is plan.py's; this module only renders an ExportPlan.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from jsonl_session.export.plan import ExportPlan, Spread
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views import pieces as handing
from jsonl_session.views.pieces import Piece, Utf8Piece, joined
from jsonl_session.views.redact import Redactor
from jsonl_session.views.runs import iter_runs
from jsonl_session.views.spool import SpooledPiece
from jsonl_session.views.transcript import EntryView, Part, content_blocks, dump_json, view_entry


def iter_markdown(plan: ExportPlan, workers: int | None = 1) -> Iterator[Piece]:
    """The Markdown export in pieces, one entry at a time (memory bounded by the
    largest entry); the pieces joined are the whole document. A long export is
    rendered by ``workers`` processes (views/slices.py), the same text, their pieces
    as they wrote them (`Utf8Piece`: a file takes them as they are)."""
    head = [f"# {plan.title()}", ""]
    outline = ["## Branches", "", *_outline(plan), ""] if plan.all_branches else []
    figures = plan.figures_later()  # read by the workers, when they wait already
    # The workers read the figures, then render the first slices while this process
    # reads what the facts need of the whole session: none of them waits for it.
    spread = plan.spread(
        markdown_entry, plan.labels, workers, utf8=True, meanwhile=plan.prepare_facts
    )
    facts = plan.facts(figures.get())
    head += [f"- **{key}:** {value}" for key, value in facts] + ["", *outline]
    return _ending_once(_pieces(plan, head, spread))


def _pieces(plan: ExportPlan, head: list[str], spread: Spread | None) -> Iterator[Piece]:
    yield "".join(f"{line}\n" for line in head)
    for index, (run, entries) in enumerate(plan.shown):
        yield f"## {plan.run_title(run) if run else 'Conversation'}\n\n"
        if spread is not None:
            yield from spread.pieces_of(index)
            continue
        for entry, made, data in plan.take_bodies(entries):
            if made is not None:  # (a view a title or an outline made)
                yield from joined(_md_entry(plan.labels, made))
            else:  # as a worker writes it: the common messages without their views
                yield from markdown_entry(entry, data, None, plan.labels, plan.redactor)


def markdown_entry(
    entry: StoredEntry | bytes,
    data: dict[str, Any] | None,
    _said: Any,
    labels: dict[str, str],
    redactor: Redactor,
) -> list[str]:
    """One entry's Markdown, from its body (views/slices.py's `Render`), in pieces
    joined (`joined`): most entries one piece, which a worker encodes with one call
    rather than one for each of its parts; a huge text stays a piece of its own,
    never copied into a join."""
    assert isinstance(entry, StoredEntry)
    if not redactor.enabled and data is not None and entry.type == "message":
        lean = _lean_message(labels, entry, data)
        if lean is not None:
            return joined(lean)
    view = view_entry(entry, redactor, data)
    return joined(_md_entry(labels, view))


_STOPPED = ("error", "aborted", "length")


def _lean_message(
    labels: dict[str, str], entry: StoredEntry, data: dict[str, Any]
) -> list[str] | None:
    """`_md_entry` of the message's view, for the messages most of a session holds
    (a user's, an assistant's or a tool result's text, thoughts and tool calls, no
    secret redacted), written straight from its body: the view's objects cost more
    than the text. None for any other shape, which goes through the view; a
    differential test keeps the two the same. (views/textconv_lean.py reads the same
    shapes by the same rules: see there why they are written out twice.)"""
    message = data.get("message")
    if message.__class__ is not dict:
        return None
    role = message.get("role")
    label = labels.get(entry.id)
    tag = f" · label **{label}**" if label else ""
    if role == "assistant":
        provider, model = message.get("provider", "?"), message.get("model", "?")
        if provider.__class__ is not str or model.__class__ is not str:
            return None
        heading = f"### Assistant · {provider}/{model}\n\n"
    elif role == "user":
        heading = "### User\n\n"
    elif role == "toolResult":
        name = message.get("toolName", "?")
        if name.__class__ is not str:
            return None
        error = message.get("isError") is True
        detail = f"{name} (error)" if error else name
        heading = f"### Tool result · {detail}\n\n" if detail else "### Tool result\n\n"
    else:
        return None
    pieces = [f"{heading}{_code(entry.id)} · {entry.timestamp}{tag}\n\n"]
    blocks = content_blocks(message.get("content"))
    if blocks is None:
        return None
    out = role == "toolResult"
    shown = False
    for block in blocks:
        if block.__class__ is not dict:
            return None
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if text.__class__ is not str:
                return None
            if out:
                if len(text) <= 1 and text in ("", "\n"):
                    pieces.append("*(no output)*\n\n")
                else:
                    title = "**Error output**" if error else "**Output**"
                    pieces += [f"{title}\n\n", *_fence(text, newline_ends=True)]
            else:
                pieces += [text, "\n\n"]
        elif kind == "thinking" and not out:
            text = block.get("thinking", "")
            if block.get("redacted") is True:
                text = "(thinking redacted by the provider)"
            elif text.__class__ is not str:
                return None
            quoted = "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))
            pieces += ["> **Thinking**\n>\n", quoted, "\n\n"]
        elif kind == "toolCall" and not out:
            name, ref = block.get("name", "?"), block.get("id", "")
            if name.__class__ is not str or ref.__class__ is not str:
                return None
            call = f"**Tool call** {_code(name)}" + (f" · {_code(ref)}" if ref else "")
            pieces += [f"{call}\n\n", *_fence(dump_json(block.get("arguments")), "json")]
        else:
            return None
        shown = True
    if role == "assistant":
        failure = message.get("errorMessage")
        if isinstance(failure, str):
            pieces.append(f"**Error:** {failure}\n\n")
        elif message.get("stopReason") in _STOPPED:
            pieces.append(f"*stopped: {message['stopReason']}*\n\n")
    elif out:
        if not shown:
            pieces.append("*(no output)*\n\n")
        details = message.get("details")
        if details is not None:
            pieces += ["**details**\n\n", *_fence(dump_json(details), "json")]
    return pieces


def _ending_once(pieces: Iterable[Piece]) -> Iterator[Piece]:
    """``pieces`` with the whitespace at the very end replaced by one newline. Each
    piece passes on as it is, save the last that holds more than whitespace (held
    back until another such piece comes): only that one is cut."""
    last: Piece | None = None
    blank: list[Piece] = []  # the pieces of whitespace since
    for piece in pieces:
        if _blank(piece):
            blank.append(piece)
            continue
        if last is not None:
            yield last
        yield from blank
        last, blank = piece, []
    if isinstance(last, SpooledPiece):  # (a slice's text: some hundreds of kB)
        last = Utf8Piece(last.take())
    if isinstance(last, Utf8Piece):
        yield Utf8Piece(_stripped(last.data)[0])
    elif last is not None:  # in slices: a huge text ending the document is not copied whole
        kept = _kept_length(last)
        step = handing.JOINED_CHARS
        yield from (last[at : min(at + step, kept)] for at in range(0, kept, step))
    yield "\n"


def _kept_length(text: str) -> int:
    """``len(text.rstrip())``, read from the end (a copy of the text is not made)."""
    end = len(text)
    while end > 0:
        start = max(0, end - _TAIL_BYTES)
        kept = text[start:end].rstrip()
        if kept:
            return start + len(kept)
        end = start
    return 0


def _blank(piece: Piece) -> bool:
    """Whether ``piece`` holds whitespace only (or nothing), as ``str.isspace`` says."""
    if isinstance(piece, str):
        return not piece or piece.isspace()
    if isinstance(piece, SpooledPiece):
        return False  # (never spooled when only whitespace)
    data = piece.data
    # its first characters decide, unless all of them are whitespace
    head = data[:_TAIL_BYTES].decode("utf-8", "ignore")
    if head and not head.isspace():
        return False
    return not data or data.decode("utf-8").isspace()


_TAIL_BYTES = 64  # of a piece read from its end to find the whitespace it ends with


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
    """The entry's Markdown in pieces (joined, its text), each text of it one piece."""
    entry = view.entry
    label = labels.get(entry.id)
    tag = f" · label **{label}**" if label else ""
    if view.is_note:
        note = " · ".join(p.text for p in view.parts if p.kind == "note")
        pieces = [f"*{note}* · {_code(entry.id)}{tag}\n\n"]
        parts = [p for p in view.parts if p.kind != "note"]
    else:
        detail = f" · {view.detail}" if view.detail else ""
        pieces = [f"### {view.heading}{detail}\n\n{_code(entry.id)} · {entry.timestamp}{tag}\n\n"]
        parts = view.parts
    for part in parts:
        pieces += _md_part(part)
    return pieces


def _md_part(part: Part) -> list[str]:
    if part.kind == "text":
        return [*part.pieces, "\n\n"]
    if part.kind == "thinking":
        quoted = "\n".join(f"> {line}" if line else ">" for line in part.text.split("\n"))
        return ["> **Thinking**\n>\n", quoted, "\n\n"]
    if part.kind == "tool-call":
        call = f"**Tool call** {_code(part.title)}" + (f" · {_code(part.ref)}" if part.ref else "")
        return [f"{call}\n\n", *_fence(part.text, "json")]
    if part.kind == "output":
        title = "**Error output**" if part.title == "error" else "**Output**"
        if part.size <= 1 and part.text in ("", "\n"):
            return ["*(no output)*\n\n"]
        return [f"{title}\n\n", *_fence(part.pieces, newline_ends=True)]
    if part.kind == "command":
        return _fence(f"$ {part.text}", "sh")
    if part.kind == "image":
        return [f"*[image: {part.mime or 'unknown type'}, {len(part.text) * 3 // 4} bytes]*\n\n"]
    if part.kind == "error":
        return [f"**Error:** {part.text}\n\n"]
    if part.kind == "note":
        return [f"*{part.text}*\n\n"]
    return [f"**{part.title or 'data'}**\n\n", *_fence(part.text, "json")]


def _fence(text: str | list[str], lang: str = "", *, newline_ends: bool = False) -> list[str]:
    """``text`` (or its pieces) fenced by more backticks than any run of them in it (at
    least three), then a blank line, in pieces: the text is passed on, not copied.
    With ``newline_ends``, a newline ending the text ends its last line (it is not
    shown as an empty line)."""
    if isinstance(text, str):  # (most texts: one piece holding no three backticks)
        ticks = "```" if "```" not in text else "`" * (_longest_backtick_run([text]) + 1)
        ends = newline_ends and text.endswith("\n")
        return [f"{ticks}{lang}\n", text, f"{ticks}\n\n" if ends else f"\n{ticks}\n\n"]
    pieces = text
    ticks = "`" * (_longest_backtick_run(pieces) + 1)
    last = next((piece for piece in reversed(pieces) if piece), "")
    close = f"{ticks}\n\n" if newline_ends and last.endswith("\n") else f"\n{ticks}\n\n"
    return [f"{ticks}{lang}\n", *pieces, close]


def _longest_backtick_run(pieces: list[str]) -> int:
    """The longest run of backticks in ``pieces`` joined (a run may cross from one
    piece into the next), or 2 if none is longer: three backticks fence those."""
    longest = 2
    if len(pieces) == 1:  # most texts: one search ("```" found in C; most hold none)
        while "`" * (longest + 1) in pieces[0]:
            longest += 1
        return longest
    ending = 0  # backticks at the end of the pieces so far
    for piece in pieces:
        if "`" not in piece:  # found in C; most texts hold no backtick
            if piece:  # (an empty piece ends no run)
                ending = 0
            continue
        starting = len(piece) - len(piece.lstrip("`"))
        if starting == len(piece):
            ending += starting
            longest = max(longest, ending)
            continue
        longest = max(longest, ending + starting)
        while "`" * (longest + 1) in piece:
            longest += 1
        ending = len(piece) - len(piece.rstrip("`"))
    return longest


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"
