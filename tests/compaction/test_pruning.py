"""Pruning old tool outputs: what is chosen, the entry recorded, and the context
with and without it (pi's view is the unpruned one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import compaction_assistant as assistant
from builders import compaction_result as result
from builders import compaction_user as user
from helpers_compaction import noisy_session

from jsonl_session import PRUNE_MARKER_TYPE, CompactionError, Session
from jsonl_session.compaction import (
    CompactionSettings,
    ExtractiveSummarizer,
    PruneSettings,
    compact,
    plan_prune,
    prune,
)

SMALL = PruneSettings(protect_turns=1, protect_tokens=2000, minimum_tokens=1000)


def result_ids(session: Session) -> list[str]:
    return [e.id for e in session.branch_path() if e.role == "toolResult"]


class TestThePlan:
    def test_keeps_the_recent_turns_and_window_and_prunes_older_outputs(
        self, tmp_path: Path
    ) -> None:
        session = noisy_session(tmp_path)
        plan = plan_prune(session.branch_path(), SMALL)
        ids = result_ids(session)
        # The last turn is protected; the two before it fill the 2000-token window.
        assert plan.entry_ids == ids[:5]
        assert plan.tokens_saved == 5 * 1000  # 4000 characters / 4 each

    def test_saves_nothing_below_the_minimum(self, tmp_path: Path) -> None:
        session = noisy_session(tmp_path, turns=4)
        plan = plan_prune(session.branch_path(), PruneSettings(1, 2000, 50_000))
        assert plan.entry_ids == [] and plan.candidates_tokens > 0

    def test_never_prunes_protected_tools(self, tmp_path: Path) -> None:
        session = noisy_session(tmp_path)
        settings = PruneSettings(1, 2000, 1000, protected_tools=frozenset({"read"}))
        assert plan_prune(session.branch_path(), settings).entry_ids == []


class TestPruning:
    def test_appends_one_custom_entry_and_edits_no_line(self, tmp_path: Path) -> None:
        session = noisy_session(tmp_path)
        before = session.path.read_bytes()
        done = prune(session, SMALL)
        after = session.path.read_bytes()
        assert after.startswith(before)
        last = json.loads(after.splitlines()[-1])
        assert last["type"] == "custom" and last["customType"] == PRUNE_MARKER_TYPE
        assert last["data"]["entryIds"] == done.plan.entry_ids
        assert done.tokens_after < done.tokens_before - 4000

    def test_our_context_shows_a_placeholder_and_pis_view_the_whole_output(
        self, tmp_path: Path
    ) -> None:
        session = noisy_session(tmp_path)
        done = prune(session, SMALL)
        reopened = Session.open(session.path)
        pruned = reopened.build_context().messages
        whole = reopened.build_context(pruning=False).messages
        assert [m["role"] for m in pruned] == [m["role"] for m in whole]
        first = done.plan.entry_ids[0]
        texts = [m["content"][0]["text"] for m in pruned if m["role"] == "toolResult"]
        assert f"kept in the session file as entry {first}" in texts[0]
        assert texts[-1] == "7" * 4000
        assert next(m["content"][0]["text"] for m in whole if m["role"] == "toolResult") == (
            "0" * 4000
        )

    def test_pruning_again_finds_nothing_new(self, tmp_path: Path) -> None:
        session = noisy_session(tmp_path)
        prune(session, SMALL)
        with pytest.raises(CompactionError, match="nothing to prune"):
            prune(session, SMALL)

    def test_only_prune_entries_on_the_branch_count(self, tmp_path: Path) -> None:
        session = noisy_session(tmp_path)
        fork_point = session.leaf_id
        prune(session, SMALL)
        assert fork_point is not None
        session.branch(fork_point)
        texts = [
            m["content"][0]["text"]
            for m in session.build_context().messages
            if m["role"] == "toolResult"
        ]
        assert texts[0] == "0" * 4000

    def test_a_later_compaction_summarizes_the_placeholders(self, tmp_path: Path) -> None:
        session = noisy_session(tmp_path)
        prune(session, SMALL)
        done = compact(session, ExtractiveSummarizer(), CompactionSettings(keep_recent_tokens=500))
        assert "0" * 100 not in done.summary
        assert done.plan.read_files == [f"f{n}.py" for n in range(8)]


def test_a_tool_name_that_is_not_text_does_not_break_planning(tmp_path: Path) -> None:
    session = noisy_session(tmp_path)
    odd = result("cx", "read", "z" * 8000)
    odd["toolName"] = ["not", "text"]  # another program wrote this; we would refuse to
    line = {"type": "message", "id": "0dd0dd00", "parentId": session.leaf_id}
    line |= {"timestamp": "2026-01-01T00:00:00.000Z", "message": odd}
    with session.path.open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    reopened = Session.open(session.path)
    for n in range(3):  # outputs newer than the odd one fill the protected window
        reopened.append_message(assistant("more", (f"m{n}", "read", {"path": "m.py"})))
        reopened.append_message(result(f"m{n}", "read", "m" * 4000))
    reopened.append_message(user("next"))
    assert "0dd0dd00" in plan_prune(reopened.branch_path(), SMALL).entry_ids
