"""Requests carry the transcript's own prompt and tools (pi 1.5 system messages) and
leave out what context edits hid: built by `jsonl-session context --format ... --json`
from files pi 1.5.2 wrote, and sent through the real SDK clients to the loopback stub,
which refuses anything the APIs would refuse."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest
from helpers_cli import invoke
from locations import GOLDEN_DIR
from stub_api import StubApi

from jsonl_session import Session, to_anthropic, to_openai_chat, to_openai_responses

CORPUS = GOLDEN_DIR / "pi15" / "corpus"
PROMPT = CORPUS / "prompt-and-tools.jsonl"
EDITS = CORPUS / "context-edits.jsonl"
ANTHROPIC_MODEL = "claude-test"
OPENAI_MODEL = "gpt-test"
SCHEMA = {"type": "object"}
HIDDEN_TEXT = "BUILD FAILED"  # the build log one branch of context-edits.jsonl hides


def request_from_cli(path: Any, fmt: str, *args: str) -> dict[str, Any]:
    code, out, err = invoke("context", path, "--format", fmt, "--json", *args)
    assert code == 0, err
    request: dict[str, Any] = json.loads(out)["request"]
    return request


def hiding_leaf() -> str:
    """The leaf of context-edits.jsonl on whose branch the build log is hidden."""
    session = Session.open(EDITS, cache=False)
    for entry in session.entries:
        if not session.children(entry.id) and entry.role == "assistant":
            texts = json.dumps(session.build_context(entry.id).messages)
            if HIDDEN_TEXT not in texts:
                return entry.id
    raise AssertionError("no branch hides the build log")


class TestTheTranscriptsPromptAndTools:
    def test_anthropic_gets_the_replayed_prompt_and_the_current_tools(
        self, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        request = request_from_cli(PROMPT, "anthropic")
        session = Session.open(PROMPT, cache=False)
        assert request["system"] == session.system_prompt()
        assert "Never run destructive commands." in request["system"]
        assert "Answer briefly." not in request["system"]  # a removed section
        tools = request["tools"]
        assert [t["name"] for t in tools] == ["read", "grep", "bash"]
        assert tools[2]["description"] == "Run a safe shell command."
        assert set(tools[0]) == {"name", "description", "input_schema"}
        assert all(m["role"] in ("user", "assistant") for m in request["messages"])
        claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=16, **request)
        (sent,) = stub_api.requests_to("/v1/messages")
        assert sent.body["system"] == request["system"]

    def test_openai_chat_gets_them_as_a_system_message_and_functions(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        request = request_from_cli(PROMPT, "openai-chat")
        first = request["messages"][0]
        assert first["role"] == "system" and "Never run destructive" in first["content"]
        assert [t["function"]["name"] for t in request["tools"]] == ["read", "grep", "bash"]
        gpt.chat.completions.create(model=OPENAI_MODEL, **request)
        assert len(stub_api.requests_to("/v1/chat/completions")) == 1

    def test_openai_responses_gets_them_as_instructions_and_functions(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        request = request_from_cli(PROMPT, "openai-responses")
        assert request["instructions"] == Session.open(PROMPT, cache=False).system_prompt()
        assert [t["name"] for t in request["tools"]] == ["read", "grep", "bash"]
        gpt.responses.create(model=OPENAI_MODEL, **request)
        assert len(stub_api.requests_to("/v1/responses")) == 1

    def test_a_callers_own_prompt_replaces_the_transcripts(self) -> None:
        request = request_from_cli(PROMPT, "anthropic", "--system", "Mine.")
        assert request["system"] == "Mine."
        context = Session.open(PROMPT, cache=False).build_context()
        assert "tools" not in to_anthropic(context, system="", tools=[]).kwargs
        assert "system" not in to_anthropic(context, system="", tools=[]).kwargs

    @pytest.mark.parametrize(
        "tool",
        [
            {"name": "t", "description": "d", "parameters": {"type": "object"}},
            {"name": "t", "description": "d", "input_schema": {"type": "object"}},
            {
                "type": "function",
                "function": {"name": "t", "description": "d", "parameters": {"type": "object"}},
            },
            {"type": "function", "name": "t", "description": "d", "parameters": {"type": "object"}},
        ],
        ids=["pi", "anthropic", "openai-chat", "openai-responses"],
    )
    def test_tools_are_accepted_in_every_shape_and_keep_their_schema(
        self, tool: dict[str, Any]
    ) -> None:
        context = Session.open(PROMPT, cache=False).build_context()
        anthropic_tool = to_anthropic(context, tools=[tool]).kwargs["tools"][0]
        assert anthropic_tool == {
            "name": "t",
            "description": "d",
            "input_schema": {"type": "object"},
        }
        chat = to_openai_chat(context, tools=[tool]).kwargs["tools"][0]["function"]
        assert chat["parameters"] == {"type": "object"}
        responses = to_openai_responses(context, tools=[tool]).kwargs["tools"][0]
        assert responses["parameters"] == {"type": "object"}


class TestHiddenEntries:
    @pytest.mark.parametrize("fmt", ["anthropic", "openai-chat", "openai-responses"])
    def test_an_entry_hidden_on_the_branch_is_not_sent(
        self, fmt: str, stub_api: StubApi, claude: anthropic.Anthropic, gpt: openai.OpenAI
    ) -> None:
        leaf = hiding_leaf()
        request = request_from_cli(EDITS, fmt, "--leaf", leaf)
        assert HIDDEN_TEXT not in json.dumps(request)
        if fmt == "anthropic":
            claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=16, **request)
        elif fmt == "openai-chat":
            gpt.chat.completions.create(model=OPENAI_MODEL, **request)
        else:
            gpt.responses.create(model=OPENAI_MODEL, **request)
        assert len(stub_api.requests) == 1
        shown = request_from_cli(EDITS, fmt, "--leaf", Session.open(EDITS).leaf_id or "")
        assert HIDDEN_TEXT in json.dumps(shown)  # the branch without the edit sends it
