"""Building the model context: the messages a model sees from a given leaf.

A pure function of (entries, leaf): walk leaf to root in O(path), take the model and
thinking level from the path, let only the last compaction on the path count, and
turn `message`, `custom_message` and non-empty `branch_summary` entries into
messages in pi's shapes. Only entries on the path have their bodies decoded. Tool
outputs our prune entries name become a placeholder (``pruning=False`` shows them
whole, as pi does); deciding what to prune is compaction/pruning.py's. Turning these
messages into a provider's request is providers/' job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.format.entry import StoredEntry, loads_object, raw_lines
from jsonl_session.format.ids import MISSING, timestamp_to_ms
from jsonl_session.format.model import PRUNE_MARKER_TYPE
from jsonl_session.tree import TreeIndex

EMPTY_LEAF = ""
"""Pass as ``leaf_id`` for the position before the first entry: no messages."""


@dataclass(frozen=True, slots=True)
class SessionContext:
    messages: list[dict[str, Any]] = field(default_factory=list)
    thinking_level: str = "off"
    model: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The shape pi's context builder returns: messages, thinkingLevel, model."""
        return {
            "messages": self.messages,
            "thinkingLevel": self.thinking_level,
            "model": self.model,
        }


def build_context(
    entries: Sequence[StoredEntry],
    leaf_id: str | None = None,
    index: TreeIndex | None = None,
    *,
    pruning: bool = True,
) -> SessionContext:
    """The context from ``leaf_id`` (None: the file's active leaf, the last entry;
    EMPTY_LEAF: no messages). A missing parent ends the path, as in pi. ``pruning``:
    see context_from_path. Raises
    SessionTreeError for an unknown leaf or a cycle on the path."""
    if leaf_id == EMPTY_LEAF:
        return SessionContext()
    if index is None:
        index = TreeIndex(entries)
    if leaf_id is None:
        last = entries[-1] if entries else None
        if last is None:
            return SessionContext()
        leaf_id = last.id
    return context_from_path(index.path(leaf_id), pruning=pruning)


def context_from_path(path: Sequence[StoredEntry], *, pruning: bool = True) -> SessionContext:
    """The context for a root-to-leaf path (see build_context). With ``pruning``, tool
    outputs named by our prune entries on the path are replaced by a placeholder
    (our extension; pi shows them whole, as ``pruning=False`` does)."""
    pruned = pruned_entry_ids(path) if pruning else set()
    thinking_level, model = _settings(path)
    compaction_at = _last_compaction(path)
    messages: list[dict[str, Any]] = []
    first_kept = None
    if compaction_at is not None:
        compaction = path[compaction_at].data()
        messages.append(_derived("compactionSummary", compaction, ("summary", "tokensBefore")))
        first_kept = compaction.get("firstKeptEntryId")
    kept = [
        path[i]
        for i in kept_positions(path, compaction_at, first_kept)
        if path[i].type in _MESSAGE_TYPES
    ]
    for entry, raw in zip(kept, raw_lines(kept), strict=True):
        message = as_message(entry.type, loads_object(raw))
        if message is not None:
            messages.append(pruned_output(message, entry.id) if entry.id in pruned else message)
    return SessionContext(messages, thinking_level, model)


def _settings(path: Sequence[StoredEntry]) -> tuple[str, dict[str, Any] | None]:
    """The thinking level and model in force at the end of ``path``: the last ones
    set on it (a model by a model change or an assistant message)."""
    thinking_level: str | None = None
    model: dict[str, Any] | None = None
    for entry in reversed(path):
        kind = entry.type
        if thinking_level is None and kind == "thinking_level_change":
            level = entry.data().get("thinkingLevel")
            thinking_level = level if isinstance(level, str) else None
        elif model is None and kind == "model_change":
            model = _model(entry.data(), "provider", "modelId")
        elif model is None and kind == "message" and entry.role == "assistant":
            model = _model(entry.data().get("message", {}), "provider", "model")
        if thinking_level is not None and model is not None:
            break
    return thinking_level or "off", model


def kept_positions(
    path: Sequence[StoredEntry], compaction_at: int | None, first_kept: Any
) -> list[int]:
    """Positions on ``path`` whose entries the context draws on, given the last
    compaction's position and its first kept id: from the first kept entry up to the
    compaction, then everything after it (everything when there is no compaction)."""
    if compaction_at is None:
        return list(range(len(path)))
    start = next((i for i in range(compaction_at) if path[i].id == first_kept), compaction_at)
    return [*range(start, compaction_at), *range(compaction_at + 1, len(path))]


def context_positions(path: Sequence[StoredEntry]) -> list[int]:
    """kept_positions for the last compaction on ``path``."""
    last = _last_compaction(path)
    kept = path[last].data().get("firstKeptEntryId") if last is not None else None
    return kept_positions(path, last, kept)


def _last_compaction(path: Sequence[StoredEntry]) -> int | None:
    """The position of the last compaction on ``path``: the only one that counts."""
    return next((i for i in range(len(path) - 1, -1, -1) if path[i].type == "compaction"), None)


_MESSAGE_TYPES = frozenset({"message", "custom_message", "branch_summary"})


def pruned_entry_ids(path: Sequence[StoredEntry]) -> set[str]:
    """Ids of the toolResult entries that prune entries on ``path`` name."""
    pruned: set[str] = set()
    for entry in path:
        if entry.type == "custom" and entry.custom_type == PRUNE_MARKER_TYPE:
            data = entry.data().get("data")
            ids = data.get("entryIds") if isinstance(data, dict) else None
            pruned.update(i for i in ids or () if isinstance(i, str))
    return pruned


def pruned_output(message: dict[str, Any], entry_id: str) -> dict[str, Any]:
    """A tool result with its output replaced by a note saying where it still is."""
    if message.get("role") != "toolResult":
        return message
    note = (
        f"[The output of this {message.get('toolName') or 'tool'} call was pruned from the "
        f"context to save space; it is kept in the session file as entry {entry_id}.]"
    )
    return {**message, "content": [{"type": "text", "text": note}]}


def as_message(entry_type: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """The message an entry contributes to the context, in pi's shapes, or None."""
    if entry_type == "message":
        message = data.get("message")
        return message if isinstance(message, dict) else None
    if entry_type == "custom_message":
        return _derived("custom", data, ("customType", "content", "display", "details"))
    if entry_type == "branch_summary" and _truthy(data.get("summary")):
        return _derived("branchSummary", data, ("summary", "fromId"))
    return None


def _derived(role: str, data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """A message pi derives from an entry: these keys in this order, then the time in
    ms. Keys the entry lacks are left out, as JSON.stringify leaves out undefined."""
    out: dict[str, Any] = {"role": role}
    for key in keys:
        if key in data:
            out[key] = data[key]
    out["timestamp"] = timestamp_to_ms(data.get("timestamp", MISSING))
    return out


def _model(source: dict[str, Any], provider_key: str, model_key: str) -> dict[str, Any]:
    # JSON.stringify leaves out keys whose value is undefined (absent here) and
    # keeps null; so do we.
    out: dict[str, Any] = {}
    if provider_key in source:
        out["provider"] = source[provider_key]
    if model_key in source:
        out["modelId"] = source[model_key]
    return out


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness: every object and array is true, even an empty one."""
    if isinstance(value, dict | list):
        return True
    if isinstance(value, float) and value != value:  # NaN
        return False
    return bool(value)
