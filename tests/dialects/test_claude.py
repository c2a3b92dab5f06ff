"""Claude Code transcripts read as pi sessions: every kind of line in fixtures/claude/
(written by fixtures/generate_dialects.py from the format's facts) becomes the entry
the reader's docstring says, the tree keeps Claude Code's uuids, and nothing is ever
written to a transcript."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers_cli import invoke
from locations import FIXTURES

from jsonl_session import Session, SessionWriteError, list_sessions, search_sessions

PROJECT = FIXTURES / "claude" / "projects" / "-home-dev-projects-todo-api"
MAIN = next(PROJECT.glob("*.jsonl"))
AGENT = next(PROJECT.glob("*/subagents/agent-*.jsonl"))


def opened(path: Path = MAIN) -> Session:
    return Session.open(path, cache=False)


def source_lines(path: Path = MAIN) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def by_role(session: Session, role: str) -> list[dict[str, Any]]:
    return [e.data()["message"] for e in session.entries if e.role == role]


class TestTheTree:
    def test_the_session_id_cwd_and_uuids_are_claude_codes(self) -> None:
        session = opened()
        assert session.header.id == MAIN.stem and session.dialect == "claude"
        assert session.cwd == "/home/dev/projects/todo-api"
        uuids = {line["uuid"] for line in source_lines() if "uuid" in line}
        assert {e.id for e in session.entries if e.type == "message"} <= uuids

    def test_the_leaf_is_the_last_line_of_the_main_conversation(self) -> None:
        session = opened()
        last = [line for line in source_lines() if line.get("type") == "assistant"][-1]
        assert session.leaf_id == last["uuid"]

    def test_a_reply_written_one_block_per_line_is_one_message(self) -> None:
        first = by_role(opened(), "assistant")[0]
        assert [b["type"] for b in first["content"]] == ["thinking", "text", "toolCall"]
        assert first["content"][0]["thinkingSignature"].startswith("EqQB")
        assert first["content"][2] == {
            "type": "toolCall",
            "id": "toolu_01Read",
            "name": "Read",
            "arguments": {"file_path": "src/routes/todos.ts"},
        }
        assert first["stopReason"] == "toolUse" and first["usage"]["output"] == 40
        assert first["usage"]["cacheRead"] == 14200 and first["responseId"].startswith("msg_01")

    def test_stop_reasons_and_redacted_thinking(self) -> None:
        replies = by_role(opened(), "assistant")
        assert [r["stopReason"] for r in replies] == [
            "toolUse",
            "toolUse",
            "stop",
            "length",
            "stop",
            "stop",  # no stop_reason written: inferred from the blocks
            "stop",
            "stop",  # the sidechain's, after the main conversation
        ]
        redacted = replies[3]["content"][0]
        assert redacted["redacted"] is True and redacted["thinkingSignature"].startswith("EmwK")

    def test_tool_results_pair_with_their_calls_and_keep_their_details(self) -> None:
        results = by_role(opened(), "toolResult")
        assert [(r["toolCallId"], r["toolName"], r["isError"]) for r in results] == [
            ("toolu_01Read", "Read", False),
            ("toolu_01Edit", "Edit", True),
        ]
        assert results[0]["details"]["file"]["numLines"] == 1

    def test_progress_and_attachment_lines_are_left_out_and_their_children_rehung(self) -> None:
        session = opened()
        ids = {e.id for e in session.entries}
        assert all(e.parent_id is None or e.parent_id in ids for e in session.entries)
        assert session.problems and all("brand-new-kind" in p.message for p in session.problems)
        assert session.not_carried["progress lines"] == 1
        assert session.not_carried["attachment lines"] == 1

    def test_meta_lines_are_hidden_custom_messages_and_images_come_through(self) -> None:
        session = opened()
        meta = [e.data() for e in session.entries if e.type == "custom_message"]
        assert [(m["customType"], m["display"]) for m in meta] == [("claude/meta", False)]
        image = next(u for u in by_role(session, "user") if isinstance(u["content"], list))
        assert image["content"][1]["type"] == "image"

    def test_an_earlier_answer_asked_again_is_a_branch(self) -> None:
        session = opened()
        done = next(e for e in session.entries if "by hand" in json.dumps(e.data()))
        assert len(session.children(done.id)) == 2

    def test_a_compact_boundary_and_its_summary_are_one_compaction(self) -> None:
        session = opened()
        compaction = next(e for e in session.entries if e.type == "compaction")
        data = compaction.data()
        assert data["firstKeptEntryId"] == compaction.id and data["tokensBefore"] == 48211
        assert data["summary"].startswith("This session is being continued")
        roles = [m["role"] for m in session.build_context(compaction.id).messages]
        assert roles == ["compactionSummary"]

    def test_a_partial_compaction_keeps_its_preserved_segment(self) -> None:
        session = opened()
        partial = [e for e in session.entries if e.type == "compaction"][-1]
        head = next(e for e in session.entries if "Now add a test" in json.dumps(e.data()))
        assert partial.data()["firstKeptEntryId"] == head.id
        shown = [
            (m["role"], json.dumps(m.get("content"))[:30]) for m in session.build_context().messages
        ]
        assert [role for role, _ in shown] == [
            "compactionSummary",
            "user",  # the preserved segment: the request and its answer
            "assistant",
            "user",  # after the compaction
            "assistant",
        ]
        assert "Now add a test" in shown[1][1]

    def test_the_name_is_the_custom_title(self) -> None:
        assert opened().name == "Validation work"

    @pytest.mark.parametrize(
        ("kinds", "name"),
        [
            (["ai-title", "agent-name", "ai-title"], "agent"),
            (["ai-title", "summary"], "summary"),  # the latest ai-title or summary
            (["custom-title", "agent-name"], "custom"),
        ],
    )
    def test_titles_rank_custom_then_agent_name_then_the_latest_ai_title(
        self, kinds: list[str], name: str, tmp_path: Path
    ) -> None:
        keys = {"custom-title": "customTitle", "agent-name": "agentName"}
        keys |= {"ai-title": "aiTitle", "summary": "summary"}
        texts = {"custom-title": "custom", "agent-name": "agent", "summary": "summary"}
        lines = source_lines()[:3]
        for kind in kinds:
            lines.append({"type": kind, keys[kind]: texts.get(kind, f"ai {len(lines)}")})
        path = tmp_path / "t.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        assert Session.open(path, cache=False).name == name

    def test_sidechain_lines_are_a_tree_of_their_own(self) -> None:
        session = opened()
        side = [e for e in session.entries if "POST routes" in json.dumps(e.data())]
        assert side and side[0].parent_id is None
        assert side[0].id not in {e.id for e in session.branch_path()}


class TestSubAgents:
    def test_a_sub_agent_file_reads_on_its_own(self) -> None:
        session = opened(AGENT)
        roles = [m["role"] for m in session.build_context().messages]
        assert roles == ["user", "assistant", "toolResult", "assistant"]

    def test_converting_the_main_session_converts_its_sub_agents(self, tmp_path: Path) -> None:
        from jsonl_session import convert

        done = convert(MAIN, "pi", tmp_path / "main.jsonl", cache=False)
        assert [p.name for p in done.sub_sessions] == [f"main.{AGENT.stem}.jsonl"]
        sub = Session.open(done.sub_sessions[0], cache=False)
        assert sub.header.parent_session == str(done.path)


class TestNeverWritten:
    def test_reading_listing_searching_and_every_command_leave_the_files_alone(
        self, tmp_path: Path
    ) -> None:
        files = [MAIN, AGENT]
        before = [(p.read_bytes(), os.stat(p).st_mtime_ns) for p in files]
        list_sessions(PROJECT, cache=None)
        list(search_sessions("zod", [MAIN]))
        for command in (["show"], ["tree"], ["context"], ["stats"], ["textconv"]):
            code, _, err = invoke(command[0], MAIN, *command[1:])
            assert code == 0, (command, err)
        for fmt in ("anthropic", "openai-chat", "openai-responses"):
            code, _, err = invoke("context", MAIN, "--format", fmt, "--json")
            assert code == 0, err
        code, _, err = invoke("export", MAIN, "--format", "html", "-o", tmp_path / "page.html")
        assert code == 0, err
        assert [(p.read_bytes(), os.stat(p).st_mtime_ns) for p in files] == before

    def test_appending_is_refused(self) -> None:
        with pytest.raises(SessionWriteError, match=r"Claude Code transcript is only read here"):
            opened().append_label(opened().entries[1].id, "x")


class TestFound:
    def test_the_listing_says_claude_and_uses_the_title(self) -> None:
        info = next(i for i in list_sessions(PROJECT, cache=False) if i.path == MAIN)
        assert (info.agent, info.name, info.problem) == ("claude", "Validation work", None)
        assert info.first_message == "Add input validation to POST /todos."

    def test_search_hits_carry_the_uuid_and_source_line(self) -> None:
        hits = list(search_sessions("use zod instead", [MAIN]))
        assert len(hits) == 1
        line = source_lines()[hits[0].line - 1]
        assert line["uuid"] == hits[0].entry_id


class TestWhereClaudeCodeKeepsThem:
    @pytest.mark.parametrize(
        ("cwd", "folder"),
        [
            ("/home/dev/app", "-home-dev-app"),
            ("/Users/me/git/my_repo.v2", "-Users-me-git-my-repo-v2"),
            ("/work/Open Source/x", "-work-Open-Source-x"),
            ("/w/Проект", "-w-------"),
            ("/w/\U0001f600", "-w---"),  # one code point, two UTF-16 units
        ],
    )
    def test_every_character_but_ascii_letters_and_digits_becomes_a_dash(
        self, cwd: str, folder: str, tmp_path: Path
    ) -> None:
        from jsonl_session import claude_dir_for

        assert claude_dir_for(cwd, tmp_path) == tmp_path / folder

    def test_list_finds_the_transcripts_of_a_directory_in_claude_codes_folder(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import shutil

        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
        target = tmp_path / "projects" / PROJECT.name
        shutil.copytree(PROJECT, target)
        found = list_sessions(cwd="/home/dev/projects/todo-api", agents=["claude"], cache=False)
        assert [info.path for info in found] == [target / MAIN.name]


class TestALongTranscript:
    """A transcript of HOLD_VALUES_BYTES or more is looked at briefly first and its
    kept lines decoded again in the second pass: the same session as one read whole."""

    HEAD = b'"sessionId":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/w",'
    ODD = (
        # a lone surrogate and bytes that are not UTF-8 where the first look skips,
        # a duplicated type, deep nesting, lines that are no object, a torn last line
        b'{"type":"user","uuid":"u1","parentUuid":null,'
        + HEAD
        + rb'"message":{"role":"user","content":"a \ud800 b"}}',
        b'{"type":"assistant","uuid":"u2","parentUuid":"u1",'
        + HEAD
        + b'"message":{"id":"m1","role":"assistant",'
        + b'"content":[{"type":"text","text":"caf\xff"}]}}',
        b'{"type":"summary","type":"user","uuid":"u3","parentUuid":"u2",'
        + HEAD
        + b'"message":{"role":"user","content":"xx"},"deep":'
        + b"[" * 3000
        + b"]" * 3000
        + b"}",
        b"[1, 2]",
        b"not json at all",
        b'{"type":"custom-title","customTitle":"  named  ","sessionId":"s"}',
        b'{"type":"assistant","uuid":"u4","parentUuid":"u3","isSidechain":true,'
        + HEAD
        + b'"message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"x"}]}}',
        b'{"type":"user","uuid":"u5","parentUuid":"u3"',
    )

    @pytest.mark.parametrize("source", ["fixtures", "odd"])
    def test_it_reads_as_a_short_one_does(
        self, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from jsonl_session.dialects import claude

        if source == "odd":
            odd = tmp_path / "odd.jsonl"
            odd.write_bytes(b"\n".join(self.ODD))
            files = [odd]
        else:
            files = sorted(FIXTURES.glob("claude/**/*.jsonl"))
        for path in files:
            data = path.read_bytes()
            monkeypatch.setattr(claude, "HOLD_VALUES_BYTES", len(data) + 1)
            held = claude.read_claude(data, path)
            monkeypatch.setattr(claude, "HOLD_VALUES_BYTES", 0)
            looked = claude.read_claude(data, path)
            assert [e.raw for e in looked.read_entries] == [e.raw for e in held.read_entries]
            assert [(e.line, e.offset) for e in looked.read_entries] == [
                (e.line, e.offset) for e in held.read_entries
            ]
            assert looked.problems == held.problems and looked.header == held.header
            assert looked.not_carried == held.not_carried
            assert looked.last_line == held.last_line
            if source == "odd":
                assert len(held.read_entries) >= 3 and held.problems
