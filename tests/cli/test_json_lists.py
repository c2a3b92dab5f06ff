"""`--json` lists (list, search) are written a thousand items at a time: the bytes are
those of the whole list written at once, whatever the items hold."""

from __future__ import annotations

from typing import Any

import pytest

from jsonl_session.cli.output import print_json, print_json_list

AWKWARD: list[Any] = [
    {"n": 1.0, "big": 2**70, "tiny": -2.5e-7, "zero": -0.0},
    {"half an emoji": "\ud83d", "controls": "\x00\x1b[31m\x7f\x85\u202e"},
    {"nested": [[[{"k": None}]]], "text": "日本語 ✓ 🚀"},
]


@pytest.mark.parametrize("count", [0, 1, 999, 1000, 1001, 2500])
def test_a_list_written_in_parts_is_the_list_written_at_once(
    count: int, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    items = [AWKWARD[n % len(AWKWARD)] | {"i": n} for n in range(count)]
    print_json(items)
    whole = capsysbinary.readouterr().out
    print_json_list(iter(items))
    assert capsysbinary.readouterr().out == whole
