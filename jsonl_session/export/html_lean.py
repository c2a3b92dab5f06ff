"""The HTML of the messages most of a session holds, written straight from their
bodies: what html.py makes of their view, without the view.

Owns `lean_message`, for a user's or an assistant's message of text, thinking and
tool calls, and a tool result's of text, when nothing is redacted. The view's objects
(views/transcript.py), and a call's arguments written as JSON only to be read back,
cost as much as the page itself: here each block goes straight to the pieces
html_parts.py's `PartRenderer` makes of a view's parts, and an object of texts (most
calls' arguments) is shown by markup.py's `flat_json_html` as it stands. Any other
shape gets None and goes through the view; a differential test keeps the two the
same, as for the Markdown export's `_lean_message` and views/textconv_lean.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonl_session.export.html_parts import CallSeen, PartRenderer, arguments_of, entry_meta, folded
from jsonl_session.export.markup import escape, flat_json_html, json_html
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views.transcript import content_blocks, dump_json

Answered = Callable[[StoredEntry, str], CallSeen | None]
"""The call a tool result answers, given the result and the call's id."""

_STOPPED = ("error", "aborted", "length")


def lean_message(
    labels: dict[str, str],
    parts: PartRenderer,
    entry: StoredEntry,
    data: dict[str, Any],
    answered: Answered,
) -> list[str] | None:
    """The entry's HTML in pieces, as html.py's `_entry` of its unredacted view
    gives them, when it is a message of the shapes above; else None, having
    rendered nothing and asked ``answered`` nothing."""
    if entry.type != "message":  # (any entry may carry a "message"; views go by type)
        return None
    message = data.get("message")
    if message.__class__ is not dict:
        return None
    role = message.get("role")
    if role != entry.role:  # (the result's call is found by the entry's role)
        return None
    error = False
    if role == "assistant":
        provider, model = message.get("provider", "?"), message.get("model", "?")
        if provider.__class__ is not str or model.__class__ is not str:
            return None
        kind, heading, detail = "assistant", "Assistant", escape(f"{provider}/{model}")
    elif role == "user":
        kind, heading, detail = "user", "User", ""
    elif role == "toolResult":
        name, ref = message.get("toolName", "?"), message.get("toolCallId", "")
        if name.__class__ is not str or ref.__class__ is not str:
            return None
        error = message.get("isError") is True
        kind, heading = "tool-result", "Tool result"
        detail = escape(f"{name} (error)" if error else name)
    else:
        return None
    blocks = content_blocks(message.get("content"))
    if blocks is None:
        return None
    if not _plain_blocks(blocks, role == "toolResult"):
        return None
    call = None
    if kind == "tool-result":
        call = answered(entry, ref)
        if call is not None and call.main:
            detail += f" · <code>{escape(call.main)}</code>"
    anchor, meta = entry_meta(labels, entry)
    detail = f"{detail} · " if detail else ""
    pieces = [
        f'<section class="entry {kind}" id="{anchor}">'
        f'<div class="meta"><span class="who">{heading}</span>{detail}{meta}</div>'
    ]
    made: dict[str, CallSeen] = {}
    for block in blocks:
        block_kind = block["type"]
        if block_kind == "text":
            text = block["text"]
            if kind == "tool-result":
                _add(pieces, parts.output(error, call, len(text), [text]))
            else:
                pieces.append(parts.text(text))
        elif block_kind == "thinking":
            hidden = block.get("redacted") is True
            pieces.append(parts.thinking(_HIDDEN if hidden else block.get("thinking", "")))
        else:
            pieces.append(_tool_call(parts, block, made))
    if kind == "assistant":
        failure = message.get("errorMessage")
        if isinstance(failure, str):
            pieces.append(f'<p class="error">{escape(failure)}</p>')
        elif message.get("stopReason") in _STOPPED:
            stopped = f"stopped: {message['stopReason']}"
            pieces.append(f'<p class="stop">{escape(stopped)}</p>')
    elif kind == "tool-result":
        if not blocks:  # (the view's empty output is not an error's)
            _add(pieces, parts.output(False, call, 0, [""]))
        details = message.get("details")
        if details is not None:
            pieces.append(folded("details", json_html(dump_json(details)), "data"))
    if made:
        parts.remember(entry.line, made)
    pieces.append("</section>")
    return pieces


_HIDDEN = "(thinking redacted by the provider)"


def _add(pieces: list[str], shown: str | list[str]) -> None:
    if isinstance(shown, str):
        pieces.append(shown)
    else:
        pieces += shown


def _plain_blocks(blocks: list[Any], result: bool) -> bool:
    """Whether every block is one this module writes: text, and outside a tool
    result thinking (its text a text, or hidden) and tool calls (named by texts).
    Checked before anything is rendered, so a message that goes through the view
    has changed nothing (the calls remembered, the highlighting budget)."""
    for block in blocks:
        if block.__class__ is not dict:
            return False
        kind = block.get("type")
        if kind == "text":
            if block.get("text").__class__ is not str:
                return False
        elif result:
            return False
        elif kind == "thinking":
            if block.get("redacted") is not True and block.get("thinking", "").__class__ is not str:
                return False
        elif kind == "toolCall":
            name, ref = block.get("name", "?"), block.get("id", "")
            if name.__class__ is not str or ref.__class__ is not str:
                return False
        else:
            return False
    return True


def _tool_call(parts: PartRenderer, block: dict[str, Any], made: dict[str, CallSeen]) -> str:
    value = block.get("arguments")
    as_json = flat_json_html(value) if value.__class__ is dict else None
    if as_json is not None:  # an object of texts: itself, as its JSON reads back
        args: dict[str, Any] = value  # type: ignore[assignment]
    else:
        written = dump_json(value)
        args, as_json = arguments_of(written), json_html(written)
    return parts.tool_call(block.get("name", "?"), block.get("id", ""), args, as_json, made)
