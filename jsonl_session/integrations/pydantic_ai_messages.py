"""pydantic-ai messages as pi messages, and back.

Owns the mapping between pydantic-ai's `ModelMessage`s and the pi message dicts a
session file holds (DESIGN §2, spec/SPEC.md §6):

- a `ModelRequest` becomes, in this order, a `system` message when it brings system
  prompt parts or changes the instructions, then one message per part it can show:
  a `user` message per user prompt or retry feedback, a `toolResult` per tool return
  (``isError`` unless its outcome is ``success``: a call that failed, is retried, was
  denied or interrupted did not give its result) and per retry of a tool call (a
  deprecated `RetryPromptPart` naming its tool, still built by some code);
- a `ModelResponse` becomes one `assistant` message (text, thinking, tool calls);
- the message's own serialization (`ModelMessagesTypeAdapter`) rides along in the
  ``pydanticAi`` field of the last of those pi messages, so loading gives back an equal
  message while pi and this library read the pi-shaped fields;
- a pi message this store did not write (pi continued the session, say) is read back
  as well as its shape allows (`from_pi`).

Which pi entries make up one conversation entry, and the record, are
pydantic_ai_log.py's; finding and creating the files is pydantic_ai_store.py's.
pydantic-ai is imported here, so only importing these modules needs the extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from jsonl_session.extras import needs_extra

with needs_extra("pydantic-ai", "the pydantic-ai session store"):
    from pydantic_ai.messages import (
        BaseToolReturnPart,
        BinaryContent,
        CachePoint,
        FileUrl,
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        NativeToolReturnPart,
        RetryFeedbackPart,
        RetryPromptPart,
        SystemPromptPart,
        TextContent,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UploadedFile,
        UserContent,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage

PAYLOAD_KEY = "pydanticAi"
"""The extra field of a pi message written here: ``{"entry", "message"}`` on the last pi
message of a conversation entry, ``{"continues": true}`` on the ones before it. pi and
context building ignore unknown fields; this library keeps them byte for byte."""

INSTRUCTIONS_SECTION = "instructions"
"""The system message section holding a request's instructions: pydantic-ai sends only
the latest request's instructions, which is what patching one section by name gives."""

API = "pydantic-ai"
"""pi's ``api`` of an assistant message whose wire API is not known: pydantic-ai's model
class, not the response, decides it. Our provider adapters replay signatures only for
their own api, so an unknown one is sent back without them, which is always accepted."""

_APIS = {"anthropic": "anthropic-messages"}  # the providers that speak one API only

_REDACTED_THINKING_ID = "redacted_thinking"  # how pydantic-ai's Anthropic model marks one


def dump_message(message: ModelMessage) -> Any:
    """The message as pydantic-ai serializes it (JSON-ready)."""
    return ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]


def load_message(data: Any) -> ModelMessage:
    """A message back from `dump_message`'s output."""
    return ModelMessagesTypeAdapter.validate_python([data])[0]


def millis(moment: datetime | None) -> int:
    """pi's message timestamp (ms since the epoch); now when pydantic-ai left it unset."""
    return int((moment or datetime.now(UTC)).timestamp() * 1000)


def to_pi(message: ModelMessage, instructions: str | None) -> list[dict[str, Any]]:
    """The pi messages that show ``message``, without the payload field.

    ``instructions``: those in force before it on the session's path (the system
    message's instructions section); a request only repeats them when they changed.
    May be empty: a request holding nothing pi can show (only deltas, say)."""
    if isinstance(message, ModelResponse):
        return [_assistant(message)]
    return _request(message, instructions)


