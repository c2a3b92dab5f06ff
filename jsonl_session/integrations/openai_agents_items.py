"""Responses input items as the openai-agents store keeps them in a pi session, and back.

Owns the shapes (what AgentsSessionFile in openai_agents_store.py writes is decided
here, item by item; the protocol, the lock and the writing are the store's):

- user messages -> user messages (text; images as base64 data URLs); system and
  developer messages -> pi 1.5 system messages (the session's prompt), the item's
  role kept as ``openaiRole``;
- a run of model output items (reasoning, assistant messages, function and custom
  tool calls) -> one assistant message of replies.py's `output_blocks`; the SDK's
  placeholder id ``__fake_id__`` (what it gives items of Chat Completions models) is
  dropped first, so pi never sends it back as an item id;
- tool call outputs -> toolResults; parts pi has no shape for stay whole in
  ``details.openaiOutput``;
- anything else -> a ``custom`` entry ``jsonl-session/openai-agents-item`` holding the item.

Reading back (`history_items`) is providers/openai.py's `to_openai_responses` of the
context, run once over all messages, with system messages and kept items put back at
their places. A place is "after the items the first k messages give": those counts
come from converting each turn on its own (a turn starts at each message that closes
the one before, as the converter's history repair does), so the cost stays linear in
the history; should the turns' items ever not add up to the whole, each count is
taken from the converter for the messages before the place, as it was at first.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from jsonl_session.context import Projection
from jsonl_session.format.entry import StoredEntry
from jsonl_session.messages import plain_message, system_message_text, text_parts
from jsonl_session.providers.history import NO_RESULT_TEXT
from jsonl_session.providers.openai import to_openai_responses

ITEM_TYPE = "jsonl-session/openai-agents-item"
"""customType of the entries holding items pi has no message shape for."""
ROLE_KEY = "openaiRole"
"""On a system message the store wrote: the item's role, ``system`` or ``developer``."""
FAKE_ID = "__fake_id__"
"""The SDK's FAKE_RESPONSES_ID: the id it puts on output items of models that give none."""

Item = dict[str, Any]

_OUTPUT_TYPES = frozenset({"reasoning", "function_call", "custom_tool_call"})
_RESULT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
_INPUT_ROLES = frozenset({"user", "system", "developer"})
_DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)$", re.DOTALL)


# --- items in -------------------------------------------------------------------------


def kind(item: Item) -> str:
    """input (a user, system or developer message), output (what output_blocks takes),
    result (a tool call's output) or other."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        role = item.get("role")
        return "output" if role == "assistant" else "input" if role in _INPUT_ROLES else "other"
    if kind in _OUTPUT_TYPES:
        return "output"
    return "result" if kind in _RESULT_TYPES else "other"


def output_item(item: Item) -> Item:
    """An output item as output_blocks reads one: without the SDK's placeholder id, and
    an assistant message's content as output_text parts (an easy message may give a
    string, or input_text parts)."""
    if item.get("id") == FAKE_ID:
        item = {key: value for key, value in item.items() if key != "id"}
    content = item.get("content")
    if item.get("type", "message") != "message" or not isinstance(content, str | list):
        return item
    if isinstance(content, str):
        return {**item, "content": [{"type": "output_text", "text": content}]}
    parts = [p for p in content if isinstance(p, dict)]
    plain_text = [
        {**p, "type": "output_text"} if p.get("type") == "input_text" else p for p in parts
    ]
    return {**item, "content": plain_text}


def real_id(item: Item) -> str | None:
    """The item's id, unless it has none or only the SDK's placeholder."""
    item_id = item.get("id")
    return item_id if isinstance(item_id, str) and item_id and item_id != FAKE_ID else None


def pi_content(content: Any, *, images: bool) -> tuple[str | list[Item], bool]:
    """Input content as pi content: a string stays one; text parts, and image parts
    holding base64 data URLs when ``images``, become blocks. The flag says whether
    every part fitted (the blocks hold those that did)."""
    if isinstance(content, str):
        return content, True
    if not isinstance(content, list):
        return [], False
    blocks: list[Item] = []
    whole = True
    for part in content:
        part_type = part.get("type") if isinstance(part, dict) else None
        url = part.get("image_url") if isinstance(part, dict) else None
        found = _DATA_URL.match(url) if images and isinstance(url, str) else None
        if part_type == "input_text" and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif part_type == "input_image" and found is not None:
            blocks.append({"type": "image", "data": found["data"], "mimeType": found["mime"]})
        else:
            whole = False
    return blocks, whole


def zero_usage() -> Item:
    """pi's usage shape with nothing counted: the SDK gives a session no usage."""
    counts = dict.fromkeys(("input", "output", "cacheRead", "cacheWrite"), 0)
    return {**counts, "totalTokens": 0, "cost": {**counts, "total": 0}}


