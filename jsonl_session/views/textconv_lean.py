"""The textconv block of the messages most of a session holds, written straight from
their bodies: a user's, an assistant's or a tool result's texts, thoughts and tool
calls (`message_texts`). The view's objects, and the arguments of each tool call
read back from the view's indented JSON to be written compact, cost more than the
text. Any other shape gets None and goes through the view (textconv_blocks.py's
`viewed_block`); a differential test keeps the two the same. export/markdown.py's
`_lean_message` reads the same shapes by the same rules, written out again there: a
shared reader (tried) cost the Markdown workers 8% of their time, and each of the
two is held to its view by its own differential test. How the texts are indented
is textconv_blocks.py's, what the rest of the transcript is textconv.py's.
"""

from __future__ import annotations

from typing import Any

from jsonl_session.format.entry import StoredEntry
from jsonl_session.views.transcript import content_blocks, dump_json

_STOPPED = ("error", "aborted", "length")


def message_texts(entry: StoredEntry, data: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The title line of a message's block and the text of each of its parts (each
    then indented as `viewed_block` indents them), or None for a shape of another
    kind."""
    message = data.get("message")
    if message.__class__ is not dict:
        return None
    role = message.get("role")
    error = False
    if role == "assistant":
        provider, model = message.get("provider", "?"), message.get("model", "?")
        if provider.__class__ is not str or model.__class__ is not str:
            return None
        detail = f"{provider}/{model}"
    elif role == "user":
        detail = ""
    elif role == "toolResult":
        detail = message.get("toolName", "?")
        if detail.__class__ is not str:
            return None
        error = message.get("isError") is True
        if error:
            detail += " (error)"
    else:
        return None
    title = f"[{entry.id}] {entry.role or 'message'}" + (f" · {detail}" if detail else "")
    title += f" · {entry.timestamp} · parent {entry.parent_id or 'none'}"
    blocks = content_blocks(message.get("content"))
    if blocks is None:
        return None
    out = role == "toolResult"
    lines: list[str] = []
    for block in blocks:
        if block.__class__ is not dict:
            return None
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if text.__class__ is not str:
                return None
            if out and error:
                text = "(error) " + text
        elif kind == "thinking" and not out:
            text = block.get("thinking", "")
            if block.get("redacted") is True:
                text = "(thinking redacted by the provider)"
            elif text.__class__ is not str:
                return None
            text = "(thinking) " + text
        elif kind == "toolCall" and not out:
            name, ref = block.get("name", "?"), block.get("id", "")
            if name.__class__ is not str or ref.__class__ is not str:
                return None
            # (the view's indented JSON read back and written compact: the same text)
            text = f"-> {name} {dump_json(block.get('arguments'), indent=False)}"
            text += f" ({ref})" if ref else ""
        else:
            return None
        lines.append(text)
    if role == "assistant":
        failure = message.get("errorMessage")
        if isinstance(failure, str):
            lines.append("error: " + failure)
        elif message.get("stopReason") in _STOPPED:
            lines.append(f"stopped: {message['stopReason']}")
    elif out:
        if not lines:
            lines.append("")
        details = message.get("details")
        if details is not None:
            lines.append(f"details: {dump_json(details, indent=False)}")
    return title, lines
