"""Building the model context: the messages a model sees from a given leaf, and which
entry each of them came from (pi 1.5's session projection).

A pure function of (entries, leaf): walk leaf to root in O(path) and take the model
and thinking level from the whole path. With a compaction on the path only the last
one counts: its system checkpoint (if any) and summary lead, then the entries from
its first kept entry up to it (system messages there give way to the checkpoint; a
retain-none compaction names itself, so nothing before it is kept), then everything
after it; an older compaction inside that range adds nothing. Then the latest
``context_edit`` per target among those entries applies: ``null`` omits the target,
a replacement changes only its content. `message`, `custom_message`, non-empty
`branch_summary` and `compaction` entries become messages in pi's shapes (null
contents as pi reads them). Only entries the context draws on have their bodies
decoded. Tool outputs our prune entries name become a placeholder (``pruning=False``
shows them whole, as pi does); deciding what to prune is compaction/pruning.py's.
Turning these messages into a provider's request is providers/' job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import Any

from jsonl_session.format.entry import StoredEntry, loads_object, raw_lines
from jsonl_session.format.ids import MISSING, timestamp_to_ms
from jsonl_session.format.model import PRUNE_MARKER_TYPE
from jsonl_session.tree import TreeIndex

_TYPE = attrgetter("type")

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


@dataclass(frozen=True, slots=True)
class ProjectedEntry:
    """One entry the context draws on and the messages it contributes (none for a
    label, a usage or a context_edit entry, an omitted target, an older compaction)."""

    entry: StoredEntry
    messages: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Projection:
    """The context with its provenance: each selected entry in order with its messages."""

    entries: list[ProjectedEntry] = field(default_factory=list)
    thinking_level: str = "off"
    model: dict[str, Any] | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [message for item in self.entries for message in item.messages]

    def context(self) -> SessionContext:
        return SessionContext(self.messages, self.thinking_level, self.model)


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
    """The context for a root-to-leaf path (see build_context and project_path)."""
    return project_path(path, pruning=pruning).context()


def project_path(path: Sequence[StoredEntry], *, pruning: bool = True) -> Projection:
    """The projection for a root-to-leaf path. With ``pruning``, tool outputs named by
    our prune entries on the path are replaced by a placeholder (our extension; pi
    shows them whole, as ``pruning=False`` does)."""
    pruned = pruned_entry_ids(path) if pruning else set()
    thinking_level, model = _settings(path)
    selected, compaction = _selected(path)
    # every body needed is decoded once, entries near each other in one read
    rest = selected if compaction is None else selected[1:]
    bodies = [e for e in rest if e.type in _BODY_TYPES]
    data_of = {id(e): loads_object(raw) for e, raw in zip(bodies, raw_lines(bodies), strict=True)}
    if compaction is not None:
        data_of[id(selected[0])] = compaction
    edits = _latest_edits(selected, data_of)
    projected = []
    for entry in selected:
        data = data_of.get(id(entry))
        messages = [] if data is None else entry_messages(entry.type, data)
        if messages and entry.id in edits:
            messages = _edited(messages, edits[entry.id])
        if entry.id in pruned:
            messages = [pruned_output(m, entry.id) for m in messages]
        projected.append(ProjectedEntry(entry, messages))
    return Projection(projected, thinking_level, model)


def _selected(path: Sequence[StoredEntry]) -> tuple[list[StoredEntry], dict[str, Any] | None]:
    """The entries the context draws on, in order (pi's buildContextEntries), and the
    last compaction's body when there is one: then that compaction comes first, then
    the non-system entries from its first kept entry up to it, then every entry after
    it; else the whole path. Older compactions in the range contribute nothing."""
    at = _last_compaction(path)
    if at is None:
        return list(path), None
    compaction = path[at].data()
    start = _first_kept(path, at, compaction.get("firstKeptEntryId"))
    kept = [e for e in path[start:at] if not (e.type == "message" and e.role == "system")]
    return [path[at], *kept, *path[at + 1 :]], compaction


def _latest_edits(
    selected: Sequence[StoredEntry], data_of: dict[int, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The last usable context_edit per target among the selected entries. An edit
    without a ``replacement`` key is not used (pi fails on it)."""
    edits: dict[str, dict[str, Any]] = {}
    for entry in selected:
        if entry.type == "context_edit":
            data = data_of[id(entry)]
            target = data.get("targetId")
            if isinstance(target, str) and "replacement" in data:
                edits[target] = data
    return edits


def _edited(messages: list[dict[str, Any]], edit: dict[str, Any]) -> list[dict[str, Any]]:
    """What an edit leaves of an entry's messages: none for a ``null`` replacement,
    else the same messages with the replacement's content (a string becomes one text
    block for assistant and tool results; no content at all when it has none)."""
    replacement = edit["replacement"]
    if replacement is None:
        return []
    missing = not isinstance(replacement, dict) or "content" not in replacement
    content = None if missing else replacement["content"]
    out = []
    for message in messages:
        role = message.get("role")
        if role not in _EDITABLE_ROLES:
            out.append(message)
            continue
        if missing:
            out.append({k: v for k, v in message.items() if k != "content"})
            continue
        if role in ("assistant", "toolResult") and isinstance(content, str):
            out.append({**message, "content": [{"type": "text", "text": content}]})
        else:
            out.append({**message, "content": content})
    return out


_EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})


