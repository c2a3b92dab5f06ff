"""SDK replies in: an Anthropic ``Message``, an OpenAI ``ChatCompletion`` or ``Response``
(the SDKs' objects, or plain dicts of them) as the assistant message pi stores, and tool
results paired with the calls they answer.

Owns the mapping, which is pi 1.5's own (what pi writes when it talks to these APIs):

- **Anthropic**: ``text`` → text; ``thinking`` → thinking with ``thinkingSignature``;
  ``redacted_thinking`` → thinking ``[Reasoning redacted]``, ``redacted: true``, the
  opaque data as its signature; ``tool_use`` → ``toolCall`` (``input`` → ``arguments``).
  Usage: ``input_tokens`` (which excludes cached input), ``output_tokens``, cache reads
  and writes; the stop reason mapped (``tool_use`` → ``toolUse``, ``max_tokens`` →
  ``length``, ``refusal`` → ``error``).
- **Chat Completions**: the message's text (a refusal is kept as text), a
  ``reasoning_content`` some compatible servers send as thinking, and tool calls with
  their JSON arguments parsed. Input is ``prompt_tokens`` less cached tokens.
- **Responses**: a ``reasoning`` item → thinking (its summary), the item itself kept as
  the signature so it can be replayed; each ``message`` item → a text block whose
  ``textSignature`` names the item; ``function_call`` → ``toolCall`` with id
  ``call_id|item id``. Stop reason from the status (a reply that calls tools is
  ``toolUse``).

Every message gets ``api``, ``provider``, ``model`` (the one asked for when given, else the
one that answered; ``responseModel`` when they differ), ``responseId``, ``usage`` and a
``timestamp``. Costs are left at 0: prices are not this library's to know. Blocks these
messages have no shape for (server tool results, web search calls) are left out.

The pieces all three mappings build with (an SDK object read as a dict, the message's
envelope, usage, tool-call blocks) are reply_parts.py's. Streams (event iterators and
the SDKs' ``stream()`` helpers) are streams.py's; it builds the final reply and hands it
here. Requests out are anthropic.py's and openai.py's. No SDK is imported: objects are
read through ``model_dump``.
"""

from __future__ import annotations

import json
from typing import Any

from jsonl_session.errors import EntryValidationError
from jsonl_session.format.ids import now_ms
from jsonl_session.format.walk import as_text
from jsonl_session.providers.reply_parts import (
    as_dict,
    assistant_message,
    dicts_in,
    plain,
    reply_usage,
    token_count,
    tool_call_block,
)

ANTHROPIC_API = "anthropic-messages"
CHAT_API = "openai-completions"
RESPONSES_API = "openai-responses"
REDACTED_THINKING_TEXT = "[Reasoning redacted]"

_ANTHROPIC_STOPS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
    "refusal": "error",
}
_CHAT_STOPS = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
    "content_filter": "error",
}


# --- Anthropic -----------------------------------------------------------------------


