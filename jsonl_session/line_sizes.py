"""The estimate and the recorded usage of a message entry, read straight from its
line: breakdown.py's way through the messages of users, assistants and tool results,
which are most of a session's entries and nearly all of its bytes.

Decoding each line into dicts took most of `stats` on a large session. Here msgspec
decodes a line into structs holding only the fields tokens.py's estimate and
usage.py's figures read; it skips the rest (signatures, images' data, details)
without building it. The fields it keeps hold the values the dict way (orjson, then
`decode_any`) gives, with one exception, an integer beyond 64 bits (orjson reads it as
a float): a line with one where it is read is refused, as is any line msgspec refuses
(bytes that are not UTF-8 in a field it decodes, a lone surrogate, a content block
that is not an object, a count that is not an integer). A refused line is measured
the dict way (breakdown.py), so the figures never depend on which way a line went.
"""

from __future__ import annotations

import enum
import itertools
from collections import Counter
from typing import Any, Final, Literal

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.jsonio import dumps_within_64_bits
from jsonl_session.format.walk import as_text
from jsonl_session.tokens import IMAGE_CHARS, js_length, json_chars
from jsonl_session.usage import USAGE_KEYS, UsageTally


class DictWay(enum.Enum):
    """What `measure_message_line` returns for a line the dict way must measure."""

    DICT_WAY = 0


DICT_WAY: Final = DictWay.DICT_WAY
Measured = tuple[int, str, Any]  # tokens, role, tool name (a tool result's)


class _Block(msgspec.Struct, gc=False):
    """What the estimate reads of a content block (absent and null are both None,
    as ``dict.get`` gives them)."""

    type: Any = None
    text: Any = None
    thinking: Any = None
    name: Any = None
    arguments: Any = None


class _Cost(msgspec.Struct, gc=False):
    # typed, so that only floats where values are not typed reach _note_float
    total: int | float | str | bool | None = None


class _Usage(msgspec.Struct, rename="camel", gc=False):
    """What usage_figures reads of a usage."""

    input: int | UnsetType = UNSET
    output: int | UnsetType = UNSET
    cache_read: int | UnsetType = UNSET
    cache_write: int | UnsetType = UNSET
    total_tokens: int | UnsetType = UNSET
    cost: _Cost | None = None


class _Message(msgspec.Struct, rename="camel", gc=False):
    """What the estimate and the usage read of a message."""

    role: Any = None
    content: str | list[_Block] | None = None
    tool_name: Any = None
    provider: Any = None
    model: Any = None
    usage: _Usage | None = None


class _MessageLine(msgspec.Struct, gc=False):
    id: Any = None  # a line whose id is not the entry's goes the dict way, checked
    message: _Message | None = None


# Floats where values are not typed (tool arguments, mostly) are counted as decoded:
# `dumps` must look for floats JavaScript writes as integers (1.0 as 1) in the JSON of
# arguments that hold some; for the rest orjson's output is already JSON.stringify's.
_floats = itertools.count()


def _note_float(literal: str) -> float:
    next(_floats)
    return float(literal)  # correctly rounded, as msgspec and orjson read it


_decode = msgspec.json.Decoder(_MessageLine, float_hook=_note_float).decode

# what msgspec raises for a line it refuses (see the module docstring)
_REFUSED = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)

# the roles measured here; the rarer ones (system, bash, custom, summaries) read
# fields these structs do not hold
_ROLES = frozenset({"user", "assistant", "toolResult"})


class _Refused(Exception):
    """A value the dict way reads otherwise (see the module docstring)."""


