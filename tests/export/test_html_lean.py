"""The HTML of common messages written straight from their bodies
(export/html_lean.py) is the HTML of their views, for every shape, with or without
the call a result answers: a differential test over messages of any make; a message
that goes through the view was not touched on the way; the pages of a session are
the same bytes whichever way its messages went, in one process or in workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers_large import generate
from hypothesis import given, settings
from hypothesis import strategies as st
from message_shapes import EDGE_CASES, message_like

from jsonl_session import Session, export_chunks
from jsonl_session.export import html, html_lean, html_parts
from jsonl_session.export.html_parts import CallSeen, PartRenderer, main_argument
from jsonl_session.export.markup import flat_json_html, json_html
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views import slices
from jsonl_session.views.pieces import joined
from jsonl_session.views.redact import Redactor
from jsonl_session.views.transcript import dump_json, view_entry

CALLS = [
    None,
    CallSeen("read", "src/app.py", "src/app.py"),
    CallSeen("bash", "", ""),
    CallSeen("read", "x <y>", ""),
]


def _both(
    message: Any,
    role: str | None,
    labelled: bool,
    call: CallSeen | None,
    budget: int,
    kind: str = "message",
) -> tuple[list[str] | None, str, PartRenderer, list[str]]:
    """The message (of an entry of type ``kind``) written the short way (None if it
    was not), through its view, the renderer the short way used, and the calls it
    asked ``answered`` for."""
    entry = StoredEntry(3, 100, kind, "ab12cd34", "ffff0000", "2026-11-28T10:00:00Z", role)
    labels = {"ab12cd34": "kept <x>"} if labelled else {}
    data = {"type": kind, "message": message}
    asked: list[str] = []

    def answered(_result: StoredEntry, ref: str) -> CallSeen | None:
        asked.append(ref)
        return call

    lean_parts = PartRenderer(budget)
    written = html_lean.lean_message(labels, lean_parts, entry, data, answered)
    view = view_entry(entry, Redactor(enabled=False), data)
    view_parts = PartRenderer(budget)
    result = kind == "message" and entry.role == "toolResult" and view.kind == "tool-result"
    viewed = html._entry(labels, view_parts, view, call if result else None)
    if written is not None:
        assert lean_parts.calls == view_parts.calls
        assert lean_parts.markup.budget == view_parts.markup.budget
    return written, "".join(joined(["\n", *viewed])), lean_parts, asked


def _check(
    message: Any, role: str | None, labelled: bool, call: CallSeen | None, kind: str = "message"
) -> None:
    for budget in (0, 1 << 20):  # nothing highlighted (a worker), or code highlighted
        written, viewed, parts, asked = _both(message, role, labelled, call, budget, kind)
        if written is None:  # left to the view, untouched
            assert parts.calls == {}
            assert parts.markup.budget == budget
            assert asked == []
        else:
            assert "".join(joined(["\n", *written])) == viewed


@settings(max_examples=1500, deadline=None)
@given(
    message=message_like,
    role=st.sampled_from(["user", "assistant", "toolResult", None]),
    labelled=st.booleans(),
    call=st.sampled_from(CALLS),
    kind=st.sampled_from(["message"] * 4 + ["custom_message", "compaction", "later_kind"]),
)
def test_a_message_s_html_is_the_same_whichever_way_it_is_written(
    message: Any, role: str | None, labelled: bool, call: CallSeen | None, kind: str
) -> None:
    if isinstance(message, dict) and role is not None and message.get("role") in ("x", None):
        message = {**message, "role": role}  # most draws: the role the entry says
    _check(message, role, labelled, call, kind)


@pytest.mark.parametrize("kind", ["custom_message", "compaction", "later_kind"])
def test_an_entry_of_another_type_that_carries_a_message_is_shown_as_its_type(kind: str) -> None:
    message = {"role": "user", "content": "hello"}
    written, viewed, _, asked = _both(message, "user", False, None, 0, kind)
    assert written is None and asked == []
    assert 'class="entry user"' not in viewed


@pytest.mark.parametrize("message", EDGE_CASES)
@pytest.mark.parametrize("call", CALLS)
def test_each_edge_of_a_message_s_html_is_the_same_whichever_way_it_is_written(
    message: Any, call: CallSeen | None
) -> None:
    role = message.get("role") if isinstance(message, dict) else None
    _check(message, role, True, call)
    _check(message, "user" if role != "user" else "assistant", False, call)


def test_a_read_result_under_its_call_is_highlighted_by_the_file_s_name() -> None:
    message = {"role": "toolResult", "toolName": "read", "content": "def f():\n    return 1\n"}
    written, viewed, _, asked = _both(message, "toolResult", False, CALLS[1], 1 << 20)
    assert written is not None and asked == [""]
    assert 'class="code hl"' in viewed and "".join(joined(["\n", *written])) == viewed


texts = st.text(max_size=12) | st.sampled_from(['"', "\\", "<a&b>", "\ud800", "\x00\n\t", "é😀"])


@settings(max_examples=1000, deadline=None)
@given(value=st.dictionaries(texts, texts, max_size=4))
def test_an_object_of_texts_is_shown_as_its_json_is(value: dict[str, str]) -> None:
    shown = flat_json_html(value)
    if shown is not None:
        assert shown == json_html(dump_json(value))
    else:  # an empty object, or a lone surrogate orjson refuses
        assert not value or any("\ud800" in k + v for k, v in value.items())


def test_an_object_holding_anything_but_texts_is_left_to_its_json() -> None:
    for value in ({"n": 1}, {"a": "b", "c": None}, {"l": ["x"]}, {1: "x"}):
        assert flat_json_html(value) is None


@settings(max_examples=500, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab \n\t\u00a0…é"), max_size=400),
    key=st.sampled_from(["command", "other"]),
)
def test_a_call_s_main_argument_is_narrowed_as_one_line_narrows_it(text: str, key: str) -> None:
    args = {key: text}
    assert html_parts._narrowed(main_argument(args), 80) == main_argument(args, 80)


def test_a_session_s_messages_mostly_take_the_short_way(tmp_path: Path) -> None:
    session = Session.open(generate(tmp_path / "gen.jsonl", 200, 3), cache=False)
    messages = [e for e in session.entries if e.type == "message"]
    parts = PartRenderer()
    lean = [
        e
        for e in messages
        if html_lean.lean_message({}, parts, e, e.data(), lambda _e, _r: None) is not None
    ]
    assert len(lean) > 0.9 * len(messages)


def _page(path: Path, workers: int, *, all_branches: bool) -> str:
    session = Session.open(path, cache=False)
    return "".join(export_chunks(session, "html", workers=workers, all_branches=all_branches))


@pytest.mark.parametrize("all_branches", [False, True])
def test_a_page_is_the_same_bytes_whichever_way_its_messages_went(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, all_branches: bool
) -> None:
    path = generate(tmp_path / "gen.jsonl", 300, 7)
    monkeypatch.setattr(slices, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(slices, "SLICE_ENTRIES", 7)
    monkeypatch.setattr(html, "HIGHLIGHT_SPAN", 40_000)  # highlighted here, then spread
    short_way = _page(path, 1, all_branches=all_branches)
    in_workers = _page(path, 2, all_branches=all_branches)  # (workers take the short way)
    monkeypatch.setattr(html, "lean_message", lambda *_: None)
    through_views = _page(path, 1, all_branches=all_branches)
    assert 'class="code hl"' in through_views and "Tool result</span>" in through_views
    assert short_way == through_views
    assert in_workers == through_views
