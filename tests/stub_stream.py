"""Server-sent events for the loopback API stub (stub_api.py): each API's stream of the
reply it would otherwise send whole.

Every encoder takes the finished, non-streamed reply body the stub built and cuts it into
the events the real API sends for it, so the SDKs' stream accumulators end with the same
object as a plain ``create`` call: Anthropic's Messages events (``event:`` and ``data:``
lines, a ``ping`` after ``message_start``), Chat Completions chunks (``data:`` lines
only, ending with ``data: [DONE]``) and Responses events (``event:`` and ``data:``
lines, each with its ``sequence_number``). Text, thinking and tool arguments arrive in
the pieces `stream_pieces` cuts, so a test can see that they arrive one by one.

The shapes follow the installed SDKs' type definitions: anthropic/types/raw_*_event.py,
openai/types/chat/chat_completion_chunk.py and openai/types/responses/response_*_event.py.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

PIECES = 4
"""How many deltas `stream_pieces` cuts a text into, at most."""


def stream_pieces(text: str) -> list[str]:
    """The deltas a streamed ``text`` arrives in: up to `PIECES` runs of near-equal
    length, in order (none for an empty text)."""
    if not text:
        return []
    size = -(-len(text) // PIECES)
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: an ``event:`` line if named, and a ``data:`` line of JSON
    (or of ``data`` itself when it is a string, as in ``[DONE]``)."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


# --- Anthropic Messages ----------------------------------------------------------------


def anthropic_events(message: dict[str, Any]) -> list[bytes]:
    """The Messages stream of ``message`` (a reply body as `create` would answer)."""
    return [sse(event, event["type"]) for event in _anthropic_events(message)]


def _anthropic_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    start = {
        **copy.deepcopy(message),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
    }
    start["usage"]["output_tokens"] = min(1, message["usage"]["output_tokens"])
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for index, block in enumerate(message["content"]):
        yield from _anthropic_block_events(index, block)
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


def _anthropic_block_events(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    kind = block["type"]
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        opening: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in stream_pieces(block["text"])]
    elif kind == "thinking":
        opening = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": p} for p in stream_pieces(block["thinking"])
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use":
        opening = {**block, "input": {}}
        arguments = json.dumps(block["input"])
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in stream_pieces(arguments)]
    else:  # redacted_thinking arrives whole
        opening = block
    yield {"type": "content_block_start", "index": index, "content_block": opening}
    for delta in deltas:
        yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}


# --- OpenAI Chat Completions ------------------------------------------------------------


def chat_chunks(completion: dict[str, Any], *, include_usage: bool) -> list[bytes]:
    """The Chat Completions stream of ``completion`` (a ``chat.completion`` body): its
    ``chat.completion.chunk`` objects, a last chunk of usage with no choices when
    ``stream_options.include_usage`` asked for it (every chunk then has ``usage: null``),
    and ``[DONE]``."""
    events = [sse(chunk) for chunk in _chat_chunks(completion, include_usage=include_usage)]
    events.append(sse("[DONE]"))
    return events


def _chat_chunks(completion: dict[str, Any], *, include_usage: bool) -> Iterator[dict[str, Any]]:
    base: dict[str, Any] = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
    }
    if include_usage:
        base["usage"] = None

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**base, "choices": [choice]}

    (choice,) = completion["choices"]
    message = choice["message"]
    content = message.get("content")
    yield chunk({"role": "assistant", "content": "" if content is not None else None})
    for piece in stream_pieces(content or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": function["name"], "arguments": ""},
                    }
                ]
            }
        )
        for piece in stream_pieces(function["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield {**base, "choices": [], "usage": completion["usage"]}


# --- OpenAI Responses --------------------------------------------------------------------


def responses_events(response: dict[str, Any]) -> list[bytes]:
    """The Responses stream of ``response`` (a finished ``response`` body): created, in
    progress, each output item's events, then ``response.completed`` with the whole
    response (``response.incomplete`` when its status is ``incomplete``)."""
    events = []
    for number, event in enumerate(_responses_events(response)):
        event["sequence_number"] = number
        events.append(sse(event, event["type"]))
    return events


def _responses_events(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    opening = {
        **response,
        "status": "in_progress",
        "output": [],
        "usage": None,
        "completed_at": None,
        "incomplete_details": None,
    }
    yield {"type": "response.created", "response": opening}
    yield {"type": "response.in_progress", "response": opening}
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            yield from _message_events(index, item)
        elif item["type"] == "function_call":
            yield from _function_call_events(index, item)
        else:
            yield from _reasoning_events(index, item)
    final = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    yield {"type": final, "response": response}


def _item_added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def _item_done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def _message_events(index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield _item_added(index, {**item, "status": "in_progress", "content": []})
    where = {"item_id": item["id"], "output_index": index}
    for part_index, part in enumerate(item["content"]):
        at = {**where, "content_index": part_index}
        yield {"type": "response.content_part.added", **at, "part": {**part, "text": ""}}
        for piece in stream_pieces(part["text"]):
            yield {"type": "response.output_text.delta", **at, "delta": piece, "logprobs": []}
        yield {"type": "response.output_text.done", **at, "text": part["text"], "logprobs": []}
        yield {"type": "response.content_part.done", **at, "part": part}
    yield _item_done(index, item)


def _function_call_events(index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield _item_added(index, {**item, "status": "in_progress", "arguments": ""})
    where = {"item_id": item["id"], "output_index": index}
    for piece in stream_pieces(item["arguments"]):
        yield {"type": "response.function_call_arguments.delta", **where, "delta": piece}
    yield {
        "type": "response.function_call_arguments.done",
        **where,
        "arguments": item["arguments"],
    }
    yield _item_done(index, item)


def _reasoning_events(index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    added = {"id": item["id"], "type": "reasoning", "summary": []}
    yield _item_added(index, added)
    where = {"item_id": item["id"], "output_index": index}
    for summary_index, part in enumerate(item["summary"]):
        at = {**where, "summary_index": summary_index}
        empty = {"type": "summary_text", "text": ""}
        yield {"type": "response.reasoning_summary_part.added", **at, "part": empty}
        for piece in stream_pieces(part["text"]):
            yield {"type": "response.reasoning_summary_text.delta", **at, "delta": piece}
        yield {"type": "response.reasoning_summary_text.done", **at, "text": part["text"]}
        yield {"type": "response.reasoning_summary_part.done", **at, "part": part}
    yield _item_done(index, item)
