"""The Markdown of common messages written straight from their bodies
(export/markdown.py's `_lean_message`) is the Markdown of their views, for every
shape: a differential test over messages of any make, and the shapes a session is
made of take the short way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers_large import generate
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jsonl_session import Session
from jsonl_session.export import markdown
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views.redact import Redactor
from jsonl_session.views.slices import joined
from jsonl_session.views.transcript import view_entry

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


def _entry(entry_id: str = "ab12cd34") -> StoredEntry:
    return StoredEntry(3, 100, "message", entry_id, None, "2026-11-28T10:00:00.000Z")


def _through_the_view(
    labels: dict[str, str], entry: StoredEntry, data: dict[str, Any]
) -> list[str]:
    view = view_entry(entry, Redactor(enabled=False), data)
    return joined(markdown._md_entry(labels, view))


def _said(role: str, content: Any = None, **more: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **more}


THINKING = {"type": "thinking", "thinking": "a\n\nb"}


@settings(max_examples=1000, deadline=None)
@example(message=_said("toolResult", "\n", toolName="bash"), labelled=False, entry_id="ab12cd34")
@example(message=_said("toolResult", ""), labelled=False, entry_id="ab12cd34")
@example(
    message=_said("toolResult", [{"type": "text", "text": "x"}], isError=True, toolName=""),
    labelled=True,
    entry_id="ab12cd34",
)
@example(message=_said("toolResult", [], details={"a": 1}), labelled=False, entry_id="a`b")
@example(message={"role": "toolResult", "isError": True}, labelled=False, entry_id="ab12cd34")
@example(message=_said("assistant", [{**THINKING, "redacted": 1}]), labelled=False, entry_id="x")
@example(message=_said("assistant", [{**THINKING, "redacted": True}]), labelled=False, entry_id="x")
@example(
    message=_said("assistant", [], errorMessage="boom", stopReason="error"),
    labelled=False,
    entry_id="x",
)
@example(
    message=_said("assistant", "hi", errorMessage=3, stopReason="length"),
    labelled=False,
    entry_id="x",
)
@example(
    message=_said(
        "assistant", [{"type": "toolCall", "name": "read", "id": "c1", "arguments": {"p": "```"}}]
    ),
    labelled=False,
    entry_id="x",
)
@example(message=_said("user", "a ``` b"), labelled=False, entry_id="x")
@given(
    message=st.one_of(messages, odd),
    labelled=st.booleans(),
    entry_id=st.sampled_from(["ab12cd34", "a`b"]),
)
def test_a_message_reads_the_same_whichever_way_it_is_written(
    message: Any, labelled: bool, entry_id: str
) -> None:
    entry = _entry(entry_id)
    labels = {entry_id: "kept"} if labelled else {}
    data = {"type": "message", "id": entry_id, "message": message}
    said = markdown.markdown_entry(entry, data, None, labels, Redactor(enabled=False))
    assert said == _through_the_view(labels, entry, data)


def test_a_session_s_messages_mostly_take_the_short_way(tmp_path: Path) -> None:
    session = Session.open(generate(tmp_path / "gen.jsonl", 200, 3), cache=False)
    messages = [e for e in session.entries if e.type == "message"]
    lean = [e for e in messages if markdown._lean_message({}, e, e.data()) is not None]
    assert len(lean) > 0.9 * len(messages)
    for entry in lean:
        data = entry.data()
        assert joined(markdown._lean_message({}, entry, data) or []) == _through_the_view(
            {}, entry, data
        )


def test_a_redacting_export_goes_through_the_view() -> None:
    entry = _entry()
    secret = "ghp_" + "a1B2c3D4e5" * 4
    data = {"type": "message", "message": {"role": "user", "content": f"token {secret}"}}
    redactor = Redactor(enabled=True)
    said = "".join(markdown.markdown_entry(entry, data, None, {}, redactor))
    assert secret not in said
    assert redactor.counts["github-token"] == 1
