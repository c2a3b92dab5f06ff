"""What the OpenAI adapters (openai.py) send the same way for Chat Completions and for
Responses: the history they start from, tool call ids, arguments, images as data URLs,
and the text of a tool result.

Owns these rules, which openai.py's docstring sets out: thinking-only assistant
messages and empty user messages are dropped from the repaired history and reported;
a tool call id of 1-40 characters of ``[A-Za-z0-9_-]`` goes out unchanged, any other
as ``call_`` and a hash of it; arguments go as compact JSON text of an object; a
result with images says that they follow (and `images_label` names where they came
from); one with nothing is ``(no output)``. How each API lays its messages or items
out, and when images are sent, is openai.py's. Pure functions, no network.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from jsonl_session.format.walk import as_text, dumps_text, loads_text
from jsonl_session.messages import image_blocks, nonblank_texts, tool_calls
from jsonl_session.providers.common import ContextLike, history_of
from jsonl_session.providers.history import Repair

EMPTY_RESULT_TEXT = "(no output)"
DEFAULT_IMAGE_MIME = "image/png"

_PLAIN_ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def prepared(context: ContextLike) -> tuple[list[dict[str, Any]], list[Repair]]:
    """The repaired history without messages left with nothing these APIs take
    (an assistant message that only held thinking), and every repair, the
    history's and ours, in input order."""
    history = history_of(context)
    repairs = list(history.repairs)
    messages: list[dict[str, Any]] = []
    for message, source in zip(history.messages, history.sources, strict=True):
        role = message.get("role")
        content = message.get("content")
        if role == "assistant" and not (nonblank_texts(content) or tool_calls(message)):
            detail = "assistant message with only thinking, which OpenAI APIs do not take back"
            repairs.append(Repair("empty-assistant-dropped", source, detail))
            continue
        if role == "user" and not (nonblank_texts(content) or image_blocks(content)):
            detail = "user message with no text or image"
            repairs.append(Repair("empty-message-dropped", source, detail))
            continue
        messages.append(message)
    repairs.sort(key=lambda r: r.index)
    return messages, repairs


def api_call_id(raw: Any) -> str:
    """The id sent for a tool call and its result (see the module docstring)."""
    text = "" if raw is None else str(raw)
    if _PLAIN_ID.match(text):
        return text
    return "call_" + hashlib.sha256(text.encode()).hexdigest()[:32]


def arguments_json(arguments: Any) -> str:
    """A tool call's arguments as compact JSON text of an object."""
    if isinstance(arguments, str):
        try:
            arguments = loads_text(arguments)
        except ValueError:
            arguments = None
    if not isinstance(arguments, dict):
        arguments = {}
    return dumps_text(arguments, separators=(",", ":"), ensure_ascii=False)


def data_url(block: dict[str, Any]) -> str:
    """An image block as a base64 data URL."""
    mime = block.get("mimeType") or DEFAULT_IMAGE_MIME
    return f"data:{mime};base64,{as_text(block.get('data', ''))}"


def result_text(message: dict[str, Any]) -> str:
    """A tool result's text, with a note when its images follow separately."""
    content = message.get("content")
    text = "\n\n".join(nonblank_texts(content))
    count = len(image_blocks(content))
    if count:
        images = "1 image" if count == 1 else f"{count} images"
        note = f"[The result also held {images}, attached in the next user message.]"
        return f"{text}\n\n{note}" if text else note
    return text or EMPTY_RESULT_TEXT


def images_label(message: dict[str, Any]) -> str:
    name = message.get("toolName") or "tool"
    call_id = api_call_id(message.get("toolCallId"))
    return f"Images from the result of tool call {call_id} ({name}):"
