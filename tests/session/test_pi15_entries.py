"""Writing pi 1.5's entries: system messages, context edits, usage, compactions with
checkpoints (retain-none too) and branch summaries naming the leaf left; and the CLI's
`edit` command. What pi 1.5.2 makes of files written this way is checked in
tests/compat/test_pi15_compat.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import assistant_calling, assistant_message, tool_call, tool_result, user_message
from helpers_cli import invoke
from helpers_write import new_session

from jsonl_session import EntryValidationError, Session, SessionTreeError

READ = {"name": "read", "description": "Read a file.", "parameters": {"type": "object"}}
GREP_ANTHROPIC = {"name": "grep", "description": "Search.", "input_schema": {"type": "object"}}
BASH_CHAT = {
    "type": "function",
    "function": {"name": "bash", "description": "Run.", "parameters": {"type": "object"}},
}
EDIT_RESPONSES = {"type": "function", "name": "edit", "parameters": {"type": "object"}}


def last_line(session: Session) -> dict[str, Any]:
    line: dict[str, Any] = json.loads(session.path.read_bytes().splitlines()[-1])
    return line


def with_tool_round(tmp_path: Path) -> tuple[Session, dict[str, str]]:
    session, first, answer = new_session(tmp_path)
    ids = {"user": first, "answer": answer}
    ids["call"] = session.append_message(assistant_calling(tool_call("c1", "read", path="a")))
    output = [{"type": "text", "text": "the file's text"}]
    ids["result"] = session.append_message(
        tool_result("c1", "read", output, timestamp=1_700_000_001_000)
    )
    return session, ids


class TestSystemMessages:
    def test_tools_in_every_shape_are_declared_in_pis(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        session.append_system_message(
            "Base.",
            sections={"preamble": "You code."},
            tools_added=[READ, GREP_ANTHROPIC, BASH_CHAT, EDIT_RESPONSES],
        )
        message = last_line(session)["message"]
        assert list(message) == ["role", "content", "sections", "toolsAdded", "timestamp"]
        assert [t["name"] for t in message["toolsAdded"]] == ["read", "grep", "bash", "edit"]
        assert message["toolsAdded"][1] == {
            "name": "grep",
            "description": "Search.",
            "parameters": {"type": "object"},
        }
        assert message["toolsAdded"][3]["description"] == ""

    def test_patches_replay_into_the_current_prompt_and_tools(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        session.append_system_message(
            sections={"preamble": "You code.", "style": "Be brief."}, tools_added=[READ, BASH_CHAT]
        )
        session.append_system_message(
            "Never push.", sections={"style": None, "repo": "app"}, tools_removed=["read"]
        )
        assert session.system_prompt() == "Never push.\n\nYou code.\n\napp"
        assert [tool["name"] for tool in session.tools()] == ["bash"]
        reopened = Session.open(session.path)
        assert reopened.system_message() == session.system_message()

    def test_a_tool_without_a_name_is_refused_before_anything_is_written(
        self, tmp_path: Path
    ) -> None:
        session, _, _ = new_session(tmp_path)
        before = session.path.read_bytes()
        with pytest.raises(EntryValidationError, match="string 'name'"):
            session.append_system_message(tools_added=[{"description": "no name"}])
        assert session.path.read_bytes() == before


class TestContextEdits:
    def test_hiding_leaves_the_entry_out_of_the_context_but_in_the_file(
        self, tmp_path: Path
    ) -> None:
        session, ids = with_tool_round(tmp_path)
        session.append_context_edit(ids["result"], None)
        roles = [m["role"] for m in session.build_context().messages]
        assert roles == ["user", "assistant", "assistant"]
        assert session.get(ids["result"]) is not None
        assert last_line(session)["replacement"] is None

    def test_a_string_for_an_assistant_or_tool_result_is_written_as_a_text_block(
        self, tmp_path: Path
    ) -> None:
        session, ids = with_tool_round(tmp_path)
        session.append_context_edit(ids["result"], "short")
        assert last_line(session)["replacement"] == {"content": [{"type": "text", "text": "short"}]}
        session.append_context_edit(ids["user"], "plain")
        assert last_line(session)["replacement"] == {"content": "plain"}
        contents = [m["content"] for m in session.build_context().messages]
        assert contents[0] == "plain" and contents[-1] == [{"type": "text", "text": "short"}]

    def test_restoring_shows_the_entry_as_written_again(self, tmp_path: Path) -> None:
        session, ids = with_tool_round(tmp_path)
        original = session.build_context().messages
        session.append_context_edit(ids["answer"], None)
        session.restore_in_context(ids["answer"])
        assert session.build_context().messages == original

    def test_edits_belong_to_their_branch(self, tmp_path: Path) -> None:
        session, ids = with_tool_round(tmp_path)
        session.append_context_edit(ids["answer"], "edited")
        edited = session.leaf_id
        session.branch(ids["result"])
        assert session.build_context().messages[1]["content"] == [
            {"type": "text", "text": "hi there"}
        ]
        assert session.build_context(edited).messages[1]["content"] == [
            {"type": "text", "text": "edited"}
        ]

    def test_only_entries_that_give_the_model_content_on_the_branch_can_be_edited(
        self, tmp_path: Path
    ) -> None:
        session, ids = with_tool_round(tmp_path)
        label = session.append_label(ids["user"], "start")
        with pytest.raises(EntryValidationError, match="no content an edit can change"):
            session.append_context_edit(label, None)
        session.branch(ids["user"])
        with pytest.raises(EntryValidationError, match="not on the active branch"):
            session.append_context_edit(ids["result"], None)
        with pytest.raises(SessionTreeError, match="no entry"):
            session.append_context_edit("nothere", None)


class TestUsageCompactionsAndSummaries:
    def test_usage_counts_nowhere_in_the_context(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        before = session.build_context().messages
        session.append_usage("cache_warm", "anthropic", "claude-x", {"input": 3}, note="warm")
        line = last_line(session)
        assert [line[k] for k in ("type", "kind", "provider", "model", "note")] == [
            "usage",
            "cache_warm",
            "anthropic",
            "claude-x",
            "warm",
        ]
        assert session.build_context().messages == before

    def test_a_compaction_carries_the_prompt_and_tools_at_its_leaf(self, tmp_path: Path) -> None:
        session, first, _ = new_session(tmp_path)
        session.append_system_message(sections={"preamble": "You code."}, tools_added=[READ])
        session.append_message(user_message("more"))
        session.append_message(assistant_message("ok"))
        entry_id = session.append_compaction("summary", first, 100, usage={"input": 1})
        line = last_line(session)
        checkpoint = line["systemMessage"]
        assert checkpoint["sections"] == {"preamble": "You code."}
        assert [tool["name"] for tool in checkpoint["toolsAdded"]] == ["read"]
        assert line["usage"] == {"input": 1}
        assert list(line)[-1] == "systemMessage"
        roles = [m["role"] for m in session.build_context().messages]
        assert roles == ["system", "compactionSummary", "user", "assistant", "user", "assistant"]
        assert session.get(entry_id) is not None

    def test_a_retain_none_compaction_names_itself_and_keeps_nothing(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        entry_id = session.append_compaction("all of it", None, 100)
        assert last_line(session)["firstKeptEntryId"] == entry_id
        assert [m["role"] for m in session.build_context().messages] == ["compactionSummary"]

    def test_a_branch_summary_names_the_leaf_it_left(self, tmp_path: Path) -> None:
        session, first, answer = new_session(tmp_path)
        session.branch_with_summary(first, "left the answer", usage={"output": 2})
        line = last_line(session)
        assert (line["parentId"], line["fromId"], line["usage"]) == (first, answer, {"output": 2})
        session.branch_with_summary(None, "from the start")
        assert last_line(session)["fromId"] != "root"
        fresh = Session.create(cwd=tmp_path, session_dir=tmp_path, fsync="never")
        fresh.branch_with_summary(None, "nothing yet")
        assert fresh.build_context().messages[0]["fromId"] == "root"


class TestEditCommand:
    def test_hide_replace_and_restore_append_edits_and_say_so(self, tmp_path: Path) -> None:
        session, ids = with_tool_round(tmp_path)
        path = session.path
        code, out, _ = invoke("edit", path, ids["result"][:6], "--hide")
        assert code == 0 and f"entry {ids['result']} hidden from the model" in out
        code, out, _ = invoke("edit", path, ids["answer"], "--replace", "short", "--json")
        assert code == 0 and json.loads(out)["action"] == "replace"
        code, out, _ = invoke("edit", path, ids["result"], "--restore")
        assert code == 0 and "restored for the model" in out
        messages = Session.open(path).build_context().messages
        assert messages[1]["content"] == [{"type": "text", "text": "short"}]
        assert messages[-1]["content"] == [{"type": "text", "text": "the file's text"}]

    def test_exactly_one_action_is_needed(self, tmp_path: Path) -> None:
        session, ids = with_tool_round(tmp_path)
        before = session.path.read_bytes()
        code, _, err = invoke("edit", session.path, ids["answer"], "--hide", "--restore")
        assert code == 2 and "exactly one of --hide" in err  # a usage error
        code, _, err = invoke("edit", session.path, ids["answer"])
        assert code == 2 and session.path.read_bytes() == before


class TestShowingThePrompt:
    def test_show_and_context_show_the_prompt_and_tools(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        session.append_system_message(
            "Rules.", sections={"preamble": "You code."}, tools_added=[READ]
        )
        code, out, _ = invoke("show", session.path, "--json")
        shown = json.loads(out)
        assert code == 0 and shown["systemPrompt"] == "Rules.\n\nYou code."
        assert [tool["name"] for tool in shown["tools"]] == ["read"]
        code, out, _ = invoke("show", session.path)
        assert code == 0 and "read" in out.split("tools", 1)[1]
        code, out, _ = invoke("context", session.path)
        assert code == 0 and "[preamble]\nYou code." in out and "tools +read" in out