def _request(request: ModelRequest, instructions: str | None) -> list[dict[str, Any]]:
    stamp = millis(request.timestamp)
    out: list[dict[str, Any]] = []
    prompts = [part.content for part in request.parts if isinstance(part, SystemPromptPart)]
    changed = request.instructions != instructions
    if prompts or changed:
        system: dict[str, Any] = {"role": "system", "content": "\n\n".join(prompts)}
        if changed:
            system["sections"] = {INSTRUCTIONS_SECTION: request.instructions}
        system["timestamp"] = stamp
        out.append(system)
    for part in request.parts:
        shown = _request_part(part)
        if shown is not None:
            out.append(shown)
    return out


def _request_part(part: ModelRequestPart) -> dict[str, Any] | None:
    if isinstance(part, UserPromptPart):
        return {
            "role": "user",
            "content": _user_content(part.content),
            "timestamp": millis(part.timestamp),
        }
    if isinstance(part, BaseToolReturnPart) and not isinstance(part, NativeToolReturnPart):
        return {
            "role": "toolResult",
            "toolCallId": part.tool_call_id,
            "toolName": part.tool_name,
            # the error channel is isError, as pydantic-ai's own providers send it; pi
            # marks any call that gave no result of its own (denied, interrupted) too
            "content": [{"type": "text", "text": part.model_response_str(wrap_if_error=False)}],
            "isError": part.outcome != "success",
            "timestamp": millis(part.timestamp),
        }
    if isinstance(part, RetryPromptPart) and part.tool_name is not None:
        # what pydantic-ai makes of one: that call's result, retried (an error)
        return {
            "role": "toolResult",
            "toolCallId": part.tool_call_id,
            "toolName": part.tool_name,
            "content": [{"type": "text", "text": part.model_response()}],
            "isError": True,
            "timestamp": millis(part.timestamp),
        }
    if isinstance(part, RetryFeedbackPart | RetryPromptPart):
        # what the model is shown for it, in the user voice most causes take
        text = part.model_response()
        return {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "timestamp": millis(part.timestamp),
        }
    return None  # system prompts are gathered above; deltas and bookkeeping parts show nothing


def _user_content(content: str | Sequence[UserContent]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif isinstance(item, TextContent):
            blocks.append({"type": "text", "text": item.content})
        elif isinstance(item, BinaryContent) and item.is_image:
            blocks.append({"type": "image", "data": item.base64, "mimeType": item.media_type})
        elif isinstance(item, BinaryContent):
            blocks.append({"type": "text", "text": f"[{item.media_type} file]"})
        elif isinstance(item, FileUrl):
            blocks.append({"type": "text", "text": f"[{item.kind}: {item.url}]"})
        elif isinstance(item, UploadedFile):
            blocks.append({"type": "text", "text": f"[uploaded file {item.file_id}]"})
        elif not isinstance(item, CachePoint):  # a cache point is no content
            blocks.append({"type": "text", "text": str(item)})
    return blocks


def _assistant(response: ModelResponse) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    calls = False
    for part in response.parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.content})
        elif isinstance(part, ThinkingPart):
            block: dict[str, Any] = {"type": "thinking", "thinking": part.content}
            if part.signature is not None:
                block["thinkingSignature"] = part.signature
            if part.id == _REDACTED_THINKING_ID:
                block["redacted"] = True
            content.append(block)
        elif isinstance(part, ToolCallPart):
            # only function tools: a native (provider-run) call has no toolResult to follow
            calls = True
            content.append(
                {
                    "type": "toolCall",
                    "id": part.tool_call_id,
                    "name": part.tool_name,
                    "arguments": part.args_as_dict(),
                }
            )
    provider = response.provider_name or API
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": _APIS.get(provider, API),
        "provider": provider,
        "model": response.model_name or response.model_id or "unknown",
    }
    if response.provider_response_id is not None:
        message["responseId"] = response.provider_response_id
    message["usage"] = _usage(response.usage)
    message["stopReason"] = "toolUse" if calls else _stop_reason(response.finish_reason)
    message["timestamp"] = millis(response.timestamp)
    return message


def _stop_reason(finish_reason: str | None) -> str:
    return {"length": "length", "error": "error"}.get(finish_reason or "", "stop")


