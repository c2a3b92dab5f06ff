"""SDK replies in, as the real clients hand them over: each SDK's response, its raw
event stream and its ``stream()`` helper (sync and async), from the loopback stub,
appended with `Session.append_response`, read back from disk and adapted into the next
request, which the stub accepts and which holds the blocks the model sent.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic
import openai
from stub_api import Reply, StubApi, ToolCall, Usage

from jsonl_session import (
    Session,
    afrom_reply,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
    tool_result,
)

MODEL = "stub-model"
QUESTION: list[dict[str, Any]] = [{"role": "user", "content": "Read a.txt"}]
REPLY = Reply(
    text="Reading a.txt now.",
    thinking="Start with the file.",
    signature="c2lnbmVk",
    redacted_thinking="cmVkYWN0ZWQ=",
    tool_calls=[ToolCall("read", {"path": "a.txt"}, id="toolu_given_1")],
    usage=Usage(input=100, output=20, cache_read=300, cache_write=40),
)


def appended(tmp_path: Path, reply: Any) -> Session:
    session = Session.create(cwd=tmp_path, session_dir=tmp_path)
    session.append_message({"role": "user", "content": "Read a.txt", "timestamp": 1})
    session.append_response(reply)
    return Session.open(session.path)


def anthropic_blocks(message: anthropic.types.Message) -> list[dict[str, Any]]:
    return [block.model_dump(exclude_none=True) for block in message.content]


SCRIPTED_BLOCKS = [
    {"type": "thinking", "thinking": "Start with the file.", "signature": "c2lnbmVk"},
    {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
    {"type": "text", "text": "Reading a.txt now."},
    {"type": "tool_use", "id": "toolu_given_1", "name": "read", "input": {"path": "a.txt"}},
]


def check_anthropic(
    session: Session, claude: anthropic.Anthropic, sent: list[dict[str, Any]]
) -> None:
    request = to_anthropic(session.build_context()).kwargs
    assert request["messages"][1] == {"role": "assistant", "content": sent}
    claude.messages.create(model=MODEL, max_tokens=100, **request)  # the stub accepts it
    stored = session.build_context().messages[1]
    assert stored["usage"]["cacheRead"] == 300 and stored["usage"]["cacheWrite"] == 40


class TestAnthropicClient:
    def test_a_created_message(
        self, stub_api: StubApi, claude: anthropic.Anthropic, tmp_path: Path
    ) -> None:
        stub_api.reply_with(REPLY)
        message = claude.messages.create(model=MODEL, max_tokens=100, messages=QUESTION)
        check_anthropic(appended(tmp_path, message), claude, anthropic_blocks(message))

    def test_a_raw_event_stream(
        self, stub_api: StubApi, claude: anthropic.Anthropic, tmp_path: Path
    ) -> None:
        stub_api.reply_with(REPLY)
        stream = claude.messages.create(model=MODEL, max_tokens=100, messages=QUESTION, stream=True)
        check_anthropic(appended(tmp_path, stream), claude, SCRIPTED_BLOCKS)

    def test_the_stream_helper(
        self, stub_api: StubApi, claude: anthropic.Anthropic, tmp_path: Path
    ) -> None:
        stub_api.reply_with(REPLY)
        with claude.messages.stream(model=MODEL, max_tokens=100, messages=QUESTION) as stream:
            session = appended(tmp_path, stream)
            final = stream.get_final_message()
        check_anthropic(session, claude, anthropic_blocks(final))

    def test_the_async_stream_helper(self, stub_api: StubApi, tmp_path: Path) -> None:
        stub_api.reply_with(REPLY)

        async def run() -> tuple[dict[str, Any], anthropic.types.Message]:
            client = anthropic.AsyncAnthropic(api_key="t", base_url=stub_api.url)
            async with (
                client,
                client.messages.stream(model=MODEL, max_tokens=100, messages=QUESTION) as stream,
            ):
                message = await afrom_reply(stream)
                return message, await stream.get_final_message()

        message, final = asyncio.run(run())
        with anthropic.Anthropic(api_key="t", base_url=stub_api.url) as claude:
            check_anthropic(appended(tmp_path, message), claude, anthropic_blocks(final))


def chat_parts(completion: Any) -> tuple[str, list[tuple[str, str, Any]]]:
    message = completion.choices[0].message
    calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    return message.content, calls


def check_chat(session: Session, gpt: openai.OpenAI, completion: Any) -> None:
    text, calls = completion if isinstance(completion, tuple) else chat_parts(completion)
    [call_block] = [
        b for b in session.build_context().messages[1]["content"] if b["type"] == "toolCall"
    ]
    session.append_message(tool_result(call_block, "contents of a.txt"))
    request = to_openai_chat(Session.open(session.path).build_context()).kwargs
    sent = request["messages"][1]
    assert sent["content"] == text
    assert [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in sent["tool_calls"]
    ] == calls
    gpt.chat.completions.create(model=MODEL, **request)


class TestOpenAIChatClient:
    def test_a_created_completion(
        self, stub_api: StubApi, gpt: openai.OpenAI, tmp_path: Path
    ) -> None:
        stub_api.reply_with(REPLY)
        completion = gpt.chat.completions.create(model=MODEL, messages=QUESTION)  # type: ignore[arg-type]
        check_chat(appended(tmp_path, completion), gpt, completion)

    def test_a_raw_chunk_stream(
        self, stub_api: StubApi, gpt: openai.OpenAI, tmp_path: Path
    ) -> None:
        stub_api.reply_with(REPLY)
        stream = gpt.chat.completions.create(
            model=MODEL,
            messages=QUESTION,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
        session = appended(tmp_path, stream)
        assert session.build_context().messages[1]["usage"]["cacheRead"] == 300
        scripted = ("Reading a.txt now.", [("toolu_given_1", "read", {"path": "a.txt"})])
        check_chat(session, gpt, scripted)

    def test_the_stream_helper(self, stub_api: StubApi, gpt: openai.OpenAI, tmp_path: Path) -> None:
        stub_api.reply_with(REPLY)
        with gpt.chat.completions.stream(model=MODEL, messages=QUESTION) as stream:  # type: ignore[arg-type]
            session = appended(tmp_path, stream)
            final = stream.get_final_completion()
        check_chat(session, gpt, final)


def check_responses(session: Session, gpt: openai.OpenAI, response: Any) -> None:
    request = to_openai_responses(session.build_context(), model=MODEL).kwargs
    output = response["output"] if isinstance(response, dict) else response.output
    expected = [
        item if isinstance(item, dict) else item.model_dump(exclude_none=True, warnings=False)
        for item in output
    ]
    for item in expected:
        if item["type"] == "function_call":
            item.pop("status", None)  # an input item needs none
            item["arguments"] = json.loads(item["arguments"])  # sent again as compact JSON
        for part in item.get("content") or ():
            part.pop("logprobs", None)  # not kept: they are not input
    sent = [
        {**item, "arguments": json.loads(item["arguments"])} if "arguments" in item else item
        for item in request["input"][1 : 1 + len(expected)]
    ]
    assert sent == expected
    gpt.responses.create(model=MODEL, **request)


class TestOpenAIResponsesClient:
    def test_a_created_response(
        self, stub_api: StubApi, gpt: openai.OpenAI, tmp_path: Path
    ) -> None:
        stub_api.reply_with(REPLY)
        response = gpt.responses.create(model=MODEL, input=QUESTION)  # type: ignore[arg-type]
        check_responses(appended(tmp_path, response), gpt, response)

    def test_a_raw_event_stream(
        self, stub_api: StubApi, gpt: openai.OpenAI, tmp_path: Path
    ) -> None:
        stub_api.reply_with(REPLY)
        stream = gpt.responses.create(model=MODEL, input=QUESTION, stream=True)  # type: ignore[arg-type]
        events = list(stream)  # the stream's own events, handed over as they came
        completed = events[-1].response.model_dump(exclude_none=True, warnings=False)
        check_responses(appended(tmp_path, iter(events)), gpt, completed)

    def test_the_stream_helper(self, stub_api: StubApi, gpt: openai.OpenAI, tmp_path: Path) -> None:
        stub_api.reply_with(REPLY)
        with gpt.responses.stream(model=MODEL, input=QUESTION) as stream:  # type: ignore[arg-type]
            session = appended(tmp_path, stream)
            final = stream.get_final_response()
        check_responses(session, gpt, final)

    def test_the_async_raw_stream(self, stub_api: StubApi, tmp_path: Path) -> None:
        stub_api.reply_with(REPLY)
        seen: list[Any] = []

        async def run() -> dict[str, Any]:
            async with openai.AsyncOpenAI(api_key="t", base_url=stub_api.url + "/v1") as client:
                stream = await client.responses.create(
                    model=MODEL,
                    input=QUESTION,  # type: ignore[arg-type]
                    stream=True,
                )

                async def watched() -> Any:
                    async for event in stream:
                        seen.append(event)
                        yield event

                return await afrom_reply(watched())

        message = asyncio.run(run())
        completed = seen[-1].response.model_dump(exclude_none=True, warnings=False)
        with openai.OpenAI(api_key="t", base_url=stub_api.url + "/v1") as gpt:
            check_responses(appended(tmp_path, message), gpt, completed)
