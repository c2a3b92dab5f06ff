"""Token accounting: estimates per message and per context. Where a session's tokens
go (`stats`) is breakdown.py's, on these rules; the usage it recorded is usage.py's.

The estimate is pi's, so compaction decisions made from it equal pi's: characters
(JavaScript string length, i.e. UTF-16 code units) divided by 4, rounded up; a
tool call counts its name and its arguments as compact JSON; an image in a tool
result, custom or user message counts as 4,800 characters (pi 1.5; pi 0.73 did not
count them in user messages: ``count_user_images=False``); a system message (pi 1.5)
counts its content, its sections and its tool declarations as compact JSON. A
context estimate takes the last usable assistant ``usage`` and estimates only the
messages after it. Exact counts
through a provider's counting endpoint are providers/counting.py's (they need a client).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jsonl_session.context import Projection
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.walk import as_text, finite_number
from jsonl_session.messages import current_system_message

# the usage a session recorded is usage.py's; these names stay importable from here
from jsonl_session.usage import USAGE_KEYS as USAGE_KEYS
from jsonl_session.usage import RecordedUsage as RecordedUsage
from jsonl_session.usage import UsageTotal as UsageTotal
from jsonl_session.usage import recorded_usage as recorded_usage
from jsonl_session.usage import usage_figures as usage_figures

IMAGE_CHARS = 4800


_SLICE = 1 << 20  # characters encoded at once: a 200 MB text is not copied whole


def _narrow_size_base() -> int | None:
    """The fixed part of sys.getsizeof of a non-ASCII str in this CPython, whose
    characters take ``kind`` bytes each (PEP 393: 1, 2 or 4, and 4 only when a
    character is beyond U+FFFF); None when sizes do not follow that layout here."""
    try:
        base = sys.getsizeof("\u0100") - 2 * 2
        samples = (("\u00e9" * 3, 1), ("\u0100" * 5, 2), ("\U0001f680" * 2, 4))
        if all(sys.getsizeof(text) == base + kind * (len(text) + 1) for text, kind in samples):
            return base
    except TypeError:  # an interpreter without object sizes
        pass
    return None


_NARROW_BASE = _narrow_size_base()


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (an emoji counts 2, a lone
    surrogate 1). Measured by encoding, in C: a loop over characters took most of
    `stats` on a large session."""
    if text.isascii():
        return len(text)
    if _NARROW_BASE is not None and sys.getsizeof(text) < _NARROW_BASE + 4 * (len(text) + 1):
        # stored 1 or 2 bytes a character: nothing past U+FFFF, so one unit each
        # (the size says so at no cost; encoding a long text is most of its count)
        return len(text)
    if len(text) <= _SLICE:  # most texts: one encoding, without slicing
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    return (
        sum(
            len(text[start : start + _SLICE].encode("utf-16-le", "surrogatepass"))
            for start in range(0, len(text), _SLICE)
        )
        // 2
    )


def estimate_tokens(message: dict[str, Any], *, count_user_images: bool = True) -> int:
    """pi's estimate for one message (see the module docstring)."""
    role = message.get("role")
    content = message.get("content")
    chars = 0
    if role == "system":
        chars = text_chars(content, count_images=True)
        sections = message.get("sections")
        for section in sections.values() if isinstance(sections, dict) else ():
            if isinstance(section, str):
                chars += js_length(section)
        tools = message.get("toolsAdded")
        if isinstance(tools, list | dict) or tools not in (None, False, 0, ""):
            chars += js_length(dumps(tools).decode())  # JavaScript truthiness: [] counts
    elif role == "user":
        chars = text_chars(content, count_images=count_user_images)
    elif role == "assistant":
        chars = assistant_chars(content, None)
    elif role in ("custom", "toolResult"):
        chars = text_chars(content, count_images=True)
    elif role == "bashExecution":
        chars = js_length(as_text(message.get("command") or "")) + js_length(
            as_text(message.get("output") or "")
        )
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_length(as_text(message.get("summary") or ""))
    return math.ceil(chars / 4)


