"""views/transcript.py's `dump_json` on one line: what ``json.dumps`` writes (a space
after each comma and colon, text unescaped), an object of plain values written by its
own way, any other value by ``json.dumps``."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jsonl_session.views.transcript import dump_json

TEXT = st.text(alphabet=st.characters(codec=None, categories=None), max_size=12) | st.sampled_from(
    ["", '"', "\\", '\\"', "\n\t\r\b\f\x00\x1b\x7f\x80\u2028", "\ud800 lone", "😀", ": ,"]
)
PLAIN = (
    TEXT
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.none()
)
VALUES = st.recursive(
    PLAIN,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=3000, deadline=None)
@given(value=st.dictionaries(TEXT, PLAIN, max_size=5) | VALUES)
def test_one_line_json_is_what_json_dumps_writes(value: Any) -> None:
    assert dump_json(value, indent=False) == json.dumps(value, ensure_ascii=False, default=str)


def test_an_object_of_plain_values_and_one_that_is_not_are_each_written_as_json_dumps_does() -> (
    None
):
    arguments = {"path": "src/a.py", "content": 'x = "1"\n\ty\u2028', "n": 2**70, "f": -0.0}
    assert dump_json(arguments, indent=False) == json.dumps(arguments, ensure_ascii=False)
    odd = {"nan": math.nan, "list": [1, {"a": None}], "lone": "\udc80"}
    assert dump_json(odd, indent=False) == json.dumps(odd, ensure_ascii=False)
