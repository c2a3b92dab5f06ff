"""Every fixture, every leaf, all three request formats: built by the adapters, sent by
the real ``anthropic`` and ``openai`` SDK clients to the loopback stub (stub_api.py),
and accepted by its checks of the APIs' rules. Then the other way round: broken
requests sent the same way are caught, so the checks themselves can fail.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from locations import FIXTURES
from stub_api import LABEL_HEADER, REPLY_TEXT, StubApi, Violation

from jsonl_session import Session
from jsonl_session.context import SessionContext
from jsonl_session.errors import SessionFormatError, SessionTreeError
from jsonl_session.providers.anthropic import to_anthropic
from jsonl_session.providers.common import ToolSpec
from jsonl_session.providers.openai import to_openai_chat, to_openai_responses

SYSTEM = "You are a test."
ANTHROPIC_MODEL = "claude-test"
OPENAI_MODEL = "gpt-test"
TINY_PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _opens(path: Path) -> bool:
    try:
        Session.open(path)
    except SessionFormatError:
        return False
    return True


ALL_FIXTURES = sorted(FIXTURES.glob("*.jsonl"))
OPENABLE = [p for p in ALL_FIXTURES if _opens(p)]
UNOPENABLE = {
    "damaged-bom.jsonl",
    "damaged-empty.jsonl",
    "damaged-header-not-first.jsonl",
    "damaged-no-header.jsonl",
}


def leaf_contexts(session: Session) -> Iterator[tuple[str, SessionContext]]:
    """(leaf id, context) for every entry id of the session, skipping leaves whose path
    is broken (a cycle raises SessionTreeError)."""
    for leaf in dict.fromkeys(entry.id for entry in session.entries):
        try:
            yield leaf, session.build_context(leaf)
        except SessionTreeError:
            continue


def count_target(session: Session) -> tuple[str, SessionContext]:
    """The leaf to count tokens at: the one with the most messages (first such one)."""
    return max(leaf_contexts(session), key=lambda pair: len(pair[1].messages))


def label(path: Path, leaf: str) -> dict[str, str]:
    return {LABEL_HEADER: f"{path.stem}@{leaf}"}


def assert_no_violations(stub: StubApi) -> None:
    violations = stub.take_violations()
    assert not violations, f"{len(violations)} violation(s):\n" + "\n".join(map(str, violations))


class TestTheFixtureSet:
    def test_only_the_four_unreadable_damaged_files_fail_to_open(self) -> None:
        assert {p.name for p in ALL_FIXTURES} - {p.name for p in OPENABLE} == UNOPENABLE

    def test_only_the_cycle_fixture_has_leaves_without_a_context(self) -> None:
        broken = {}
        for path in OPENABLE:
            session = Session.open(path)
            ids = dict.fromkeys(e.id for e in session.entries)
            built = {leaf for leaf, _ in leaf_contexts(session)}
            if set(ids) - built:
                broken[path.name] = len(set(ids) - built)
        assert list(broken) == ["damaged-cycle.jsonl"]


@pytest.mark.parametrize("path", OPENABLE, ids=lambda p: p.stem)
class TestEveryLeafOfEveryFixtureIsAccepted:
    def test_by_the_anthropic_messages_api(
        self, path: Path, stub_api: StubApi, module_claude: anthropic.Anthropic
    ) -> None:
        sent = 0
        for leaf, context in leaf_contexts(Session.open(path)):
            if all(m.get("role") == "system" for m in context.messages):
                continue  # nothing to send but a prompt: the API wants a message
            request = to_anthropic(context, system=SYSTEM)
            sent += 1
            try:  # a refusal is recorded by the stub and reported below
                reply = module_claude.messages.create(
                    model=ANTHROPIC_MODEL,
                    max_tokens=16,
                    extra_headers=label(path, leaf),
                    **request.kwargs,
                )
            except anthropic.BadRequestError:
                continue
            assert reply.content[0].text == REPLY_TEXT
        assert_no_violations(stub_api)
        assert len(stub_api.requests_to("/v1/messages")) == sent > 0

    def test_by_openai_chat_completions(
        self, path: Path, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        sent = 0
        for leaf, context in leaf_contexts(Session.open(path)):
            request = to_openai_chat(context, system=SYSTEM)
            sent += 1
            try:
                reply = module_gpt.chat.completions.create(
                    model=OPENAI_MODEL, extra_headers=label(path, leaf), **request.kwargs
                )
            except openai.BadRequestError:
                continue
            assert reply.choices[0].message.content == REPLY_TEXT
        assert_no_violations(stub_api)
        assert len(stub_api.requests_to("/v1/chat/completions")) == sent > 0

    def test_by_openai_responses(
        self, path: Path, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        sent = 0
        for leaf, context in leaf_contexts(Session.open(path)):
            request = to_openai_responses(context, instructions=SYSTEM)
            sent += 1
            try:
                reply = module_gpt.responses.create(
                    model=OPENAI_MODEL, extra_headers=label(path, leaf), **request.kwargs
                )
            except openai.BadRequestError:
                continue
            assert reply.output_text == REPLY_TEXT
        assert_no_violations(stub_api)
        assert len(stub_api.requests_to("/v1/responses")) == sent > 0

    def test_by_both_token_counting_endpoints(
        self,
        path: Path,
        stub_api: StubApi,
        module_claude: anthropic.Anthropic,
        module_gpt: openai.OpenAI,
    ) -> None:
        leaf, context = count_target(Session.open(path))
        counts = []
        try:
            request = to_anthropic(context, system=SYSTEM)
            counts.append(
                module_claude.messages.count_tokens(
                    model=ANTHROPIC_MODEL, extra_headers=label(path, leaf), **request.kwargs
                ).input_tokens
            )
        except anthropic.BadRequestError:
            pass
        try:
            request = to_openai_responses(context, instructions=SYSTEM)
            counts.append(
                module_gpt.responses.input_tokens.count(
                    model=OPENAI_MODEL, extra_headers=label(path, leaf), **request.kwargs
                ).input_tokens
            )
        except openai.BadRequestError:
            pass
        assert_no_violations(stub_api)
        assert len(counts) == 2
        assert all(n > 0 for n in counts)


TOOLS = [
    ToolSpec(
        "read",
        "Read a file.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    {"name": "bash", "description": "Run a command.", "parameters": {"type": "object"}},
]


class TestToolDefinitionsAreAccepted:
    def context(self) -> SessionContext:
        return Session.open(FIXTURES / "tool-calls.jsonl").build_context()

    def test_by_the_anthropic_messages_api(
        self, stub_api: StubApi, module_claude: anthropic.Anthropic
    ) -> None:
        request = to_anthropic(self.context(), system=SYSTEM, tools=TOOLS)
        with contextlib.suppress(anthropic.BadRequestError, openai.BadRequestError):
            module_claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=16, **request.kwargs)
        assert_no_violations(stub_api)
        assert [t["name"] for t in stub_api.requests[0].body["tools"]] == ["read", "bash"]

    def test_by_openai_chat_completions(self, stub_api: StubApi, module_gpt: openai.OpenAI) -> None:
        request = to_openai_chat(self.context(), system=SYSTEM, tools=TOOLS)
        with contextlib.suppress(anthropic.BadRequestError, openai.BadRequestError):
            module_gpt.chat.completions.create(model=OPENAI_MODEL, **request.kwargs)
        assert_no_violations(stub_api)
        assert len(stub_api.requests[0].body["tools"]) == 2

    def test_by_openai_responses(self, stub_api: StubApi, module_gpt: openai.OpenAI) -> None:
        request = to_openai_responses(self.context(), instructions=SYSTEM, tools=TOOLS)
        with contextlib.suppress(anthropic.BadRequestError, openai.BadRequestError):
            module_gpt.responses.create(model=OPENAI_MODEL, **request.kwargs)
        assert_no_violations(stub_api)
        assert len(stub_api.requests[0].body["tools"]) == 2

    def test_with_a_developer_message_for_the_system_prompt(
        self, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        request = to_openai_chat(self.context(), system=SYSTEM, system_role="developer")
        with contextlib.suppress(anthropic.BadRequestError, openai.BadRequestError):
            module_gpt.chat.completions.create(model=OPENAI_MODEL, **request.kwargs)
        assert_no_violations(stub_api)
        assert stub_api.requests[0].body["messages"][0] == {"role": "developer", "content": SYSTEM}


# --- the checks catch broken requests --------------------------------------------------


def _user(text: str = "hi") -> dict[str, Any]:
    return {"role": "user", "content": text}


def _tool_use(call_id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "read", "input": {"path": "a"}}


def _tool_result(call_id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": "done"}


ANTHROPIC_BROKEN: dict[str, tuple[list[dict[str, Any]], str]] = {
    "a tool_use without a tool_result": (
        [_user(), {"role": "assistant", "content": [_tool_use()]}, _user("go on")],
        "without tool_result blocks immediately after: toolu_1",
    ),
    "a tool_use as the last message": (
        [_user(), {"role": "assistant", "content": [_tool_use()]}],
        "without tool_result blocks immediately after: toolu_1",
    ),
    "a tool_result without a tool_use": (
        [
            _user(),
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [_tool_result("toolu_9")]},
        ],
        "unexpected tool_use_id found in tool_result blocks: toolu_9",
    ),
    "a tool_result after text": (
        [
            _user(),
            {"role": "assistant", "content": [_tool_use()]},
            {"role": "user", "content": [{"type": "text", "text": "x"}, _tool_result()]},
        ],
        "tool_result blocks must come first",
    ),
    "a repeated tool_use id": (
        [
            _user(),
            {"role": "assistant", "content": [_tool_use()]},
            {"role": "user", "content": [_tool_result()]},
            {"role": "assistant", "content": [_tool_use()]},
            {"role": "user", "content": [_tool_result()]},
        ],
        "tool_use ids must be unique",
    ),
    "a tool_use id outside the pattern": (
        [
            _user(),
            {"role": "assistant", "content": [_tool_use("call|fc_1")]},
            {"role": "user", "content": [_tool_result("call|fc_1")]},
        ],
        "id: must match ^[a-zA-Z0-9_-]+$",
    ),
    "an assistant first": (
        [{"role": "assistant", "content": "hello"}, _user()],
        "first message must use the user role",
    ),
    "two user messages in a row": (
        [_user(), _user("again")],
        "a second user message in a row",
    ),
    "an empty text block": (
        [{"role": "user", "content": [{"type": "text", "text": ""}]}],
        "text content blocks must contain non-whitespace text",
    ),
    "an empty content list": (
        [{"role": "user", "content": []}],
        "a non-empty string or list of blocks is required",
    ),
    "an image in an assistant message": (
        [
            _user(),
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": TINY_PNG},
                    }
                ],
            },
        ],
        "block type 'image' is not allowed in a assistant message",
    ),
    "pi's image block passed through": (
        [
            {
                "role": "user",
                "content": [{"type": "image", "data": TINY_PNG, "mimeType": "image/png"}],
            }
        ],
        "Extra inputs are not permitted: data, mimeType",
    ),
    "an image whose bytes are not its media type": (
        [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/jpeg", "data": TINY_PNG},
                    }
                ],
            }
        ],
        "image does not match the provided media type image/jpeg",
    ),
    "a thinking block without its signature": (
        [_user(), {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}]}],
        "a thinking block needs its non-empty signature",
    ),
    "pi's toolCall block passed through": (
        [
            _user(),
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "t", "name": "read", "arguments": {}}],
            },
        ],
        "block type 'toolCall' is not allowed",
    ),
    "a toolResult role": (
        [_user(), {"role": "toolResult", "content": "x"}],
        "role: must be 'user' or 'assistant'",
    ),
    "a final assistant text ending in whitespace": (
        [_user(), {"role": "assistant", "content": "Sure. "}],
        "final assistant content cannot end with trailing whitespace",
    ),
}


def expect_caught(stub: StubApi, fragment: str) -> list[Violation]:
    violations = stub.take_violations()
    assert any(fragment in v.reason for v in violations), (
        f"expected a violation containing {fragment!r}, got: {[str(v) for v in violations]}"
    )
    return violations


class TestTheStubCatchesBrokenAnthropicRequests:
    @pytest.mark.parametrize("case", ANTHROPIC_BROKEN)
    def test_messages_create_is_refused_for(
        self, case: str, stub_api: StubApi, module_claude: anthropic.Anthropic
    ) -> None:
        messages, fragment = ANTHROPIC_BROKEN[case]
        with pytest.raises(anthropic.BadRequestError, match=re.escape(fragment)):
            module_claude.messages.create(model=ANTHROPIC_MODEL, max_tokens=16, messages=messages)
        expect_caught(stub_api, fragment)

    def test_count_tokens_is_refused_for_a_tool_use_without_result(
        self, stub_api: StubApi, module_claude: anthropic.Anthropic
    ) -> None:
        messages, fragment = ANTHROPIC_BROKEN["a tool_use without a tool_result"]
        with pytest.raises(anthropic.BadRequestError):
            module_claude.messages.count_tokens(model=ANTHROPIC_MODEL, messages=messages)
        assert expect_caught(stub_api, fragment)[0].path == "/v1/messages/count_tokens"

    def test_a_system_prompt_with_an_empty_block_is_refused(
        self, stub_api: StubApi, module_claude: anthropic.Anthropic
    ) -> None:
        with pytest.raises(anthropic.BadRequestError):
            module_claude.messages.create(
                model=ANTHROPIC_MODEL,
                max_tokens=16,
                system=[{"type": "text", "text": " "}],
                messages=[_user()],
            )
        expect_caught(stub_api, "system[0]: text content blocks must contain non-whitespace")

    def test_a_tool_without_an_input_schema_is_refused(
        self, stub_api: StubApi, module_claude: anthropic.Anthropic
    ) -> None:
        with pytest.raises(anthropic.BadRequestError):
            module_claude.messages.create(
                model=ANTHROPIC_MODEL,
                max_tokens=16,
                messages=[_user()],
                tools=[{"name": "read", "input_schema": "none"}],  # type: ignore[typeddict-item]
            )
        expect_caught(stub_api, "tools[0].input_schema")

    def test_a_well_formed_tool_exchange_is_accepted(
        self, stub_api: StubApi, module_claude: anthropic.Anthropic
    ) -> None:
        reply = module_claude.messages.create(
            model=ANTHROPIC_MODEL,
            max_tokens=16,
            system="s",
            messages=[
                _user(),
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                        {"type": "redacted_thinking", "data": "opaque"},
                        _tool_use("toolu_1"),
                        _tool_use("toolu_2"),
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        _tool_result("toolu_2"),
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "is_error": True,
                            "content": [
                                {"type": "text", "text": "no"},
                                {
                                    "type": "image",
                                    "source": {
                                        "type": "base64",
                                        "media_type": "image/png",
                                        "data": TINY_PNG,
                                    },
                                },
                            ],
                        },
                        {"type": "text", "text": "and then?"},
                    ],
                },
            ],
        )
        assert_no_violations(stub_api)
        assert reply.content[0].text == REPLY_TEXT


def _call(call_id: str = "call_1", arguments: Any = '{"path": "a"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "read", "arguments": arguments}}


def _calling(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def _tool(call_id: str = "call_1", content: Any = "done") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


CHAT_BROKEN: dict[str, tuple[list[dict[str, Any]], str]] = {
    "arguments as a dict": (
        [_user(), _calling(_call(arguments={"path": "a"})), _tool()],
        "arguments must be a string of JSON, not dict",
    ),
    "arguments that are not JSON": (
        [_user(), _calling(_call(arguments="{path")), _tool()],
        "arguments are not valid JSON",
    ),
    "arguments that are a JSON list": (
        [_user(), _calling(_call(arguments="[1]")), _tool()],
        "arguments must be a JSON object, not list",
    ),
    "a tool call without a tool message": (
        [_user(), _calling(_call()), _user("go on")],
        "must be followed by tool messages responding to each 'tool_call_id'; none for call_1",
    ),
    "a tool message without a call": (
        [_user(), {"role": "assistant", "content": "ok"}, _tool("call_9")],
        "must be a response to a preceding message with 'tool_calls' (no call call_9)",
    ),
    "a tool message after a user message": (
        [_user(), _calling(_call()), _tool(), _user("more"), _tool()],
        "must be a response to a preceding message with 'tool_calls'",
    ),
    "an image in a tool message": (
        [
            _user(),
            _calling(_call()),
            _tool(
                content=[
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{TINY_PNG}"}}
                ]
            ),
        ],
        "content part type 'image_url' is not allowed here",
    ),
    "an image URL that is neither http nor data": (
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "logo.png"}}]}],
        "must be an http(s) URL or a data:",
    ),
    "an assistant first": (
        [{"role": "system", "content": "s"}, {"role": "assistant", "content": "hello"}],
        "the first message after the system messages must use the user role",
    ),
    "an empty assistant message": (
        [_user(), {"role": "assistant", "content": None}],
        "an assistant message needs content or tool_calls",
    ),
    "a toolResult role": (
        [_user(), {"role": "toolResult", "content": "x"}],
        "role: must be one of",
    ),
    "an unknown field on a message": (
        [{"role": "user", "content": "hi", "timestamp": 1}],
        "Extra inputs are not permitted: timestamp",
    ),
}


class TestTheStubCatchesBrokenChatCompletionsRequests:
    @pytest.mark.parametrize("case", CHAT_BROKEN)
    def test_chat_completions_create_is_refused_for(
        self, case: str, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        messages, fragment = CHAT_BROKEN[case]
        with pytest.raises(openai.BadRequestError, match=re.escape(fragment)):
            module_gpt.chat.completions.create(model=OPENAI_MODEL, messages=messages)  # type: ignore[arg-type]
        expect_caught(stub_api, fragment)

    def test_a_tool_without_the_function_wrapper_is_refused(
        self, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        with pytest.raises(openai.BadRequestError):
            module_gpt.chat.completions.create(
                model=OPENAI_MODEL,
                messages=[_user()],
                tools=[{"type": "function", "name": "read", "parameters": {}}],  # type: ignore[list-item]
            )
        expect_caught(stub_api, "tools[0].function: an object is required")

    def test_a_well_formed_tool_exchange_is_accepted(
        self, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        reply = module_gpt.chat.completions.create(
            model=OPENAI_MODEL,
            messages=[
                {"role": "system", "content": "s"},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {
                            "type": "image_url",
                            "image_url": {"url": f"data:image/png;base64,{TINY_PNG}"},
                        },
                    ],
                },
                _calling(_call("call_1"), _call("call_2", "{}")),
                _tool("call_2"),
                _tool("call_1", [{"type": "text", "text": "done"}]),
                {"role": "assistant", "content": "All read."},
                _user("thanks"),
            ],
            tools=[{"type": "function", "function": {"name": "read", "parameters": {}}}],
        )
        assert_no_violations(stub_api)
        assert reply.choices[0].message.content == REPLY_TEXT


def _fc(call_id: str = "call_1", arguments: Any = '{"path": "a"}') -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "read", "arguments": arguments}


def _fco(call_id: str = "call_1") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "done"}


RESPONSES_BROKEN: dict[str, tuple[list[dict[str, Any]], str]] = {
    "a function_call without its output": (
        [_user(), _fc()],
        "No tool output found for function call call_1",
    ),
    "an output without its function_call": (
        [_user(), _fco("call_9")],
        "No tool call found for function call output with call_id call_9",
    ),
    "an output before its function_call": (
        [_user(), _fco(), _fc()],
        "No tool call found for function call output with call_id call_1",
    ),
    "two outputs for one call": (
        [_user(), _fc(), _fco(), _fco()],
        "a second function_call_output for call_id call_1",
    ),
    "a repeated call_id": (
        [_user(), _fc(), _fco(), _fc(), _fco()],
        "call_ids must be unique",
    ),
    "arguments as a dict": (
        [_user(), _fc(arguments={"path": "a"}), _fco()],
        "arguments must be a string of JSON, not dict",
    ),
    "input_text in an assistant message": (
        [_user(), {"role": "assistant", "content": [{"type": "input_text", "text": "x"}]}],
        "invalid value 'input_text'",
    ),
    "output_text in a user message": (
        [{"role": "user", "content": [{"type": "output_text", "text": "x"}]}],
        "invalid value 'output_text'",
    ),
    "an input_image without detail": (
        [
            {
                "role": "user",
                "content": [
                    {"type": "input_image", "image_url": f"data:image/png;base64,{TINY_PNG}"}
                ],
            }
        ],
        "detail: required",
    ),
    "a function_call id not starting with fc": (
        [_user(), {**_fc(), "id": "call_1"}, _fco()],
        "expected an ID that begins with 'fc'",
    ),
    "an empty message": (
        [{"role": "user", "content": []}],
        "a non-empty string or list of content parts is required",
    ),
}


class TestTheStubCatchesBrokenResponsesRequests:
    @pytest.mark.parametrize("case", RESPONSES_BROKEN)
    def test_responses_create_is_refused_for(
        self, case: str, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        items, fragment = RESPONSES_BROKEN[case]
        with pytest.raises(openai.BadRequestError, match=re.escape(fragment)):
            module_gpt.responses.create(model=OPENAI_MODEL, input=items)  # type: ignore[arg-type]
        expect_caught(stub_api, fragment)

    def test_input_tokens_count_is_refused_for_a_call_without_output(
        self, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        with pytest.raises(openai.BadRequestError):
            module_gpt.responses.input_tokens.count(model=OPENAI_MODEL, input=[_user(), _fc()])  # type: ignore[list-item]
        assert expect_caught(stub_api, "No tool output found")[0].path == (
            "/v1/responses/input_tokens"
        )

    def test_a_tool_without_strict_is_refused(
        self, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        with pytest.raises(openai.BadRequestError):
            module_gpt.responses.create(
                model=OPENAI_MODEL,
                input="hi",
                tools=[{"type": "function", "name": "read", "parameters": {}}],  # type: ignore[typeddict-item]
            )
        expect_caught(stub_api, "tools[0].strict: required")

    def test_a_well_formed_tool_exchange_is_accepted(
        self, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        reply = module_gpt.responses.create(
            model=OPENAI_MODEL,
            instructions="s",
            input=[
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "look"},
                        {
                            "type": "input_image",
                            "detail": "auto",
                            "image_url": f"data:image/png;base64,{TINY_PNG}",
                        },
                    ],
                },
                {"role": "assistant", "content": [{"type": "output_text", "text": "Reading."}]},
                _fc("call_1"),
                _fc("call_2", "{}"),
                _fco("call_2"),
                _fco("call_1"),
                {"type": "message", "role": "assistant", "content": "All read."},
                _user("thanks"),
            ],
            tools=[{"type": "function", "name": "read", "parameters": {}, "strict": False}],
        )
        assert_no_violations(stub_api)
        assert reply.output_text == REPLY_TEXT


class TestTheStubItself:
    def test_an_unknown_endpoint_is_a_violation(
        self, stub_api: StubApi, module_gpt: openai.OpenAI
    ) -> None:
        with pytest.raises(openai.NotFoundError):
            module_gpt.embeddings.create(model="e", input="hi")
        expect_caught(stub_api, "no such endpoint: POST /v1/embeddings")

    def test_the_label_header_names_the_request_in_the_violation(
        self, stub_api: StubApi, module_claude: anthropic.Anthropic
    ) -> None:
        with pytest.raises(anthropic.BadRequestError):
            module_claude.messages.create(
                model=ANTHROPIC_MODEL,
                max_tokens=16,
                messages=[{"role": "assistant", "content": "x"}],
                extra_headers={LABEL_HEADER: "linear@abc123"},
            )
        (violation,) = stub_api.take_violations()
        assert violation.label == "linear@abc123"
        assert "linear@abc123" in str(violation)

    def test_it_listens_on_loopback_only_and_stops_cleanly(self) -> None:
        stub = StubApi().start()
        assert stub.url.startswith("http://127.0.0.1:")
        stub.stop()
        stub.stop()  # a second stop is harmless
        with pytest.raises(RuntimeError):
            _ = stub.url
