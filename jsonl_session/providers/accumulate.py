"""Stream events in, the whole reply out: one accumulator per API, fed the events (as
dicts) of an Anthropic Messages stream, a Chat Completions chunk stream or a Responses
event stream, giving the reply as that API returns it unstreamed, so replies.py maps
both the same way.

Owns the events' meaning: which delta extends which block, where usage and the stop
reason arrive, and what a stream cut short still holds (every piece of text, thinking
and arguments that arrived). Calling ``on_delta`` as pieces arrive is here too.
Consuming a stream (iteration, the SDKs' helpers, interruptions) is streams.py's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from jsonl_session.format.walk import as_text
from jsonl_session.providers.replies import anthropic_reply, chat_reply, responses_reply
from jsonl_session.providers.reply_parts import as_dict

OnDelta = Callable[[str, str], None]
"""Called with (kind, text) as a streamed reply arrives: kind is "text", "thinking" or
"toolCall" (a piece of a tool call's JSON arguments)."""


class Accumulator:
    """Events in, the whole reply (as the API's own dict) out."""

    api = ""
    first_events: tuple[str, ...] = ()
    """Types a whole stream starts with (empty: any): a stream that starts elsewhere
    was read from before it was handed over."""

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


def _json_object(raw: str) -> Any:
    """Streamed tool arguments: an object when they parse, else the text (reply_parts.py
    keeps unparsable text beside the call)."""
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _index(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class AnthropicEvents(Accumulator):
    api = "anthropic"
    first_events = ("message_start",)

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
            index = _index(event.get("index"), len(self.blocks))
            self.blocks[index] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            self._delta(_index(event.get("index"), 0), event["delta"])
        elif kind == "content_block_stop":
            index = _index(event.get("index"), 0)
            if index in self.arguments and index in self.blocks:
                self.blocks[index]["input"] = _json_object(self.arguments.pop(index))
        elif kind == "message_delta":
            delta = as_dict(event.get("delta"))
            for key in ("stop_reason", "stop_sequence", "stop_details"):
                if delta.get(key) is not None:
                    self.base[key] = delta[key]
            usage = event.get("usage")
            if isinstance(usage, dict):  # running totals: later numbers replace earlier
                merged = dict(self.base.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                self.base["usage"] = merged
        elif kind == "message_stop":
            self.finished = True

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = as_text(block.get("text") or "") + as_text(delta.get("text") or "")
            self.delta("text", delta.get("text"))
        elif kind == "thinking_delta":
            block["thinking"] = as_text(block.get("thinking") or "") + as_text(
                delta.get("thinking") or ""
            )
            self.delta("thinking", delta.get("thinking"))
        elif kind == "signature_delta":
            signature = as_text(delta.get("signature") or "")
            block["signature"] = as_text(block.get("signature") or "") + signature
        elif kind == "input_json_delta":
            piece = as_text(delta.get("partial_json") or "")
            self.arguments[index] = self.arguments.get(index, "") + piece
            if block.get("type") == "tool_use":  # not a server tool's input: no call of ours
                self.delta("toolCall", piece)

    def reply(self) -> dict[str, Any]:
        for index, raw in self.arguments.items():  # a stream cut inside a tool call
            if index in self.blocks:
                self.blocks[index]["input"] = _json_object(raw)
        return {**self.base, "content": [self.blocks[i] for i in sorted(self.blocks)]}

    def message(self, **options: Any) -> dict[str, Any]:
        return anthropic_reply(self.reply(), **options)


_CHAT_FIELDS = ("reasoning_content", "reasoning", "reasoning_text", "content", "refusal")


class ChatChunks(Accumulator):
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
            # some servers (Azure) open with an empty id and model: keep the first real one
            if isinstance(event.get(key), str) and event[key] and key not in self.head:
                self.head[key] = event[key]
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
        for choice in event.get("choices") or ():
            if not isinstance(choice, dict) or _index(choice.get("index"), 0) != 0:
                continue
            if choice.get("finish_reason") is not None:
                self.finish = choice["finish_reason"]
                self.finished = True
            delta = as_dict(choice.get("delta"))
            for field in _CHAT_FIELDS:
                piece = delta.get(field)
                if isinstance(piece, str) and piece:
                    self.fields[field] = self.fields.get(field, "") + piece
                    self.delta("text" if field in ("content", "refusal") else "thinking", piece)
            for call in delta.get("tool_calls") or ():
                if isinstance(call, dict):
                    self._call(call)

    def _call(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = self._index_without(piece.get("id"))
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

    def _index_without(self, call_id: Any) -> int:
        """For servers that number no calls: the call with this id, a new call for a
        new id, and the last call for a piece without an id (its continuation)."""
        if not call_id:
            return max(self.calls, default=0)
        for index, call in self.calls.items():
            if call["id"] == call_id:
                return index
        return max(self.calls, default=-1) + 1

    def reply(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", **self.fields}
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        choice = {"index": 0, "message": message, "finish_reason": self.finish}
        return {**self.head, "object": "chat.completion", "choices": [choice], "usage": self.usage}

    def message(self, **options: Any) -> dict[str, Any]:
        return chat_reply(self.reply(), **options)


_RESPONSE_DONE = ("response.completed", "response.incomplete", "response.failed")


class ResponsesEvents(Accumulator):
    api = "openai-responses"
    first_events = ("response.created", "response.queued", "response.in_progress", "error")

    def __init__(self, on_delta: OnDelta | None) -> None:
        super().__init__(on_delta)
        self.final: dict[str, Any] | None = None
        self.head: dict[str, Any] = {}
        self.items: dict[int, dict[str, Any]] = {}  # as they grow, by output index
        self.error: str | None = None

    def feed(self, event: dict[str, Any]) -> None:
        kind = as_text(event.get("type") or "")
        slot = _index(event.get("output_index"), -1)
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            self._grow_text(slot, "output_text" if "text" in kind else "refusal", event)
            self.delta("text", event.get("delta"))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self._grow_reasoning(slot, "summary" if "summary" in kind else "content", event)
            self.delta("thinking", event.get("delta"))
        elif kind == "response.function_call_arguments.delta":
            item = self.items.get(slot)
            if item is not None:
                item["arguments"] = as_text(item.get("arguments") or "") + as_text(
                    event.get("delta") or ""
                )
            self.delta("toolCall", event.get("delta"))
        elif kind == "response.created" and isinstance(event.get("response"), dict):
            self.head = event["response"]
        elif kind in ("response.output_item.added", "response.output_item.done"):
            if isinstance(event.get("item"), dict):
                self.items[slot if slot >= 0 else len(self.items)] = dict(event["item"])
        elif kind in _RESPONSE_DONE and isinstance(event.get("response"), dict):
            self.final, self.finished = event["response"], True
        elif kind == "error":
            self.error = str(event.get("message") or "the stream reported an error")
            self.finished = True

    def _grow_text(self, slot: int, part_type: str, event: dict[str, Any]) -> None:
        item = self.items.get(slot)
        if item is None or item.get("type") != "message":
            return
        parts = item.setdefault("content", [])
        at = _index(event.get("content_index"), len(parts) - 1)
        while len(parts) <= at:
            parts.append({"type": part_type, part_type.replace("output_", ""): ""})
        field = "text" if part_type == "output_text" else "refusal"
        parts[at] = {**parts[at], field: str(parts[at].get(field) or "") + str(event.get("delta"))}

    def _grow_reasoning(self, slot: int, field: str, event: dict[str, Any]) -> None:
        item = self.items.get(slot)
        if item is None or item.get("type") != "reasoning":
            return
        found = item.get(field)
        parts: list[Any] = found if isinstance(found, list) else []
        at = _index(event.get("summary_index", event.get("content_index")), len(parts) - 1)
        while len(parts) <= at:
            parts.append({"type": "summary_text" if field == "summary" else "reasoning_text"})
        text = str(parts[at].get("text") or "") + str(event.get("delta"))
        parts[at] = {**parts[at], "text": text}
        item[field] = parts

    def reply(self) -> dict[str, Any]:
        collected = [self.items[i] for i in sorted(self.items)]
        if self.final is not None:
            # some proxies end with a completed response whose output is empty
            return self.final if self.final.get("output") else {**self.final, "output": collected}
        return {**self.head, "output": collected, "status": "failed"}

    def message(self, **options: Any) -> dict[str, Any]:
        built = responses_reply(self.reply(), **options)
        if self.error is not None:
            built["stopReason"], built["errorMessage"] = "error", self.error
        return built


ACCUMULATORS: dict[str, type[Accumulator]] = {
    "anthropic": AnthropicEvents,
    "openai-chat": ChatChunks,
    "openai-responses": ResponsesEvents,
}
FINAL: dict[str, Callable[..., dict[str, Any]]] = {
    "anthropic": anthropic_reply,
    "openai-chat": chat_reply,
    "openai-responses": responses_reply,
}
