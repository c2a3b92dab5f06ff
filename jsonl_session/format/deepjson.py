"""JSON nested deeper than the fast codecs go, read and written with an explicit stack.

JSON.parse (which pi reads session lines with) takes any depth; orjson stops at 1,024
levels, msgspec and the standard library at Python's recursion limit. jsonio.py
tries them first and comes here only for a line or a value they refuse for depth,
so this module may be plain Python: it is correct at any depth, not fast.

Reading has JSON.parse's rules over text already decoded (invalid UTF-8 replaced by
jsonio): only JSON whitespace, no NaN/Infinity literals, no raw control characters in
strings, escapes of lone surrogates kept, the last of duplicate keys wins, a number
beyond a double becomes an infinite float, as in JavaScript. Writing gives
JSON.stringify's compact text for values jsonio has already normalised (its
``_js_numbers``): strings escaped as the standard library's encoder does (the escapes
JSON.stringify writes), numbers as orjson writes them.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

import orjson

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_encode_string = json.encoder.encode_basestring


class DeepJsonError(ValueError):
    """The text is not JSON (the message says where)."""


def loads(text: str) -> Any:
    """The value of the JSON ``text``, at any depth."""
    # each open container: [the container, the key awaiting its value (objects)]
    stack: list[list[Any]] = []
    position = _skip(text, 0)
    while True:
        value, position = _value_or_open(text, position, stack)
        position = _skip(text, position)
        # a finished value goes into the container above it, closing as many
        # containers as end here
        while True:
            if not stack:
                if position != len(text):
                    raise DeepJsonError(f"extra data at character {position}")
                return value
            container, key = stack[-1]
            if isinstance(container, list):
                container.append(value)
            else:
                container[key] = value
            char = text[position : position + 1]
            if char == ",":
                position = _skip(text, position + 1)
                if isinstance(container, dict):
                    stack[-1][1], position = _key(text, position)
                break
            closing = "]" if isinstance(container, list) else "}"
            if char != closing:
                raise DeepJsonError(f"expected ',' or '{closing}' at character {position}")
            stack.pop()
            value, position = container, _skip(text, position + 1)


def _value_or_open(text: str, position: int, stack: list[list[Any]]) -> tuple[Any, int]:
    """A scalar or an empty container at ``position``; containers with something in
    them are pushed (with their first key) and the scan goes on inside them."""
    while True:
        char = text[position : position + 1]
        if char == "[":
            after = _skip(text, position + 1)
            if text[after : after + 1] == "]":
                return [], after + 1
            stack.append([[], None])
            position = after
        elif char == "{":
            after = _skip(text, position + 1)
            if text[after : after + 1] == "}":
                return {}, after + 1
            key, position = _key(text, after)
            stack.append([{}, key])
        elif char == '"':
            return _string(text, position + 1)
        else:
            return _scalar(text, position)


def _key(text: str, position: int) -> tuple[str, int]:
    if text[position : position + 1] != '"':
        raise DeepJsonError(f"expected a key at character {position}")
    key, position = _string(text, position + 1)
    position = _skip(text, position)
    if text[position : position + 1] != ":":
        raise DeepJsonError(f"expected ':' at character {position}")
    return key, _skip(text, position + 1)


def _string(text: str, start: int) -> tuple[str, int]:
    try:
        value, end = scanstring(text, start, True)
    except ValueError as exc:
        raise DeepJsonError(str(exc)) from None
    return value, end


def _scalar(text: str, position: int) -> tuple[Any, int]:
    for word, value in _LITERALS.items():
        if text.startswith(word, position):
            return value, position + len(word)
    match = _NUMBER.match(text, position)
    if match is None:
        raise DeepJsonError(f"expected a value at character {position}")
    fraction, exponent = match.groups()
    if fraction or exponent:
        return float(match.group()), match.end()
    return int(match.group()), match.end()


def _skip(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    return match.end() if match is not None else position


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (see the module doc), at any depth."""
    out: list[str] = []
    # work items: a value to write, or a piece of text already decided
    pending: list[tuple[bool, Any]] = [(False, value)]
    while pending:
        is_text, item = pending.pop()
        if is_text:
            out.append(item)
        elif isinstance(item, dict):
            parts: list[tuple[bool, Any]] = [(True, "{")]
            for index, (key, member) in enumerate(item.items()):
                comma = "," if index else ""
                parts += [(True, f"{comma}{_encode_string(str(key))}:"), (False, member)]
            parts.append((True, "}"))
            pending.extend(reversed(parts))
        elif isinstance(item, (list, tuple)):
            parts = [(True, "[")]
            for index, member in enumerate(item):
                parts += [(True, ",")] if index else []
                parts.append((False, member))
            parts.append((True, "]"))
            pending.extend(reversed(parts))
        else:
            out.append(_scalar_text(item))
    return "".join(out)


def _scalar_text(item: Any) -> str:
    if isinstance(item, str):
        return str(_encode_string(item))
    if item is None or isinstance(item, bool):
        return "null" if item is None else ("true" if item else "false")
    if isinstance(item, int) and not -(2**63) <= item < 2**64:
        return str(item)  # orjson takes 64 bits; JavaScript would have a double here
    if isinstance(item, (int, float)):
        return orjson.dumps(item).decode()
    raise TypeError(f"Type is not JSON serializable: {type(item).__name__}")