def _settings(path: Sequence[StoredEntry]) -> tuple[str, dict[str, Any] | None]:
    """The thinking level and model in force at the end of ``path``: the last ones
    set on it (a model by a model change or an assistant message)."""
    thinking_level: str | None = None
    for at in reversed(_positions_of(path, "thinking_level_change")):
        level = path[at].data().get("thinkingLevel")
        if isinstance(level, str):
            thinking_level = level
            break
    model: dict[str, Any] | None = None
    for entry in reversed(path):  # the last assistant message is seldom far back
        kind = entry.type
        if kind == "model_change":
            model = _model(entry.data(), "provider", "modelId")
        elif kind == "message" and entry.role == "assistant":
            model = _model(entry.data().get("message", {}), "provider", "model")
        if model is not None:
            break
    return thinking_level or "off", model


def _positions_of(path: Sequence[StoredEntry], kind: str) -> list[int]:
    """Where the entries of type ``kind`` are on ``path`` (found by C loops: a path
    can hold every entry of a long session)."""
    return list(compress(range(len(path)), map(kind.__eq__, map(_TYPE, path))))


def _first_kept(path: Sequence[StoredEntry], compaction_at: int, first_kept: Any) -> int:
    """The position of the entry ``first_kept`` names before the compaction, or the
    compaction's own. An id is on a path once (a path never meets an entry twice), so
    it is sought back from the compaction, near which it usually is."""
    return next(
        (i for i in range(compaction_at - 1, -1, -1) if path[i].id == first_kept), compaction_at
    )


def kept_positions(
    path: Sequence[StoredEntry], compaction_at: int | None, first_kept: Any
) -> list[int]:
    """Positions on ``path`` whose entries the context draws on, given the last
    compaction's position and its first kept id: from the first kept entry up to the
    compaction, then everything after it (everything when there is no compaction)."""
    if compaction_at is None:
        return list(range(len(path)))
    start = _first_kept(path, compaction_at, first_kept)
    return [*range(start, compaction_at), *range(compaction_at + 1, len(path))]


def context_positions(path: Sequence[StoredEntry]) -> list[int]:
    """kept_positions for the last compaction on ``path``."""
    last = _last_compaction(path)
    kept = path[last].data().get("firstKeptEntryId") if last is not None else None
    return kept_positions(path, last, kept)


def _last_compaction(path: Sequence[StoredEntry]) -> int | None:
    """The position of the last compaction on ``path``: the only one that counts."""
    return next((i for i in range(len(path) - 1, -1, -1) if path[i].type == "compaction"), None)


# bodies a projection reads (besides the last compaction's): what may become messages,
# and the edits of them
_BODY_TYPES = frozenset({"message", "custom_message", "branch_summary", "context_edit"})


def pruned_entry_ids(path: Sequence[StoredEntry]) -> set[str]:
    """Ids of the toolResult entries that prune entries on ``path`` name."""
    pruned: set[str] = set()
    for entry in compress(path, map("custom".__eq__, map(_TYPE, path))):
        if entry.custom_type == PRUNE_MARKER_TYPE:
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
    """The message a message, custom_message or branch_summary entry contributes to
    the context, in pi's shapes, or None (compactions: see `entry_messages`)."""
    messages = entry_messages(entry_type, data) if entry_type != "compaction" else []
    return messages[0] if messages else None


def entry_messages(entry_type: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    """What one entry contributes before edits (pi's sessionEntryToContextMessages)."""
    if entry_type == "message":
        message = data.get("message")
        if not isinstance(message, dict):
            return []
        if message.get("content") is None:  # null or absent: read as empty, as pi does
            role = message.get("role")
            if role == "system":
                return [{**message, "content": ""}]
            if role in ("user", "assistant", "toolResult"):
                return [{**message, "content": []}]
        return [message]
    if entry_type == "custom_message":
        custom: dict[str, Any] = {"role": "custom"}
        if "customType" in data:
            custom["customType"] = data["customType"]
        content = data.get("content")
        custom["content"] = [] if content is None else content
        for key in ("display", "details"):
            if key in data:
                custom[key] = data[key]
        custom["timestamp"] = timestamp_to_ms(data.get("timestamp", MISSING))
        return [custom]
    if entry_type == "branch_summary" and _truthy(data.get("summary")):
        return [_derived("branchSummary", data, ("summary", "fromId"))]
    if entry_type == "compaction":
        summary = _derived("compactionSummary", data, ("summary", "tokensBefore"))
        checkpoint = data.get("systemMessage")
        # pi leads with any truthy value; only an object can be a message to send
        return [checkpoint, summary] if isinstance(checkpoint, dict) else [summary]
    return []


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
