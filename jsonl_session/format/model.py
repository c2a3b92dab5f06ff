"""The typed view of the format: header, the eleven entry types, agent messages, blocks.

These msgspec Structs mirror pi's session format version 3 as pi 1.5 writes it (system
messages, usage and context_edit entries, compaction checkpoints). Field order is the key
order pi writes, keys are camelCase on disk, and optional fields default to UNSET so
they are absent when not given. The typed view is for reading and for building new
entries (building.py); the bytes of a loaded line are kept separately (entry.py's
StoredEntry), so fields this model does not know are never lost.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from jsonl_session.format.jsonio import dumps

CURRENT_VERSION = 3
LEAF_MARKER_TYPE = "jsonl-session/leaf"
"""customType of the `custom` entry that records a leaf move (DESIGN §2)."""
PRUNE_MARKER_TYPE = "jsonl-session/prune"
"""customType of the `custom` entry that prunes old tool outputs from our contexts
(data: ``entryIds`` of toolResult entries, ``tokensSaved``). pi ignores it."""


class _Camel(msgspec.Struct, rename="camel", kw_only=True):
    pass


# --- content blocks -------------------------------------------------------------


class TextContent(_Camel, tag_field="type", tag="text", kw_only=True):
    text: str
    text_signature: str | UnsetType = UNSET


class ThinkingContent(_Camel, tag_field="type", tag="thinking", kw_only=True):
    thinking: str
    thinking_signature: str | UnsetType = UNSET
    redacted: bool | UnsetType = UNSET


class ImageContent(_Camel, tag_field="type", tag="image", kw_only=True):
    data: str
    mime_type: str


class ToolCall(_Camel, tag_field="type", tag="toolCall", kw_only=True):
    id: str
    name: str
    arguments: dict[str, Any]
    thought_signature: str | UnsetType = UNSET


UserContent = str | list[TextContent | ImageContent]
AssistantContent = list[TextContent | ThinkingContent | ToolCall]


class Cost(_Camel, kw_only=True):
    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


class Usage(_Camel, kw_only=True):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost = msgspec.field(default_factory=Cost)


# --- agent messages (tagged on "role") ------------------------------------------


class ToolDeclaration(_Camel, kw_only=True):
    """A tool as a transcript declares it to the model (pi 1.5)."""

    name: str
    description: str = ""
    parameters: Any = msgspec.field(default_factory=dict)
    constrained_sampling: Any = UNSET


class ToolReference(_Camel, kw_only=True):
    name: str


class SystemMessage(_Camel, tag_field="role", tag="system", kw_only=True):
    """The prompt and tools (pi 1.5): the first one declares them, later ones patch
    ``sections`` by name (None removes one) and add or remove tools."""

    content: str | list[TextContent] = ""
    sections: dict[str, str | None] | UnsetType = UNSET
    tools_added: list[ToolDeclaration] | UnsetType = UNSET
    tools_removed: list[ToolReference] | UnsetType = UNSET
    timestamp: int


class UserMessage(_Camel, tag_field="role", tag="user", kw_only=True):
    content: UserContent
    timestamp: int


class AssistantMessage(_Camel, tag_field="role", tag="assistant", kw_only=True):
    content: AssistantContent
    api: str
    provider: str
    model: str
    response_model: str | UnsetType = UNSET
    response_id: str | UnsetType = UNSET
    provider_thinking_level: str | UnsetType = UNSET
    thinking_level: str | UnsetType = UNSET
    diagnostics: list[Any] | UnsetType = UNSET
    usage: Usage = msgspec.field(default_factory=Usage)
    stop_reason: str = "stop"
    error_message: str | UnsetType = UNSET
    timestamp: int


class ToolResultMessage(_Camel, tag_field="role", tag="toolResult", kw_only=True):
    tool_call_id: str
    tool_name: str
    content: list[TextContent | ImageContent]
    details: Any = UNSET
    is_error: bool = False
    timestamp: int


class BashExecutionMessage(_Camel, tag_field="role", tag="bashExecution", kw_only=True):
    command: str
    output: str
    exit_code: int | UnsetType | None = UNSET
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | UnsetType = UNSET
    timestamp: int
    exclude_from_context: bool | UnsetType = UNSET


class CustomMessage(_Camel, tag_field="role", tag="custom", kw_only=True):
    custom_type: str
    content: UserContent
    display: bool
    details: Any = UNSET
    timestamp: int


AgentMessage = (
    SystemMessage
    | UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
)
KNOWN_ROLES = frozenset({"system", "user", "assistant", "toolResult", "bashExecution", "custom"})


# --- header and entries (tagged on "type") --------------------------------------


class SessionHeader(_Camel, tag_field="type", tag="session", kw_only=True):
    version: int | UnsetType = UNSET
    id: str
    timestamp: str = ""
    cwd: str = ""
    parent_session: str | UnsetType = UNSET


class MessageEntry(_Camel, tag_field="type", tag="message", kw_only=True):
    id: str
    parent_id: str | None
    timestamp: str
    message: AgentMessage


class ThinkingLevelChangeEntry(_Camel, tag_field="type", tag="thinking_level_change", kw_only=True):
    id: str
    parent_id: str | None
    timestamp: str
    thinking_level: str


class ModelChangeEntry(_Camel, tag_field="type", tag="model_change", kw_only=True):
    id: str
    parent_id: str | None
    timestamp: str
    provider: str
    model_id: str


class CompactionDetails(_Camel, kw_only=True):
    read_files: list[str] = msgspec.field(default_factory=list)
    modified_files: list[str] = msgspec.field(default_factory=list)


class CompactionEntry(_Camel, tag_field="type", tag="compaction", kw_only=True):
    id: str
    parent_id: str | None
    timestamp: str
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: Any = UNSET
    usage: Usage | UnsetType = UNSET
    from_hook: bool | UnsetType = UNSET
    system_message: SystemMessage | UnsetType = UNSET


class BranchSummaryEntry(_Camel, tag_field="type", tag="branch_summary", kw_only=True):
    id: str
    parent_id: str | None
    timestamp: str
    from_id: str
    summary: str
    details: Any = UNSET
    usage: Usage | UnsetType = UNSET
    from_hook: bool | UnsetType = UNSET


class UsageEntry(_Camel, tag_field="type", tag="usage", kw_only=True):
    """Model usage that is no assistant message (pi 1.5): counted, never in context."""

    id: str
    parent_id: str | None
    timestamp: str
    kind: str
    provider: str
    model: str
    usage: Usage
    note: str | UnsetType = UNSET


class ContextReplacement(_Camel, kw_only=True):
    """New content for the target: a string, or blocks of the target's kinds."""

    content: str | list[TextContent | ThinkingContent | ToolCall | ImageContent]


