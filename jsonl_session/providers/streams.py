"""SDK replies in, whole or streamed: the public ``from_anthropic``, ``from_openai_chat``,
``from_openai_responses`` and ``from_reply`` (any of them), and their async twins.

Each takes the SDK's final object (or a dict of it), or a stream: the raw event iterator
``create(..., stream=True)`` returns, or the ``stream()`` helper inside its ``with``
block (``MessageStream``, ``ChatCompletionStream``, ``ResponseStream``), or any iterable
of events or their dicts. A stream is consumed here and accumulated into the reply the
API would have returned whole; replies.py maps that to pi's assistant message, so a
streamed reply is stored exactly as the same reply unstreamed. ``on_delta(kind, text)``
is called as text (``"text"``), thinking (``"thinking"``) and tool-call arguments
(``"toolCall"``) arrive, so a caller can show them while they stream.

The helpers' own derived events (Anthropic's ``text``, the Chat helper's
``content.delta``, …) are skipped; the raw events they pass along carry everything. A
stream that ends before its last event gives a message with stop reason ``aborted``.
No SDK is imported.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any

from jsonl_session.errors import EntryValidationError
from jsonl_session.providers.replies import (
    anthropic_reply,
    as_dict,
    chat_reply,
    plain,
    responses_reply,
)

OnDelta = Callable[[str, str], None]
"""Called with (kind, text) as a streamed reply arrives: kind is "text", "thinking" or
"toolCall" (a piece of a tool call's JSON arguments)."""


class _Accumulator:
    """Events in, the whole reply (as the API's own dict) out."""

    api = ""

    def __init__(self, on_delta: OnDelta | None) -> None:
        self.on_delta = on_delta
        self.finished = False

    def delta(self, kind: str, text: Any) -> None:
        if self.on_delta is not None and isinstance(text, str) and text:
            self.on_delta(kind, text)

    def feed(self, event: dict[str, Any]) -> None:
        raise NotImplementedError

    def reply(self) -> dict[str, Any]:
        raise NotImplementedError

    def message(self, **options: Any) -> dict[str, Any]:
        raise NotImplementedError


class _AnthropicEvents(_Accumulator):
    api = "anthropic"

    def __init__(self, on_delta: OnDelta | None) -> None:
        super().__init__(on_delta)
        self.base: dict[str, Any] = {"type": "message", "content": [], "usage": {}}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.arguments: dict[int, str] = {}

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            self.base = {**event["message"], "content": []}
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            self.blocks[int(event.get("index", len(self.blocks)))] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            self._delta(int(event.get("index", 0)), event["delta"])
        elif kind == "content_block_stop":
            index = int(event.get("index", 0))
            if index in self.arguments and index in self.blocks:
                raw = self.arguments.pop(index)
                self.blocks[index]["input"] = _json_object(raw)
        elif kind == "message_delta":
            delta = as_dict(event.get("delta"))
            for key in ("stop_reason", "stop_sequence", "stop_details"):
                if delta.get(key) is not None:
                    self.base[key] = delta[key]
            usage = event.get("usage")
            if isinstance(usage, dict):
                merged = dict(self.base.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                self.base["usage"] = merged
        elif kind == "message_stop":
            self.finished = True

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
            self.delta("text", delta.get("text"))
        elif kind == "thinking_delta":
            block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
            self.delta("thinking", delta.get("thinking"))
        elif kind == "signature_delta":
            signature = str(delta.get("signature") or "")
            block["signature"] = str(block.get("signature") or "") + signature
        elif kind == "input_json_delta":
            piece = str(delta.get("partial_json") or "")
            self.arguments[index] = self.arguments.get(index, "") + piece
            self.delta("toolCall", piece)

    def reply(self) -> dict[str, Any]:
        for index, raw in self.arguments.items():  # a stream cut inside a tool call
            if index in self.blocks:
                self.blocks[index]["input"] = _json_object(raw)
        return {**self.base, "content": [self.blocks[i] for i in sorted(self.blocks)]}

    def message(self, **options: Any) -> dict[str, Any]:
        return anthropic_reply(self.reply(), **options)


class _ChatChunks(_Accumulator):
    api = "openai-chat"

    def __init__(self, on_delta: OnDelta | None) -> None:
        super().__init__(on_delta)
        self.head: dict[str, Any] = {}
        self.fields: dict[str, str] = {}
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: Any = None
        self.usage: Any = None

    def feed(self, event: dict[str, Any]) -> None:
        if event.get("type") == "chunk" and isinstance(event.get("chunk"), dict):
            event = event["chunk"]  # the stream() helper's wrapper around a raw chunk
        elif "choices" not in event:
            return  # the helper's derived events
        for key in ("id", "model"):
            if isinstance(event.get(key), str) and key not in self.head:
                self.head[key] = event[key]
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
        for choice in event.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason") is not None:
                self.finish = choice["finish_reason"]
                self.finished = True
            delta = as_dict(choice.get("delta"))
            for field in ("reasoning_content", "reasoning", "reasoning_text", "content", "refusal"):
                piece = delta.get(field)
                if isinstance(piece, str) and piece:
                    self.fields[field] = self.fields.get(field, "") + piece
                    self.delta("text" if field in ("content", "refusal") else "thinking", piece)
            for call in delta.get("tool_calls") or ():
                if isinstance(call, dict):
                    self._call(call)

    def _call(self, piece: dict[str, Any]) -> None:
        index = int(piece.get("index", len(self.calls)))
        call = self.calls.setdefault(
            index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
        )
        if piece.get("id"):
            call["id"] = piece["id"]
        function = as_dict(piece.get("function"))
        if function.get("name"):
            call["function"]["name"] = function["name"]
        if function.get("arguments"):
            call["function"]["arguments"] += function["arguments"]
            self.delta("toolCall", function["arguments"])

    def reply(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", **self.fields}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        choice = {"index": 0, "message": message, "finish_reason": self.finish}
        return {**self.head, "object": "chat.completion", "choices": [choice], "usage": self.usage}

    def message(self, **options: Any) -> dict[str, Any]:
        return chat_reply(self.reply(), **options)


_RESPONSE_DONE = ("response.completed", "response.incomplete", "response.failed")


class _ResponsesEvents(_Accumulator):
    api = "openai-responses"

    def __init__(self, on_delta: OnDelta | None) -> None:
        super().__init__(on_delta)
        self.final: dict[str, Any] | None = None
        self.head: dict[str, Any] = {}
        self.items: dict[int, dict[str, Any]] = {}
        self.error: str | None = None

    def feed(self, event: dict[str, Any]) -> None:
        kind = str(event.get("type") or "")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            self.delta("text", event.get("delta"))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self.delta("thinking", event.get("delta"))
        elif kind == "response.function_call_arguments.delta":
            self.delta("toolCall", event.get("delta"))
        elif kind == "response.created" and isinstance(event.get("response"), dict):
            self.head = event["response"]
        elif kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            self.items[int(event.get("output_index", len(self.items)))] = event["item"]
        elif kind in _RESPONSE_DONE and isinstance(event.get("response"), dict):
            self.final, self.finished = event["response"], True
        elif kind == "error":
            self.error = str(event.get("message") or "the stream reported an error")
            self.finished = True

    def reply(self) -> dict[str, Any]:
        if self.final is not None:
            return self.final
        output = [self.items[i] for i in sorted(self.items)]
        return {**self.head, "output": output, "status": "failed"}

    def message(self, **options: Any) -> dict[str, Any]:
        built = responses_reply(self.reply(), **options)
        if self.error is not None:
            built["stopReason"], built["errorMessage"] = "error", self.error
        return built


_ACCUMULATORS: dict[str, type[_Accumulator]] = {
    "anthropic": _AnthropicEvents,
    "openai-chat": _ChatChunks,
    "openai-responses": _ResponsesEvents,
}
_FINAL: dict[str, Callable[..., dict[str, Any]]] = {
    "anthropic": anthropic_reply,
    "openai-chat": chat_reply,
    "openai-responses": responses_reply,
}


def _json_object(raw: str) -> Any:
    """Streamed tool arguments: an object when they parse, else the text (replies.py
    keeps unparsable text beside the call)."""
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _is_stream(reply: Any) -> bool:
    if isinstance(reply, dict | str | bytes) or hasattr(reply, "model_dump"):
        return False
    return isinstance(reply, Iterable)


def _finish(acc: _Accumulator, options: dict[str, Any]) -> dict[str, Any]:
    message = acc.message(**options)
    if not acc.finished:
        message["stopReason"] = "aborted"
        message.setdefault("errorMessage", "the stream ended before the reply was complete")
    return message


def _consume(
    api: str | None, reply: Iterable[Any], on_delta: OnDelta | None, options: dict[str, Any]
) -> dict[str, Any]:
    acc: _Accumulator | None = None
    for raw_event in reply:
        event = plain(raw_event, "a stream event")
        if acc is None:
            acc = _ACCUMULATORS[api or _api_of_event(event)](on_delta)
        acc.feed(event)
    if acc is None:
        raise EntryValidationError("the stream held no events")
    return _finish(acc, options)


def _api_of_event(event: dict[str, Any]) -> str:
    kind = str(event.get("type") or "")
    if kind.startswith(("message_", "content_block_")) or kind in ("ping",):
        return "anthropic"
    if kind == "chunk" or event.get("object") == "chat.completion.chunk" or "choices" in event:
        return "openai-chat"
    if kind.startswith("response.") or kind == "error":
        return "openai-responses"
    raise EntryValidationError(f"not an event of a stream this library reads: type {kind!r}")


def _api_of_reply(data: dict[str, Any]) -> str:
    if "choices" in data:
        return "openai-chat"
    if data.get("object") == "response" or "output" in data:
        return "openai-responses"
    if data.get("type") == "message" and "content" in data:
        return "anthropic"
    raise EntryValidationError(
        "not a reply this library reads: expected an Anthropic Message, an OpenAI "
        "ChatCompletion or Response (or a stream of one), or a pi assistant message"
    )


def _convert(
    api: str | None, reply: Any, on_delta: OnDelta | None, **options: Any
) -> dict[str, Any]:
    if _is_stream(reply):
        return _consume(api, reply, on_delta, options)
    data = plain(reply, "a reply")
    if api is None:
        if data.get("role") == "assistant" and isinstance(data.get("api"), str):
            return data  # already pi's shape
        api = _api_of_reply(data)
    final = _FINAL[api]
    return final(data, **options)


def from_anthropic(
    reply: Any,
    *,
    on_delta: OnDelta | None = None,
    provider: str = "anthropic",
    model: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """An Anthropic ``Message``, its dict, or a stream of its events (``create(...,
    stream=True)`` or ``messages.stream()``) as pi's assistant message."""
    options = {"provider": provider, "model": model, "timestamp": timestamp}
    return _convert("anthropic", reply, on_delta, **options)


def from_openai_chat(
    reply: Any,
    *,
    on_delta: OnDelta | None = None,
    provider: str = "openai",
    model: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """A ``ChatCompletion``, its dict, or a stream of chunks (``create(...,
    stream=True)`` or ``chat.completions.stream()``) as pi's assistant message."""
    options = {"provider": provider, "model": model, "timestamp": timestamp}
    return _convert("openai-chat", reply, on_delta, **options)


def from_openai_responses(
    reply: Any,
    *,
    on_delta: OnDelta | None = None,
    provider: str = "openai",
    model: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """A ``Response``, its dict, or a stream of its events (``create(..., stream=True)``
    or ``responses.stream()``) as pi's assistant message."""
    options = {"provider": provider, "model": model, "timestamp": timestamp}
    return _convert("openai-responses", reply, on_delta, **options)


def from_reply(reply: Any, *, on_delta: OnDelta | None = None, **options: Any) -> dict[str, Any]:
    """Any reply the three functions above take, told apart by its shape; a pi
    assistant message is returned as it is. ``options``: provider, model, timestamp."""
    return _convert(None, reply, on_delta, **options)


async def afrom_reply(
    reply: Any, *, on_delta: OnDelta | None = None, **options: Any
) -> dict[str, Any]:
    """`from_reply` for the async clients: an async stream (``AsyncStream``, the async
    ``stream()`` helpers, any async iterable of events) or a final object."""
    if not isinstance(reply, AsyncIterable):
        return from_reply(reply, on_delta=on_delta, **options)
    acc: _Accumulator | None = None
    async for raw_event in reply:
        event = plain(raw_event, "a stream event")
        if acc is None:
            acc = _ACCUMULATORS[_api_of_event(event)](on_delta)
        acc.feed(event)
    if acc is None:
        raise EntryValidationError("the stream held no events")
    return _finish(acc, {k: v for k, v in options.items() if v is not None})
