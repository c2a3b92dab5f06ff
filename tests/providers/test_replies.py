"""SDK replies in: each SDK's own response types and stream events, converted to pi's
assistant message, appended to a real session file, read back, and adapted into the
next request, which must hold the same content blocks the model sent. Then the stop
reasons, usage, tool results and the errors a wrong input gets.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anthropic.types as anthropic_types
import openai.types.chat as chat_types
import openai.types.responses as responses_types
import pytest

from jsonl_session import (
    EntryValidationError,
    Session,
    afrom_reply,
    from_anthropic,
    from_openai_chat,
    from_openai_responses,
    from_reply,
    partial_reply,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
    tool_result,
)

ANTHROPIC_MESSAGE: dict[str, Any] = {
    "id": "msg_01AbC",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": "Check the file first.", "signature": "c2lnLW9uZQ=="},
        {"type": "redacted_thinking", "data": "b3BhcXVlLWRhdGE="},
        {"type": "text", "text": "Reading it now."},
        {"type": "tool_use", "id": "toolu_01XyZ", "name": "read", "input": {"path": "a.py"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 120,
        "output_tokens": 40,
        "cache_read_input_tokens": 900,
        "cache_creation_input_tokens": 60,
    },
}
CHAT_COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-9z",
    "object": "chat.completion",
    "created": 1_760_000_000,
    "model": "gpt-4.1",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "logprobs": None,
            "message": {
                "role": "assistant",
                "content": "Reading it now.",
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_k1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                    }
                ],
            },
        }
    ],
    "usage": {
        "prompt_tokens": 1000,
        "completion_tokens": 30,
        "total_tokens": 1030,
        "prompt_tokens_details": {"cached_tokens": 800},
    },
}
REASONING_ITEM: dict[str, Any] = {
    "id": "rs_0a1",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": "Look at the file."}],
    "encrypted_content": "ZW5jcnlwdGVk",
}
RESPONSE: dict[str, Any] = {
    "id": "resp_0a",
    "object": "response",
    "created_at": 1_760_000_000,
    "status": "completed",
    "model": "gpt-5",
    "output": [
        REASONING_ITEM,
        {
            "type": "message",
            "id": "msg_0a2",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Reading it now.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_0a3",
            "call_id": "call_r1",
            "name": "read",
            "arguments": '{"path":"a.py"}',
            "status": "completed",
        },
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 1000,
        "input_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 0},
        "output_tokens": 50,
        "output_tokens_details": {"reasoning_tokens": 20},
        "total_tokens": 1050,
    },
}


def anthropic_message() -> anthropic_types.Message:
    return anthropic_types.Message.model_validate(ANTHROPIC_MESSAGE)


def chat_completion() -> chat_types.ChatCompletion:
    return chat_types.ChatCompletion.model_validate(CHAT_COMPLETION)


def response() -> responses_types.Response:
    return responses_types.Response.model_validate(RESPONSE)


def recorded(tmp_path: Path, reply: Any, **options: Any) -> tuple[Session, str]:
    """A session with a user question and ``reply`` appended; reopened from disk."""
    session = Session.create(cwd=tmp_path, session_dir=tmp_path)
    session.append_message({"role": "user", "content": "Read a.py", "timestamp": 1})
    entry_id = session.append_response(reply, **options)
    return Session.open(session.path), entry_id


def anthropic_stream_events() -> list[Any]:
    """The stream of ANTHROPIC_MESSAGE, as the SDK's own event types."""
    start = {**ANTHROPIC_MESSAGE, "content": [], "stop_reason": None}
    start["usage"] = {**ANTHROPIC_MESSAGE["usage"], "output_tokens": 1}
    raw: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    blocks = [
        (
            {"type": "thinking", "thinking": "", "signature": ""},
            [
                {"type": "thinking_delta", "thinking": "Check the file "},
                {"type": "thinking_delta", "thinking": "first."},
                {"type": "signature_delta", "signature": "c2lnLW9uZQ=="},
            ],
        ),
        ({"type": "redacted_thinking", "data": "b3BhcXVlLWRhdGE="}, []),
        (
            {"type": "text", "text": ""},
            [
                {"type": "text_delta", "text": "Reading "},
                {"type": "text_delta", "text": "it now."},
            ],
        ),
        (
            {"type": "tool_use", "id": "toolu_01XyZ", "name": "read", "input": {}},
            [
                {"type": "input_json_delta", "partial_json": '{"path": '},
                {"type": "input_json_delta", "partial_json": '"a.py"}'},
            ],
        ),
    ]
    for index, (block, deltas) in enumerate(blocks):
        raw.append({"type": "content_block_start", "index": index, "content_block": block})
        raw.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        raw.append({"type": "content_block_stop", "index": index})
    raw.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 40},
        }
    )
    raw.append({"type": "message_stop"})
    adapter: Any = anthropic_types.RawMessageStreamEvent
    from pydantic import TypeAdapter

    return [TypeAdapter(adapter).validate_python(event) for event in raw]


