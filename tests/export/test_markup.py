"""markup.py's escaping (the standard library's) and its JSON colouring: whatever
the text, the page shows it exactly (its characters escaped, never lost or doubled),
with keys, strings, numbers and literals in the classes Pygments uses."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jsonl_session.export.markup import COMMON_EXTENSIONS, Markup, escape, escape_text, json_html

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def shown(page: str) -> str:
    """The text a reader sees in a fragment: tags removed, entities read."""
    return html.unescape(re.sub(r"<[^>]*>", "", page))


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_json_is_shown_exactly_with_its_keys_and_strings_coloured(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False, indent=2)
    page = json_html(text)
    assert shown(page) == text
    if isinstance(value, dict) and value:
        assert '<span class="nt">' in page


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='"\\<>&:-1e.truefalsn {}[]\n', max_size=30))
def test_any_text_is_shown_exactly(text: str) -> None:
    assert shown(json_html(text)) == text


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.one_of(st.sampled_from("&<>\"'"), st.characters())))
def test_escaping_is_the_standard_library_s(text: str) -> None:
    assert escape(text) == html.escape(text, quote=True)
    assert escape_text(text) == html.escape(text, quote=False)


def test_a_common_extension_gets_the_lexer_pygments_picks_for_its_file_name() -> None:
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename

    for extension, name in COMMON_EXTENSIONS.items():
        picked = get_lexer_for_filename(f"file.{extension}", stripnl=False, ensurenl=False)
        ours = get_lexer_by_name(name, stripnl=False, ensurenl=False)
        assert type(ours) is type(picked), extension
        assert (ours.stripnl, ours.ensurenl) == (picked.stripnl, picked.ensurenl) == (False, False)


def test_code_read_from_a_common_file_is_highlighted_as_by_its_name() -> None:
    code = 'def f(x: int) -> str:\n    return "<%d>" % x\n'
    assert "hl" in Markup().code(code, path="src/a.py")
    assert Markup().code(code, path="src/a.py") == Markup().code(code, language="python")
