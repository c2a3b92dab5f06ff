"""Messages in pi's shapes (user, assistant and tool-result messages and their content
blocks), built in this one module for every suite.

The suites' messages differ in small ways that tests may depend on: content as a
string or as text blocks, their timestamps, the usage an assistant reports. Where two
suites built different messages, both builders are kept here: the shared ones under
plain names (`user_message`, `assistant_turn`, `tool_result`, ...), a suite's own
variant under the suite's name (``read_*`` for the read-side suites: reader, migrate,
tree, context, listing; ``compaction_*``, ``loop_*``, ``summarizer_*``, ``history_*``,
``export_*``, ...). Tests import them under short local names (``from builders
import read_user as user``), so each test builds exactly the message it always built.
"""

from __future__ import annotations

from typing import Any

BASE_MS = 1_714_564_800_000  # 2024-05-01T12:00:00.000Z: the read-side suites' clock


# --- content blocks -----------------------------------------------------------------------


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_block(data: str = "iVBORw0KGgo=", mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": data, "mimeType": mime}


def tool_call_block(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def tool_call(call_id: str, name: str = "read", **arguments: Any) -> dict[str, Any]:
    """A toolCall block with its arguments as keywords."""
    return tool_call_block(call_id, name, arguments)


def history_call(call_id: str, name: str = "read") -> dict[str, Any]:
    """A toolCall block whose arguments are always ``{"path": "a.py"}`` (history suite)."""
    return tool_call_block(call_id, name, {"path": "a.py"})


# --- user messages ------------------------------------------------------------------------


def user_message(
    text: str = "hello", timestamp: int = 1_700_000_000_000, **extra: Any
) -> dict[str, Any]:
    """A user message whose content is a string."""
    return {"role": "user", "content": text, "timestamp": timestamp, **extra}


def read_user(text: str, ms: int = BASE_MS, **extra: Any) -> dict[str, Any]:
    """A user message with string content, dated BASE_MS unless told (read-side suites)."""
    return user_message(text, ms, **extra)


def compaction_user(text: str) -> dict[str, Any]:
    """A user message with string content and timestamp 1 (compaction suites)."""
    return user_message(text, 1)


def blocks_user(text: str, ms: int) -> dict[str, Any]:
    """A user message whose content is one text block."""
    return {"role": "user", "content": [text_block(text)], "timestamp": ms}


def loop_user(text: str) -> dict[str, Any]:
    """A user message with one text block and timestamp 1 (agent-loop suite)."""
    return blocks_user(text, 1)


def summarizer_user(text: str, ms: int = 1_750_000_000_000) -> dict[str, Any]:
    """A user message with one text block, dated in 2025 (summarizer suite)."""
    return blocks_user(text, ms)


def hook_message(text: str) -> dict[str, Any]:
    """A hookMessage as versions 1 and 2 wrote it (migrated to a custom message)."""
    return {
        "role": "hookMessage",
        "customType": "ext",
        "content": text,
        "display": True,
        "timestamp": BASE_MS,
    }


# --- assistant messages --------------------------------------------------------------------


def assistant_turn(content: list[dict[str, Any]], total_tokens: int, ms: int) -> dict[str, Any]:
    """An assistant message in pi's shape: ``content`` blocks, a usage totalling
    ``total_tokens``, and a stop reason that follows from any tool calls."""
    has_calls = any(block.get("type") == "toolCall" for block in content)
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": total_tokens - 5,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": total_tokens,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse" if has_calls else "stop",
        "timestamp": ms,
    }


def assistant_message(text: str = "hi there", timestamp: int = 1_700_000_000_500) -> dict[str, Any]:
    return assistant_turn([text_block(text)], 15, timestamp)


def assistant_with(
    *blocks: dict[str, Any], api: str = "anthropic-messages", stop_reason: str = "stop"
) -> dict[str, Any]:
    """`assistant_message` holding ``blocks``, with the api and stop reason given (the
    stop reason does not follow from the blocks: a test may want one that does not fit)."""
    message = assistant_message()
    message["content"] = list(blocks)
    message["api"] = api
    message["stopReason"] = stop_reason
    return message


def assistant_calling(*calls: dict[str, Any], thinking: str | None = None) -> dict[str, Any]:
    """`assistant_message` making ``calls`` (toolCall blocks), after a thinking block if
    ``thinking`` is given; stop reason toolUse."""
    thought = [{"type": "thinking", "thinking": thinking}] if thinking else []
    return assistant_with(*thought, *calls, stop_reason="toolUse")


def history_assistant_calling(*ids: str, stop: str = "toolUse") -> dict[str, Any]:
    """`assistant_message` making a `history_call` for each id (history suite)."""
    return assistant_with(*(history_call(i) for i in ids), stop_reason=stop)


def export_tool_call(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    """`assistant_message` making one tool call (export suite)."""
    return assistant_with(tool_call_block(call_id, name, arguments), stop_reason="toolUse")


def read_assistant(
    text: str, provider: str = "anthropic", model: str = "claude-sonnet-4", ms: int = BASE_MS
) -> dict[str, Any]:
    """A text reply with a 3-token usage, dated BASE_MS unless told (read-side suites)."""
    return {
        "role": "assistant",
        "content": [text_block(text)],
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": {
            "input": 1,
            "output": 2,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 3,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": ms,
    }


def compaction_assistant(text: str, *calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """A text reply followed by tool calls given as (id, name, arguments); a zero usage
    without costs and timestamp 1 (compaction suites)."""
    content = [text_block(text)]
    for call_id, name, arguments in calls:
        content.append(tool_call_block(call_id, name, arguments))
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 1,
    }


def loop_said(text: str, total_tokens: int = 15) -> dict[str, Any]:
    """A text reply with timestamp 2 (agent-loop suite)."""
    return assistant_turn([text_block(text)], total_tokens, 2)


def summarizer_assistant(
    content: list[dict[str, Any]], total_tokens: int = 15, ms: int = 1_750_000_000_500
) -> dict[str, Any]:
    """`assistant_turn` dated in 2025 unless told (summarizer suite)."""
    return assistant_turn(content, total_tokens, ms)


def summarizer_said(text: str, total_tokens: int = 15) -> dict[str, Any]:
    """A text reply, `summarizer_assistant`."""
    return summarizer_assistant([text_block(text)], total_tokens)


# --- tool results --------------------------------------------------------------------------


def tool_result(
    call_id: str,
    name: str,
    content: list[dict[str, Any]],
    *,
    is_error: bool = False,
    timestamp: int,
) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": is_error,
        "timestamp": timestamp,
    }


def anthropic_tool_result(
    call_id: str, *content: dict[str, Any], error: bool = False
) -> dict[str, Any]:
    """A result of ``read`` holding ``content`` blocks, timestamp 3 (Anthropic adapter)."""
    return tool_result(call_id, "read", list(content), is_error=error, timestamp=3)


def openai_result(call_id: str, *content: dict[str, Any], name: str = "read") -> dict[str, Any]:
    """A result holding ``content`` blocks, timestamp 1_700_000_000_600 (OpenAI adapters)."""
    return tool_result(call_id, name, list(content), timestamp=1_700_000_000_600)


def history_result(call_id: str, text: str = "ok") -> dict[str, Any]:
    """A text result of ``read``, timestamp 5 (history suite)."""
    return tool_result(call_id, "read", [text_block(text)], timestamp=5)


def export_tool_result(name: str, text: str, call_id: str) -> dict[str, Any]:
    """A text result, timestamp 1_700_000_001_000 (export suite)."""
    return tool_result(call_id, name, [text_block(text)], timestamp=1_700_000_001_000)


def compaction_result(call_id: str, name: str, text: str, *, error: bool = False) -> dict[str, Any]:
    """A text result, timestamp 1 (compaction suites)."""
    return tool_result(call_id, name, [text_block(text)], is_error=error, timestamp=1)


def summarizer_result(call_id: str, name: str, text: str, is_error: bool = False) -> dict[str, Any]:
    """A text result dated in 2025 (summarizer suite)."""
    return tool_result(
        call_id, name, [text_block(text)], is_error=is_error, timestamp=1_750_000_001_000
    )
