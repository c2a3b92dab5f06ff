"""Walks over JSON values that never recurse in Python, so a value nested as deep as
JSON.parse reads (any depth) is walked like a shallow one.

Owns `map_strings` (every string of a value through a function, a new value only where
something changed), `dumps_indented` (the standard library's ``indent=2`` text, levels
past `INDENTED_LEVELS` on one line), and `dumps_text` / `loads_text` (the standard
library's ``json.dumps`` / ``json.loads``, at any depth). Knows nothing of sessions;
jsonio.py and deepjson.py read and write compact JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import orjson

from jsonl_session.format import deepjson


def _orjson_writes_alike(value: Any) -> bool:
    """Only dicts with str keys, lists, strs, ints, bools and None (exactly those
    types: a float, a subclass or another type may be written otherwise)."""
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return False
            pending.extend(item.values())
        elif kind is list:
            pending.extend(item)
        elif kind is not str and kind is not int and kind is not bool and item is not None:
            return False
    return True


def map_strings(value: Any, change: Callable[[str], str], *, keys: bool = False) -> Any:
    """``value`` with ``change`` applied to every string in it (and to object keys
    with ``keys``): the same object where nothing changed, new containers on the way
    to a change."""
    if isinstance(value, str):
        return change(value)
    if not isinstance(value, (dict, list)):
        return value
    # a frame: the container, its (key, child) pairs, the next index, the new
    # children so far, whether any changed
    stack: list[list[Any]] = [[value, _children(value), 0, [], False]]
    while True:
        frame = stack[-1]
        original, children, index, done = frame[0], frame[1], frame[2], frame[3]
        if index < len(children):
            frame[2] = index + 1
            child = children[index][1]
            if isinstance(child, (dict, list)):
                stack.append([child, _children(child), 0, [], False])
                continue
            new = change(child) if isinstance(child, str) else child
            done.append(new)
            frame[4] = frame[4] or new is not child
            continue
        stack.pop()
        result = original
        if isinstance(original, dict) and keys:
            renamed = [change(key) if isinstance(key, str) else key for key, _ in children]
            if frame[4] or any(
                new is not key for new, (key, _) in zip(renamed, children, strict=True)
            ):
                result = dict(zip(renamed, done, strict=True))
        elif frame[4]:
            if isinstance(original, dict):
                result = {key: new for (key, _), new in zip(children, done, strict=True)}
            else:
                result = done
        if not stack:
            return result
        parent = stack[-1]
        parent[3].append(result)
        parent[4] = parent[4] or result is not original


def _children(container: dict[str, Any] | list[Any]) -> list[tuple[Any, Any]]:
    return list(container.items()) if isinstance(container, dict) else list(enumerate(container))


INDENTED_LEVELS = 64
"""Levels `dumps_indented` indents; deeper ones go on one line, or the text would grow
with the square of the depth (two spaces a level, on every line)."""


def dumps_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)``; a value nested deeper than Python recurses
    is written compact (JSON.stringify's text) instead of failing."""
    try:
        return json.dumps(value, **options)
    except RecursionError:
        return deepjson.dumps(value)


def loads_text(text: str | bytes) -> Any:
    """``json.loads(text)`` at any depth (ValueError when it is not JSON)."""
    try:
        return json.loads(text)
    except RecursionError:
        return deepjson.loads(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2, default=str)``, at any depth:
    levels past `INDENTED_LEVELS` are written compact on one line."""
    if _orjson_writes_alike(value):
        # the standard library indents in Python, ten times slower; orjson writes
        # the same text for objects, arrays, strings, integers, booleans and null
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:  # a lone surrogate, a huge integer, too deep
            pass
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except RecursionError:
        pass
    out: list[str] = []
    pending: list[tuple[bool, Any, int]] = [(False, value, 0)]  # (is text, item, depth)
    while pending:
        is_text, item, depth = pending.pop()
        if is_text:
            out.append(item)
            continue
        inner = "\n" + "  " * (depth + 1)
        if depth >= INDENTED_LEVELS and isinstance(item, (dict, list, tuple)):
            out.append(deepjson.dumps(_plain(item)))
        elif isinstance(item, dict) and item:
            parts: list[tuple[bool, Any, int]] = [(True, "{", depth)]
            for index, (key, member) in enumerate(item.items()):
                lead = ("," if index else "") + inner
                parts += [(True, f"{lead}{deepjson.dumps(str(key))}: ", depth)]
                parts.append((False, member, depth + 1))
            parts.append((True, "\n" + "  " * depth + "}", depth))
            pending.extend(reversed(parts))
        elif isinstance(item, (list, tuple)) and item:
            parts = [(True, "[", depth)]
            for index, member in enumerate(item):
                parts += [(True, ("," if index else "") + inner, depth), (False, member, depth + 1)]
            parts.append((True, "\n" + "  " * depth + "]", depth))
            pending.extend(reversed(parts))
        else:
            out.append(_scalar(item))
    return "".join(out)


def _plain(value: Any) -> Any:
    """``value`` with what JSON cannot hold as its text (``default=str``)."""
    pending: list[Any] = [value]
    while pending:
        container = pending.pop()
        members = container.items() if isinstance(container, dict) else enumerate(container)
        for key, member in list(members):
            if isinstance(member, (dict, list)):
                pending.append(member)
            elif not (isinstance(member, (str, int, float, bool)) or member is None):
                container[key] = str(member)
    return value


def _scalar(item: Any) -> str:
    if isinstance(item, (dict, list, tuple)):
        return "{}" if isinstance(item, dict) else "[]"
    if isinstance(item, (str, bool, int, float)) or item is None:
        return json.dumps(item, ensure_ascii=False)
    return json.dumps(str(item), ensure_ascii=False)


def as_text(value: Any, limit: int = 200) -> str:
    """``value`` as text for a message or a label: a string as it is, anything else as
    its JSON (cut to ``limit`` characters), so a value nested any depth, or a number
    too long for ``str``, never fails."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, (bool, float)):
        return str(value)
    if isinstance(value, int):
        # str() of an int past 4,300 digits raises: say its size instead
        return str(value) if abs(value) < 10**4000 else f"<integer of {value.bit_length()} bits>"
    try:
        text = dumps_text(value, ensure_ascii=False, default=str)
    except ValueError:  # an integer of more digits than Python converts
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def finite_number(value: Any) -> float | int | None:
    """``value`` if it is a number JavaScript holds as a finite double (not a bool),
    else None: usage and cost figures outside that are damage, not data."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return value if abs(value) <= 2**53 else None
    return value if math.isfinite(value) and abs(value) < 1e300 else None


def items_of(value: Any) -> list[Any]:
    """``value`` if it is a list, else no items: a field that should hold a list but
    holds a number, a string or an object is damage, and iterates as empty."""
    return value if isinstance(value, list) else []
