"""What Claude Code's lines mean in pi's shapes: the line types, stop reasons, user and
tool-result content as pi blocks, usage; recognising a transcript from its first
lines. Pure functions; walking the lines is claude.py's.
"""

from __future__ import annotations

from typing import Any

from jsonl_session.dialects.building import pi_usage
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
