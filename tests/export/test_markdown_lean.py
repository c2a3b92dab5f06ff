"""The Markdown of common messages written straight from their bodies
(export/markdown.py's `_lean_message`) is the Markdown of their views, for every
shape: a differential test over messages of any make, and the shapes a session is
made of take the short way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers_large import generate
from hypothesis import given, settings
from hypothesis import strategies as st
from message_shapes import EDGE_CASES, message_like

from jsonl_session import Session
from jsonl_session.export import markdown
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views.pieces import joined
from jsonl_session.views.redact import Redactor
from jsonl_session.views.transcript import view_entry


def _entry(entry_id: str = "ab12cd34") -> StoredEntry:
    return StoredEntry(3, 100, "message", entry_id, None, "2026-11-28T10:00:00.000Z")


def _through_the_view(
    labels: dict[str, str], entry: StoredEntry, data: dict[str, Any]
) -> list[str]:
    view = view_entry(entry, Redactor(enabled=False), data)
    return joined(markdown._md_entry(labels, view))


def _check(message: Any, labelled: bool, entry_id: str) -> None:
    entry = _entry(entry_id)
    labels = {entry_id: "kept"} if labelled else {}
    data = {"type": "message", "id": entry_id, "message": message}
    said = markdown.markdown_entry(entry, data, None, labels, Redactor(enabled=False))
    assert "".join(said) == "".join(_through_the_view(labels, entry, data))


@settings(max_examples=1000, deadline=None)
@given(
    message=message_like,
    labelled=st.booleans(),
    entry_id=st.sampled_from(["ab12cd34", "a`b"]),
)
def test_a_message_reads_the_same_whichever_way_it_is_written(
    message: Any, labelled: bool, entry_id: str
) -> None:
    _check(message, labelled, entry_id)


@pytest.mark.parametrize("message", EDGE_CASES)
def test_each_edge_of_a_message_reads_the_same_whichever_way_it_is_written(message: Any) -> None:
    for labelled, entry_id in ((False, "ab12cd34"), (True, "a`b")):
        _check(message, labelled, entry_id)


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


def test_a_workers_entry_is_one_piece_and_a_huge_text_a_piece_of_its_own() -> None:
    entry = _entry()
    short = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    data = {"type": "message", "id": entry.id, "message": short}
    assert len(markdown.markdown_entry(entry, data, None, {}, Redactor(enabled=False))) == 1
    huge_text = "a line of a long answer\n" * 20_000
    huge = {"role": "user", "content": [{"type": "text", "text": huge_text}]}
    data = {"type": "message", "id": entry.id, "message": huge}
    pieces = markdown.markdown_entry(entry, data, None, {}, Redactor(enabled=False))
    assert any(piece is huge_text for piece in pieces) and len(pieces) == 3
