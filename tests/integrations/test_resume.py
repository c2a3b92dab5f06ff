"""`jsonl-session resume` (a real subprocess) and the library's `take_turn`, against the
loopback stub of both providers: the reply streams to the terminal and lands in the
file, the request carries the transcript's prompt, tools and history, tool calls stop
the loop, an overflow compacts once, and nothing is written when a key or model is
missing.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from stub_api import ANTHROPIC_PROMPT_TOO_LONG, Reply, StubApi, ToolCall

from jsonl_session import ModelCallError, Session, take_turn, target_for

SYSTEM = "You are a careful assistant."
READ_TOOL = {
    "name": "read",
    "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def make_session(folder: Path, provider: str = "anthropic", model: str = "claude-test") -> Session:
    """A session that has a prompt, a tool, a model and one finished exchange."""
    session = Session.create(cwd=folder, session_dir=folder)
    session.append_system_message(SYSTEM, tools_added=[READ_TOOL])
    session.append_model_change(provider, model)
    session.append_message({"role": "user", "content": "Hello", "timestamp": 1})
    api = "anthropic-messages" if provider == "anthropic" else "openai-responses"
    session.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Hi. What shall we do?"}],
            "api": api,
            "provider": provider,
            "model": model,
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    return session


def add_long_turns(session: Session, api: str, provider: str, model: str) -> None:
    """Three exchanges of about 25,000 tokens each: enough history to compact."""
    long_text = "The design notes go on at length. " * 3000
    for n in range(3):
        session.append_message({"role": "user", "content": long_text})
        session.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"Noted, part {n}."}],
                "api": api,
                "provider": provider,
                "model": model,
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "stopReason": "stop",
            }
        )


def resume_cli(
    stub: StubApi, *args: str | Path, stdin: str = "", keys: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env["ANTHROPIC_BASE_URL"] = stub.url
    env["OPENAI_BASE_URL"] = stub.url + "/v1"
    if keys:
        env["ANTHROPIC_API_KEY"] = env["OPENAI_API_KEY"] = "test-key"
    command = [sys.executable, "-m", "jsonl_session", "resume", *map(str, args)]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, timeout=60)


def roles(session: Session) -> list[str]:
    return [m["role"] for m in session.build_context().messages]


class TestResumingWithAnthropic:
    def test_the_reply_streams_to_the_terminal_and_is_appended(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        stub_api.reply_with("Let us start with the tests, then the docs.")
        done = resume_cli(stub_api, session.path, "What first?")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Let us start with the tests, then the docs.\n"
        reopened = Session.open(session.path)
        assert roles(reopened) == ["system", "user", "assistant", "user", "assistant"]
        reply = reopened.build_context().messages[-1]
        assert reply["content"] == [
            {"type": "text", "text": "Let us start with the tests, then the docs."}
        ]
        assert (reply["api"], reply["model"], reply["stopReason"]) == (
            "anthropic-messages",
            "claude-test",
            "stop",
        )
        [request] = stub_api.requests_to("/v1/messages")
        body = request.body
        assert body["stream"] is True and body["model"] == "claude-test"
        assert body["system"] == SYSTEM
        assert [t["name"] for t in body["tools"]] == ["read"]
        assert body["messages"][-1] == {
            "role": "user",
            "content": [{"type": "text", "text": "What first?"}],
        }

    def test_a_reply_that_calls_tools_is_recorded_and_ends_the_loop(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        stub_api.reply_with(
            Reply(text="Reading it.", tool_calls=[ToolCall("read", {"path": "a.py"}, id="toolu_7")])
        )
        done = resume_cli(stub_api, session.path, stdin="Read a.py\nand then this\n")
        assert done.returncode == 0, done.stderr
        assert 'tool call read {"path": "a.py"} (id toolu_7)' in done.stderr
        assert "resume runs no tools" in done.stderr
        assert len(stub_api.requests_to("/v1/messages")) == 1  # the second line is never sent
        last = Session.open(session.path).build_context().messages[-1]
        assert last["stopReason"] == "toolUse"
        assert last["content"][-1]["id"] == "toolu_7"

    def test_prompts_from_standard_input_are_turns_in_order(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        stub_api.reply_with("One.", "Two.")
        done = resume_cli(stub_api, session.path, stdin="first\n\nsecond\n")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "One.\nTwo.\n"
        second = stub_api.requests_to("/v1/messages")[1].body["messages"]
        assert [m["role"] for m in second] == ["user", "assistant", "user", "assistant", "user"]
        assert second[-2]["content"] == [{"type": "text", "text": "One."}]

    def test_an_overflow_compacts_the_session_and_asks_again(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        add_long_turns(session, "anthropic-messages", "anthropic", "claude-test")
        stub_api.fail_next("/v1/messages", ANTHROPIC_PROMPT_TOO_LONG)
        stub_api.reply_with("## Goal\nSummarized.", "Short answer.")
        done = resume_cli(stub_api, session.path, "Go on")
        assert done.returncode == 0, done.stderr
        assert "compacted" in done.stderr
        assert done.stdout == "Short answer.\n"
        reopened = Session.open(session.path)
        # the prompt is written once the API took the request, after the compaction
        assert [e.type for e in reopened.branch_path()][-3:] == ["compaction", "message", "message"]
        assert roles(reopened)[:2] == ["system", "compactionSummary"]
        assert len(stub_api.requests_to("/v1/messages")) == 3  # refused, summary, answer

    def test_without_a_key_nothing_is_written(self, stub_api: StubApi, tmp_path: Path) -> None:
        session = make_session(tmp_path)
        before = session.path.read_bytes()
        done = resume_cli(stub_api, session.path, "Hello?", keys=False)
        assert done.returncode == 1
        assert done.stderr == "error: no API key for anthropic: set ANTHROPIC_API_KEY\n"
        assert session.path.read_bytes() == before
        assert stub_api.requests == []

    def test_without_a_model_nothing_is_written(self, stub_api: StubApi, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        session.append_message({"role": "user", "content": "Hello", "timestamp": 1})
        before = session.path.read_bytes()
        done = resume_cli(stub_api, session.path, "Hello?", "--provider", "anthropic")
        assert done.returncode == 1
        assert "give one with --model" in done.stderr
        assert session.path.read_bytes() == before


class TestResumingWithOpenAI:
    def test_the_responses_api_gets_its_own_reasoning_back_on_the_next_turn(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path, "openai", "gpt-test")
        stub_api.reply_with(
            Reply(text="Thought about it.", thinking="Weigh both options.", signature="ZW5j"),
            "Second answer.",
        )
        done = resume_cli(stub_api, session.path, stdin="first\nsecond\n")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Thought about it.\nSecond answer.\n"
        first, second = (r.body for r in stub_api.requests_to("/v1/responses"))
        assert first["stream"] is True and first["instructions"] == SYSTEM
        replayed = [i for i in second["input"] if i.get("type") == "reasoning"]
        assert len(replayed) == 1 and replayed[0]["encrypted_content"] == "ZW5j"
        reply = Session.open(session.path).build_context().messages[-3]
        assert reply["api"] == "openai-responses" and reply["content"][0]["type"] == "thinking"

    def test_chat_completions_on_request(self, stub_api: StubApi, tmp_path: Path) -> None:
        session = make_session(tmp_path, "openai", "gpt-test")
        stub_api.reply_with("From chat.")
        done = resume_cli(stub_api, session.path, "Hi", "--api", "chat")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "From chat.\n"
        [request] = stub_api.requests_to("/v1/chat/completions")
        assert request.body["stream_options"] == {"include_usage": True}
        last = Session.open(session.path).build_context().messages[-1]
        assert last["api"] == "openai-completions" and last["usage"]["output"] >= 1


class TestWhereTheTurnGoes:
    def test_leaf_continues_from_an_earlier_entry_without_a_marker(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        first_user = next(
            e.id
            for e in session.entries
            if e.type == "message" and e.data()["message"]["role"] == "user"
        )
        count = len(session.entries)
        stub_api.reply_with("Another way.")
        done = resume_cli(stub_api, session.path, "Try again", "--leaf", first_user)
        assert done.returncode == 0, done.stderr
        reopened = Session.open(session.path)
        added = reopened.entries[count:]
        assert [e.type for e in added] == ["message", "message"]
        assert added[0].parent_id == first_user
        assert reopened.leaf_id == added[1].id

    def test_fork_continues_in_a_new_file_and_leaves_the_old_one(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        before = session.path.read_bytes()
        stub_api.reply_with("In the fork.")
        done = resume_cli(stub_api, session.path, "Fork it", "--fork")
        assert done.returncode == 0, done.stderr
        assert session.path.read_bytes() == before
        forked = Path(done.stderr.split("forked to ", 1)[1].splitlines()[0])
        assert roles(Session.open(forked))[-2:] == ["user", "assistant"]


class TestTakeTurn:
    def test_a_switch_of_model_is_recorded_before_the_turn(
        self, stub_api: StubApi, gpt: Any, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        stub_api.reply_with("From the other model.")
        target = target_for(session, provider="openai", model="gpt-test", client=gpt)
        turn = take_turn(session, "Go on", target)
        added = [e.type for e in session.branch_path()][-3:]
        assert added == ["model_change", "message", "message"]
        assert session.build_context().model == {"provider": "openai", "modelId": "gpt-test"}
        assert turn.reply["provider"] == "openai"

    def test_the_reply_arrives_in_pieces_and_is_returned_with_its_calls(
        self, stub_api: StubApi, claude: Any, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        stub_api.reply_with(
            Reply(text="A fairly long answer in several pieces.", tool_calls=[ToolCall("read")])
        )
        target = target_for(session, client=claude)
        pieces: list[tuple[str, str]] = []
        turn = take_turn(session, "Go", target, on_delta=lambda k, t: pieces.append((k, t)))
        assert len([p for k, p in pieces if k == "text"]) > 1
        assert "".join(p for k, p in pieces if k == "text") == turn.text
        assert [c["name"] for c in turn.tool_calls] == ["read"]
        assert session.get(turn.reply_id) is not None and turn.prompt_id is not None

    def test_an_api_error_is_one_clear_line(
        self, stub_api: StubApi, claude: Any, tmp_path: Path
    ) -> None:
        from stub_api import ANTHROPIC_INVALID_REQUEST

        session = make_session(tmp_path)
        stub_api.fail_next("/v1/messages", ANTHROPIC_INVALID_REQUEST)
        with pytest.raises(ModelCallError, match=r"anthropic refused the request \(HTTP 400\)"):
            take_turn(session, "Go", target_for(session, client=claude))


def test_the_file_resume_wrote_is_a_pi_session(stub_api: StubApi, tmp_path: Path) -> None:
    session = make_session(tmp_path)
    stub_api.reply_with("Fine.")
    assert resume_cli(stub_api, session.path, "ok?").returncode == 0
    lines = [json.loads(line) for line in session.path.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    assert all(line["parentId"] == prev["id"] for prev, line in itertools.pairwise(lines[1:]))


class _CutStreams:
    """A real client whose streams give their first ``keep`` events, then fail."""

    def __init__(self, client: Any, keep: int, error: BaseException) -> None:
        self.real, self.keep, self.error = client, keep, error

    @property
    def messages(self) -> Any:
        return self

    def create(self, **request: Any) -> Any:
        stream = self.real.messages.create(**request)

        def cut() -> Any:
            with stream:
                for n, event in enumerate(stream):
                    if n == self.keep:
                        raise self.error
                    yield event

        return cut()


class TestWhatATurnWrites:
    def test_a_refused_request_writes_nothing(
        self, stub_api: StubApi, claude: Any, tmp_path: Path
    ) -> None:
        from stub_api import anthropic_error

        session = make_session(tmp_path)
        before = session.path.read_bytes()
        stub_api.fail_next("/v1/messages", anthropic_error(404, "not_found_error", "model: x"))
        target = target_for(session, provider="anthropic", model="claude-typo", client=claude)
        with pytest.raises(ModelCallError, match="HTTP 404"):
            take_turn(session, "fix the bug", target)
        assert session.path.read_bytes() == before

    def test_a_stream_that_breaks_is_recorded_as_far_as_it_came(
        self, stub_api: StubApi, claude: Any, tmp_path: Path
    ) -> None:
        import httpx2

        session = make_session(tmp_path)
        stub_api.reply_with("One two three four five six seven eight nine ten.")
        dropped = httpx2.RemoteProtocolError("peer closed connection")
        target = target_for(session, client=_CutStreams(claude, 4, dropped))
        with pytest.raises(ModelCallError, match="peer closed connection"):
            take_turn(session, "Count", target)
        last = Session.open(session.path).build_context().messages[-2:]
        assert [m["role"] for m in last] == ["user", "assistant"]
        assert last[1]["stopReason"] == "error" and last[1]["content"][0]["text"].startswith("One")

    def test_a_turn_that_failed_is_not_sent_again(
        self, stub_api: StubApi, claude: Any, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        stub_api.reply_with(Reply(text="Deleting", tool_calls=[ToolCall("rm", {"path": "/"})]))
        target = target_for(session, client=_CutStreams(claude, 6, KeyboardInterrupt()))
        with pytest.raises(KeyboardInterrupt):
            take_turn(session, "Clean up", target)
        assert Session.open(session.path).build_context().messages[-1]["stopReason"] == "aborted"
        stub_api.reply_with("Fine.")
        turn = take_turn(session, "Never mind", target_for(session, client=claude))
        sent = stub_api.requests_to("/v1/messages")[-1].body["messages"]
        assert "Deleting" not in json.dumps(sent)
        assert turn.tool_calls == []

    def test_a_blank_prompt_with_fork_writes_no_fork(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        done = resume_cli(stub_api, session.path, "   ", "--fork")
        assert done.returncode == 1 and "the prompt is empty" in done.stderr
        assert sorted(tmp_path.glob("*.jsonl")) == [session.path]

    def test_no_prompts_on_standard_input_write_nothing(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = make_session(tmp_path)
        before = session.path.read_bytes()
        done = resume_cli(stub_api, session.path, "--fork", stdin="")
        assert done.returncode == 0, done.stderr
        assert sorted(tmp_path.glob("*.jsonl")) == [session.path]
        assert session.path.read_bytes() == before


class _OverflowInStream:
    """A real OpenAI client whose first Responses stream reports, as the API can,
    that the input was too long, in a response.failed event."""

    def __init__(self, client: Any) -> None:
        self.real, self.failed = client, False

    @property
    def responses(self) -> Any:
        return self

    def create(self, **request: Any) -> Any:
        if self.failed or not request.get("stream"):
            return self.real.responses.create(**request)
        self.failed = True
        from openai.types.responses import ResponseStreamEvent
        from pydantic import TypeAdapter

        response = {
            "id": "resp_x",
            "object": "response",
            "created_at": 1,
            "model": request["model"],
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "status": "in_progress",
        }
        failure = {
            "code": "invalid_prompt",
            "message": "Your input exceeds the context window of this model.",
        }
        raw = [
            {"type": "response.created", "sequence_number": 0, "response": response},
            {
                "type": "response.failed",
                "sequence_number": 1,
                "response": {**response, "status": "failed", "error": failure},
            },
        ]
        adapter: Any = TypeAdapter(ResponseStreamEvent)
        return iter([adapter.validate_python(event) for event in raw])


def test_an_overflow_said_in_the_stream_compacts_and_asks_again(
    stub_api: StubApi, gpt: Any, tmp_path: Path
) -> None:
    session = make_session(tmp_path, "openai", "gpt-test")
    add_long_turns(session, "openai-responses", "openai", "gpt-test")
    stub_api.reply_with("## Goal\nSummary.", "The answer.")
    turn = take_turn(session, "Go on", target_for(session, client=_OverflowInStream(gpt)))
    assert turn.compaction is not None and turn.text == "The answer."
    kinds = [e.type for e in Session.open(session.path).branch_path()][-3:]
    assert kinds == ["message", "compaction", "message"]
