"""The loopback API stub's scripted replies (stub_api.py) and streams (stub_stream.py),
as the real ``anthropic`` and ``openai`` SDK clients, sync and async, and the
openai-agents ``Runner`` parse them: a scripted `Reply` with thinking, redacted thinking,
text, tool calls and usage comes out of each API, whole or streamed, as the SDK's own
types holding exactly what was scripted."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import openai
import pytest
from stub_api import (
    OPENAI_RATE_LIMITED,
    REPLY_TEXT,
    Reply,
    StubApi,
    ToolCall,
    Usage,
    check_anthropic_messages,
    check_openai_chat,
    check_openai_responses,
)
from stub_stream import PIECES, stream_pieces

MODEL = "stub-model"
HELLO: list[Any] = [{"role": "user", "content": "Read a.txt and list the folder."}]
INCLUDE_USAGE = {"include_usage": True}

USAGE = Usage(input=120, output=45, cache_read=800, cache_write=64, reasoning=12)
REPLY = Reply(
    text="Reading the file first, then listing the folder.",
    thinking="The user wants a.txt and the folder listing.",
    signature="c2lnbmF0dXJlLW9mLXRoZS10aGlua2luZw==",
    redacted_thinking="RUNSWVBURUQtVEhJTktJTkc=",
    tool_calls=[
        ToolCall("read", {"path": "a.txt", "lines": [1, 20], "note": "naïve ✓"}),
        ToolCall("bash", {"command": "ls -la"}, id="given_call_7"),
    ],
    usage=USAGE,
)


# --- what the scripted REPLY must come out as, in each SDK's types ---------------------------


def assert_anthropic_message(message: anthropic.types.Message, reply: Reply = REPLY) -> None:
    kinds = [block.type for block in message.content]
    assert kinds == ["thinking", "redacted_thinking", "text", "tool_use", "tool_use"]
    thinking, redacted, text, *calls = message.content
    assert isinstance(thinking, anthropic.types.ThinkingBlock)
    assert (thinking.thinking, thinking.signature) == (reply.thinking, reply.signature)
    assert isinstance(redacted, anthropic.types.RedactedThinkingBlock)
    assert redacted.data == reply.redacted_thinking
    assert isinstance(text, anthropic.types.TextBlock)
    assert text.text == reply.text
    for block, call in zip(calls, reply.tool_calls, strict=True):
        assert isinstance(block, anthropic.types.ToolUseBlock)
        assert (block.name, block.input) == (call.name, call.arguments)
    first, second = calls
    assert isinstance(first, anthropic.types.ToolUseBlock)
    assert first.id.startswith("toolu_")
    assert second.id == "given_call_7"
    assert message.stop_reason == "tool_use"
    usage = message.usage
    assert (usage.input_tokens, usage.output_tokens) == (120, 45)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (800, 64)
    assert usage.output_tokens_details is not None
    assert usage.output_tokens_details.thinking_tokens == 12


def assert_chat_message(choice: Any, reply: Reply = REPLY) -> None:
    """``choice``: a ChatCompletion's choice (or the stream helper's parsed one)."""
    message = choice.message
    assert message.content == reply.text
    assert choice.finish_reason == "tool_calls"
    calls = message.tool_calls
    assert calls is not None
    for call, scripted in zip(calls, reply.tool_calls, strict=True):
        assert call.type == "function"
        assert call.function.name == scripted.name
        assert isinstance(call.function.arguments, str)
        assert json.loads(call.function.arguments) == scripted.arguments
    assert calls[0].id.startswith("call_")
    assert calls[1].id == "given_call_7"


def assert_chat_usage(usage: openai.types.CompletionUsage | None) -> None:
    assert usage is not None
    # OpenAI's input total holds the cached tokens: 120 + 800 + 64
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (984, 45, 1029)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 800
    assert usage.prompt_tokens_details.cache_write_tokens == 64
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == 12


def assert_response(response: openai.types.responses.Response, reply: Reply = REPLY) -> None:
    kinds = [item.type for item in response.output]
    assert kinds == ["reasoning", "message", "function_call", "function_call"]
    reasoning, message, *calls = response.output
    assert isinstance(reasoning, openai.types.responses.ResponseReasoningItem)
    assert reasoning.id.startswith("rs_")
    assert [part.text for part in reasoning.summary] == [reply.thinking]
    assert reasoning.encrypted_content == reply.signature
    assert isinstance(message, openai.types.responses.ResponseOutputMessage)
    assert message.id.startswith("msg_")
    assert message.status == "completed"
    assert response.output_text == reply.text
    for item, scripted in zip(calls, reply.tool_calls, strict=True):
        assert isinstance(item, openai.types.responses.ResponseFunctionToolCall)
        assert item.name == scripted.name
        assert json.loads(item.arguments) == scripted.arguments
        assert item.id is not None
        assert item.id.startswith("fc_")
        assert item.status == "completed"
    first, second = calls
    assert isinstance(first, openai.types.responses.ResponseFunctionToolCall)
    assert isinstance(second, openai.types.responses.ResponseFunctionToolCall)
    assert first.call_id.startswith("call_")
    assert second.call_id == "given_call_7"
    assert response.status == "completed"
    assert response.incomplete_details is None
    usage = response.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (984, 45, 1029)
    assert usage.input_tokens_details.cached_tokens == 800
    assert usage.input_tokens_details.cache_write_tokens == 64
    assert usage.output_tokens_details.reasoning_tokens == 12


def no_violations(stub: StubApi) -> None:
    assert stub.take_violations() == []
    assert stub.pending() == []


# --- whole replies -------------------------------------------------------------------------


class TestAScriptedReplyArrivesWhole:
    def test_from_anthropic_messages_with_thinking_tool_uses_and_usage(
        self, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        stub_api.reply_with(REPLY)
        message = claude.messages.create(model=MODEL, max_tokens=64, messages=HELLO)
        assert_anthropic_message(message)
        no_violations(stub_api)

    def test_from_chat_completions_with_tool_calls_and_usage_but_no_thinking(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with(REPLY)
        completion = gpt.chat.completions.create(model=MODEL, messages=HELLO)
        (choice,) = completion.choices
        assert_chat_message(choice)
        assert_chat_usage(completion.usage)
        assert "thinking" not in json.dumps(completion.model_dump())
        no_violations(stub_api)

    def test_from_responses_with_a_reasoning_item_function_calls_and_usage(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with(REPLY)
        assert_response(gpt.responses.create(model=MODEL, input="Read a.txt."))
        no_violations(stub_api)

    def test_a_text_still_scripts_a_text_reply_and_none_left_is_the_default(
        self, stub_api: StubApi, claude: anthropic.Anthropic, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with("first", Reply(text="second"))
        first = claude.messages.create(model=MODEL, max_tokens=8, messages=HELLO)
        second = gpt.chat.completions.create(model=MODEL, messages=HELLO)
        third = gpt.responses.create(model=MODEL, input="hi")
        assert [block.type for block in first.content] == ["text"]
        assert first.content[0].type == "text" and first.content[0].text == "first"
        assert first.stop_reason == "end_turn"
        assert second.choices[0].message.content == "second"
        assert second.choices[0].finish_reason == "stop"
        assert second.choices[0].message.tool_calls is None
        assert third.output_text == REPLY_TEXT
        no_violations(stub_api)

    def test_tool_calls_alone_leave_chat_content_null_and_no_message_item(
        self, stub_api: StubApi, claude: anthropic.Anthropic, gpt: openai.OpenAI
    ) -> None:
        only_calls = Reply(tool_calls=[ToolCall("read", {"path": "b"})])
        stub_api.reply_with(only_calls, only_calls, only_calls)
        message = claude.messages.create(model=MODEL, max_tokens=8, messages=HELLO)
        completion = gpt.chat.completions.create(model=MODEL, messages=HELLO)
        response = gpt.responses.create(model=MODEL, input="hi")
        assert [block.type for block in message.content] == ["tool_use"]
        assert message.stop_reason == "tool_use"
        assert completion.choices[0].message.content is None
        assert completion.choices[0].finish_reason == "tool_calls"
        assert [item.type for item in response.output] == ["function_call"]
        assert response.output_text == ""
        no_violations(stub_api)

    def test_made_ids_differ_between_calls_and_between_replies(
        self, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        two = Reply(tool_calls=[ToolCall("read"), ToolCall("read")])
        stub_api.reply_with(two, two)
        ids = []
        for _ in range(2):
            message = claude.messages.create(model=MODEL, max_tokens=8, messages=HELLO)
            ids += [b.id for b in message.content if b.type == "tool_use"]
            ids.append(message.id)
        assert len(set(ids)) == 6
        no_violations(stub_api)

    def test_a_stop_reason_is_said_in_each_apis_words(
        self, stub_api: StubApi, claude: anthropic.Anthropic, gpt: openai.OpenAI
    ) -> None:
        cut = Reply(text="The answer is", stop_reason="max_tokens")
        stub_api.reply_with(cut, cut, cut)
        message = claude.messages.create(model=MODEL, max_tokens=8, messages=HELLO)
        completion = gpt.chat.completions.create(model=MODEL, messages=HELLO)
        response = gpt.responses.create(model=MODEL, input="hi")
        assert message.stop_reason == "max_tokens"
        assert completion.choices[0].finish_reason == "length"
        assert response.status == "incomplete"
        assert response.incomplete_details is not None
        assert response.incomplete_details.reason == "max_output_tokens"
        assert response.output_text == "The answer is"
        no_violations(stub_api)

    def test_unscripted_usage_is_estimated_with_no_cache(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        response = gpt.responses.create(model=MODEL, input="hi")
        usage = response.usage
        assert usage is not None
        assert usage.input_tokens >= 1 and usage.output_tokens == 1
        assert usage.input_tokens_details.cached_tokens == 0
        assert usage.input_tokens_details.cache_write_tokens == 0
        no_violations(stub_api)


# --- Anthropic streams ---------------------------------------------------------------------


class TestAnthropicStreams:
    def test_the_stream_helper_ends_with_the_scripted_message(
        self, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        stub_api.reply_with(REPLY)
        with claude.messages.stream(model=MODEL, max_tokens=64, messages=HELLO) as stream:
            texts = list(stream.text_stream)
            message = stream.get_final_message()
        assert texts == stream_pieces(REPLY.text or "")
        assert len(texts) == PIECES
        assert_anthropic_message(message)
        (request,) = stub_api.requests
        assert request.body["stream"] is True
        no_violations(stub_api)

    def test_create_with_stream_yields_the_raw_events_in_order(
        self, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        stub_api.reply_with(REPLY)
        with claude.messages.create(
            model=MODEL, max_tokens=64, messages=HELLO, stream=True
        ) as stream:
            events = list(stream)
        kinds = [event.type for event in events]
        assert kinds[0] == "message_start"
        assert kinds[-2:] == ["message_delta", "message_stop"]
        assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 5
        start = events[0]
        assert isinstance(start, anthropic.types.RawMessageStartEvent)
        assert start.message.content == [] and start.message.stop_reason is None
        assert start.message.usage.cache_read_input_tokens == 800
        deltas: dict[int, list[Any]] = {}
        for event in events:
            if isinstance(event, anthropic.types.RawContentBlockDeltaEvent):
                deltas.setdefault(event.index, []).append(event.delta)
        assert [d.type for d in deltas[0]] == ["thinking_delta"] * PIECES + ["signature_delta"]
        assert "".join(d.thinking for d in deltas[0][:-1]) == REPLY.thinking
        assert deltas[0][-1].signature == REPLY.signature
        assert 1 not in deltas  # redacted thinking arrives whole in its start event
        assert [d.text for d in deltas[2]] == stream_pieces(REPLY.text or "")
        for index, call in ((3, REPLY.tool_calls[0]), (4, REPLY.tool_calls[1])):
            assert {d.type for d in deltas[index]} == {"input_json_delta"}
            assert json.loads("".join(d.partial_json for d in deltas[index])) == call.arguments
        final = events[-2]
        assert isinstance(final, anthropic.types.RawMessageDeltaEvent)
        assert final.delta.stop_reason == "tool_use"
        assert final.usage.output_tokens == 45
        no_violations(stub_api)

    def test_breaking_off_a_stream_early_leaves_the_stub_serving(
        self, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        stub_api.reply_with(REPLY)
        with claude.messages.create(
            model=MODEL, max_tokens=64, messages=HELLO, stream=True
        ) as stream:
            first = next(iter(stream))
        assert first.type == "message_start"
        reply = claude.messages.create(model=MODEL, max_tokens=8, messages=HELLO)
        assert reply.content[0].type == "text" and reply.content[0].text == REPLY_TEXT
        no_violations(stub_api)


# --- Chat Completions streams ---------------------------------------------------------------


class TestChatCompletionsStreams:
    def test_create_with_stream_yields_content_and_tool_call_deltas_then_usage(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with(REPLY)
        with gpt.chat.completions.create(
            model=MODEL, messages=HELLO, stream=True, stream_options=INCLUDE_USAGE
        ) as stream:
            chunks = list(stream)
        assert {chunk.object for chunk in chunks} == {"chat.completion.chunk"}
        assert len({chunk.id for chunk in chunks}) == 1
        *with_choices, last = chunks
        assert last.choices == []
        assert_chat_usage(last.usage)
        assert all(chunk.usage is None for chunk in with_choices)
        deltas = [chunk.choices[0].delta for chunk in with_choices]
        assert deltas[0].role == "assistant"
        pieces = [d.content for d in deltas if d.content]
        assert pieces == stream_pieces(REPLY.text or "")
        calls: dict[int, dict[str, str]] = {}
        for delta in deltas:
            for call in delta.tool_calls or []:
                assert call.function is not None
                made = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                made["id"] += call.id or ""
                made["name"] += call.function.name or ""
                made["arguments"] += call.function.arguments or ""
        assert [calls[i]["name"] for i in sorted(calls)] == ["read", "bash"]
        assert calls[1]["id"] == "given_call_7"
        for i, scripted in enumerate(REPLY.tool_calls):
            assert json.loads(calls[i]["arguments"]) == scripted.arguments
        finishes = [chunk.choices[0].finish_reason for chunk in with_choices]
        assert finishes == [None] * (len(finishes) - 1) + ["tool_calls"]
        no_violations(stub_api)

    def test_without_include_usage_there_is_no_usage_chunk(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        with gpt.chat.completions.create(model=MODEL, messages=HELLO, stream=True) as stream:
            chunks = list(stream)
        assert all(chunk.choices and chunk.usage is None for chunk in chunks)
        text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
        assert text == REPLY_TEXT
        assert chunks[-1].choices[0].finish_reason == "stop"
        no_violations(stub_api)

    def test_the_stream_helper_ends_with_the_scripted_completion(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with(REPLY)
        with gpt.chat.completions.stream(
            model=MODEL, messages=HELLO, stream_options=INCLUDE_USAGE
        ) as stream:
            events = list(stream)
            completion = stream.get_final_completion()
        texts = [event.delta for event in events if event.type == "content.delta"]
        # the first chunk's empty content ("" as the API sends it) is a delta too
        assert texts == ["", *stream_pieces(REPLY.text or "")]
        done = [e.name for e in events if e.type == "tool_calls.function.arguments.done"]
        assert done == ["read", "bash"]
        (choice,) = completion.choices
        assert_chat_message(choice)
        assert_chat_usage(completion.usage)
        no_violations(stub_api)


# --- Responses streams ----------------------------------------------------------------------


class TestResponsesStreams:
    def test_create_with_stream_yields_numbered_events_ending_with_the_response(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with(REPLY)
        with gpt.responses.create(model=MODEL, input="Read a.txt.", stream=True) as stream:
            events = list(stream)
        assert [e.sequence_number for e in events] == list(range(len(events)))
        kinds = [e.type for e in events]
        assert kinds[:2] == ["response.created", "response.in_progress"]
        assert kinds[-1] == "response.completed"
        assert kinds.count("response.output_item.added") == 4
        assert kinds.count("response.output_item.done") == 4
        for kind in (
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.done",
            "response.content_part.added",
            "response.output_text.done",
            "response.content_part.done",
        ):
            assert kinds.count(kind) == 1, kind
        assert kinds.count("response.function_call_arguments.done") == 2
        created = events[0]
        assert isinstance(created, openai.types.responses.ResponseCreatedEvent)
        assert created.response.status == "in_progress" and created.response.output == []
        texts = [e.delta for e in events if e.type == "response.output_text.delta"]
        assert texts == stream_pieces(REPLY.text or "")
        summary = [e.delta for e in events if e.type == "response.reasoning_summary_text.delta"]
        assert "".join(summary) == REPLY.thinking
        arguments: dict[int, str] = {}
        for e in events:
            if e.type == "response.function_call_arguments.delta":
                arguments[e.output_index] = arguments.get(e.output_index, "") + e.delta
        for index, scripted in zip((2, 3), REPLY.tool_calls, strict=True):
            assert json.loads(arguments[index]) == scripted.arguments
        completed = events[-1]
        assert isinstance(completed, openai.types.responses.ResponseCompletedEvent)
        assert_response(completed.response)
        no_violations(stub_api)

    def test_the_stream_helper_ends_with_the_scripted_response(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with(REPLY)
        with gpt.responses.stream(model=MODEL, input="Read a.txt.") as stream:
            texts = [e.delta for e in stream if e.type == "response.output_text.delta"]
            response = stream.get_final_response()
        assert texts == stream_pieces(REPLY.text or "")
        assert_response(response)
        no_violations(stub_api)

    def test_an_incomplete_response_ends_with_response_incomplete(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        cut = Reply(text="The answer is", stop_reason="length")
        stub_api.reply_with(cut, cut)
        with gpt.responses.create(model=MODEL, input="hi", stream=True) as raw:
            last = list(raw)[-1]
        assert isinstance(last, openai.types.responses.ResponseIncompleteEvent)
        assert last.response.status == "incomplete"
        assert last.response.output_text == "The answer is"
        # the SDK's helper only finishes on response.completed
        with (
            gpt.responses.stream(model=MODEL, input="hi") as stream,
            pytest.raises(RuntimeError, match=r"response\.completed"),
        ):
            stream.get_final_response()
        no_violations(stub_api)


# --- the async clients ------------------------------------------------------------------------


class TestTheAsyncClients:
    def test_async_anthropic_streams_and_creates(self, stub_api: StubApi) -> None:
        async def run() -> tuple[anthropic.types.Message, anthropic.types.Message]:
            async with anthropic.AsyncAnthropic(
                api_key="test", base_url=stub_api.url, max_retries=0
            ) as client:
                async with client.messages.stream(
                    model=MODEL, max_tokens=64, messages=HELLO
                ) as stream:
                    streamed = await stream.get_final_message()
                whole = await client.messages.create(model=MODEL, max_tokens=64, messages=HELLO)
            return streamed, whole

        stub_api.reply_with(REPLY, REPLY)
        for message in asyncio.run(run()):
            assert_anthropic_message(message)
        no_violations(stub_api)

    def test_async_openai_streams_and_creates_responses_and_chat(self, stub_api: StubApi) -> None:
        async def run() -> list[Any]:
            async with openai.AsyncOpenAI(
                api_key="test", base_url=stub_api.url + "/v1", max_retries=0
            ) as client:
                async with client.responses.stream(model=MODEL, input="hi") as stream:
                    helper = await stream.get_final_response()
                raw = await client.responses.create(model=MODEL, input="hi", stream=True)
                async with raw:
                    events = [event async for event in raw]
                whole = await client.responses.create(model=MODEL, input="hi")
                async with client.chat.completions.stream(
                    model=MODEL, messages=HELLO, stream_options=INCLUDE_USAGE
                ) as chat:
                    completion = await chat.get_final_completion()
            return [helper, events[-1].response, whole, completion]

        stub_api.reply_with(REPLY, REPLY, REPLY, REPLY)
        helper, streamed, whole, completion = asyncio.run(run())
        for response in (helper, streamed, whole):
            assert_response(response)
        assert_chat_message(completion.choices[0])
        assert_chat_usage(completion.usage)
        no_violations(stub_api)


# --- the openai-agents Runner -----------------------------------------------------------------


class TestTheOpenaiAgentsRunner:
    @pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
    def test_runs_a_tool_call_and_sends_its_output_back(
        self, stub_api: StubApi, streamed: bool
    ) -> None:
        agents = pytest.importorskip("agents")

        @agents.function_tool
        def read(path: str) -> str:
            """Read a file."""
            return f"contents of {path}"

        async def run() -> Any:
            async with openai.AsyncOpenAI(
                api_key="test", base_url=stub_api.url + "/v1", max_retries=0
            ) as client:
                model = agents.OpenAIResponsesModel(model=MODEL, openai_client=client)
                agent = agents.Agent(name="reader", instructions="Be brief.", tools=[read])
                agent.model = model
                config = agents.RunConfig(tracing_disabled=True)
                if not streamed:
                    return await agents.Runner.run(agent, "Read a.txt.", run_config=config)
                result = agents.Runner.run_streamed(agent, "Read a.txt.", run_config=config)
                async for _ in result.stream_events():
                    pass
                return result

        call = ToolCall("read", {"path": "a.txt"}, id="call_read_1")
        stub_api.reply_with(
            Reply(thinking="Read it first.", tool_calls=[call]), Reply(text="It says hi.")
        )
        result = asyncio.run(run())
        assert result.final_output == "It says hi."
        first, second = stub_api.requests_to("/v1/responses")
        assert first.body.get("stream", False) is streamed
        sent_back = {item.get("type"): item for item in second.body["input"]}
        assert sent_back["reasoning"]["encrypted_content"] is not None
        assert sent_back["function_call"]["call_id"] == "call_read_1"
        assert sent_back["function_call_output"] == {
            "call_id": "call_read_1",
            "output": "contents of a.txt",
            "type": "function_call_output",
        }
        no_violations(stub_api)


# --- scripting and checks -----------------------------------------------------------------------


class TestScriptingStreams:
    def test_a_scripted_failure_answers_as_json_before_any_stream(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.fail_next("/v1/chat/completions", OPENAI_RATE_LIMITED)
        with pytest.raises(openai.RateLimitError):
            gpt.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
        with gpt.chat.completions.create(model=MODEL, messages=HELLO, stream=True) as stream:
            assert "".join(c.choices[0].delta.content or "" for c in stream) == REPLY_TEXT
        no_violations(stub_api)

    def test_a_refused_stream_request_uses_up_no_reply(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with(REPLY)
        with pytest.raises(openai.BadRequestError):
            gpt.chat.completions.create(
                model=MODEL, messages=HELLO, stream=False, stream_options=INCLUDE_USAGE
            )
        (violation,) = stub_api.take_violations()
        assert "only allowed when 'stream' is enabled" in violation.reason
        assert stub_api.pending() == [f"reply {REPLY!r}"]
        stub_api.reset()

    def test_pending_names_scripted_replies(self, stub_api: StubApi) -> None:
        stub_api.reply_with("plain", Reply(text="plain too"), Reply(thinking="t"))
        left = stub_api.pending()
        assert left[:2] == ["reply text 'plain'", "reply text 'plain too'"]
        assert left[2].startswith("reply Reply(") and "thinking='t'" in left[2]
        stub_api.reset()
        assert stub_api.pending() == []

    def test_stream_pieces_cut_a_text_into_several_runs(self) -> None:
        assert stream_pieces("") == []
        assert stream_pieces("ok") == ["o", "k"]
        pieces = stream_pieces("Hello, streaming world")
        assert len(pieces) == PIECES and "".join(pieces) == "Hello, streaming world"

    @pytest.mark.parametrize(
        ("kwargs", "error"),
        [
            ({"stop_reason": "finished"}, "unknown stop reason"),
            ({"signature": "abc"}, "needs the thinking"),
            ({"thinking": "x", "signature": ""}, "must not be empty"),
            ({"redacted_thinking": ""}, "needs its data"),
            ({"tool_calls": [ToolCall("bad name")]}, "breaks"),
            ({"tool_calls": [ToolCall("a", id="x"), ToolCall("b", id="x")]}, "repeat"),
        ],
    )
    def test_a_reply_no_api_could_send_is_refused_when_scripted(
        self, kwargs: dict[str, Any], error: str
    ) -> None:
        with pytest.raises(ValueError, match=error):
            Reply(**kwargs)

    def test_a_negative_token_count_is_refused(self) -> None:
        with pytest.raises(ValueError, match="cache_read"):
            Usage(cache_read=-1)

    def test_thinking_without_a_signature_gets_one_made(self) -> None:
        made = Reply(thinking="hmm").signature
        assert made and made == Reply(thinking="hmm").signature
        assert made != Reply(thinking="other").signature


BASE_A = {"model": MODEL, "max_tokens": 8, "messages": HELLO}
BASE_CHAT = {"model": MODEL, "messages": HELLO}
BASE_R = {"model": MODEL, "input": "hi"}


class TestTheStreamFieldsOfRequests:
    def test_the_fields_the_sdks_send_to_stream_are_accepted(self) -> None:
        assert check_anthropic_messages({**BASE_A, "stream": True}) == []
        assert (
            check_openai_chat({**BASE_CHAT, "stream": True, "stream_options": INCLUDE_USAGE}) == []
        )
        options = {"include_usage": False, "include_obfuscation": False}
        assert check_openai_chat({**BASE_CHAT, "stream": True, "stream_options": options}) == []
        assert check_openai_chat({**BASE_CHAT, "stream": False, "stream_options": None}) == []
        assert check_openai_responses({**BASE_R, "stream": True}) == []
        obfuscation = {"include_obfuscation": False}
        assert (
            check_openai_responses({**BASE_R, "stream": True, "stream_options": obfuscation}) == []
        )

    @pytest.mark.parametrize(
        ("check", "body", "reason"),
        [
            (check_anthropic_messages, {**BASE_A, "stream": "yes"}, "stream: must be a boolean"),
            (check_openai_chat, {**BASE_CHAT, "stream": 1}, "stream: must be a boolean"),
            (
                check_openai_chat,
                {**BASE_CHAT, "stream_options": INCLUDE_USAGE},
                "only allowed when 'stream' is enabled",
            ),
            (
                check_openai_chat,
                {**BASE_CHAT, "stream": True, "stream_options": {"usage": True}},
                "stream_options: Extra inputs are not permitted: usage",
            ),
            (
                check_openai_chat,
                {**BASE_CHAT, "stream": True, "stream_options": {"include_usage": "yes"}},
                "stream_options.include_usage: must be a boolean",
            ),
            (
                check_openai_responses,
                {**BASE_R, "stream": True, "stream_options": INCLUDE_USAGE},
                "Extra inputs are not permitted: include_usage",
            ),
            (
                lambda body: check_anthropic_messages(body, count_tokens=True),
                {"model": MODEL, "messages": HELLO, "stream": True},
                "counting does not stream",
            ),
            (
                lambda body: check_openai_responses(body, input_tokens=True),
                {**BASE_R, "stream": False},
                "counting does not stream",
            ),
        ],
        ids=[
            "anthropic-stream-not-bool",
            "chat-stream-not-bool",
            "chat-options-without-stream",
            "chat-unknown-option",
            "chat-option-not-bool",
            "responses-chat-only-option",
            "count-tokens-streams",
            "input-tokens-streams",
        ],
    )
    def test_a_broken_stream_field_is_refused(self, check: Any, body: Any, reason: str) -> None:
        assert any(reason in found for found in check(body)), check(body)
