"""Plain text rendered without the Markdown parser (export/plain_text.py): wherever
it answers, its HTML is byte for byte markdown-it-py's (as markup.py configures it),
on generated text full of Markdown's characters, on the generator's prose, and on
every string of the bundled fixtures; and it answers for ordinary prose."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers_large import generate
from hypothesis import given, settings
from hypothesis import strategies as st
from locations import FIXTURES

from jsonl_session.export.markup import Markup
from jsonl_session.export.plain_text import plain_html

# Every character that starts or ends a construct, whitespace of several kinds, and
# a few letters, so most generated texts are near a construct's edge.
TRICKY = "ab1 `_*\n-+=.)!\"'&<>|#~\\\t\u00a0\u2028\x1c\x0b\x0c\r\0é[]:/@(){}$%^0\u3000"


def parser_html(text: str) -> str:
    rendered: str = Markup()._md.render(text)
    return rendered


def agrees(text: str) -> bool:
    """The fast path declines ``text`` or gives the parser's HTML."""
    plain = plain_html(text)
    return plain is None or plain == parser_html(text)


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=TRICKY, max_size=24))
def test_generated_texts_of_markdown_characters_render_as_the_parser_renders_them(
    text: str,
) -> None:
    assert agrees(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["word", "`a_b`", " ", "\n", "\n\n", "1.", "-", '"', "!"])))
def test_generated_lines_of_words_and_code_spans_render_as_the_parser_renders_them(
    pieces: list[str],
) -> None:
    assert agrees("".join(pieces))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "one line",
        "two\nlines",
        "two\n\n\nparagraphs\n",
        "quotes \"and\" 'apostrophes'",
        "a `code_span` and `<html> & co`",
        "Done! See `src/a.py`.",
        "1. a list",
        "1) a list",
        "2024 is a year",
        "- item",
        "title\n===",
        "title\n---",
        "    indented",
        "hard break  \nnext",
        "spaces at the end  ",
        "a paragraph ends here \n\nand another\u00a0",
        "other whitespace at the end\x1c",
        "only spaces\n   ",
        "``double``",
        "` spaced `",
        "odd ` backtick",
        "See `src/c",
        "a `b` and `c",
        "odd ` tick\nnext line",
        "odd ` tick\nthen `span`",
        "odd `\n\nnew `p`",
        "a`b`c`d`e`",
        "`",
        "a\u00a0",
        "\u2028a",
        "tab\tinside",
        "x\ry",
    ],
)
def test_tricky_texts_render_as_the_parser_renders_them(text: str) -> None:
    assert agrees(text)


def test_ordinary_prose_with_code_spans_takes_the_fast_path() -> None:
    text = 'Read the file.\nSee `src/parser_token.py` and "quotes" too!\n\nNext é → ✓.'
    assert plain_html(text) == parser_html(text)
    assert plain_html("**bold**") is None
    cut = "Read it. See `src/pars"  # a text cut inside a code span: the backtick stays
    assert plain_html(cut) == parser_html(cut) == "<p>Read it. See `src/pars</p>\n"
    assert plain_html("one ` left\nthen `a span`") is None  # it would pair across lines


def test_every_string_of_the_generator_and_the_fixtures_renders_as_the_parser_renders_it(
    tmp_path: Path,
) -> None:
    sessions = [generate(tmp_path / "gen.jsonl", 400, 11), *sorted(FIXTURES.rglob("*.jsonl"))]
    taken = 0
    for path in sessions:
        for line in path.read_bytes().splitlines():
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            for text in strings_in(value):
                assert agrees(text), text
                taken += plain_html(text) is not None
    assert taken > 1000  # the generator's prose is mostly plain
