"""Converted to pi, a Claude Code or Codex session opens in pi 1.5.2 with the context
we build for the original, at every entry: pi's contexts were recorded from the
converted fixtures (tests/compat/golden/pi15/write_converted.py, expected-converted/);
the files are converted again here and compared without node. And converting back
and forth keeps the messages, tool pairs, thinking, usage totals and titles."""

from __future__ import annotations

import json
import lzma
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from locations import GOLDEN_DIR

from jsonl_session import Session, convert, recorded_usage, to_json

sys.path.insert(0, str(GOLDEN_DIR / "pi15"))
from write_converted import CONVERTED, source

EXPECTED = GOLDEN_DIR / "pi15" / "expected-converted"


@cache
def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(lzma.decompress((EXPECTED / f"{name}.json.xz").read_bytes()))
    return data


@pytest.mark.parametrize("name", sorted(CONVERTED))
def test_pi_builds_from_the_converted_file_the_context_we_build_from_the_original(
    name: str, tmp_path: Path
) -> None:
    original = Session.open(source(name), cache=False)
    converted = Session.open(convert(original, "pi", tmp_path / "c.jsonl").path, cache=False)
    pi = expected(name)
    assert pi["pi_version"] == "1.5.2"
    compared = 0
    for entry in original.entries:
        want = to_json(pi["contexts_by_entry"][entry.id])
        assert to_json(original.build_context(entry.id, pruning=False).to_dict()) == want
        assert to_json(converted.build_context(entry.id, pruning=False).to_dict()) == want
        compared += 1
    assert compared == len(original.entries) >= 3
    assert converted.leaf_id == original.leaf_id
    assert pi["leaf_id"] in (
        original.leaf_id,
        *(e.id for e in original.entries if e.is_leaf_marker),
    )


def signature(session: Session) -> list[tuple[Any, ...]]:
    """What must survive a round trip: roles, texts, tool pairs, thinking."""
    out: list[tuple[Any, ...]] = []
    for message in session.build_context().messages:
        role = message["role"]
        content = message.get("content")
        if role == "assistant":
            blocks = tuple(
                (b["type"], b.get("text") or b.get("thinking") or b.get("name"), b.get("id"))
                for b in content
            )
            out.append((role, blocks))
        elif role == "toolResult":
            out.append((role, message["toolCallId"], json.dumps(content)))
        elif role == "user":
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            out.append((role, json.dumps(blocks)))
        elif role == "compactionSummary":
            out.append((role, message["summary"]))
    return out


@pytest.mark.parametrize("name", ["claude-main", "codex-main"])
@pytest.mark.parametrize("via", ["claude", "codex"])
@pytest.mark.parametrize("through_pi", [False, True])
def test_a_round_trip_keeps_messages_pairs_thinking_usage_and_title(
    name: str, via: str, through_pi: bool, tmp_path: Path
) -> None:
    original = Session.open(source(name), cache=False)
    start: Session | Path = original
    if through_pi:  # the other agent's file, converted to pi, then written for `via`
        start = convert(original, "pi", tmp_path / "pi.jsonl", cache=False).path
    there = convert(start, via, tmp_path / "there.jsonl", cache=False)
    back = Session.open(convert(there.path, "pi", tmp_path / "back.jsonl").path, cache=False)
    assert signature(back) == signature(original)
    if via == "claude":  # every branch, and the usage of every reply
        before = recorded_usage(original.entries).to_dict()["total"]
        after = recorded_usage(back.entries).to_dict()["total"]
        assert after["input"] == before["input"] and after["output"] == before["output"]
        assert back.name == original.name
