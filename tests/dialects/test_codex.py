"""Codex rollouts read as pi sessions: every kind of line in fixtures/codex/ (written
by fixtures/generate_dialects.py from the format's facts) becomes the entry the
reader's docstring says, and nothing is ever written to a rollout."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers_cli import invoke
from locations import FIXTURES

from jsonl_session import Session, SessionWriteError, list_sessions, search_sessions

CODEX = FIXTURES / "codex" / "sessions"
MAIN = next(CODEX.glob("2025/11/03/rollout-2025-11-03T10-15-00-*.jsonl"))
SUBAGENT = next(CODEX.glob("2025/11/03/rollout-2025-11-03T10-20-00-*.jsonl"))
LEGACY = next(CODEX.glob("2025/06/20/*.jsonl"))
FORK = next(CODEX.glob("2025/11/03/rollout-2025-11-03T10-30-00-*.jsonl"))


def opened(path: Path = MAIN) -> Session:
    return Session.open(path, cache=False)


def messages(session: Session, leaf: str | None = None) -> list[dict[str, Any]]:
    return session.build_context(leaf).messages


class TestTheHeader:
    def test_the_first_session_meta_is_the_header(self) -> None:
        session = opened()
        assert session.header.id == MAIN.stem[-36:]
        assert session.cwd == "/home/dev/projects/todo-api"
        assert session.header_data["timestamp"] == "2025-11-03T10:15:00.120Z"

    def test_a_sub_agent_names_the_thread_that_spawned_it(self) -> None:
        assert opened(SUBAGENT).header.parent_session == opened().header.id

    def test_a_fork_names_its_source_and_the_copied_meta_line_is_not_a_header(self) -> None:
        fork = opened(FORK)
        assert fork.header.parent_session == opened().header.id
        assert fork.header.id == FORK.stem[-36:]
        assert fork.not_carried["session_meta lines after the first"] == 1


class TestMessages:
    def test_instructions_become_the_system_prompt(self) -> None:
        assert opened().system_prompt() == "You are Codex, a coding agent. Keep answers short."

    def test_injected_context_and_developer_text_are_hidden_custom_messages(self) -> None:
        session = opened()
        customs = [e.data() for e in session.entries if e.type == "custom_message"]
        kinds = [(c["customType"], c["display"]) for c in customs]
        assert kinds == [
            ("codex/developer", False),
            ("codex/context", False),
            ("codex/context", False),
        ]
        users = [m for m in messages(session) if m["role"] == "user"]
        assert all("environment_context" not in json.dumps(m) for m in users)

    def test_one_reply_is_one_assistant_message_with_its_reasoning_and_calls(self) -> None:
        session = opened()
        first_path = session.branch_path(session.entries[9].id)
        replies = [e.data()["message"] for e in first_path if e.role == "assistant"]
        thinking, call = replies[0]["content"]
        assert thinking["type"] == "thinking" and thinking["thinking"].startswith("**Running")
        assert json.loads(thinking["thinkingSignature"])["encrypted_content"].startswith("gAAAAB")
        assert call == {
            "type": "toolCall",
            "id": "call_t1",
            "name": "shell",
            "arguments": {
                "command": ["bash", "-lc", "npm test"],
                "workdir": "/home/dev/projects/todo-api",
                "timeout_ms": 120000,
            },
        }
        assert replies[0]["stopReason"] == "toolUse" and replies[0]["model"] == "gpt-5-codex"
        assert replies[0]["usage"]["cacheRead"] == 8000 and replies[0]["usage"]["input"] == 2100

    def test_every_output_is_a_tool_result_paired_with_its_call(self) -> None:
        session = opened()
        results = [e.data()["message"] for e in session.entries if e.role == "toolResult"]
        assert [(r["toolCallId"], r["toolName"]) for r in results] == [
            ("call_t1", "shell"),
            ("call_p1", "apply_patch"),
            ("call_t2", "shell"),
        ]
        assert results[2]["content"] == [{"type": "text", "text": "Tests: 57 passed"}]

    def test_a_user_image_is_an_image_block(self) -> None:
        users = [e.data()["message"] for e in opened().entries if e.role == "user"]
        with_image = [u for u in users if any(b.get("type") == "image" for b in u["content"])]
        assert len(with_image) == 1
        text, image = with_image[0]["content"]
        assert text == {"type": "text", "text": "Fix it like in this screenshot."}
        assert image["mimeType"] == "image/png" and image["data"].startswith("iVBOR")

    def test_model_and_effort_changes_are_settings_entries(self) -> None:
        session = opened()
        assert [
            (e.type, e.data().get("thinkingLevel") or e.data().get("modelId"))
            for e in session.entries
            if e.type.endswith("_change")
        ] == [
            ("model_change", "gpt-5-codex"),
            ("thinking_level_change", "medium"),
            ("thinking_level_change", "high"),
        ]
        assert session.build_context().thinking_level == "high"


class TestRollbacksAndCompactions:
    def test_a_rolled_back_turn_is_a_branch_beside_the_one_that_went_on(self) -> None:
        session = opened()
        rolled = next(
            e for e in session.entries if e.role == "user" and "every other" in json.dumps(e.data())
        )
        assert rolled.id not in {e.id for e in session.branch_path()}
        siblings = session.children(rolled.parent_id or "")
        assert len(siblings) == 2

    def test_a_compaction_replaces_the_history_and_keeps_the_instructions(self) -> None:
        session = opened()
        compaction = next(e for e in session.entries if e.type == "compaction")
        assert compaction.data()["firstKeptEntryId"] == compaction.id
        roles = [m["role"] for m in messages(session)]
        assert roles[:3] == ["system", "compactionSummary", "user"]
        assert session.system_prompt().startswith("You are Codex")
        assert sum(1 for m in messages(session) if m["role"] == "user") == 2

    def test_lines_not_understood_are_reported_and_newer_ones_kept_aside(self) -> None:
        session = opened()
        assert [p.kind for p in session.problems] == ["not-an-entry"]
        assert "mystery_line" in session.problems[0].message
        kept = [e.custom_type for e in session.entries if e.type == "custom"]
        assert kept == [
            "codex/web_search_call",
            "codex/event/brand_new_event",
            "codex/security_risk_score",
        ]


class TestOlderRollouts:
    def test_a_2025_rollout_of_bare_lines_reads_the_same_way(self) -> None:
        session = opened(LEGACY)
        assert session.system_prompt() == "Prefer small commits."
        roles = [m["role"] for m in messages(session)]
        assert roles == ["system", "user", "assistant", "toolResult", "assistant"]


class TestNeverWritten:
    def test_reading_listing_searching_and_every_command_leave_the_file_alone(self) -> None:
        before = MAIN.read_bytes(), os.stat(MAIN).st_mtime_ns
        opened()
        list_sessions(MAIN.parent, cache=None)
        list(search_sessions("zod", [MAIN]))
        for command in (
            ["show"],
            ["tree"],
            ["context"],
            ["stats"],
            ["textconv"],
            ["export", "--format", "markdown"],
        ):
            code, out, err = invoke(command[0], MAIN, *command[1:])
            assert code == 0, (command, err)
            assert out
        for fmt in ("anthropic", "openai-chat", "openai-responses"):
            code, out, err = invoke("context", MAIN, "--format", fmt, "--json")
            assert code == 0, err
        assert (MAIN.read_bytes(), os.stat(MAIN).st_mtime_ns) == before

    def test_appending_is_refused_with_a_pointer_to_convert(self) -> None:
        with pytest.raises(SessionWriteError, match=r"Codex transcript is only read here.*convert"):
            opened().append_message({"role": "user", "content": "hi", "timestamp": 0})

    def test_a_fork_is_a_pi_session_with_the_same_context(self, tmp_path: Path) -> None:
        session = opened()
        fork = session.fork(path=tmp_path / "fork.jsonl", cache=False)
        assert fork.path.read_bytes().startswith(b'{"type":"session","version":3')
        assert fork.build_context().to_dict() == session.build_context().to_dict()
        fork.append_message({"role": "user", "content": "Continue here.", "timestamp": 1})


class TestFound:
    def test_the_listing_names_codex_and_the_first_real_user_message(self) -> None:
        info = {i.path: i for i in list_sessions(MAIN.parent, cache=False)}[MAIN]
        assert info.agent == "codex" and info.problem is None
        assert info.first_message == "Why does `npm test` fail on a clean checkout?"
        assert info.message_count == 18

    def test_search_finds_text_at_its_line_with_the_entry_id(self) -> None:
        hits = list(search_sessions("changelog entry", [MAIN]))
        assert len(hits) == 1 and hits[0].role == "user"
        line = MAIN.read_text(encoding="utf-8").splitlines()[hits[0].line - 1]
        assert "Write a changelog entry." in line
        assert hits[0].entry_id in {e.id for e in opened().entries}
