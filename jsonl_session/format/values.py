"""Checking the values inside entries: types, numbers and times, as problems with lines.

Owns the value check of one header or entry object: a field of the wrong type
where the format (model.py) expects a number, string, list or object; a number no
double holds (JSON.parse reads it as Infinity) or past what an integer field may
hold; a time this platform's clock cannot hold (an ISO 8601 ``timestamp`` outside
years 1 to 9999, a millisecond ``timestamp`` outside JavaScript's Date range or the
clock's); a ``parentId`` that is neither a string nor null. Every reader already
tolerates such values (a wrong type counts as missing, so nothing crashes); this
check says where they are, for ``doctor`` and `Session.check_values`. It does no
I/O and decides nothing about the tree; an entry of a type or role this version
does not know is checked for its envelope only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypeAlias

import msgspec
import orjson

from jsonl_session.format.entry import NotAnObject, StoredEntry, entry_lines, loads_object
from jsonl_session.format.jsonio import NotJson
from jsonl_session.format.model import KNOWN_ENTRY_TYPES, KNOWN_ROLES, SessionEntry
from jsonl_session.format.problems import Problem
from jsonl_session.format.walk import as_text, dumps_text, map_strings

_JS_DATE_LIMIT_MS = 8.64e15  # ECMAScript: a Date holds ±100,000,000 days from 1970
_DOUBLE_MAX = 1.7976931348623157e308
# A number no double holds has an exponent of three digits or at least 309 digits;
# lines without either skip the walk over every value.
_MAYBE_HUGE = re.compile(rb"[eE][+]?\d{3}|\d{309}")


def entry_value_problems(
    data: dict[str, Any], raw: bytes, line: int, *, within_doubles: bool = False
) -> list[Problem]:
    """What is wrong with the values of one entry object (already known to have a
    string ``type`` and ``id``), each a problem of kind ``invalid-value``.
    ``within_doubles``: the line is known to hold no number a double cannot (orjson
    read it: it refuses one), so none is looked for."""
    entry_id = data.get("id") if isinstance(data.get("id"), str) else None
    found: list[str] = []
    if "parentId" in data and not isinstance(data["parentId"], str | None):
        found.append(f"parentId is {_kind(data['parentId'])}, not a string or null; read as a root")
    found.extend(_iso_time("timestamp", data.get("timestamp"), required=True))
    message = data.get("message")
    if isinstance(message, dict) and "timestamp" in message:
        found.extend(_millisecond_time("message.timestamp", message["timestamp"]))
    if not within_doubles and _MAYBE_HUGE.search(raw):
        timed = any(text.startswith("message.timestamp ") for text in found)
        huge = _numbers_past_a_double(data)
        found.extend(t for t in huge if not (timed and t.startswith("message.timestamp:")))
    shape = _shape_problem(data)
    if shape is not None:
        found.append(shape)
    return [Problem("invalid-value", text, line, entry_id) for text in found]


def header_value_problems(header: dict[str, Any], line: int = 1) -> list[Problem]:
    """What is wrong with the values of a header the loader accepted."""
    found = _iso_time("the header's timestamp", header.get("timestamp"), required=False)
    found.extend(_numbers_past_a_double(header))
    return [Problem("invalid-value", text, line) for text in found]


def session_value_problems(header: dict[str, Any], entries: Sequence[StoredEntry]) -> list[Problem]:
    """The value problems of a header and its entries, in line order; each entry's
    line is decoded here (in batches, so a large session is not held whole)."""
    found = header_value_problems(header)
    for entry, raw in entry_lines(entries):
        try:
            # (as loads_object reads it: orjson first, which refuses any number past
            # a double, so a line it reads needs no search for one, most of a check)
            data = orjson.loads(raw)
            within_doubles = True
        except orjson.JSONDecodeError:
            try:
                data = loads_object(raw)
            except (NotJson, NotAnObject):
                continue  # the read reported the line already
            within_doubles = False
        if not isinstance(data, dict):
            continue
        found.extend(entry_value_problems(data, raw, entry.line, within_doubles=within_doubles))
    return found


def _shape_problem(data: dict[str, Any]) -> str | None:
    """The first place where a known entry type differs from the format's shape."""
    if data.get("type") not in KNOWN_ENTRY_TYPES:
        return None
    message = data.get("message")
    if data["type"] == "message" and isinstance(message, dict):
        role = message.get("role")
        if isinstance(role, str) and role not in KNOWN_ROLES:
            return None  # a role from a newer format: its shape is not ours to judge
    # The envelope's own checks (above) speak for these fields; valid stand-ins
    # let the shape check go on to the first problem elsewhere.
    checked = {**data, "parentId": None, "timestamp": ""}
    if isinstance(message, dict):
        checked["message"] = {**message, "timestamp": 0}
    try:
        try:
            msgspec.convert(checked, type=SessionEntry, strict=True)
        except UnicodeEncodeError:  # a lone surrogate (JSON.parse keeps one): not a shape
            msgspec.convert(map_strings(checked, _whole, keys=True), SessionEntry, strict=True)
    except msgspec.ValidationError as exc:
        return _worded(str(exc))
    except RecursionError:
        return None  # nested past msgspec's limit: a value of ours to keep, not to judge
    return None


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _whole(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", text)


def _worded(error: str) -> str:
    """msgspec's "Expected `int`, got `str` - at `$.a.b`" as "a.b: expected `int`,
    got `str`" (the place first, as every problem here is worded)."""
    text, _, place = error.partition(" - at `")
    place = place.removesuffix("`").removeprefix("$").removeprefix(".")
    text = text[:1].lower() + text[1:]
    return f"{place}: {text}" if place else text


def _iso_time(name: str, value: Any, *, required: bool) -> list[str]:
    if value is None and not required:
        return []
    if not isinstance(value, str):
        return [f"{name} is {_kind(value)}, not an ISO 8601 time"]
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return [
            f"{name} {dumps_text(as_text(value, 40))} is not an ISO 8601 time this "
            "platform's clock can hold (years 1 to 9999)"
        ]
    return []


def _millisecond_time(name: str, value: Any) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return [f"{name} is {_kind(value)}, not milliseconds since 1970"]
    # abs(), not isfinite(): comparing an int of any size with a float is exact
    if abs(value) > _JS_DATE_LIMIT_MS or value != value:
        return [f"{name} {as_text(value, 40)} is outside the times a JavaScript Date holds"]
    try:
        datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return [f"{name} {as_text(value, 40)} is outside what this platform's clock can hold"]
    return []


_MOST_NUMBERS_SHOWN = 3
_Place: TypeAlias = tuple[str, "_Place"] | None  # a step of a path and the place it is in


def _numbers_past_a_double(value: Any) -> list[str]:
    """The places of numbers no double holds (JSON.parse reads them as Infinity), the
    first few by name. An explicit stack, so any depth is walked; a place is kept as a
    link to its parent and spelled out only when shown."""
    places: list[_Place] = []
    stack: list[tuple[_Place, Any]] = [(None, value)]
    while stack:
        place, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(((f".{key}", place), v) for key, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend(((f"[{index}]", place), v) for index, v in reversed(list(enumerate(item))))
        elif isinstance(item, float | int) and not isinstance(item, bool) and _past_a_double(item):
            places.append(place)
    found = [
        f"{_spelled(place)}: a number too large for a double (read as Infinity)"
        for place in places[:_MOST_NUMBERS_SHOWN]
    ]
    if len(places) > _MOST_NUMBERS_SHOWN:
        found.append(f"{len(places) - _MOST_NUMBERS_SHOWN} more numbers too large for a double")
    return found


def _past_a_double(number: float) -> bool:
    if isinstance(number, float):
        return not math.isfinite(number)
    return abs(number) > _DOUBLE_MAX


def _spelled(place: _Place, most: int = 12) -> str:
    """``a.b[0].c``; a place deeper than ``most`` steps keeps its first and last few."""
    steps: list[str] = []
    while place is not None:
        steps.append(place[0])
        place = place[1]
    steps.reverse()
    if len(steps) <= most:
        return "".join(steps).removeprefix(".")
    head = "".join(steps[: most // 2]).removeprefix(".")
    tail = "".join(steps[-most // 2 :]).removeprefix(".")
    return f"{head} …{len(steps) - most} levels… {tail}"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({as_text(value, 24)})"
    if isinstance(value, str):
        return f"a string ({dumps_text(as_text(value, 24))})"
    return "an array" if isinstance(value, list) else "an object"
