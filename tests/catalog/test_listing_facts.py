"""The listing facts of a session's lines (catalog/listing_facts.py): read in one
decoder call, they are what decoding each line on its own gives, whatever the lines."""

from __future__ import annotations

import contextlib
import json
import random
from typing import Any

import pytest

from jsonl_session.catalog import listing_facts
from jsonl_session.catalog.listing_facts import line_facts

ROLES = ["user", "assistant", "toolResult", None, 3]


def entry_line(rng: random.Random, number: int) -> bytes:
    kind = rng.choice(["message"] * 6 + ["session_info", "custom", 7])
    entry: dict[str, Any] = {"type": kind, "id": f"e{number}", "parentId": None}
    entry["timestamp"] = rng.choice(["2025-06-01T08:00:00.000Z", "soon", 5])
    if kind == "session_info":
        entry["name"] = rng.choice([" a name ", "", None, ["x"]])
    message: dict[str, Any] = {"role": rng.choice(ROLES)}
    message["timestamp"] = rng.choice([1_750_000_000_000 + number, 1.5e12, "x", None, 10**17])
    message["content"] = rng.choice(["hi", [{"type": "text", "text": "hello"}], [], None])
    if rng.random() < 0.9:
        entry["message"] = message
    return json.dumps(entry, separators=(",", ":")).encode()


# lines pi skips or reads otherwise, and blank ones: each must count as it does alone
ODD = [
    b"",
    b"   ",
    b"\t",
    b"not json",
    b"42",
    b"[]",
    b'{"type":"message"',
    b'"message":{"role":"user"}}',
    b'{"type":"custom"}{"type":"message","message":{"role":"user"}}',
    b'{"type":"custom"} {"type":"custom"}',
    b' {"type":"message","message":{"role":"user","timestamp":5}}',
    b'{"type":"message","message":{"role":"user","timestamp":5}} ',
    b'{"type":"message","message":"\xff"}',
    b'{"type":"message","message":{"role":"user","content":"\\ud800"}}',
]


def region(rng: random.Random, odd: float) -> bytes:
    lines = []
    for number in range(rng.randint(0, 30)):
        raw = rng.choice(ODD) if rng.random() < odd else entry_line(rng, number)
        lines.append(raw + rng.choice([b"", b"", b"\r"]))
    data = b"\n".join(lines)
    return data + (b"\n" if rng.random() < 0.8 else b"")


@pytest.mark.parametrize("odd", [0.0, 0.02, 0.2])
def test_lines_read_in_one_call_give_the_facts_each_line_read_alone_gives(odd: float) -> None:
    rng = random.Random(int(odd * 100))
    paired = 0
    for _ in range(400):
        data = b"HEADER\n" + region(rng, odd)
        start, stop = 7, rng.choice([None, len(data), rng.randint(7, len(data))])
        size = len(data) if stop is None else stop
        alone = listing_facts._facts(data, start, size, None)
        assert line_facts(data, start, stop) == alone, data
        values = None
        with contextlib.suppress(listing_facts._REFUSED):
            values = listing_facts._listed_line.decode_lines(memoryview(data)[start:size])
        paired += values is not None and listing_facts._facts(data, start, size, values) is not None
    assert paired > 50  # (many regions are read in one call)
