"""What a message's content says as text, and messages in roles every API knows.

Owns reading pi's message content (a string, or a list of blocks) as text, blocks,
images and tool calls, and `plain_message`: the one wording by which summaries,
custom messages and shell commands become user text. Providers, compaction, views and
the catalog take text from content through here; turning blocks into another shape (an
API's blocks, a transcript's parts) stays with the module that does it. Applying plain
roles and repairing a history for an API is providers/history.py's; what an entry looks
like on one line is views/describe.py's. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any


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
        str(b["text"])
        for b in content_blocks(content)
        if b.get("type") == "text" and str(b.get("text", "")).strip()
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
            parts.append(f"[{block.get('name', '?')}]")
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
        if kind == "text" and str(block.get("text", "")).strip():
            return True
        if kind == "thinking" and (str(block.get("thinking", "")).strip() or block.get("redacted")):
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
            f"<conversation-summary>\n{message.get('summary', '')}\n</conversation-summary>"
        )
        return _user_text(text, timestamp)
    if role == "branchSummary":
        text = (
            "Before returning here, the conversation explored another branch, "
            "summarized below.\n"
            f"<branch-summary>\n{message.get('summary', '')}\n</branch-summary>"
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
    lines = [f"The user ran this shell command: `{message.get('command', '')}`"]
    output = message.get("output") or ""
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