def measure_message_line(
    entry: StoredEntry, line: bytes | memoryview, tools: Counter[str], tally: UsageTally
) -> Measured | Literal[DictWay.DICT_WAY] | None:
    """For a message entry and its line: the message's tokens, role and tool name
    (which only a tool result has; None for others), after adding its usage to
    ``tally`` and what it gives a tool to ``tools`` (a tool result's tokens, an
    assistant's tool calls'); None when the line holds no message object; or DICT_WAY,
    having added nothing, when the dict way must measure it. One function, with its
    names local: it runs for most lines of a session, and calls cost."""
    floats = next(_floats)
    try:
        decoded = _decode(line)
    except _REFUSED:
        return DICT_WAY
    message = decoded.message
    if decoded.id != entry.id:
        return DICT_WAY
    if message is None:
        return None
    role = message.role
    if role.__class__ is not str or role not in _ROLES:
        return DICT_WAY
    content = message.content
    floated = next(_floats) != floats + 1  # the line had floats where values are not typed
    chars = 0
    try:  # _Refused comes before anything is added anywhere
        if role == "assistant":
            calls: list[tuple[str, int]] | None = None  # to tools, once nothing was refused
            for block in content if content.__class__ is list else ():
                kind = block.type
                if kind == "text":
                    text = block.text
                    chars += len(text) if text.__class__ is str and text.isascii() else _chars(text)
                elif kind == "thinking":
                    text = block.thinking
                    chars += len(text) if text.__class__ is str and text.isascii() else _chars(text)
                elif kind == "toolCall":
                    call = _chars(block.name) + json_chars(_arguments(block.arguments, floated))
                    chars += call
                    if calls is None:
                        calls = []
                    calls.append((_text(block.name), -(-call // 4)))
            tokens = -(-chars // 4)  # math.ceil(chars / 4), in integers
            if message.usage is not None and entry.role == "assistant":
                _add_usage(tally, message.usage, _model(message))
            if calls is not None:
                for name, call_tokens in calls:
                    tools[name] += call_tokens
            return tokens, role, None
        # a user message or a tool result: its text and images
        if content.__class__ is str:
            chars = _chars(content)
        else:
            for block in content if content.__class__ is list else ():
                kind = block.type
                if kind == "text":
                    text = block.text  # (ASCII text: its length, without a call)
                    chars += len(text) if text.__class__ is str and text.isascii() else _chars(text)
                elif kind == "image":
                    chars += IMAGE_CHARS
        tokens = -(-chars // 4)
        # the tool's name first: refused, nothing must have been added to the usage
        tool = _text(message.tool_name) if role == "toolResult" else None
        if message.usage is not None and entry.role == "assistant":  # note_usage asks the entry
            _add_usage(tally, message.usage, _model(message))
        if tool is not None:
            tools[tool] += tokens
            return tokens, role, message.tool_name
        return tokens, role, None
    except _Refused:
        return DICT_WAY


def _model(message: _Message) -> str:
    return f"{_text(message.provider)}/{_text(message.model)}"


_LOW, _HIGH = -(2**63), 2**64 - 1  # the integers orjson reads as integers


def _chars(value: Any) -> int:
    """``js_length(as_text(value or ""))``: a text's length (JavaScript's)."""
    if value.__class__ is str:
        return len(value) if value.isascii() else js_length(value)
    return js_length(_text(value)) if value else 0


def _text(value: Any) -> str:
    """``as_text(value)``; refused for an integer beyond 64 bits, also in a list or an
    object (not searched for one: any non-empty one is refused, rare in these fields)."""
    if value.__class__ is str:
        return value
    if (value.__class__ in (list, dict) and value) or (
        value.__class__ is int and not _LOW <= value <= _HIGH
    ):
        raise _Refused
    return as_text(value)


def _arguments(arguments: Any, floats: bool) -> bytes:
    """``dumps(arguments)``; refused where orjson cannot write them (an integer beyond
    64 bits; or nesting past 254, left to the dict way too)."""
    try:
        return dumps_within_64_bits(arguments) if floats else orjson.dumps(arguments)
    except TypeError:
        raise _Refused from None


def _add_usage(tally: UsageTally, usage: _Usage, model: str) -> None:
    """RecordedUsage.add of an assistant message's usage, from its struct."""
    total = usage.cost.total if usage.cost is not None else None
    try:  # most records: all five counts, integers from 0 to below 2**53
        plain = (
            usage.input | usage.output | usage.cache_read | usage.cache_write | usage.total_tokens  # type: ignore[operator]
        ) >> 53 == 0
    except TypeError:  # one is absent
        plain = False
    if plain and total.__class__ is float:
        # finite_number of a float: within 1e300 (so neither infinite nor NaN)
        cost = total if -1e300 < total < 1e300 else 0.0
        counts = (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write,
            usage.total_tokens,
        )
        tally.add_counts(counts, cost, model, "assistant")  # type: ignore[arg-type]
        return
    if isinstance(total, int) and not _LOW <= total <= _HIGH:
        raise _Refused
    figures: dict[str, Any] = {}
    given = (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens)
    for key, value in zip(USAGE_KEYS, given, strict=True):
        if isinstance(value, int):
            if not _LOW <= value <= _HIGH:
                raise _Refused
            figures[key] = value
    if usage.cost is not None:
        figures["cost"] = {"total": total}
    tally.add(figures, model, "assistant")