def chat_stream_chunks() -> list[chat_types.ChatCompletionChunk]:
    base = {
        "id": "chatcmpl-9z",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4.1",
    }
    deltas: list[tuple[dict[str, Any], str | None]] = [
        ({"role": "assistant", "content": "Reading "}, None),
        ({"content": "it now."}, None),
        (
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_k1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": '},
                    }
                ]
            },
            None,
        ),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '"a.py"}'}}]}, None),
        ({}, "tool_calls"),
    ]
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        for delta, finish in deltas
    ]
    chunks.append({**base, "choices": [], "usage": CHAT_COMPLETION["usage"]})
    return [chat_types.ChatCompletionChunk.model_validate(chunk) for chunk in chunks]


def responses_stream_events() -> list[Any]:
    from pydantic import TypeAdapter

    created = {**RESPONSE, "status": "in_progress", "output": [], "usage": None}
    message = RESPONSE["output"][1]
    call = RESPONSE["output"][2]
    raw: list[dict[str, Any]] = [
        {"type": "response.created", "response": created},
        {"type": "response.output_item.added", "output_index": 0, "item": REASONING_ITEM},
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_0a1",
            "output_index": 0,
            "summary_index": 0,
            "delta": "Look at the file.",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING_ITEM},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**message, "status": "in_progress", "content": []},
        },
        *(
            {
                "type": "response.output_text.delta",
                "item_id": "msg_0a2",
                "output_index": 1,
                "content_index": 0,
                "delta": piece,
                "logprobs": [],
            }
            for piece in ("Reading ", "it now.")
        ),
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": {**call, "arguments": "", "status": "in_progress"},
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_0a3",
            "output_index": 2,
            "delta": '{"path":"a.py"}',
        },
        {"type": "response.output_item.done", "output_index": 2, "item": call},
        {"type": "response.completed", "response": RESPONSE},
    ]
    adapter: Any = responses_types.ResponseStreamEvent
    return [
        TypeAdapter(adapter).validate_python({**event, "sequence_number": n})
        for n, event in enumerate(raw)
    ]


def without_time(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "timestamp"}


class TestAnthropicReplies:
    def test_a_message_becomes_the_assistant_message_pi_stores(self) -> None:
        message = from_anthropic(anthropic_message(), timestamp=5)
        assert message == {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": "Check the file first.",
                    "thinkingSignature": "c2lnLW9uZQ==",
                },
                {
                    "type": "thinking",
                    "thinking": "[Reasoning redacted]",
                    "thinkingSignature": "b3BhcXVlLWRhdGE=",
                    "redacted": True,
                },
                {"type": "text", "text": "Reading it now."},
                {
                    "type": "toolCall",
                    "id": "toolu_01XyZ",
                    "name": "read",
                    "arguments": {"path": "a.py"},
                },
            ],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "responseId": "msg_01AbC",
            "usage": {
                "input": 120,
                "output": 40,
                "cacheRead": 900,
                "cacheWrite": 60,
                "totalTokens": 1120,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "toolUse",
            "timestamp": 5,
        }

    def test_the_next_request_holds_the_blocks_the_model_sent(self, tmp_path: Path) -> None:
        session, entry_id = recorded(tmp_path, anthropic_message())
        assert session.get(entry_id) is not None
        request = to_anthropic(session.build_context()).kwargs
        sent = request["messages"][1]  # then the result pi adds for a call left unanswered
        assert sent == {"role": "assistant", "content": ANTHROPIC_MESSAGE["content"]}

    def test_a_stream_of_the_sdks_events_gives_the_same_message(self) -> None:
        pieces: list[tuple[str, str]] = []
        streamed = from_anthropic(
            iter(anthropic_stream_events()), on_delta=lambda k, t: pieces.append((k, t))
        )
        assert without_time(streamed) == without_time(from_anthropic(anthropic_message()))
        assert pieces == [
            ("thinking", "Check the file "),
            ("thinking", "first."),
            ("text", "Reading "),
            ("text", "it now."),
            ("toolCall", '{"path": '),
            ("toolCall", '"a.py"}'),
        ]

    def test_a_stream_cut_short_is_recorded_as_aborted(self) -> None:
        events = anthropic_stream_events()[:10]  # stops inside the text block
        message = from_anthropic(events)
        assert message["stopReason"] == "aborted"
        assert message["content"][-1] == {"type": "text", "text": "Reading "}

    @pytest.mark.parametrize(
        ("reason", "stop"),
        [
            ("end_turn", "stop"),
            ("max_tokens", "length"),
            ("pause_turn", "stop"),
            ("refusal", "error"),
        ],
    )
    def test_stop_reasons_are_pis(self, reason: str, stop: str) -> None:
        message = from_anthropic({**ANTHROPIC_MESSAGE, "stop_reason": reason})
        assert message["stopReason"] == stop
        assert ("errorMessage" in message) == (stop == "error")

    def test_the_model_asked_for_is_kept_with_the_one_that_answered(self) -> None:
        message = from_anthropic(ANTHROPIC_MESSAGE, model="claude-sonnet-4-5-latest")
        assert message["model"] == "claude-sonnet-4-5-latest"
        assert message["responseModel"] == "claude-sonnet-4-5"