class ContextEditEntry(_Camel, tag_field="type", tag="context_edit", kw_only=True):
    """An edit of what one earlier entry shows the model on this branch (pi 1.5):
    ``replacement`` None omits the target, else its content replaces the target's."""

    id: str
    parent_id: str | None
    timestamp: str
    target_id: str
    replacement: ContextReplacement | None


class CustomEntry(_Camel, tag_field="type", tag="custom", kw_only=True):
    custom_type: str
    data: Any = UNSET
    id: str
    parent_id: str | None
    timestamp: str


class CustomMessageEntry(_Camel, tag_field="type", tag="custom_message", kw_only=True):
    custom_type: str
    content: UserContent
    display: bool
    details: Any = UNSET
    id: str
    parent_id: str | None
    timestamp: str


class LabelEntry(_Camel, tag_field="type", tag="label", kw_only=True):
    id: str
    parent_id: str | None
    timestamp: str
    target_id: str
    label: str | UnsetType = UNSET


class SessionInfoEntry(_Camel, tag_field="type", tag="session_info", kw_only=True):
    id: str
    parent_id: str | None
    timestamp: str
    name: str | UnsetType = UNSET


class UnknownEntry(msgspec.Struct, kw_only=True):
    """An entry whose type this version does not know; ``data`` is the whole object."""

    type: str
    id: str
    parent_id: str | None
    timestamp: str
    data: dict[str, Any]


SessionEntry = (
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | UsageEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | ContextEditEntry
    | LabelEntry
    | SessionInfoEntry
)
KNOWN_ENTRY_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "usage",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "context_edit",
        "label",
        "session_info",
    }
)

_entry_encoder = msgspec.json.Encoder()


def encode(value: msgspec.Struct) -> bytes:
    """Compact JSON for a typed value, keys in pi's order, as JSON.stringify writes it."""
    try:
        return _entry_encoder.encode(value)
    except UnicodeEncodeError:  # a lone surrogate: msgspec refuses, JSON.stringify escapes
        return dumps(msgspec.to_builtins(value))


def to_dict(value: msgspec.Struct) -> dict[str, Any]:
    """The file's own shape (camelCase keys, UNSET fields absent) as a plain dict."""
    out = msgspec.to_builtins(value)
    assert isinstance(out, dict)
    return out


def entry_from_dict(data: dict[str, Any]) -> SessionEntry | UnknownEntry:
    """The typed view of an entry object; unknown types become `UnknownEntry`.

    Raises msgspec.ValidationError when a known type does not have its shape.
    """
    kind = data.get("type")
    if kind in KNOWN_ENTRY_TYPES:
        entry: SessionEntry = msgspec.convert(data, type=SessionEntry, strict=False)
        return entry
    return UnknownEntry(
        type=str(kind),
        id=str(data.get("id")),
        parent_id=data.get("parentId"),
        timestamp=str(data.get("timestamp", "")),
        data=data,
    )


def message_from_dict(data: dict[str, Any]) -> AgentMessage:
    """The typed view of an agent message; raises msgspec.ValidationError if malformed."""
    message: AgentMessage = msgspec.convert(data, type=AgentMessage, strict=False)
    return message
