"""views/describe.py's `one_line`: a text's words on one line, cut with an ellipsis
at the width; a long text is cut from its start alone, the same line as splitting
the whole."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jsonl_session.views.describe import one_line

PIECES = st.sampled_from(["a", "word", " ", "  ", "\n", "\t", "\u3000", "é", "\x1c", "x" * 40])


def every_word(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@settings(max_examples=1000, deadline=None)
@given(st.lists(PIECES, max_size=80).map("".join), st.integers(min_value=0, max_value=120))
def test_a_text_on_one_line_is_its_words_joined_and_cut_at_the_width(text: str, width: int) -> None:
    assert one_line(text, width) == every_word(text, width)


def test_a_long_output_is_cut_to_its_first_words() -> None:
    text = "first   line\n" + "more words here\n" * 10_000
    assert one_line(text, 20) == "first line more wor…"
    assert one_line("short\n  text", 20) == "short text"
