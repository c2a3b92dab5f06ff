"""Branch summaries: leaving a branch for an earlier point keeps what was done on it
in a branch_summary at the target, which becomes the leaf."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import compaction_assistant as assistant
from builders import compaction_result as result
from builders import compaction_user as user

from jsonl_session import CompactionError, Session, summarize_branch
from jsonl_session.compaction import ExtractiveSummarizer

OFFLINE = ExtractiveSummarizer()


@pytest.fixture
def explored(tmp_path: Path) -> tuple[Session, dict[str, str]]:
    """u1 a1, then a branch that edits a file and fails a command."""
    s = Session.create(cwd="/p", path=tmp_path / "explored.jsonl", fsync="never")
    ids = {"u1": s.append_message(user("Speed up the importer."))}
    ids["a1"] = s.append_message(assistant("Two options: caching or batching."))
    ids["u2"] = s.append_message(user("Try caching. Never cache across users."))
    ids["a2"] = s.append_message(
        assistant(
            "Adding a cache.",
            ("e", "edit", {"path": "imp/cache.py", "oldText": "", "newText": "x"}),
        )
    )
    ids["r2"] = s.append_message(result("e", "edit", "ok"))
    ids["a3"] = s.append_message(
        assistant("Testing.", ("t", "bash", {"command": "pytest -k cache"}))
    )
    ids["r3"] = s.append_message(result("t", "bash", "Error: stale entry\nexit code 1", error=True))
    return s, ids


class TestBranchWithSummary:
    def test_summarizes_the_branch_left_and_moves_the_leaf_to_the_summary(
        self, explored: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = explored
        done = summarize_branch(session, ids["a1"], OFFLINE)
        assert done.common_ancestor_id == ids["a1"]
        assert done.summarized == [ids["u2"], ids["a2"], ids["r2"], ids["a3"], ids["r3"]]
        assert session.leaf_id == done.entry_id
        last = json.loads(session.path.read_bytes().splitlines()[-1])
        assert last["type"] == "branch_summary" and last["parentId"] == ids["a1"]
        # pi 1.5: fromId is the leaf that was left (0.73 wrote the entry branched to)
        assert last["fromId"] == ids["r3"] and last["fromHook"] is False
        assert last["details"] == {"readFiles": [], "modifiedFiles": ["imp/cache.py"]}
        assert "Never cache across users." in last["summary"]
        assert "`pytest -k cache` exit 1: Error: stale entry" in last["summary"]
        assert last["summary"].endswith("<modified-files>\nimp/cache.py\n</modified-files>")

    def test_the_new_context_holds_the_summary_after_the_target(
        self, explored: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = explored
        summarize_branch(session, ids["a1"], OFFLINE)
        messages = Session.open(session.path).build_context().messages
        assert [m["role"] for m in messages] == ["user", "assistant", "branchSummary"]
        assert messages[2]["fromId"] == ids["r3"]  # the leaf that was left (pi 1.5)

    def test_moving_to_another_branch_summarizes_from_the_common_ancestor(
        self, explored: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = explored
        session.branch(ids["a1"])
        other = session.append_message(user("Try batching instead."))
        session.branch(ids["r3"])
        done = summarize_branch(session, other, OFFLINE)
        assert done.common_ancestor_id == ids["a1"]
        assert done.summarized[0] == ids["u2"]
        path = [e.id for e in session.branch_path()]
        assert path[-2:] == [other, done.entry_id]

    def test_nothing_to_summarize_writes_nothing(
        self, explored: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = explored
        before = session.path.read_bytes()
        with pytest.raises(CompactionError, match="nothing to summarize"):
            summarize_branch(session, ids["r3"], OFFLINE)
        assert session.path.read_bytes() == before
