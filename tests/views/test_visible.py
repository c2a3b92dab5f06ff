"""views/visible.py: the escapes that make a text safe to print, on a text and on its
UTF-8 alike (the terminal's, `visible`, are tested with the commands that print:
tests/cli/test_terminal_escapes.py)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from jsonl_session.views.visible import (
    controls_escaped,
    controls_escaped_utf8,
    escaped,
    escaped_utf8,
    visible,
)

CONTROLS = ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\x9b", "\u202e", "\u2066", "\r", "\t", "\n"]
TEXTS = st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(CONTROLS)))


def test_c0_controls_but_newline_and_tab_and_del_are_escaped_by_their_code() -> None:
    assert controls_escaped("a\x1b[2J\x07\tb\nc\x7f\r") == "a\\x1b[2J\\x07\tb\nc\\x7f\\x0d"


def test_c1_and_bidirectional_controls_are_left_to_visible() -> None:
    assert controls_escaped("\x85\x9b\u202e") == "\x85\x9b\u202e"
    assert escaped("\x1b\x9b\u202e", "visible") == "\\x1b\\x9b\\u202e"
    assert escaped("\x1b", "") == "\x1b" and escaped_utf8(b"\x1b", "") == b"\x1b"


@settings(max_examples=2000, deadline=None)
@given(text=TEXTS)
@example(text="\ud800 half an emoji, \x1b[2J")
def test_the_bytes_of_a_text_are_escaped_as_the_text_is(text: str) -> None:
    # a lone surrogate as a worker writes it (surrogatepass): no control inside it
    data = text.encode("utf-8", "surrogatepass")
    for escape in ("controls", "visible"):
        assert escaped_utf8(data, escape) == escaped(text, escape).encode("utf-8", "surrogatepass")


@settings(max_examples=500, deadline=None)
@given(text=TEXTS)
def test_escaping_twice_is_escaping_once(text: str) -> None:
    once = controls_escaped(text)
    assert controls_escaped(once) == once
    assert visible(visible(text)) == visible(text)
    assert visible(once) == visible(text)  # visible's escapes hold the others'
    assert controls_escaped_utf8(once.encode("utf-8", "surrogatepass")) == once.encode(
        "utf-8", "surrogatepass"
    )
