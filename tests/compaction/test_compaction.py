"""Compaction with the offline summarizer: the entry it appends, what the context
becomes, what the summary keeps, and that history is never lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from builders import compaction_assistant as assistant
from builders import compaction_result as result
from builders import compaction_user as user
from helpers_compaction import work_session
from locations import FIXTURES

from jsonl_session import CompactionError, Session, SessionWriteError
from jsonl_session.compaction import (
    CompactionSettings,
    ExtractiveSummarizer,
    SummaryTask,
    compact,
    output_budget,
    prompt_for,
    render_transcript,
)
from jsonl_session.compaction.extractive import ITEM_CHARS

OFFLINE = ExtractiveSummarizer()


def copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copy(FIXTURES / f"{name}.jsonl", tmp_path / f"{name}.jsonl"))


class TestTheCompactionEntry:
    def test_is_appended_as_a_child_of_the_leaf_with_pis_fields(self, tmp_path: Path) -> None:
        session = work_session(tmp_path)
        old_leaf = session.leaf_id
        done = compact(session, OFFLINE, CompactionSettings(keep_recent_tokens=3000))
        last = json.loads(session.path.read_bytes().splitlines()[-1])
        assert list(last) == [
            "type",
            "id",
            "parentId",
            "timestamp",
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "details",
            "fromHook",
        ]
        assert last["type"] == "compaction" and last["id"] == done.entry_id
        assert last["parentId"] == old_leaf
        assert last["firstKeptEntryId"] == done.plan.first_kept_entry_id
        assert last["tokensBefore"] == done.plan.tokens_before
        assert last["fromHook"] is False
        assert last["details"] == {
            "readFiles": done.plan.read_files,
            "modifiedFiles": done.plan.modified_files,
        }
        assert "src/export.py" in last["details"]["modifiedFiles"]
        assert last["summary"].endswith("<modified-files>\nsrc/export.py\n</modified-files>")
        assert "<read-files>\nsrc/m0.py\n" in last["summary"]

    def test_makes_the_context_start_with_the_summary_and_smaller(self, tmp_path: Path) -> None:
        session = work_session(tmp_path)
        done = compact(session, OFFLINE, CompactionSettings(keep_recent_tokens=3000))
        messages = Session.open(session.path).build_context().messages
        assert messages[0]["role"] == "compactionSummary"
        assert messages[0]["summary"] == done.summary
        assert done.tokens_after < done.estimated_before / 2

    def test_never_changes_a_byte_of_what_was_there(self, tmp_path: Path) -> None:
        session = work_session(tmp_path)
        before = session.path.read_bytes()
        compact(session, OFFLINE, CompactionSettings(keep_recent_tokens=3000))
        after = session.path.read_bytes()
        assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1

    def test_when_everything_is_recent_nothing_is_written(self, tmp_path: Path) -> None:
        path = copy("linear", tmp_path)
        before = path.read_bytes()
        with pytest.raises(CompactionError, match="keep_recent_tokens=20000"):
            compact(Session.open(path), OFFLINE)
        assert path.read_bytes() == before

    def test_a_second_compaction_right_after_the_first_is_refused(self, tmp_path: Path) -> None:
        session = work_session(tmp_path)
        compact(session, OFFLINE, CompactionSettings(keep_recent_tokens=3000))
        with pytest.raises(CompactionError, match="already ends with a compaction"):
            compact(session, OFFLINE, CompactionSettings(keep_recent_tokens=3000))

    def test_the_second_compaction_updates_the_first_summary(self, tmp_path: Path) -> None:
        session = work_session(tmp_path)
        compact(session, OFFLINE, CompactionSettings(keep_recent_tokens=3000))
        session.append_message(user("Also: keep the CLI flags stable, do not rename them."))
        for n in range(12):
            session.append_message(assistant("More.", (f"z{n}", "read", {"path": f"lib/{n}.py"})))
            session.append_message(result(f"z{n}", "read", "y" * 4000))
        done = compact(session, OFFLINE, CompactionSettings(keep_recent_tokens=3000))
        assert done.plan.previous_summary is not None
        for kept in ("Never block the event loop", "asyncio.to_thread", "do not rename them"):
            assert kept in done.summary
        assert "src/export.py" in done.plan.modified_files  # carried from the first
        assert "lib/0.py" in done.plan.read_files
        messages = session.build_context().messages
        assert [m["role"] for m in messages].count("compactionSummary") == 1


class TestTheOfflineSummary:
    def summary(self, messages: list[dict[str, Any]], **task: Any) -> str:
        kind = task.pop("kind", "history")
        return OFFLINE.summarize(SummaryTask(kind, messages, task.pop("max_tokens", 4000), **task))

    def test_has_the_structured_sections(self) -> None:
        text = self.summary([user("Add a --json flag to the list command.")])
        headings = [line for line in text.splitlines() if line.startswith("#")]
        assert headings == [
            "## Goal",
            "## Constraints & Preferences",
            "## Progress",
            "### Done",
            "### In Progress",
            "### Blocked",
            "## Key Decisions",
            "## Next Steps",
            "## Critical Context",
        ]
        assert "- Add a --json flag to the list command." in text

    def test_collects_constraints_decisions_failures_and_open_tasks(self) -> None:
        text = self.summary(
            [
                user("Fix the parser. You must keep Python 3.9 support. It is slow."),
                assistant(
                    "I decided to keep the regex engine.", ("b1", "bash", {"command": "make"})
                ),
                result("b1", "bash", "compiling\nerror: missing header foo.h\nexit code 2"),
                user("TODO: benchmark it afterwards."),
            ]
        )
        assert "- You must keep Python 3.9 support." in text
        assert "It is slow" not in text.split("## Constraints")[1].split("##")[0]
        assert "- I decided to keep the regex engine." in text
        assert "- `make` exit 2: error: missing header foo.h" in text
        assert "TODO: benchmark it afterwards." in text.split("## Next Steps")[1]

    def test_a_command_that_passes_later_is_no_longer_blocked(self) -> None:
        text = self.summary(
            [
                user("Make the tests pass."),
                assistant("Run.", ("t1", "bash", {"command": "pytest"})),
                result("t1", "bash", "1 failed\nexit code 1", error=True),
                assistant("Again.", ("t2", "bash", {"command": "pytest"})),
                result("t2", "bash", "3 passed\nexit code 0"),
            ]
        )
        blocked = text.split("### Blocked")[1].split("##")[0]
        assert "pytest" not in blocked and "- (none)" in blocked
        assert "- [x] `pytest` passes now (it failed before: exit 1: 1 failed)" in text

    def test_an_update_keeps_every_item_of_the_previous_summary(self) -> None:
        first = self.summary([user("Goal one. Never touch the vendored code.")])
        second = self.summary(
            [user("Now the docs. Always use British spelling.")], previous_summary=first
        )
        assert "Goal one. Never touch the vendored code." in second
        assert "Never touch the vendored code." in second.split("## Constraints")[1]
        assert "Always use British spelling." in second.split("## Constraints")[1]
        assert second.count("## Goal") == 1

    def test_is_deterministic(self) -> None:
        messages = [user("Do X. Never do Y."), assistant("I'll use Z instead of W.")]
        assert self.summary(messages) == self.summary(messages)

    def test_keeps_to_the_output_budget_by_dropping_the_least_important(self) -> None:
        messages = [user("The goal. Never use tabs.")]
        for n in range(200):
            messages.append(assistant("Run.", (f"c{n}", "bash", {"command": f"step {n}"})))
            messages.append(result(f"c{n}", "bash", f"error {n}", error=True))
        text = self.summary(messages, max_tokens=300)
        assert len(text) <= 300 * 4
        assert "The goal. Never use tabs." in text and "- Never use tabs." in text

    def test_long_items_are_cut_at_a_word_on_their_line(self) -> None:
        text = self.summary([user("Never " + "use tabs " * 600)])
        constraint = text.split("## Constraints & Preferences\n")[1].splitlines()[0]
        assert constraint.startswith("- Never use tabs use tabs")
        assert constraint.endswith("…") and len(constraint) <= ITEM_CHARS + len("- ")

    def test_honours_the_callers_instructions(self) -> None:
        messages = [user("Fix the login flow."), assistant("The session cookie expires early.")]
        text = self.summary(messages, instructions="focus on the cookie handling")
        focus = text.split("## Requested Focus")[1]
        assert "The session cookie expires early." in focus

    def test_a_turn_prefix_summary_names_the_request_and_early_work(self) -> None:
        text = self.summary(
            [
                user("Rename the module."),
                assistant(
                    "Editing.",
                    ("e1", "edit", {"path": "a.py", "oldText": "1", "newText": "2"}),
                    ("e2", "Edit", {"file_path": "b.py", "old_string": "1", "new_string": "2"}),
                ),
                result("e1", "edit", "ok"),
                result("e2", "Edit", "ok"),
            ],
            kind="turn_prefix",
        )
        assert text.startswith("## Original Request\n- Rename the module.")
        # a.py is in pi's <modified-files> list after the summary; b.py only here
        assert "- Changed `b.py`" in text and "`a.py`" not in text


class TestThePromptsForModels:
    def test_tool_outputs_are_clipped_in_the_transcript(self) -> None:
        text = render_transcript([result("c", "read", "a" * 10_000)])
        assert "a" * 2000 in text and "a" * 2001 not in text
        assert "[... 8000 more characters not shown]" in text

    def test_an_update_prompt_carries_the_previous_summary(self) -> None:
        task = SummaryTask("history", [user("hi")], 100, previous_summary="EARLIER TEXT")
        prompt = prompt_for(task)
        assert "<earlier-summary>\nEARLIER TEXT\n</earlier-summary>" in prompt
        assert "<earlier-summary>" not in prompt_for(SummaryTask("history", [user("hi")], 100))

    def test_budgets_come_from_the_reserve(self) -> None:
        assert output_budget("history", 16384) == 13107
        assert output_budget("turn_prefix", 16384) == 8192
        assert output_budget("branch", 16384) == 4096
        assert output_budget("history", 10) == 256


class TestReviewFindings:
    def test_a_turn_written_by_another_program_meanwhile_refuses_the_compaction(
        self, tmp_path: Path
    ) -> None:
        session = work_session(tmp_path)

        class OtherWriterMeanwhile:
            name = "slow"

            def summarize(self, task: SummaryTask) -> str:
                other = Session.open(session.path)
                other.append_message(user("NEW TURN from another program"))
                return "summary"

        with pytest.raises(SessionWriteError, match="another program wrote"):
            compact(session, OtherWriterMeanwhile(), CompactionSettings(keep_recent_tokens=3000))
        reopened = Session.open(session.path)
        assert reopened.branch_path()[-1].type == "message"
        assert "NEW TURN" in json.dumps(reopened.build_context().messages[-1])

    def test_shell_commands_kept_from_the_model_stay_out_of_the_summary(self) -> None:
        hidden = {
            "role": "bashExecution",
            "command": "export TOKEN=s3cr3t-value",
            "output": "error: nope",
            "exitCode": 1,
            "excludeFromContext": True,
            "timestamp": 1,
        }
        text = OFFLINE.summarize(SummaryTask("history", [user("Deploy it."), hidden], 4000))
        assert "s3cr3t" not in text

    def test_a_blank_summary_is_refused_and_nothing_written(self, tmp_path: Path) -> None:
        session = work_session(tmp_path)
        before = session.path.read_bytes()

        class Blank:
            name = "blank"

            def summarize(self, task: SummaryTask) -> str:
                return "  \n"

        with pytest.raises(CompactionError, match="empty summary"):
            compact(session, Blank(), CompactionSettings(keep_recent_tokens=3000))
        assert session.path.read_bytes() == before

    def test_a_large_input_is_summarized_quickly_and_close_to_the_budget(self) -> None:
        messages: list[dict[str, Any]] = [user("Investigate.")]
        for n in range(1000):
            messages.append(user(f"We must keep step {n} as it is."))
            messages.append(assistant("Running.", (f"c{n}", "bash", {"command": f"run {n}"})))
            messages.append(result(f"c{n}", "bash", "ok"))
        text = OFFLINE.summarize(SummaryTask("history", messages, 1000))
        assert 3500 < len(text) <= 4000
