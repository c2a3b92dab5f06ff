"""Answers sized for a model's context: the newest messages that fit a budget of
characters of JSON, one message cut down to fit (long strings and long lists cut, and
saying what went), and text made safe to send (lone surrogates replaced).

Pure functions over JSON-ready values; what is asked and of which files is
history.py's, the MCP binding mcp_server.py's.
"""

from __future__ import annotations

import re
from typing import Any

from jsonl_session.format.walk import dumps_text, map_strings

SUMMARY_WIDTH = 100
"""Characters of a one-line summary, a label or a field kept beside a note."""
# A string is never cut shorter than this when one message must be shortened to fit,
# nor a list to fewer items; a list keeps about one item per LIST_ITEM_CHARS of a cut.
SHORTEST_CUT = 40
SHORTEST_LIST = 2
LIST_ITEM_CHARS = 20
# The fields a message too large for the budget keeps, its content replaced by a note.
_KEPT_FIELDS = ("role", "toolCallId", "toolName", "isError", "customType", "timestamp")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _json_size(value: Any) -> int:
    return len(dumps_text(value, ensure_ascii=False, separators=(",", ":")))


def tail_within(messages: list[dict[str, Any]], budget: int) -> tuple[list[dict[str, Any]], bool]:
    """The newest messages whose JSON fits ``budget`` characters together, in order,
    and whether the newest had to be cut down (it is kept, shortened, when it alone
    does not fit: an answer with no message at all would tell the model nothing)."""
    kept: list[dict[str, Any]] = []
    used = 0
    shortened = False
    for message in reversed(messages):
        size = _json_size(message)
        if used + size > budget:
            if not kept:
                kept.append(_shortened(message, budget))
                shortened = True
            break
        kept.append(message)
        used += size
    kept.reverse()
    return kept, shortened


def _shortened(message: dict[str, Any], budget: int) -> dict[str, Any]:
    """``message`` with its long strings and long lists cut (a list keeps its first
    items and says how many went), the cuts halving until it fits; when even the
    shortest cuts do not fit, the message's content is replaced by a note."""
    cap = budget
    while True:
        shorter: dict[str, Any] = cut(message, cap, max(SHORTEST_LIST, cap // LIST_ITEM_CHARS))
        if _json_size(shorter) <= budget:
            return shorter
        if cap <= SHORTEST_CUT:
            return _content_replaced(message)
        cap //= 2


def cut(value: Any, cap: int, items: int) -> Any:
    """``value`` with strings over ``cap`` characters and lists over ``items`` items cut.
    An explicit stack, not recursion: a value may be nested as deep as JSON.parse reads."""
    top: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, top, 0)]  # (value, its new parent, key)
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, str):
            parent[key] = (
                item if len(item) <= cap else f"{item[:cap]}… [{len(item) - cap} characters cut]"
            )
        elif isinstance(item, dict):
            parent[key] = fields = dict.fromkeys(item)
            stack.extend((inner, fields, name) for name, inner in item.items())
        elif isinstance(item, list):
            kept = item[:items]
            copy: list[Any] = [None] * len(kept)
            parent[key] = copy
            stack.extend((inner, copy, index) for index, inner in enumerate(kept))
            if len(item) > items:
                note = f"… [{len(item) - items} more items cut]"
                # in a list of content blocks the note is a text block, so the shape holds
                blocks = all(isinstance(inner, dict) and "type" in inner for inner in kept)
                copy.append({"type": "text", "text": note} if blocks else note)
        else:
            parent[key] = item
    return top[0]


def _content_replaced(message: dict[str, Any]) -> dict[str, Any]:
    """The message's small fields (role, ids, names, time) with a note for the rest."""
    kept = {key: message[key] for key in _KEPT_FIELDS if key in message}
    size = _json_size(message)
    note = f"[message of {size} characters of JSON left out: over the budget even when cut]"
    return {**cut(kept, SUMMARY_WIDTH, SHORTEST_LIST), "content": note}


def json_safe(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with lone surrogates replaced by U+FFFD: pi writes them when a cut
    splits an emoji, and JSON sent over the wire must be valid UTF-8."""
    try:
        dumps_text(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        cleaned: dict[str, Any] = _replace_surrogates(value)
        return cleaned
    return value


def _replace_surrogates(value: Any) -> Any:
    return map_strings(value, _replace_in_text, keys=True)


def _replace_in_text(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text