def assistant_chars(content: Any, calls: list[tuple[str, int]] | None) -> int:
    """An assistant message's characters; with ``calls``, each tool call's name and
    characters are added to it too (one pass for `breakdown`)."""
    chars = 0
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += js_length(as_text(block.get("text") or ""))
        elif kind == "thinking":
            chars += js_length(as_text(block.get("thinking") or ""))
        elif kind == "toolCall":
            call = tool_call_chars(block.get("name"), block.get("arguments"))
            chars += call
            if calls is not None:
                calls.append((as_text(block.get("name")), call))
    return chars


def tool_call_chars(name: Any, arguments: Any) -> int:
    """A tool call's size: its name and its arguments as compact JSON."""
    return js_length(as_text(name or "")) + json_chars(dumps(arguments))


def json_chars(written: bytes) -> int:
    """The length in JavaScript of JSON text ``dumps`` wrote."""
    # ASCII JSON is as long in UTF-16 as in bytes: no need to decode it to count
    return len(written) if written.isascii() else js_length(written.decode())


def text_chars(content: Any, *, count_images: bool) -> int:
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            chars += js_length(as_text(block["text"]))
        elif block.get("type") == "image" and count_images:
            chars += IMAGE_CHARS
    return chars


def usage_tokens(usage: Any) -> int:
    """The context size an assistant ``usage`` reports (total, else its parts)."""
    if not isinstance(usage, dict):
        return 0
    # a figure no double holds (1e400, 10**30) is damage: counted as missing
    total = finite_number(usage.get("totalTokens"))
    if total:
        return int(total)
    parts = ("input", "output", "cacheRead", "cacheWrite")
    return int(sum(v for k in parts if (v := finite_number(usage.get(k))) is not None))


@dataclass(frozen=True, slots=True)
class ContextEstimate:
    tokens: int
    usage_tokens: int  # from the last usable assistant usage (0 if none)
    trailing_tokens: int  # estimated for the messages after it
    last_usage_index: int | None


def estimate_context_tokens(
    messages: Sequence[dict[str, Any]], *, count_user_images: bool = True
) -> ContextEstimate:
    """The context's size: the last assistant usage that is not from an aborted or
    failed turn and reports some tokens, plus estimates of the messages after it (all
    estimated if none). ``count_user_images=False``: pi 0.73's rule (see the module
    docstring)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            message.get("role") == "assistant"
            and message.get("stopReason") not in ("aborted", "error")
            and (known := usage_tokens(message.get("usage"))) > 0
        ):
            after = messages[index + 1 :]
            trailing = sum(estimate_tokens(m, count_user_images=count_user_images) for m in after)
            return ContextEstimate(known + trailing, known, trailing, index)
    estimated = sum(estimate_tokens(m, count_user_images=count_user_images) for m in messages)
    return ContextEstimate(estimated, 0, estimated, None)


def estimate_projected_context_tokens(
    projection: Projection, path: Sequence[StoredEntry]
) -> ContextEstimate:
    """The size of the context ``projection`` builds from ``path`` (pi 1.5's
    estimateProjectedContextTokens): estimate_context_tokens while the usage it rests
    on was recorded after the path's last context edit and last compaction; else that
    usage measured a context that is no longer sent, so every message is estimated,
    the system messages as the one prompt they replay into."""
    messages = projection.messages
    estimate = estimate_context_tokens(messages)
    if estimate.last_usage_index is not None:
        source = _source_of(projection, estimate.last_usage_index)
        measured_at = next((i for i, e in enumerate(path) if e.id == source), -1)
        invalidated_at = next(
            (i for i in range(len(path) - 1, -1, -1) if path[i].type in _INVALIDATING),
            -1,
        )
        if measured_at > invalidated_at:
            return estimate
    system = current_system_message(messages)
    tokens = estimate_tokens(system) if system is not None else 0
    tokens += sum(estimate_tokens(m) for m in messages if m.get("role") != "system")
    return ContextEstimate(tokens, 0, tokens, None)


# entries after which a recorded usage no longer measures what is sent
_INVALIDATING = frozenset({"context_edit", "compaction"})


def _source_of(projection: Projection, message_index: int) -> str | None:
    """The id of the entry the projection's ``message_index``-th message came from."""
    seen = 0
    for item in projection.entries:
        seen += len(item.messages)
        if message_index < seen:
            return item.entry.id
    return None


def estimate_messages_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """The estimates of the messages, added up, ignoring recorded usage (which goes
    stale once a compaction or pruning changes what is sent)."""
    return sum(estimate_tokens(m) for m in messages)
