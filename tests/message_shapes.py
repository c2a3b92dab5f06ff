"""Hypothesis strategies for the message bodies of a session, of any make: the
shapes a session holds, and odd values where each field may be anything. Used by
the differential tests of the renderers that write common messages straight from
their bodies (export/markdown.py, views/textconv_lean.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

texts = st.sampled_from(["", "\n", "x", "hi\n", "a `b` c", "```\ncode\n```", "é\n\nz"]) | st.text(
    max_size=30
)
odd = st.none() | st.integers() | st.booleans() | st.lists(st.integers(), max_size=2)
maybe = st.one_of(texts, odd)


def block() -> st.SearchStrategy[Any]:
    text = st.fixed_dictionaries({"type": st.just("text"), "text": maybe})
    thinking = st.fixed_dictionaries(
        {"type": st.just("thinking"), "thinking": maybe},
        optional={"redacted": st.sampled_from([True, False, 1])},
    )
    arguments = st.one_of(
        st.dictionaries(st.text(max_size=5), st.one_of(texts, st.integers()), max_size=3),
        texts,
        odd,
        st.floats(allow_nan=False),
    )
    call = st.fixed_dictionaries(
        {"type": st.just("toolCall")},
        optional={"name": maybe, "id": maybe, "arguments": arguments},
    )
    image = st.fixed_dictionaries(
        {"type": st.just("image"), "data": st.just("aGk="), "mimeType": st.just("image/png")}
    )
    other = st.one_of(st.fixed_dictionaries({"type": maybe}), odd)
    return st.one_of(text, thinking, call, image, other)


contents = st.one_of(texts, st.lists(block(), max_size=4), odd, st.just({"a": 1}))
messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult"]) | st.sampled_from(["x", None])},
    optional={
        "content": contents,
        "provider": maybe,
        "model": maybe,
        "toolName": maybe,
        "isError": st.sampled_from([True, False, "true", None]),
        "errorMessage": maybe,
        "stopReason": st.sampled_from(["stop", "error", "aborted", "length", None, 3]),
        "details": st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers())),
    },
)


message_like = st.one_of(messages, odd)


def said(role: str, content: Any = None, **more: Any) -> dict[str, Any]:
    """A message of ``role`` with ``content`` and any other fields."""
    return {"role": role, "content": content, **more}


THINKING = {"type": "thinking", "thinking": "a\n\nb"}


EDGE_CASES = [
    said("toolResult", "\n", toolName="bash"),
    said("toolResult", ""),
    said("toolResult", [{"type": "text", "text": "x"}], isError=True, toolName=""),
    said("toolResult", [], details={"a": 1}),
    {"role": "toolResult", "isError": True},
    said("assistant", [{**THINKING, "redacted": 1}]),
    said("assistant", [{**THINKING, "redacted": True}]),
    said("assistant", [], errorMessage="boom", stopReason="error"),
    said("assistant", "hi", errorMessage=3, stopReason="length"),
    said(
        "assistant", [{"type": "toolCall", "name": "read", "id": "c1", "arguments": {"p": "```"}}]
    ),
    said(
        "assistant", [{"type": "toolCall", "name": "x", "arguments": {"f": 1.5, "n": [1e16, -0.0]}}]
    ),
    said("user", "a ``` b"),
]
"""Shapes a differential test must meet whatever hypothesis draws."""