class TestChatCompletionReplies:
    def test_a_completion_becomes_the_assistant_message_pi_stores(self) -> None:
        message = from_openai_chat(chat_completion(), timestamp=5)
        assert message["content"] == [
            {"type": "text", "text": "Reading it now."},
            {"type": "toolCall", "id": "call_k1", "name": "read", "arguments": {"path": "a.py"}},
        ]
        assert (message["api"], message["provider"], message["model"]) == (
            "openai-completions",
            "openai",
            "gpt-4.1",
        )
        assert message["usage"]["input"] == 200  # prompt tokens less the cached ones
        assert (message["usage"]["cacheRead"], message["usage"]["totalTokens"]) == (800, 1030)
        assert message["stopReason"] == "toolUse"
        assert message["responseId"] == "chatcmpl-9z"

    def test_the_next_request_holds_the_text_and_calls_the_model_sent(self, tmp_path: Path) -> None:
        session, _ = recorded(tmp_path, chat_completion())
        sent = to_openai_chat(session.build_context()).kwargs["messages"][1]
        original = CHAT_COMPLETION["choices"][0]["message"]
        assert sent["content"] == original["content"]
        [call] = sent["tool_calls"]
        [was] = original["tool_calls"]
        assert (call["id"], call["function"]["name"]) == (was["id"], was["function"]["name"])
        assert json.loads(call["function"]["arguments"]) == json.loads(was["function"]["arguments"])

    def test_a_stream_of_chunks_gives_the_same_message(self) -> None:
        pieces: list[tuple[str, str]] = []
        streamed = from_openai_chat(
            chat_stream_chunks(), on_delta=lambda k, t: pieces.append((k, t))
        )
        assert without_time(streamed) == without_time(from_openai_chat(chat_completion()))
        assert [k for k, _ in pieces] == ["text", "text", "toolCall", "toolCall"]

    def test_arguments_that_are_not_json_are_kept_beside_the_call(self) -> None:
        broken = json.loads(json.dumps(CHAT_COMPLETION))
        broken["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"path": '
        [_, call] = from_openai_chat(broken)["content"]
        assert call["arguments"] == {} and call["rawArguments"] == '{"path": '


class TestResponsesReplies:
    def test_a_response_becomes_the_assistant_message_pi_stores(self) -> None:
        message = from_openai_responses(response(), timestamp=5)
        thinking, text, call = message["content"]
        assert thinking["thinking"] == "Look at the file."
        assert json.loads(thinking["thinkingSignature"]) == REASONING_ITEM
        assert text == {
            "type": "text",
            "text": "Reading it now.",
            "textSignature": '{"v":1,"id":"msg_0a2"}',
        }
        assert call == {
            "type": "toolCall",
            "id": "call_r1|fc_0a3",
            "name": "read",
            "arguments": {"path": "a.py"},
        }
        assert message["api"] == "openai-responses"
        assert message["usage"]["input"] == 400 and message["usage"]["totalTokens"] == 1050
        assert message["stopReason"] == "toolUse"

    def test_the_next_request_gives_back_the_items_the_model_sent(self, tmp_path: Path) -> None:
        session, _ = recorded(tmp_path, response())
        request = to_openai_responses(session.build_context(), model="gpt-5").kwargs
        sent = request["input"][1:]
        reasoning, message, call = RESPONSE["output"]
        assert sent[0] == reasoning
        assert sent[1] == {k: v for k, v in message.items()}
        assert sent[2] == {**{k: v for k, v in call.items() if k != "status"}}

    def test_another_models_reasoning_is_not_replayed(self, tmp_path: Path) -> None:
        session, _ = recorded(tmp_path, response())
        items = to_openai_responses(session.build_context(), model="gpt-5-mini").kwargs["input"]
        assert [i["type"] for i in items][:3] == ["message", "message", "function_call"]
        assert "id" not in items[2] and items[2]["call_id"] == "call_r1"

    def test_a_stream_of_the_sdks_events_gives_the_same_message(self) -> None:
        pieces: list[tuple[str, str]] = []
        streamed = from_openai_responses(
            responses_stream_events(), on_delta=lambda k, t: pieces.append((k, t))
        )
        assert without_time(streamed) == without_time(from_openai_responses(response()))
        assert pieces == [
            ("thinking", "Look at the file."),
            ("text", "Reading "),
            ("text", "it now."),
            ("toolCall", '{"path":"a.py"}'),
        ]

    def test_an_incomplete_response_stops_for_length(self) -> None:
        cut = {
            **RESPONSE,
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
        }
        assert from_openai_responses(cut)["stopReason"] == "length"


class TestToolResults:
    @pytest.mark.parametrize(
        ("call", "call_id"),
        [
            (lambda: anthropic_message().content[3], "toolu_01XyZ"),
            (lambda: chat_completion().choices[0].message.tool_calls[0], "call_k1"),  # type: ignore[index]
            (lambda: response().output[2], "call_r1|fc_0a3"),
            (lambda: from_anthropic(ANTHROPIC_MESSAGE)["content"][3], "toolu_01XyZ"),
        ],
        ids=["anthropic tool_use", "chat tool call", "responses function_call", "pi toolCall"],
    )
    def test_a_result_answers_the_call_it_is_given(self, call: Any, call_id: str) -> None:
        result = tool_result(call(), "print('a')", timestamp=7)
        assert result == {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "read",
            "content": [{"type": "text", "text": "print('a')"}],
            "isError": False,
            "timestamp": 7,
        }

    def test_a_whole_turn_with_its_result_is_accepted_by_each_api_shape(
        self, tmp_path: Path
    ) -> None:
        session, _ = recorded(tmp_path, response())
        session.append_message(tool_result(response().output[2], "contents", is_error=True))
        items = to_openai_responses(Session.open(session.path).build_context()).kwargs["input"]
        assert items[-1] == {
            "type": "function_call_output",
            "call_id": "call_r1",
            "output": "contents",
        }

    def test_a_result_needs_a_call(self) -> None:
        with pytest.raises(EntryValidationError, match="must be a toolCall block"):
            tool_result({"type": "text", "text": "x"}, "out")


class TestAppendingReplies:
    def test_from_reply_tells_the_three_apart(self) -> None:
        apis = [
            from_reply(anthropic_message())["api"],
            from_reply(chat_completion())["api"],
            from_reply(response())["api"],
            from_reply(iter(anthropic_stream_events()))["api"],
            from_reply(chat_stream_chunks())["api"],
            from_reply(responses_stream_events())["api"],
        ]
        assert apis == ["anthropic-messages", "openai-completions", "openai-responses"] * 2

    def test_appending_an_sdk_object_as_a_message_points_to_append_response(
        self, tmp_path: Path
    ) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        with pytest.raises(EntryValidationError, match="append_response"):
            session.append_message(anthropic_message())  # type: ignore[arg-type]

    def test_something_that_is_no_reply_gets_a_clear_error(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        with pytest.raises(EntryValidationError, match="not a reply this library reads"):
            session.append_response({"text": "hello"})
        assert not session.path.exists()


class TestStreamsThatGoWrong:
    def test_a_stream_that_raises_keeps_what_came_as_its_partial_reply(self) -> None:
        def broken() -> Any:
            yield from anthropic_stream_events()[:10]
            raise ConnectionError("the connection dropped")

        with pytest.raises(ConnectionError) as caught:
            from_anthropic(broken())
        partial = partial_reply(caught.value)
        assert partial is not None
        assert (
            partial["stopReason"] == "error" and partial["errorMessage"] == "the connection dropped"
        )
        assert partial["content"][-1] == {"type": "text", "text": "Reading "}

    def test_an_interrupted_stream_is_appended_as_aborted_and_the_interrupt_goes_on(
        self, tmp_path: Path
    ) -> None:
        def interrupted() -> Any:
            yield from anthropic_stream_events()[:10]
            raise KeyboardInterrupt

        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        session.append_message({"role": "user", "content": "Read a.py"})
        with pytest.raises(KeyboardInterrupt):
            session.append_response(interrupted())
        last = Session.open(session.path).build_context().messages[-1]
        assert last["stopReason"] == "aborted" and last["content"][-1]["text"] == "Reading "

    def test_a_raw_stream_read_from_before_is_refused(self) -> None:
        events = iter(anthropic_stream_events())
        next(events)
        with pytest.raises(EntryValidationError, match="read from before it was handed over"):
            from_anthropic(events)

    def test_chat_tool_calls_without_an_index_are_told_apart_by_id(self) -> None:
        base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        call = {"type": "function", "function": {"name": "read", "arguments": '{"path":'}}
        chunks = [
            chunk({"tool_calls": [{**call, "id": "call_a"}]}),
            chunk({"tool_calls": [{"function": {"arguments": '"a"}'}}]}),
            chunk({"tool_calls": [{**call, "id": "call_b"}]}),
            chunk({"tool_calls": [{"function": {"arguments": '"b"}'}}]}),
            chunk({}, "tool_calls"),
        ]
        calls = from_openai_chat(chunks)["content"]
        assert [(c["id"], c["arguments"]) for c in calls] == [
            ("call_a", {"path": "a"}),
            ("call_b", {"path": "b"}),
        ]

    def test_an_empty_first_chunk_leaves_the_model_and_id_to_the_next(self) -> None:
        chunks = [c.model_dump() for c in chat_stream_chunks()]
        chunks.insert(0, {**chunks[0], "id": "", "model": "", "choices": []})
        message = from_openai_chat(chunks)
        assert (message["model"], message["responseId"]) == ("gpt-4.1", "chatcmpl-9z")

    def test_a_completed_response_with_no_output_keeps_what_streamed(self) -> None:
        events = [e.model_dump(exclude_none=True) for e in responses_stream_events()]
        events[-1]["response"] = {**events[-1]["response"], "output": []}
        message = from_openai_responses(events)
        assert [b["type"] for b in message["content"]] == ["thinking", "text", "toolCall"]

    def test_a_response_stream_cut_short_keeps_the_text_that_streamed(self) -> None:
        events = responses_stream_events()[:7]  # the text's two deltas, no item done
        message = from_openai_responses(events)
        assert message["stopReason"] == "aborted"
        assert message["content"][-1]["text"] == "Reading it now."

    def test_an_async_stream_given_to_the_sync_reader_points_to_afrom_reply(
        self, tmp_path: Path
    ) -> None:
        async def events() -> Any:
            for event in anthropic_stream_events():
                yield event

        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        stream = events()
        with pytest.raises(EntryValidationError, match="afrom_reply"):
            session.append_response(stream)
        assert asyncio.run(afrom_reply(stream))["api"] == "anthropic-messages"


class TestThinkingAcrossModels:
    def test_given_the_target_model_only_its_own_thinking_goes_back_as_pi_sends_it(
        self, tmp_path: Path
    ) -> None:
        session, _ = recorded(tmp_path, anthropic_message())
        session.append_message(tool_result(anthropic_message().content[3], "a = 1"))
        context = session.build_context()
        same = to_anthropic(context, model="claude-sonnet-4-5").kwargs["messages"][1]
        other = to_anthropic(context, model="claude-opus-5").kwargs["messages"][1]
        assert [b["type"] for b in same["content"]] == [
            "thinking",
            "redacted_thinking",
            "text",
            "tool_use",
        ]
        assert [b["type"] for b in other["content"]] == ["text", "tool_use"]
        repairs = to_anthropic(context, model="claude-opus-5").repairs
        assert [(r.kind, r.detail) for r in repairs if r.kind == "thinking-dropped"] == [
            ("thinking-dropped", "2 thinking block(s) of claude-sonnet-4-5, not claude-opus-5")
        ]
