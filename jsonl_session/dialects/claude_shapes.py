"""What Claude Code's lines mean in pi's shapes: the line types, stop reasons, user,
tool-result and assistant content as pi blocks, usage; recognising a transcript from
its first lines. Functions of what they are given, with no state of their own
(`assistant_blocks` notes each tool call's name in the dict it is given); walking the
lines, and what that remembers, is claude.py's.
"""

from __future__ import annotations

from typing import Any

import msgspec

from jsonl_session.dialects.building import pi_usage
from jsonl_session.format import walk
from jsonl_session.format.walk import finite_number

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "refusal": "error",
    "pause_turn": "stop",
}
CHAIN_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})


class Sorted(msgspec.Struct):
    """What claude.py's first pass (its reader's ``sort``) reads of a line in a long
    transcript: the rest is skipped (a line's message is decoded once, in the
    second pass)."""

    type: Any = msgspec.UNSET
    uuid: Any = msgspec.UNSET
    isSidechain: Any = msgspec.UNSET
    sessionId: Any = msgspec.UNSET
    customTitle: Any = msgspec.UNSET
    agentName: Any = msgspec.UNSET
    aiTitle: Any = msgspec.UNSET
    summary: Any = msgspec.UNSET


BOOKKEEPING_TYPES = frozenset(
    {
        "summary",
        "custom-title",
        "ai-title",
        "agent-name",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "pr-link",
        "permission-mode",
    }
)


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def user_blocks(content: Any) -> list[dict[str, Any]]:
    """User or tool-result content as pi blocks (text, image)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, str):
            out.append({"type": "text", "text": block})
        elif isinstance(block, dict) and block.get("type") == "text":
            out.append({"type": "text", "text": as_text(block.get("text") or "")})
        elif isinstance(block, dict) and block.get("type") == "image":
            source = as_object(block.get("source"))
            if source.get("type") == "base64":
                out.append(
                    {
                        "type": "image",
                        "data": as_text(source.get("data") or ""),
                        "mimeType": str(source.get("media_type") or "image/png"),
                    }
                )
            else:
                out.append(
                    {"type": "text", "text": f"[image: {source.get('url') or 'not stored'}]"}
                )
    return out


def assistant_blocks(content: Any, tool_names: dict[str, str]) -> list[dict[str, Any]]:
    """Assistant content as pi blocks; each tool call's name is noted in ``tool_names``
    by its id (for the results that answer it)."""
    # walk.as_text gives any value as text; this module's as_text keeps strings only
    out: list[dict[str, Any]] = []
    for block in (
        content if isinstance(content, list) else [content] if isinstance(content, str) else []
    ):
        if isinstance(block, str):
            out.append({"type": "text", "text": block})
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            out.append({"type": "text", "text": walk.as_text(block.get("text") or "")})
        elif kind == "thinking":
            thinking = {"type": "thinking", "thinking": walk.as_text(block.get("thinking") or "")}
            if isinstance(block.get("signature"), str):
                thinking["thinkingSignature"] = block["signature"]
            out.append(thinking)
        elif kind == "redacted_thinking":
            out.append(
                {
                    "type": "thinking",
                    "thinking": "",
                    "thinkingSignature": walk.as_text(block.get("data") or ""),
                    "redacted": True,
                }
            )
        elif kind in ("tool_use", "server_tool_use"):
            call_id, name = (
                walk.as_text(block.get("id") or ""),
                walk.as_text(block.get("name") or ""),
            )
            tool_names[call_id] = name
            arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
            out.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
    return out


def usage_of(usage: dict[str, Any]) -> dict[str, Any]:
    def number(key: str) -> int:
        value = finite_number(usage.get(key))
        return int(value) if value is not None else 0

    fresh, output = number("input_tokens"), number("output_tokens")
    read, written = number("cache_read_input_tokens"), number("cache_creation_input_tokens")
    return pi_usage(fresh, output, read, written, fresh + output + read + written)


def is_claude(objects: list[dict[str, Any]]) -> bool:
    """Whether the first objects of a file look like a Claude Code transcript."""
    for value in objects:
        kind = value.get("type")
        if not isinstance(kind, str):
            continue
        if kind in CHAIN_TYPES and isinstance(value.get("sessionId"), str) and "uuid" in value:
            return True
        if kind in BOOKKEEPING_TYPES and kind != "summary":
            return True
        if kind == "summary" and "leafUuid" in value:
            return True
    return False


def first_kept(metadata: dict[str, Any]) -> str | None:
    """The first message a partial compaction keeps: the head of its preserved
    segment, or the first of its preserved messages (either spelling); None when it
    summarized everything."""
    segment = metadata.get("preservedSegment") or metadata.get("preserved_segment")
    if isinstance(segment, dict):
        head = segment.get("headUuid") or segment.get("head_uuid")
        if isinstance(head, str):
            return head
    kept = metadata.get("preservedMessages") or metadata.get("preserved_messages")
    uuids = kept.get("uuids") if isinstance(kept, dict) else None
    if isinstance(uuids, list) and uuids and isinstance(uuids[0], str):
        return uuids[0]
    return None
