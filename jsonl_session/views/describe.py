"""One-line, human-readable descriptions of entries and messages.

Used by the CLI's tree and entry lists; `one_line` also by transcript.py and
export/plan.py. Owns only wording and trimming: a message's text is messages.py's
`message_text`, and the full view of an entry is transcript.py's `view_entry`. It
reads entry bodies through StoredEntry.data() and never changes anything.
"""

from __future__ import annotations

from typing import Any

from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import as_text
from jsonl_session.messages import message_text, single_spaced


def one_line(text: str, width: int = 72) -> str:
    # The start of a long text says as much: its words joined are the start of the
    # whole text's (a word cut at the end is the start of that word), so when they
    # are already too many the whole text need not be split.
    start = single_spaced(text[: 2 * width + 64])
    if len(start) > width > 0:
        return start[: width - 1] + "…"
    flat = single_spaced(text)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def entry_summary(
    entry: StoredEntry, width: int = 72, *, data: dict[str, Any] | None = None
) -> str:
    """E.g. ``user: fix the failing test`` or ``model: anthropic/claude-x``; ``data``:
    the entry's body when read already (else it is read here)."""
    if data is None:
        data = entry.data()
    kind = entry.type
    if kind == "message":
        raw_message = data.get("message")
        message: dict[str, Any] = raw_message if isinstance(raw_message, dict) else {}
        role = as_text(message.get("role", "?"))
        if role == "toolResult":
            text = f"{as_text(message.get('toolName', '?'))} → {message_text(message)}"
        elif role == "bashExecution":
            text = f"$ {as_text(message.get('command', ''))}"
        elif role == "system":
            text = _system_summary(message)
        else:
            text = message_text(message)
        return f"{role}: {one_line(text, width)}"
    if kind == "model_change":
        return f"model: {as_text(data.get('provider'))}/{as_text(data.get('modelId'))}"
    if kind == "thinking_level_change":
        return f"thinking: {as_text(data.get('thinkingLevel'))}"
    if kind == "compaction":
        return f"compaction: {one_line(as_text(data.get('summary', '')), width)}"
    if kind == "branch_summary":
        return f"branch summary: {one_line(as_text(data.get('summary', '')), width)}"
    if kind == "custom":
        return f"custom ({as_text(data.get('customType'))})"
    if kind == "custom_message":
        text = message_text(data)
        return f"custom message ({as_text(data.get('customType'))}): {one_line(text, width)}"
    if kind == "context_edit":
        replacement = data.get("replacement")
        if replacement is None:
            return f"context edit: {as_text(data.get('targetId'))} hidden from the model"
        shown = message_text(replacement) if isinstance(replacement, dict) else ""
        return f"context edit: {as_text(data.get('targetId'))} shows {one_line(shown, width)!r}"
    if kind == "usage":
        usage = data.get("usage")
        total = usage.get("totalTokens") if isinstance(usage, dict) else None
        used = f"{as_text(data.get('provider'))}/{as_text(data.get('model'))}, {total} tokens"
        return f"usage ({as_text(data.get('kind'))}): {used}"
    if kind == "label":
        return f"label {as_text(data.get('targetId'))}: {data.get('label', '(cleared)')}"
    if kind == "session_info":
        return f"name: {as_text(data.get('name', ''))}"
    return f"{kind} (unknown entry type)"


def _system_summary(message: dict[str, Any]) -> str:
    """A system message in a few words: its text, the sections it sets or removes,
    the tools it adds and removes."""
    text = message_text(message)
    parts = [text] if text else []
    sections = message.get("sections")
    if isinstance(sections, dict) and sections:
        named = (f"-{n}" if v is None else str(n) for n, v in sections.items())
        parts.append("sections " + " ".join(named))
    tools = []
    for key, sign in (("toolsAdded", "+"), ("toolsRemoved", "-")):
        listed = message.get(key)
        for tool in listed if isinstance(listed, list) else []:
            if isinstance(tool, dict):
                tools.append(f"{sign}{as_text(tool.get('name'))}")
    if tools:
        parts.append("tools " + " ".join(tools))
    return "; ".join(parts) or "(empty)"