def anthropic_reply(
    message: Any,
    *,
    provider: str = "anthropic",
    model: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """An Anthropic ``Message`` (or its dict) as pi's assistant message."""
    data = plain(message, "an Anthropic message")
    if data.get("type") not in (None, "message") or not isinstance(data.get("content"), list):
        raise EntryValidationError(
            "an Anthropic message must have type 'message' and a content list"
        )
    content: list[dict[str, Any]] = []
    for block in dicts_in(data.get("content")):
        kind = block.get("type")
        if kind == "text":
            content.append({"type": "text", "text": as_text(block.get("text") or "")})
        elif kind == "thinking":
            thinking: dict[str, Any] = {"type": "thinking", "thinking": block.get("thinking") or ""}
            thinking["thinkingSignature"] = block.get("signature") or ""
            content.append(thinking)
        elif kind == "redacted_thinking":
            content.append(
                {
                    "type": "thinking",
                    "thinking": REDACTED_THINKING_TEXT,
                    "thinkingSignature": as_text(block.get("data") or ""),
                    "redacted": True,
                }
            )
        elif kind == "tool_use":
            call_id = as_text(block.get("id") or "")
            content.append(tool_call_block(call_id, block.get("name"), block.get("input")))
    usage = as_dict(data.get("usage"))
    built_usage = reply_usage(
        token_count(usage.get("input_tokens")),
        token_count(usage.get("output_tokens")),
        token_count(usage.get("cache_read_input_tokens")),
        token_count(usage.get("cache_creation_input_tokens")),
    )
    reason = data.get("stop_reason")
    stop = _ANTHROPIC_STOPS.get(reason, "stop") if isinstance(reason, str) else "stop"
    error = None
    if reason == "refusal":
        details = data.get("stop_details")
        explained = details.get("explanation") if isinstance(details, dict) else None
        error = explained or "The model refused to complete the request"
    elif isinstance(reason, str) and reason not in _ANTHROPIC_STOPS:
        stop, error = "error", f"Provider stopped with: {reason}"
    return assistant_message(
        content,
        api=ANTHROPIC_API,
        provider=provider,
        asked_model=model,
        answered_model=data.get("model"),
        response_id=data.get("id"),
        usage=built_usage,
        stop_reason=stop,
        error_message=error,
        timestamp=timestamp,
    )


# --- Chat Completions ----------------------------------------------------------------


def chat_reply(
    completion: Any,
    *,
    provider: str = "openai",
    model: str | None = None,
    timestamp: int | None = None,
    choice: int = 0,
) -> dict[str, Any]:
    """A ``ChatCompletion`` (or its dict) as pi's assistant message: the ``choice``-th
    choice (the first by default)."""
    data = plain(completion, "an OpenAI chat completion")
    choices = dicts_in(data.get("choices"))
    if not 0 <= choice < len(choices):
        raise EntryValidationError(
            f"the chat completion has {len(choices)} choice(s); choice {choice} does not exist"
        )
    # the choice numbered ``choice`` (servers may list them in another order)
    picked = next((c for c in choices if c.get("index") == choice), choices[choice])
    reply = as_dict(picked.get("message"))
    content: list[dict[str, Any]] = []
    for field in ("reasoning_content", "reasoning", "reasoning_text"):
        reasoning = reply.get(field)
        if isinstance(reasoning, str) and reasoning:
            # pi records which field the reasoning came in, to send it back the same way
            content.append({"type": "thinking", "thinking": reasoning, "thinkingSignature": field})
            break
    text = reply.get("content")
    if isinstance(text, list):  # some compatible servers send parts
        text = "".join(as_text(p.get("text") or "") for p in dicts_in(text))
    if isinstance(text, str) and text:
        content.append({"type": "text", "text": text})
    refusal = reply.get("refusal")
    if isinstance(refusal, str) and refusal:
        content.append({"type": "text", "text": refusal})
    for call in dicts_in(reply.get("tool_calls")):
        function = as_dict(call.get("function"))
        custom = call.get("custom") if isinstance(call.get("custom"), dict) else None
        if custom is not None:
            block = tool_call_block(as_text(call.get("id") or ""), custom.get("name"), None)
            block["arguments"] = {"input": as_text(custom.get("input") or "")}
            content.append(block)
        else:
            call_id = as_text(call.get("id") or "")
            content.append(
                tool_call_block(call_id, function.get("name"), function.get("arguments"))
            )
    reason = picked.get("finish_reason")
    stop = _CHAT_STOPS.get(reason, "error") if isinstance(reason, str) else "stop"
    error = None
    if stop == "error":
        error = f"Provider finish_reason: {reason}"
    elif stop == "stop" and any(b["type"] == "toolCall" for b in content):
        stop = "toolUse"
    return assistant_message(
        content,
        api=CHAT_API,
        provider=provider,
        asked_model=model,
        answered_model=data.get("model"),
        response_id=data.get("id"),
        usage=_chat_usage(data.get("usage")),
        stop_reason=stop,
        error_message=error,
        timestamp=timestamp,
    )


def _chat_usage(raw: Any) -> dict[str, Any]:
    usage = raw if isinstance(raw, dict) else {}
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cache_read = token_count(details.get("cached_tokens"))
    cache_write = token_count(details.get("cache_write_tokens"))
    inputs = max(0, token_count(usage.get("prompt_tokens")) - cache_read - cache_write)
    return reply_usage(inputs, token_count(usage.get("completion_tokens")), cache_read, cache_write)


# --- Responses -----------------------------------------------------------------------


def responses_reply(
    response: Any,
    *,
    provider: str = "openai",
    model: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """A ``Response`` (or its dict) as pi's assistant message."""
    data = plain(response, "an OpenAI response")
    if not isinstance(data.get("output"), list):
        raise EntryValidationError("an OpenAI response must have an output list")
    content = output_blocks(dicts_in(data.get("output")))
    status = data.get("status")
    details = data.get("incomplete_details")
    incomplete = details.get("reason") if isinstance(details, dict) else None
    stop, error = _responses_stop(status, incomplete)
    failure = data.get("error")
    if stop == "error" and isinstance(failure, dict) and failure.get("message"):
        error = str(failure["message"])
    elif stop == "error" and error is None:
        error = "Unknown error"  # pi's words for a failure the API did not explain
    if stop == "stop" and any(b["type"] == "toolCall" for b in content):
        stop = "toolUse"
    return assistant_message(
        content,
        api=RESPONSES_API,
        provider=provider,
        asked_model=model,
        answered_model=data.get("model"),
        response_id=data.get("id"),
        usage=_responses_usage(data.get("usage")),
        stop_reason=stop,
        error_message=error,
        timestamp=timestamp,
    )


def output_blocks(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses output items (reasoning, message, function_call, custom_tool_call) as
    the content blocks of one assistant message, in order."""
    content: list[dict[str, Any]] = []
    for item in items:
        kind = item.get("type")
        if kind == "reasoning":
            content.append(reasoning_block(item))
        elif kind == "message":
            parts = dicts_in(item.get("content"))
            text = "".join(
                str(p.get("text") if p.get("type") == "output_text" else p.get("refusal") or "")
                for p in parts
            )
            block: dict[str, Any] = {"type": "text", "text": text}
            if isinstance(item.get("id"), str):
                block["textSignature"] = text_signature(item["id"], item.get("phase"))
            content.append(block)
        elif kind == "function_call":
            content.append(tool_call_block(_call_id(item), item.get("name"), item.get("arguments")))
        elif kind == "custom_tool_call":
            call = tool_call_block(_call_id(item), item.get("name"), None)
            call["arguments"] = {"input": as_text(item.get("input") or "")}
            content.append(call)
    return content


def reasoning_block(item: dict[str, Any]) -> dict[str, Any]:
    """A reasoning item as thinking: its summary (else its content) as the text, the
    item itself, without empty fields, as the signature to replay it by."""
    summary = "\n\n".join(as_text(s.get("text") or "") for s in dicts_in(item.get("summary")))
    shown = "\n\n".join(as_text(c.get("text") or "") for c in dicts_in(item.get("content")))
    kept = {k: v for k, v in item.items() if v is not None}
    signature = json.dumps(kept, separators=(",", ":"), ensure_ascii=False)
    return {"type": "thinking", "thinking": summary or shown, "thinkingSignature": signature}


def text_signature(item_id: str, phase: Any) -> str:
    """pi's text signature for a Responses message item: ``{"v":1,"id":…[,"phase"]}``."""
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if isinstance(phase, str) and phase:
        payload["phase"] = phase
    return json.dumps(payload, separators=(",", ":"))


def _call_id(item: dict[str, Any]) -> str:
    call_id = as_text(item.get("call_id") or "")
    item_id = item.get("id")
    return f"{call_id}|{item_id}" if isinstance(item_id, str) and item_id else call_id


def _responses_stop(status: Any, incomplete: Any) -> tuple[str, str | None]:
    if status in (None, "completed", "in_progress", "queued"):
        return "stop", None
    if status == "incomplete":
        if incomplete == "max_output_tokens":
            return "length", None
        reason = f"Response incomplete: {incomplete}" if incomplete else None
        return "error", reason or "Response incomplete without a provider reason"
    return "error", None


def _responses_usage(raw: Any) -> dict[str, Any]:
    usage = raw if isinstance(raw, dict) else {}
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, dict) else {}
    cache_read = token_count(details.get("cached_tokens"))
    cache_write = token_count(details.get("cache_write_tokens"))
    inputs = max(0, token_count(usage.get("input_tokens")) - cache_read - cache_write)
    built = reply_usage(inputs, token_count(usage.get("output_tokens")), cache_read, cache_write)
    if token_count(usage.get("total_tokens")):  # pi keeps the total the API reports
        built["totalTokens"] = usage["total_tokens"]
    return built


# --- tool results --------------------------------------------------------------------


def tool_result(
    call: Any,
    content: str | list[dict[str, Any]],
    is_error: bool = False,
    *,
    details: Any = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """pi's toolResult message answering ``call``: a toolCall block of a stored message,
    or the SDK's own call (an Anthropic ``tool_use`` block, a Chat Completions tool
    call, a Responses ``function_call`` item, or dicts of them). ``content`` is the
    output text, or text and image blocks in pi's shapes."""
    data = plain(call, "a tool call")
    kind = data.get("type")
    if kind == "toolCall" or kind == "tool_use":
        call_id, name = data.get("id"), data.get("name")
    elif kind in ("function_call", "custom_tool_call"):
        call_id, name = _call_id(data), data.get("name")
    elif isinstance(data.get("function"), dict):
        call_id, name = data.get("id"), data["function"].get("name")
    elif isinstance(data.get("custom"), dict):  # a Chat Completions custom tool call
        call_id, name = data.get("id"), data["custom"].get("name")
    else:
        raise EntryValidationError(
            "tool_result: the call must be a toolCall block or an SDK tool call "
            f"(tool_use, function_call, or a chat tool call), not {kind!r}"
        )
    if not isinstance(call_id, str) or not call_id:
        raise EntryValidationError("tool_result: the call has no id")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    message: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": str(name or ""),
        "content": blocks,
    }
    if details is not None:
        message["details"] = details
    message["isError"] = bool(is_error)
    message["timestamp"] = now_ms() if timestamp is None else timestamp
    return message
