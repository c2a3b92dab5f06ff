"""Anthropic Messages API: a session context as keyword arguments for
``anthropic.Anthropic().messages.create(...)`` (and ``messages.count_tokens``).

Owns the Anthropic-specific rules on top of providers/history.py: the system
prompt goes top-level; tool calls become ``tool_use`` blocks and their results
``tool_result`` blocks in a user message; thinking keeps its signature when it came
from this API (redacted thinking as ``redacted_thinking``), and thinking without a
signature or from another provider becomes plain text; images become base64
image blocks; tool-call ids are made to fit Anthropic's pattern (consistently for
calls and results); consecutive messages of one role are merged, since the API
wants turns to alternate; a history that starts with the model gets a short user
message first. Pure: no network, no SDK import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from jsonl_session.format.walk import as_text, items_of
from jsonl_session.providers.common import (
    ContextLike,
    ProviderRequest,
    ToolSpec,
    history_of,
    prompt_and_tools,
)
from jsonl_session.providers.history import Repair

API = "anthropic-messages"
CONTINUATION_TEXT = "(The conversation continues from an earlier point.)"
_ID_PATTERN = re.compile(r"[^a-zA-Z0-9_-]")
_ID_LIMIT = 64


def to_anthropic(
    context: ContextLike,
    system: str | None = None,
    tools: Sequence[ToolSpec | dict[str, Any]] | None = None,
    *,
    model: str | None = None,
) -> ProviderRequest:
    """``messages``, and ``system`` and ``tools`` when there are any, for the Messages
    API: by default the transcript's prompt and tools (see common.prompt_and_tools).

    Given the ``model`` the request is for, thinking follows pi exactly: it is sent
    back (signed, or redacted) only in replies that model gave, and left out of every
    other reply. Without it, signed thinking of any Anthropic reply is sent back and
    other thinking becomes text."""
    system, specs = prompt_and_tools(context, system, tools)
    history = history_of(context)
    repairs = list(history.repairs)
    ids = _ToolIds()
    turns: list[dict[str, Any]] = []
    for message, source in zip(history.messages, history.sources, strict=True):
        role = message["role"]
        if role == "assistant":
            blocks, left_out = _assistant_blocks(message, ids, model)
            turn = {"role": "assistant", "content": blocks}
            if left_out:
                detail = (
                    f"{left_out} thinking block(s) of {as_text(message.get('model'))}, not {model}"
                )
                repairs.append(Repair("thinking-dropped", source, detail))
        elif role == "toolResult":
            turn = {"role": "user", "content": [_tool_result(message, ids)]}
        else:
            turn = {"role": "user", "content": _user_blocks(message.get("content"))}
        if not turn["content"]:
            # e.g. an assistant turn holding only another provider's redacted thinking
            detail = f"{role} message with nothing this API accepts"
            repairs.append(Repair("unsendable-message-dropped", source, detail))
            continue
        if turns and turns[-1]["role"] == turn["role"]:
            turns[-1]["content"].extend(turn["content"])
        else:
            turns.append(turn)
    _trim_final_assistant(turns, history.sources[-1] if history.sources else 0, repairs)
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": CONTINUATION_TEXT}]})
        repairs.append(
            Repair("placeholder-user-added", 0, "the history starts with the model's turn")
        )
    kwargs: dict[str, Any] = {"messages": turns}
    if system and system.strip():
        kwargs["system"] = system
    if specs:
        kwargs["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in specs
        ]
    return ProviderRequest(kwargs, sorted(repairs, key=lambda r: r.index))


def _trim_final_assistant(turns: list[dict[str, Any]], source: int, repairs: list[Repair]) -> None:
    """The API refuses a final assistant turn (a prefill) whose text ends in
    whitespace: trim the end of its last text block."""
    if not turns or turns[-1]["role"] != "assistant":
        return
    last = turns[-1]["content"][-1]
    if last.get("type") == "text" and last["text"] != last["text"].rstrip():
        turns[-1]["content"][-1] = {**last, "text": last["text"].rstrip()}
        detail = "trailing whitespace trimmed from the final assistant text"
        repairs.append(Repair("trailing-whitespace-trimmed", source, detail))


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else ():
        converted = _text_or_image(block)
        if converted is not None:
            blocks.append(converted)
    return blocks


def _text_or_image(block: Any) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    if block.get("type") == "text":
        text = as_text(block.get("text", ""))
        return {"type": "text", "text": text} if text.strip() else None
    if block.get("type") == "image":
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": block.get("mimeType") or "image/png",
                "data": block.get("data"),
            },
        }
    return None


def _assistant_blocks(
    message: dict[str, Any], ids: _ToolIds, model: str | None
) -> tuple[list[dict[str, Any]], int]:
    """The blocks to send, and how many thinking blocks were left out as another
    model's."""
    # Signatures are only valid where they were made: the Anthropic API itself (pi
    # also uses the anthropic-messages api for other providers' compatible endpoints),
    # and, when the target is known, the model that made them.
    ours = message.get("api") == API and message.get("provider") == "anthropic"
    if model is not None:
        ours = ours and model in (message.get("model"), message.get("responseModel"))
    blocks: list[dict[str, Any]] = []
    left_out = 0
    for block in items_of(message.get("content")):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = as_text(block.get("text", ""))
            if text.strip():
                blocks.append({"type": "text", "text": text})
        elif kind == "thinking":
            if model is not None and not ours:
                left_out += 1  # pi: another model's thinking is neither sent nor shown as text
                continue
            converted = _thinking(block, ours)
            if converted is not None:
                blocks.append(converted)
        elif kind == "toolCall":
            arguments = block.get("arguments")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": ids.get(as_text(block.get("id"))),
                    "name": block.get("name"),
                    "input": arguments if isinstance(arguments, dict) else {},
                }
            )
    return blocks, left_out


def _thinking(block: dict[str, Any], ours: bool) -> dict[str, Any] | None:
    signature = block.get("thinkingSignature")
    signed = isinstance(signature, str) and bool(signature.strip())
    if block.get("redacted"):
        # An opaque payload only this API can read back.
        return {"type": "redacted_thinking", "data": signature} if ours and signed else None
    thinking = as_text(block.get("thinking", ""))
    if not thinking.strip():
        return None
    if ours and signed:
        return {"type": "thinking", "thinking": thinking, "signature": signature}
    # Unsigned (an aborted stream) or another provider's: the API would reject it as
    # thinking, so the model sees it as its own earlier text.
    return {"type": "text", "text": thinking}


def _tool_result(message: dict[str, Any], ids: _ToolIds) -> dict[str, Any]:
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": ids.get(as_text(message.get("toolCallId"))),
    }
    content = _user_blocks(message.get("content"))
    if content:
        result["content"] = content
    if message.get("isError"):
        result["is_error"] = True
    return result


class _ToolIds:
    """Tool-call ids that fit ``^[a-zA-Z0-9_-]{1,64}$``, the same for a call and its
    result, and still unique (ids from other providers can be long and contain
    ``|`` or ``.``)."""

    def __init__(self) -> None:
        self._given: dict[str, str] = {}
        self._used: set[str] = set()

    def get(self, original: str) -> str:
        known = self._given.get(original)
        if known is not None:
            return known
        candidate = _ID_PATTERN.sub("_", original)[:_ID_LIMIT] or "tool"
        n = 1
        unique = candidate
        while unique in self._used:
            n += 1
            suffix = f"_{n}"
            unique = candidate[: _ID_LIMIT - len(suffix)] + suffix
        self._given[original] = unique
        self._used.add(unique)
        return unique
