"""JSON text as JavaScript reads and writes it: JSON.parse over Node's UTF-8 decoding,
and JSON.stringify's compact output.

Owns the one place where bytes become values and values become bytes, so every
reader and writer agrees on what a valid line is. Knows nothing of sessions.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from typing import Any

import msgspec
import orjson

from jsonl_session.format import deepjson

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class NotJson(ValueError):
    """The line is not valid JSON."""


UTF8_SLICE = 24 << 10  # bytes `is_utf8` checks at a time (see there)


def is_utf8(raw: bytes | memoryview) -> bool:
    """Whether ``raw`` is valid UTF-8, checked in slices so a large file is not
    copied into one string. A view is checked where it lies, without a copy.

    Each slice is decoded into a string that is let go at once. Slices are 24 KiB:
    in a new process, the strings of slices of 48 KiB to 256 KiB were several times
    slower to make (page faults, each string on memory the allocator had just given
    back) until the process had let go of a large block, so the check of an 18 MB
    file took 20-32 ms instead of 9 ms. A 500 MB file takes 183 ms, not 160 ms."""
    if isinstance(raw, bytes) and raw.isascii():
        return True
    view = memoryview(raw)
    size = len(view)
    step = UTF8_SLICE
    start = 0
    decode = codecs.utf_8_decode
    try:
        while True:
            final = start + step >= size
            # Not final: a character cut by the slice's end is left to the next slice.
            start += decode(view[start : start + step], "strict", final)[1]
            if final:
                return True
    except UnicodeDecodeError:
        return False


_generic_decoder = msgspec.json.Decoder()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_any(raw: bytes) -> Any:
    """Decode a line as JSON.parse would read it, or raise NotJson.

    orjson first (fast); then msgspec, which takes numbers beyond a double and
    deeper nesting; then the standard library over the text with invalid UTF-8
    replaced, as Node's UTF-8 reading does; then, for nesting deeper than Python
    recurses, deepjson's explicit stack (JSON.parse has no depth limit). So a line
    whose envelope decoded always has a body that decodes.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return _generic_decoder.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        pass
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        pass  # nested deeper than Python recurses: JSON.parse takes any depth
    except ValueError as exc:
        raise NotJson(str(exc)) from None
    try:
        return deepjson.loads(text)
    except deepjson.DeepJsonError as exc:
        raise NotJson(str(exc)) from None


def dumps(value: Any) -> bytes:
    """Compact JSON as JSON.stringify writes it (no spaces, UTF-8 unescaped; a float
    with no fraction below 1e21 as an integer: 1 for 1.0, 0 for -0.0)."""
    try:
        return dumps_within_64_bits(value)
    except TypeError:
        # orjson refuses integers beyond 64 bits, lone surrogates and depth past 254.
        # (json.dumps would write floats as Python does, 1e-07 for JavaScript's 1e-7,
        # and recurse; deepjson writes numbers as orjson does, at any depth)
        text = deepjson.dumps(_js_numbers(value))
        # A lone surrogate (half an emoji cut by a truncation) is written as an
        # escape, as JSON.stringify does.
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode()


def kept(line: bytes) -> bytes:
    """``line`` (what `dumps` or an encoder wrote) copied into bytes of its own size,
    for a line held in memory for long: an entry's line a session keeps. orjson
    hands over the buffer it grew as the bytes it returns, several times their
    length (32 KB hold a line of 3 KB; msgspec's half as much again), which a
    Claude Code transcript of 640 MB read into pi entries made 2 GB more."""
    return memoryview(line).tobytes()


def dumps_within_64_bits(value: Any) -> bytes:
    """`dumps` of a value orjson writes; TypeError for the rest: an integer beyond 64
    bits (which orjson reads as a float, msgspec as an integer), a lone surrogate, or
    nesting deeper than 254."""
    out = orjson.dumps(value)
    # the substring tests find in C what the pattern must start with; the pattern
    # alone costs ~15 ns a byte, most of `stats` on a session of large tool calls
    # (".0" alone is in most tool outputs: what must follow it is tested too)
    if b"e+" not in out and (
        b".0" not in out
        or (
            b".0," not in out
            and b".0]" not in out
            and b".0}" not in out
            and not out.endswith(b".0")
        )
    ):
        return out
    if _INTEGRAL_FLOAT.search(out) is None:
        return out
    return orjson.dumps(_js_numbers(value))


def _js_float(number: float) -> float | int:
    """A float as JSON.stringify writes it: with no fraction and below 1e21, an
    integer (1.0 as 1)."""
    return int(number) if number.is_integer() and abs(number) < 1e21 else number


def _js_number(text: str) -> float | int:
    return _js_float(float(text))


_js_decoder = msgspec.json.Decoder(float_hook=_js_number)


def loads_js(raw: bytes) -> Any:
    """`decode_any`, with each float JSON.stringify writes as an integer made one as
    it is read (only floats reach the hook: a few a line). ``orjson.dumps`` then
    writes the value as `dumps` does without looking through its text for such
    floats, which costs as much as the decoding on a long line. Where orjson refuses
    the value (TypeError: an integer beyond 64 bits, which `decode_any` reads as a
    double; nesting past 254), write ``dumps(decode_any(raw))`` instead."""
    try:
        return _js_decoder.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return loads_js_general(raw)


def loads_js_general(raw: bytes) -> Any:
    """`loads_js` the general way: `decode_any` (an integer beyond 64 bits a double,
    as JavaScript reads it; any depth; a lone surrogate kept), each float with no
    fraction below 1e21 then an integer. For a value orjson refused to write after
    `loads_js` read it: `dumps` writes this one."""
    return _js_numbers(decode_any(raw))


# where orjson may have written a float JavaScript writes as an integer (a string
# holding such text only costs a second look)
_INTEGRAL_FLOAT = re.compile(rb"\.0(?=[,\]}]|$)|e\+(?:1[6-9]|20)(?=[,\]}]|$)")


def _js_numbers(value: Any) -> Any:
    """A copy with numbers as JSON.stringify writes them: Infinity and NaN as None
    (null), floats with no fraction below 1e21 as integers."""

    def fix(item: Any) -> Any:
        if isinstance(item, float):
            if not math.isfinite(item):
                return None
            return _js_float(item)
        if isinstance(item, dict):
            copy = dict(item)
            pending.append(copy)
            return copy
        if isinstance(item, list):
            copy_list = list(item)
            pending.append(copy_list)
            return copy_list
        return item

    pending: list[Any] = []
    root = fix(value)
    while pending:  # iterative: values can nest deeper than the recursion limit
        container = pending.pop()
        keys = container.keys() if isinstance(container, dict) else range(len(container))
        for key in keys:
            container[key] = fix(container[key])
    return root
