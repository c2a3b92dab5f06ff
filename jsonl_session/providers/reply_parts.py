"""The pieces every SDK reply mapping builds with (replies.py maps each API's reply
with them): an SDK object read as a dict, the counts and usage of a reply, the
envelope of pi's assistant message, and tool-call blocks with their arguments parsed.

Owns what these pieces look like, the same for Anthropic, Chat Completions and
Responses: usage with every cost at 0; ``model`` the one asked for when given, else
the one that answered (``responseModel`` when they differ); broken JSON arguments kept
as ``rawArguments`` beside an empty object. Which blocks, stop reasons and usage
fields each API has is replies.py's; streams are streams.py's. No SDK is imported:
objects are read through ``model_dump``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonl_session.errors import EntryValidationError
from jsonl_session.format.ids import now_ms


def plain(value: Any, what: str) -> dict[str, Any]:
    """An SDK object (pydantic, read with ``model_dump``) or a mapping, as a dict."""
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        # The stream helpers' parsed objects make pydantic warn about their generic
        # fields; the values dumped are right, and warnings are not the caller's concern.
        dumped = dump(mode="json", by_alias=True, warnings=False)
        if isinstance(dumped, dict):
            return dumped
    raise EntryValidationError(
        f"{what}: expected the SDK's object or a dict of it, not {type(value).__name__}"
    )


def as_dict(value: Any) -> dict[str, Any]:
    """The value when it is a dict, else an empty one (fields the SDKs may leave null)."""
    return value if isinstance(value, dict) else {}


def dicts_in(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def token_count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def reply_usage(inputs: int, output: int, cache_read: int, cache_write: int) -> dict[str, Any]:
    return {
        "input": inputs,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": inputs + output + cache_read + cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def assistant_message(
    content: list[dict[str, Any]],
    *,
    api: str,
    provider: str,
    asked_model: str | None,
    answered_model: Any,
    response_id: Any,
    usage: dict[str, Any],
    stop_reason: str,
    error_message: str | None,
    timestamp: int | None,
) -> dict[str, Any]:
    answered = answered_model if isinstance(answered_model, str) and answered_model else None
    model = asked_model or answered or "unknown"
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
    }
    if answered and answered != model:
        message["responseModel"] = answered
    if isinstance(response_id, str) and response_id:
        message["responseId"] = response_id
    message["usage"] = usage
    message["stopReason"] = stop_reason
    if error_message:
        message["errorMessage"] = error_message
    message["timestamp"] = now_ms() if timestamp is None else timestamp
    return message


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments as an object, and the raw text when it was not one (the
    model sent broken JSON: kept beside the call so nothing it said is lost)."""
    if isinstance(raw, dict):
        return raw, None
    if not isinstance(raw, str) or not raw.strip():
        return {}, None
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {}, raw
    return (parsed, None) if isinstance(parsed, dict) else ({}, raw)


def tool_call_block(call_id: str, name: Any, raw_arguments: Any) -> dict[str, Any]:
    arguments, unparsed = parse_arguments(raw_arguments)
    block: dict[str, Any] = {
        "type": "toolCall",
        "id": call_id,
        "name": str(name or ""),
        "arguments": arguments,
    }
    if unparsed is not None:
        block["rawArguments"] = unparsed
    return block
