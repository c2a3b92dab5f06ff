"""Checking bytes are UTF-8 (jsonio.is_utf8) gives what decoding them whole gives,
also where a character is cut by one of the slices the check reads in."""

from __future__ import annotations

import pytest

from jsonl_session.format.jsonio import UTF8_SLICE, is_utf8

SLICE = UTF8_SLICE  # is_utf8 reads this much at a time: the cases straddle its slices
CHARACTERS = ["\u00e9", "\u20ac", "\U0001f600"]


def whole(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("before", [SLICE - 3, SLICE - 2, SLICE - 1, SLICE, 2 * SLICE - 1])
@pytest.mark.parametrize("character", CHARACTERS, ids=ascii)
def test_a_character_cut_by_a_slice_is_still_utf8(before: int, character: str) -> None:
    data = b"x" * before + character.encode() + b"y"
    assert is_utf8(data) and is_utf8(memoryview(data)) and is_utf8(b"\xc3\xa9" + data)


@pytest.mark.parametrize("before", [0, SLICE - 2, SLICE - 1, SLICE])
@pytest.mark.parametrize(
    "bad",
    [b"\xe2\x82", b"\xff", b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80", b"\x80"],
    ids=repr,
)
@pytest.mark.parametrize("after", [b"", b"z"], ids=["at the end", "before more"])
def test_bytes_that_are_not_utf8_are_found_wherever_they_are(
    before: int, bad: bytes, after: bytes
) -> None:
    data = b"\xc3\xa9" + b"x" * before + bad + after
    assert not whole(data)
    assert not is_utf8(data) and not is_utf8(memoryview(data))


def test_nothing_is_utf8() -> None:
    assert is_utf8(b"") and is_utf8(memoryview(b""))
