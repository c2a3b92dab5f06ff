"""Reading a line with its numbers as JavaScript holds them (jsonio.loads_js) and
writing it with plain orjson gives what `dumps` writes of the line read the general
way (`loads_object`); and the JSON export's entries (json.py's `json_entry`), which
read that way, are what dumping the general way gives, redacted or not, with the
same secrets counted."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jsonl_session.export.json import json_entry
from jsonl_session.format.entry import StoredEntry, loads_object
from jsonl_session.format.jsonio import dumps, loads_js
from jsonl_session.views.redact import Redactor

GITHUB_TOKEN = "ghp_" + "Q8s0dK2LmZ7xW4cV9bN1" * 2

NUMBERS = [
    b"1.0",
    b"-0.0",
    b"-0",
    b"1E5",
    b"1e+20",
    b"1.5e16",
    b"1e21",
    b"1e400",
    b"-1e400",
    b"5e-324",
    b"0.1",
    b"1.50",
    b"9007199254740993",
    b"9007199254740993.0",
    b"18446744073709551615",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"123456789012345678901234567890",
    b"1" + b"0" * 400,
    b"123456789012345678901.0",
]


def general(raw: bytes) -> bytes:
    """What the export wrote before: the body read the general way, then dumps."""
    return dumps(loads_object(raw))


def through_js(raw: bytes) -> bytes:
    try:
        return orjson.dumps(loads_js(raw))
    except TypeError:  # what loads_js's callers do
        return general(raw)


@pytest.mark.parametrize("number", NUMBERS, ids=lambda n: n.decode()[:30])
def test_a_number_is_written_as_dumping_the_general_way_writes_it(number: bytes) -> None:
    raw = b'{"type":"custom","id":"a","n":' + number + b',"in":[' + number + b"]}"
    assert through_js(raw) == general(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id":"a","t":"\\ud800 half an emoji"}',  # a lone surrogate: msgspec refuses it
        b'{"id":"a","t":"caf\xe9","n":[1.0,-0.0]}',  # not UTF-8: read as U+FFFD
        b'{"id":"a","k":1,"k":2.0}',  # a key twice: the last one
        b'{"id":"a","d":' + b"[" * 300 + b"1.0" + b"]" * 300 + b"}",  # past orjson's depth
        b'{"id":"a","d":' + b"[" * 1100 + b"2.0" + b"]" * 1100 + b"}",  # past msgspec's
        b'{ "id" : "a" ,\t"x" : [ 1.0 , 2 ] }',  # space between the tokens
        b'{"id":"a","e":"\\u00e9\\/\\u001F"}',  # escapes JSON.stringify would not write
    ],
    ids=["lone surrogate", "not UTF-8", "key twice", "deep", "deeper", "spaces", "escapes"],
)
def test_an_odd_line_is_written_as_dumping_the_general_way_writes_it(raw: bytes) -> None:
    assert through_js(raw) == general(raw)


def json_values() -> st.SearchStrategy[Any]:
    numbers = st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.integers(min_value=-(2**60), max_value=2**60).map(float),
    )
    leaves = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20))
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)
        ),
        max_leaves=20,
    )


@settings(max_examples=1500, deadline=None)
@given(body=json_values(), ascii_only=st.booleans())
@example(body={"cost": {"total": 0.0, "input": 3.0, "big": 1e20}}, ascii_only=False)
@example(body=[2**64, -(2**63) - 1, 1e16, 12345678901234567890.0], ascii_only=True)
def test_any_body_written_as_python_writes_it_comes_out_as_before(
    body: Any, ascii_only: bool
) -> None:
    # the standard library writes floats as Python does (1.0, 1e-07, 1e+16)
    raw = json.dumps({"type": "custom", "id": "x", "body": body}, ensure_ascii=ascii_only)
    assert through_js(raw.encode()) == general(raw.encode())


def entry_of(raw: bytes) -> StoredEntry:
    return StoredEntry(1, 0, "custom", "x", None, "", length=len(raw), inline=raw)


def before(raw: bytes, redact: bool) -> tuple[bytes, dict[str, int]]:
    redactor = Redactor(enabled=redact)
    return dumps(redactor.value(loads_object(raw))), dict(redactor.counts)


def now(raw: bytes, redact: bool) -> tuple[bytes, dict[str, int]]:
    redactor = Redactor(enabled=redact)
    return json_entry(entry_of(raw), loads_js(raw), None, None, redactor), dict(redactor.counts)


@pytest.mark.parametrize("redact", [False, True], ids=["as it is", "redacted"])
@pytest.mark.parametrize(
    "raw",
    [
        b'{"type":"custom","id":"x","token":"' + GITHUB_TOKEN.encode() + b'","n":1.0}',
        b'{"type":"custom","id":"x","t":"' + GITHUB_TOKEN.encode() + b'","n":2' + b"0" * 25 + b"}",
        b'{"type":"custom","id":"x","t":"' + GITHUB_TOKEN.encode() + b' \\udc00","n":3.0}',
        b'{"type":"custom","id":"x","d":'
        + b"[" * 300
        + b'"'
        + GITHUB_TOKEN.encode()
        + b'"'
        + b"]" * 300
        + b"}",
    ],
    ids=["integral float", "integer beyond 64 bits", "lone surrogate", "deep"],
)
def test_an_entry_of_the_json_export_is_the_general_way_with_its_secrets_counted_once(
    raw: bytes, redact: bool
) -> None:
    text, counts = now(raw, redact)
    assert (text, counts) == before(raw, redact)
    assert (GITHUB_TOKEN.encode() in text) is not redact
    assert sum(counts.values()) == (1 if redact else 0)
