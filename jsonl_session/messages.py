"""What a message's content says as text, messages in roles every API knows, and the
prompt and tools a transcript's system messages add up to.

Owns reading pi's message content (a string, or a list of blocks) as text, blocks,
images and tool calls, and a text on one line (`single_spaced`); `plain_message`,
the one wording by which summaries, custom messages and shell commands become user
text; and replaying system messages (pi 1.5) into the current system message, prompt
text and tools. Providers, compaction, views and the catalog take text from content
through here; turning blocks into another shape (an API's blocks, a transcript's
parts) stays with the module that does it.
Applying plain roles and repairing a history for an API is providers/history.py's;
what an entry looks like on one line is views/describe.py's. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jsonl_session.format.walk import as_text


def single_spaced(text: str) -> str:
    """``text`` on one line: its runs of white space made one space, none at either
    end (``" ".join(text.split())``). Printable text with no two spaces together
    (most text) is that already but for a space at an end, U+0020 being the only
    printable white space: it is not split and joined, which cost a search's snippets
    and a listing's titles most of their time."""
    if text.isprintable() and "  " not in text:
        return text.strip(" ")
    return " ".join(text.split())


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """The blocks of a content list that are objects (none for a string)."""
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


def text_parts(content: Any) -> list[str]:
    """The texts of a message's content: the string itself, or its text blocks."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]


def joined_text(content: Any, separator: str = "\n") -> str:
    """The texts of a message's content joined into one string."""
    return separator.join(text_parts(content))


def nonblank_texts(content: Any) -> list[str]:
    """The texts of a string or of a list of blocks that are not blank."""
    if isinstance(content, str):
        return [content] if content.strip() else []
    return [
        as_text(b["text"])
        for b in content_blocks(content)
        if b.get("type") == "text" and as_text(b.get("text", "")).strip()
    ]


def image_blocks(content: Any) -> list[dict[str, Any]]:
    """The image blocks of a content list."""
    return [b for b in content_blocks(content) if b.get("type") == "image"]


def tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The toolCall blocks of a message's content."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]


def message_text(message: dict[str, Any]) -> str:
    """The text a message carries (text blocks joined by spaces; tool calls named)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "toolCall":
            parts.append(f"[{as_text(block.get('name', '?'))}]")
        elif kind == "image":
            parts.append("[image]")
    return " ".join(parts)


def has_substance(message: dict[str, Any]) -> bool:
    """Whether a message carries anything an API would accept as content."""
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    if not isinstance(content, list):
        return False
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and as_text(block.get("text", "")).strip():
            return True
        if kind == "thinking" and (
            as_text(block.get("thinking", "")).strip() or block.get("redacted")
        ):
            return True
        if kind in ("toolCall", "image"):
            return True
    return False


def plain_message(message: dict[str, Any]) -> dict[str, Any] | None:
    """The message with a role every API knows, or None when it is left out."""
    role = message.get("role")
    timestamp = message.get("timestamp")
    if role in ("user", "assistant", "toolResult"):
        return message
    if role == "compactionSummary":
        text = (
            "Earlier parts of this conversation were condensed into the summary below.\n"
            "<conversation-summary>\n"
            f"{as_text(message.get('summary', ''))}\n</conversation-summary>"
        )
        return _user_text(text, timestamp)
    if role == "branchSummary":
        text = (
            "Before returning here, the conversation explored another branch, "
            "summarized below.\n"
            f"<branch-summary>\n{as_text(message.get('summary', ''))}\n</branch-summary>"
        )
        return _user_text(text, timestamp)
    if role == "custom":
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        return {"role": "user", "content": blocks or [], "timestamp": timestamp}
    if role == "bashExecution":
        if message.get("excludeFromContext"):
            return None
        return _user_text(command_text(message), timestamp)
    return None


def command_text(message: dict[str, Any]) -> str:
    """A shell command the user ran themselves, as the model is told about it."""
    lines = [f"The user ran this shell command: `{as_text(message.get('command', ''))}`"]
    output = as_text(message.get("output") or "")
    lines.append(f"Output:\n```\n{output}\n```" if output else "It printed nothing.")
    if message.get("cancelled"):
        lines.append("The command was cancelled before it finished.")
    else:
        code = message.get("exitCode")
        if isinstance(code, int) and code != 0:
            lines.append(f"It exited with status {code}.")
    if message.get("truncated") and message.get("fullOutputPath"):
        lines.append(f"The output above is cut short; all of it is in {message['fullOutputPath']}.")
    return "\n".join(lines)


def _user_text(text: str, timestamp: Any) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


# --- system messages: the prompt and tools a transcript carries (pi 1.5) ---------------


def current_tools(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools declared after replaying every system message in order: each one's
    ``toolsRemoved`` by name, then its ``toolsAdded`` (pi's getCurrentTools)."""
    tools: dict[tuple[str, Any], dict[str, Any]] = {}
    for message in messages:
        if message.get("role") != "system":
            continue
        for tool in _listed(message.get("toolsRemoved")):
            tools.pop(_tool_key(tool), None)
        for tool in _listed(message.get("toolsAdded")):
            tools[_tool_key(tool)] = tool  # one already there keeps its place, as in a Map
    return list(tools.values())


def current_system_message(messages: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Every system message replayed into one (pi's getCurrentSystemMessage): contents
    joined by blank lines, ``sections`` patched by name (``null`` removes one), the
    current tools as ``toolsAdded``, the first one's time; None when there is none."""
    content: list[str] = []
    sections: dict[str, Any] = {}
    timestamp: Any = None
    for message in messages:
        if message.get("role") != "system":
            continue
        if timestamp is None:
            timestamp = message.get("timestamp")
        text = joined_text(message.get("content"))
        if text:
            content.append(text)
        patch = message.get("sections")
        for name, value in (patch if isinstance(patch, dict) else {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value  # a name already there keeps its place, as in a Map
    tools = current_tools(messages)
    if timestamp is None and not tools:
        return None
    replayed: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        replayed["sections"] = sections
    if tools:
        replayed["toolsAdded"] = tools
    replayed["timestamp"] = 0 if timestamp is None else timestamp
    return replayed


def system_message_text(message: dict[str, Any] | None) -> str:
    """A system message as a whole prompt: its content, then its sections' texts, the
    non-empty ones separated by blank lines (pi's getSystemMessageText)."""
    if message is None:
        return ""
    parts = [joined_text(message.get("content"))]
    sections = message.get("sections")
    if isinstance(sections, dict):
        parts.extend(text for text in sections.values() if isinstance(text, str))
    return "\n\n".join(part for part in parts if part)


def _listed(value: Any) -> list[Any]:
    return [tool for tool in value if tool is not None] if isinstance(value, list) else []


def _tool_key(tool: Any) -> tuple[str, Any]:
    """A tool's name as a JavaScript Map key: numbers and strings apart, any object
    by identity, a missing name as undefined."""
    name = tool.get("name", _UNDEFINED) if isinstance(tool, dict) else _UNDEFINED
    if name is _UNDEFINED:
        return ("undefined", None)
    if isinstance(name, bool) or name is None or isinstance(name, str):
        return (type(name).__name__, name)
    if isinstance(name, int | float):
        return ("number", float(name))
    return ("object", id(name))


_UNDEFINED = object()
