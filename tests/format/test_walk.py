"""format/walk.py's `dumps_indented`: the text the standard library's ``indent=2``
writes, for any value made of JSON's types (a float, a huge integer, a lone
surrogate, a key that is not a string, or a value of another type included)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from jsonl_session.format.walk import dumps_indented

TEXT = st.text(alphabet=st.sampled_from('a"\\\x00\x1f\x7f\u2028é🚀\ud800\n/<'), max_size=6)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | TEXT
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(TEXT, inner, max_size=4)
        | st.dictionaries(st.integers(0, 3), inner, max_size=2)
        | st.tuples(inner)
    ),
    max_leaves=16,
)


def standard(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


@settings(max_examples=1000, deadline=None)
@given(VALUES)
def test_any_value_is_written_as_the_standard_library_indents_it(value: Any) -> None:
    assert dumps_indented(value) == standard(value)


def test_values_of_other_types_and_deep_ones_are_written_as_the_standard_library_does() -> None:
    class Word(str):
        pass

    for value in ({"when": object}, [Word("x")], {"n": True, "m": [1, 2**64]}, [[[[]]]] * 3):
        assert dumps_indented(value) == standard(value)
    deep: list[Any] = []
    for _ in range(400):  # deeper than orjson writes
        deep = [deep]
    assert dumps_indented(deep) == standard(deep)
