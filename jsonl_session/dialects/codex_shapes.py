"""What Codex's rollout payloads mean in pi's shapes: content items as text and image
blocks, call outputs, arguments, token usage, dynamic tools; the markers of the
context Codex injects with the user role; recognising a rollout from its first
lines. Pure functions; walking the lines is codex.py's.
"""

from __future__ import annotations

from typing import Any

from jsonl_session.dialects.building import pi_usage
from jsonl_session.format.walk import dumps_text, finite_number, loads_text

CONTEXT_MARKERS = (
    ("# agents.md instructions for ", "</instructions>"),
    ("<environment_context>", "</environment_context>"),
    ("<user_instructions>", "</user_instructions>"),
    ("<skill>", "</skill>"),
    ("<user_shell_command>", "</user_shell_command>"),
    ("<turn_aborted>", "</turn_aborted>"),
    ("<subagent_notification>", "</subagent_notification>"),
)
REQUEST_PREFIX = "## My request for Codex:"
ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
ROLLOUT_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)


def legacy_line(value: dict[str, Any], *, first: bool) -> tuple[str, Any]:
    """A line of a rollout written before September 2025 as (type, payload)."""
    if first and "type" not in value and "id" in value:
        return "session_meta", value
    if value.get("record_type") == "state":
        return "state", None
    return "response_item", value


def spawner(meta: dict[str, Any]) -> Any:
    source = meta.get("source")
    subagent = source.get("subagent") if isinstance(source, dict) else None
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    return spawn.get("parent_thread_id") if isinstance(spawn, dict) else None


def tool_of(spec: dict[str, Any]) -> dict[str, Any]:
    schema = spec.get("inputSchema") or spec.get("input_schema") or {"type": "object"}
    return {
        "name": spec.get("name"),
        "description": spec.get("description") or "",
        "parameters": schema,
    }


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """Codex content items as pi blocks (text, image)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "input_image":
            blocks.append(image_block(part.get("image_url")))
    return blocks


def image_block(url: Any) -> dict[str, Any]:
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return {"type": "image", "data": data, "mimeType": head or "image/png"}
    return {"type": "text", "text": f"[image: {url}]"}


def output_blocks(output: Any) -> list[dict[str, Any]]:
    if isinstance(output, str):
        return [{"type": "text", "text": output}]
    if isinstance(output, dict) and "content" in output:  # the API's own form, if ever written
        return output_blocks(output["content"])
    return content_blocks(output)


def arguments_of(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return loads_text(arguments)
        except ValueError:
            return {"arguments": arguments}
    return arguments if isinstance(arguments, dict) else {}


def usage_of(last: dict[str, Any]) -> dict[str, Any]:
    def number(key: str) -> int:
        value = last.get(key)
        number = finite_number(value)
        return int(number) if number is not None else 0

    cached = number("cached_input_tokens")
    fresh = max(number("input_tokens") - cached, 0)
    output, written = number("output_tokens"), number("cache_write_input_tokens")
    total = number("total_tokens") or fresh + cached + output
    return pi_usage(fresh, output, cached, written, total)


def is_injected(text: str) -> bool:
    lowered = text.strip().lower()
    return any(lowered.startswith(a) and lowered.endswith(b) for a, b in CONTEXT_MARKERS)


def without_prefix(block: dict[str, Any]) -> dict[str, Any]:
    text = block.get("text")
    if block.get("type") == "text" and isinstance(text, str) and REQUEST_PREFIX in text:
        return {"type": "text", "text": text.split(REQUEST_PREFIX, 1)[1].lstrip()}
    return block


def compact_json(value: Any) -> str:
    return dumps_text(value, ensure_ascii=False, separators=(",", ":"))


def is_codex(objects: list[dict[str, Any]]) -> bool:
    """Whether the first objects of a file look like a Codex rollout: an enveloped
    line first, or (2025) a bare session meta followed by bare items."""
    if not objects:
        return False
    first = objects[0]
    kind = first.get("type")
    if isinstance(kind, str) and kind in ROLLOUT_TYPES and isinstance(first.get("payload"), dict):
        return True
    legacy_meta = isinstance(first.get("id"), str) and isinstance(first.get("timestamp"), str)
    legacy_meta = legacy_meta and set(first) <= LEGACY_META_KEYS
    return legacy_meta and any(bare_item(o) for o in objects[1:])


LEGACY_META_KEYS = frozenset({"id", "timestamp", "instructions", "git"})


def bare_item(value: dict[str, Any]) -> bool:
    if value.get("record_type") == "state":
        return True
    kind = value.get("type")
    shaped = "role" in value or "call_id" in value
    return isinstance(kind, str) and kind in ITEM_TYPES and shaped and "parentId" not in value