def _usage(usage: RequestUsage) -> dict[str, Any]:
    # pydantic-ai's input_tokens include cache reads and writes; pi counts them apart
    fresh = max(usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens, 0)
    cost = float(usage.cost) if usage.cost is not None else 0.0
    return {
        "input": fresh,
        "output": usage.output_tokens,
        "cacheRead": usage.cache_read_tokens,
        "cacheWrite": usage.cache_write_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
        # only the total is known: pydantic-ai prices a request as a whole
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }


# --- pi messages this store did not write -------------------------------------------


def from_pi(message: dict[str, Any]) -> ModelMessage | None:
    """A pi message read as pydantic-ai's, or None for roles it has no form for
    (bash executions, extension messages). Lossy: what pydantic-ai needs and pi never
    wrote (run ids, provider details) stays unset."""
    role = message.get("role")
    stamp = _moment(message.get("timestamp"))
    if role == "user":
        return ModelRequest(
            parts=[UserPromptPart(_prompt(message.get("content")), timestamp=stamp)],
            timestamp=stamp,
        )
    if role == "system":
        text = "\n\n".join(t for t in [_text(message.get("content")), *_sections(message)] if t)
        return ModelRequest(parts=[SystemPromptPart(text, timestamp=stamp)], timestamp=stamp)
    if role == "toolResult":
        part = ToolReturnPart(
            tool_name=str(message.get("toolName", "")),
            content=_text(message.get("content")),
            tool_call_id=str(message.get("toolCallId", "")),
            timestamp=stamp,
            outcome="failed" if message.get("isError") is True else "success",
        )
        return ModelRequest(parts=[part], timestamp=stamp)
    if role == "assistant":
        return _response(message, stamp)
    return None


def _response(message: dict[str, Any], stamp: datetime) -> ModelResponse:
    parts: list[TextPart | ThinkingPart | ToolCallPart] = []
    for block in _blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text":
            parts.append(TextPart(str(block.get("text", ""))))
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            parts.append(
                ThinkingPart(
                    str(block.get("thinking", "")),
                    id=_REDACTED_THINKING_ID if block.get("redacted") is True else None,
                    signature=signature if isinstance(signature, str) else None,
                )
            )
        elif kind == "toolCall":
            arguments = block.get("arguments")
            parts.append(
                ToolCallPart(
                    str(block.get("name", "")),
                    arguments if isinstance(arguments, dict) else {},
                    tool_call_id=str(block.get("id", "")),
                )
            )
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    cache_read, cache_write = _count(usage, "cacheRead"), _count(usage, "cacheWrite")
    provider, model = message.get("provider"), message.get("model")
    return ModelResponse(
        parts=parts,
        usage=RequestUsage(
            input_tokens=_count(usage, "input") + cache_read + cache_write,
            output_tokens=_count(usage, "output"),
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        ),
        model_name=model if isinstance(model, str) else None,
        timestamp=stamp,
        provider_name=provider if isinstance(provider, str) else None,
    )


def _prompt(content: Any) -> str | list[UserContent]:
    if isinstance(content, str):
        return content
    items: list[UserContent] = []
    for block in _blocks(content):
        if block.get("type") == "text":
            items.append(str(block.get("text", "")))
        elif block.get("type") == "image" and isinstance(block.get("data"), str):
            mime = block.get("mimeType")
            items.append(
                BinaryContent.from_data_uri(f"data:{mime or 'image/png'};base64,{block['data']}")
            )
    return items


def _blocks(content: Any) -> list[dict[str, Any]]:
    return (
        [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text")


def _sections(message: dict[str, Any]) -> list[str]:
    sections = message.get("sections")
    return (
        [t for t in sections.values() if isinstance(t, str)] if isinstance(sections, dict) else []
    )


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _moment(value: Any) -> datetime:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, UTC)
    return datetime.fromtimestamp(0, UTC)
