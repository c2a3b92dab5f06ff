"""The textconv blocks of common messages written straight from their bodies
(views/textconv_lean.py) are the blocks their views give, for every shape: a
differential test over messages of any make; the shapes a session is made of take
the short way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers_large import generate
from hypothesis import given, settings
from hypothesis import strategies as st
from message_shapes import EDGE_CASES, message_like

from jsonl_session import Session
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views import textconv_blocks
from jsonl_session.views.textconv_lean import message_texts


def _block(entry: StoredEntry, data: dict[str, Any], repeated: bool) -> tuple[str, str]:
    """The block both ways: (as the transcript writes it, through the view)."""
    written = textconv_blocks.entry_block(entry, data, "0000aaaa", repeated)
    viewed = textconv_blocks.viewed_block(
        entry, data, f">> branch from {entry.parent_id}", repeated
    )
    as_text = [block if isinstance(block, str) else "".join(block) for block in (written, viewed)]
    return as_text[0], as_text[1]


def _check(message: Any, repeated: bool, role: str | None) -> None:
    entry = StoredEntry(3, 100, "message", "ab12cd34", "ffff0000", "2026-11-28T10:00:00Z", role)
    written, viewed = _block(entry, {"type": "message", "message": message}, repeated)
    assert written == viewed


@settings(max_examples=1000, deadline=None)
@given(
    message=message_like,
    repeated=st.booleans(),
    role=st.sampled_from(["user", "assistant", "toolResult", None]),
)
def test_a_message_s_block_is_the_same_whichever_way_it_is_written(
    message: Any, repeated: bool, role: str | None
) -> None:
    _check(message, repeated, role)


@pytest.mark.parametrize("message", EDGE_CASES)
def test_each_edge_of_a_message_s_block_is_the_same_whichever_way_it_is_written(
    message: Any,
) -> None:
    for repeated, role in ((False, "assistant"), (True, None)):
        _check(message, repeated, role)


def test_a_session_s_messages_mostly_take_the_short_way(tmp_path: Path) -> None:
    session = Session.open(generate(tmp_path / "gen.jsonl", 200, 3), cache=False)
    messages = [e for e in session.entries if e.type == "message"]
    lean = [e for e in messages if message_texts(e, e.data()) is not None]
    assert len(lean) > 0.9 * len(messages)
    for entry in lean:
        written, viewed = _block(entry, entry.data(), False)
        assert written == viewed
