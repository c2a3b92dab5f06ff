"""One block of the textconv transcript: what a line of the session file shows, from
its body (views/slices.py's `Render`, so that a worker renders it as this process
does): the title (id, what the entry is, its time and parent, a branch or a new root
before it), then each part of its view indented, a long text a stretch at a time;
a damaged line shown as its bytes. The blocks of common messages are written
straight from their bodies (textconv_lean.py), the others through their views
(transcript.py). Which blocks make the transcript, and in what order, is
textconv.py's.
"""

from __future__ import annotations

import hashlib
from typing import Any, cast

from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import loads_text
from jsonl_session.views.pieces import joined
from jsonl_session.views.table_slices import InFileOrder
from jsonl_session.views.textconv_lean import message_texts
from jsonl_session.views.transcript import Part, dump_json, view_entry


def item_block_after(
    item: StoredEntry | bytes,
    data: dict[str, Any] | None,
    _said: Any,
    order: InFileOrder,
    _redactor: Any,
) -> str | list[str]:
    """`item_block` of an entry of a slice of a clean table's entries (no damaged
    line, no id twice: views/table_slices.py), in file order."""
    assert isinstance(item, StoredEntry)
    before = (order.previous, False)
    order.previous = item.id
    return item_block(item, data, before, None, None)


def item_block(
    item: StoredEntry | bytes,
    data: dict[str, Any] | None,
    before: Any,
    _shared: Any,
    _redactor: Any,
) -> str | list[str]:
    """The block of one line of the file (views/slices.py's `Render`): a long text
    in it is indented a stretch at a time, its pieces not joined (a text holding one
    emoji takes four bytes a character: hundreds of MB of it copied cost more than
    the rest of its block)."""
    if isinstance(item, bytes):
        line, why = before
        return f"\n\n!! line {line}: damaged ({why})\n{indent(decode_line(item))}"
    assert data is not None
    previous, repeated = before
    block = entry_block(item, data, previous, repeated)
    return "\n\n" + block if isinstance(block, str) else joined(["\n\n", *block])


def entry_block(
    entry: StoredEntry, data: dict[str, Any], previous: str | None, repeated: bool
) -> str | list[str]:
    """The block's text, or its pieces when a part of it is long."""
    parent = entry.parent_id
    branch = None
    if parent != previous and (parent is not None or previous is not None):
        branch = f">> branch from {parent}" if parent is not None else ">> new root"
    if entry.type == "message":
        lean = message_texts(entry, data)
        if lean is not None and all(len(text) <= _STRETCH for text in lean[1]):
            title, texts = lean
            if repeated:
                title += " · id used again (the later entry counts)"
            lines = [indent(text) for text in texts]
            return "\n".join([branch, title, *lines] if branch else [title, *lines])
    return viewed_block(entry, data, branch, repeated)


def viewed_block(
    entry: StoredEntry, data: dict[str, Any], branch: str | None, repeated: bool
) -> str | list[str]:
    """The block through the entry's view (any entry)."""
    blocks: list[str | list[str]] = [branch] if branch else []  # joined by newlines
    parent = entry.parent_id
    view = view_entry(entry, data=data)
    what = (entry.role or "message") if entry.type == "message" else entry.type
    if entry.type == "custom" and entry.custom_type:
        what = f"custom {entry.custom_type}"
    title = f"[{entry.id}] {what}"
    if view.detail and not view.is_note:
        title += f" · {view.detail}"
    title += f" · {entry.timestamp} · parent {parent or 'none'}"
    if repeated:
        title += " · id used again (the later entry counts)"
    blocks.append(title)
    long = False
    for part in view.parts:
        if len(part.text) <= _STRETCH:  # (never redacted here: never held in pieces)
            blocks.append(indent(_plain_part(part)))
        else:
            blocks.append(_indented(_plain_pieces(part)))
            long = True
    if not long:  # most entries
        return "\n".join(cast(list[str], blocks))
    pieces: list[str] = []
    for index, block in enumerate(blocks):
        if index:
            pieces.append("\n")
        if isinstance(block, str):
            pieces.append(block)
        else:
            pieces += block
    return pieces


_STRETCH = 1 << 20  # characters of a long text indented at once


def _indented(pieces: list[str]) -> list[str]:
    """`indent` of ``pieces`` joined, a stretch of about `_STRETCH` characters at a
    time (each ends after a newline, so each line is indented once)."""
    out: list[str] = []
    carried = ""  # the start of a line that a piece did not end
    for piece in pieces:
        start = 0
        while start < len(piece):
            end = piece.find("\n", start + _STRETCH) + 1 or len(piece)
            stretch = carried + piece[start:end] if carried else piece[start:end]
            if stretch.endswith("\n"):
                out.append(indent(stretch))
                carried = ""
            else:
                carried = stretch
            start = end
    out.append(indent(carried))
    return out


def _plain_pieces(part: Part) -> list[str]:
    """`_plain_part` in pieces: the part's text passed on as it is, not copied."""
    if part.kind in _REWRITTEN:
        return [_plain_part(part)]
    prefix = _prefix(part)
    return [prefix, *part.pieces] if prefix else part.pieces


def _plain_part(part: Part) -> str:
    if part.kind == "tool-call":
        return f"-> {part.title} {_compact(part.text)}" + (f" ({part.ref})" if part.ref else "")
    if part.kind == "image":
        digest = hashlib.sha256(part.text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        return f"[image {part.mime}, {len(part.text)} base64 chars, sha256 {digest}]"
    if part.kind == "json":
        return f"{part.title or 'data'}: {_compact(part.text)}" if part.text else ""
    return _prefix(part) + part.text


_REWRITTEN = frozenset({"tool-call", "image", "json"})  # shown otherwise than as their text
_PREFIXES = {"thinking": "(thinking) ", "command": "$ ", "error": "error: "}


def _prefix(part: Part) -> str:
    """What goes before the text of a part shown as its text."""
    if part.kind == "output" and part.title:
        return f"({part.title}) "
    return _PREFIXES.get(part.kind, "")


def _compact(text: str) -> str:
    try:
        return dump_json(loads_text(text), indent=False)
    except ValueError:
        return text


def indent(text: str) -> str:
    """``text`` with two spaces before each line that is not empty (a line ends at a
    newline only). Its control characters are escaped with the rest of the transcript
    (textconv.py's `_chunks`): on a worker's bytes, once for a slice, that costs a fraction of
    searching each text."""
    if "\n" not in text:  # (most parts: one line)
        return "  " + text if text else ""
    return "\n".join(["  " + line if line else "" for line in text.split("\n")])


def decode_line(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