# --- items out ------------------------------------------------------------------------


def system_item(message: Item) -> Item | None:
    """A system message of the context as the message item it was: one input_text
    part per text block (a prompt with named sections as one text)."""
    sections = message.get("sections")
    texts = [system_message_text(message)] if sections else text_parts(message.get("content"))
    parts = [{"type": "input_text", "text": text} for text in texts if text]
    role = "developer" if message.get(ROLE_KEY) == "developer" else "system"
    return {"type": "message", "role": role, "content": parts} if parts else None


def kept(entry: StoredEntry) -> tuple[Item, str | None] | None:
    """The item a custom entry of ITEM_TYPE keeps and the id it came before."""
    mine = entry.type == "custom" and entry.custom_type == ITEM_TYPE
    data = entry.data().get("data") if mine else None
    if not isinstance(data, dict) or not isinstance(data.get("item"), dict):
        return None
    before = data.get("before")
    return data["item"], before if isinstance(before, str) else None


def settled(items: list[Item]) -> list[Item]:
    """``items`` without the "no result" outputs the converter adds at the end for calls
    whose outputs had not come yet (they come after whatever is added next)."""
    return items[: _settled_end(items, len(items))]


def history_items(projection: Projection, model: str) -> list[Item]:
    """The converter's items for the projection's messages, with its system messages
    and kept items spliced in at their places."""
    messages = projection.messages
    base = convert(messages, model)
    count = _counter(messages, base, model)
    placed: list[tuple[int, Item]] = []  # (items before it, item), in path order
    seen = 0  # messages so far
    for projected in projection.entries:
        found = kept(projected.entry)
        if found is not None:
            item, anchor = found
            at = count(seen)
            if anchor is not None and seen:
                # the run's assistant message is the message just before
                start = count(seen - 1)
                at = next((i for i in range(start, at) if base[i].get("id") == anchor), at)
            placed.append((at, item))
        for message in projected.messages:
            system = system_item(message) if message.get("role") == "system" else None
            if system is not None:
                placed.append((count(seen), system))
            seen += 1
    return _merged(base, placed)


def convert(messages: Sequence[Item], model: str) -> list[Item]:
    """The Responses input items for ``messages``, as replayed for ``model``."""
    request = to_openai_responses(list(messages), model=model)
    return list(request.kwargs["input"])


def _counter(messages: Sequence[Item], base: list[Item], model: str) -> Callable[[int], int]:
    """``count(k)``: how many of ``base``'s items the first ``k`` messages give, not
    counting the "no result" outputs that close calls still open after them."""
    starts = [k for k, message in enumerate(messages) if k == 0 or _closes_turn(message)]
    ends = [*starts[1:], len(messages)][: len(starts)]
    before = [0]  # items of the turns before each turn
    for start, end in zip(starts, ends, strict=True):
        before.append(before[-1] + len(convert(messages[start:end], model)))
    whole = before[-1] == len(base)
    counts: dict[int, int] = {}

    def count(k: int) -> int:
        if k in counts:
            return counts[k]
        turn = bisect_right(starts, k) - 1
        if not whole:  # the turns do not add up: the converter on the messages before
            counts[k] = len(settled(convert(messages[:k], model)))
        elif k == len(messages):
            counts[k] = _settled_end(base, len(base))
        elif turn < 0 or k == starts[turn]:
            counts[k] = _settled_end(base, before[max(turn, 0)])
        else:
            partial = settled(convert(messages[starts[turn] : k], model))
            counts[k] = before[turn] + len(partial) if partial else count(starts[turn])
        return counts[k]

    return count


def _closes_turn(message: Item) -> bool:
    """Whether the converter's history repair closes the turn before ``message`` (adds
    the missing results of its calls): every message it keeps but a tool result."""
    if message.get("role") == "system":
        return False
    plain = plain_message(message)
    return plain is not None and plain.get("role") != "toolResult"


def _settled_end(items: list[Item], end: int) -> int:
    while end:
        last = items[end - 1]
        if last.get("type") != "function_call_output" or last.get("output") != NO_RESULT_TEXT:
            break
        end -= 1
    return end


def _merged(base: list[Item], placed: list[tuple[int, Item]]) -> list[Item]:
    """``base`` with each placed item before ``base[at]``, in their order."""
    keyed = [(at, 0, n, item) for n, (at, item) in enumerate(placed)]
    keyed += [(index, 1, 0, item) for index, item in enumerate(base)]
    return [item for *_, item in sorted(keyed, key=lambda key: key[:3])]
