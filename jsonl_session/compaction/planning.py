"""Compaction planning: whether to compact, where to cut, and what to summarize.

Pure functions over a root-to-leaf path of entries; no I/O and no model calls
(summarizers and execution live beside this module). Every decision equals pi's
for the same path and settings, so a compaction we plan is the one pi would make:

- compact when the context is larger than the window minus the reserve;
- cut by walking back from the leaf, adding up the estimates (tokens.py) of
  ``message`` entries until ``keep_recent_tokens`` is reached, then cutting at the
  first valid point at or after there (a user, assistant, bashExecution or custom
  message, a ``branch_summary`` or ``custom_message``; never a tool result), and
  reaching back over settings-like entries just before it;
- a cut that is not at a user message splits a turn: the turn's start is found,
  and the part before the cut (the turn prefix) is summarized separately;
- planning starts after the previous compaction's kept point, carries its summary
  (for an update) and its file lists forward.

Tool outputs our prune entries name (pruning.py) count as their placeholder; pi
does not know prune entries, so on files that have some our figures are smaller.

These are pi 0.73.1's decisions (checked on its goldens), estimates included: images in
user messages do not count here (``count_user_images=False``). pi 1.5.2 decides some
cases differently (issue 12, point 6); that is not done yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.context import (
    as_message,
    context_from_path,
    pruned_entry_ids,
    pruned_output,
)
from jsonl_session.format.entry import StoredEntry
from jsonl_session.tokens import estimate_context_tokens, estimate_tokens

_CUT_ROLES = frozenset(
    {"bashExecution", "custom", "branchSummary", "compactionSummary", "user", "assistant"}
)
_TURN_START_ROLES = frozenset({"user", "bashExecution"})


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


DEFAULT_SETTINGS = CompactionSettings()


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """Whether the context no longer leaves the reserve free in the window."""
    return settings.enabled and context_tokens > context_window - settings.reserve_tokens


@dataclass(frozen=True, slots=True)
class CutPoint:
    first_kept_index: int
    turn_start_index: int  # -1 when the cut is not inside a turn
    is_split_turn: bool


class _Path:
    """A path with each message entry's message decoded once."""

    def __init__(self, entries: Sequence[StoredEntry]) -> None:
        self.entries = entries
        self._messages: dict[int, dict[str, Any] | None] = {}
        self._pruned = pruned_entry_ids(entries)

    def message(self, index: int) -> dict[str, Any] | None:
        """The message of a ``message`` entry (None for other entry types)."""
        if index not in self._messages:
            entry = self.entries[index]
            message = entry.data().get("message") if entry.type == "message" else None
            if isinstance(message, dict) and entry.id in self._pruned:
                message = pruned_output(message, entry.id)
            self._messages[index] = message if isinstance(message, dict) else None
        return self._messages[index]

    def role(self, index: int) -> Any:
        message = self.message(index)
        return None if message is None else message.get("role")


def find_cut_point(
    path: Sequence[StoredEntry], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """Where to cut ``path[start:end]`` so about ``keep_recent_tokens`` stay."""
    return _find_cut_point(_Path(path), start, end, keep_recent_tokens)


def _find_cut_point(path: _Path, start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    entries = path.entries
    cuts = [i for i in range(start, end) if _is_cut_point(path, i)]
    if not cuts:
        return CutPoint(start, -1, False)
    cut = cuts[0]
    total = 0
    for index in range(end - 1, start - 1, -1):
        if entries[index].type != "message":
            continue  # only message entries count toward what is kept (as in pi)
        message = path.message(index)
        total += estimate_tokens(message, count_user_images=False) if message is not None else 0
        if total >= keep_recent_tokens:
            cut = next((c for c in cuts if c >= index), cut)
            break
    # Settings changes, labels and the like just before the cut stay with it.
    while cut > start and entries[cut - 1].type not in ("compaction", "message"):
        cut -= 1
    at_user = entries[cut].type == "message" and path.role(cut) == "user"
    turn_start = -1 if at_user else _turn_start(path, cut, start)
    return CutPoint(cut, turn_start, not at_user and turn_start != -1)


def _is_cut_point(path: _Path, index: int) -> bool:
    kind = path.entries[index].type
    if kind in ("branch_summary", "custom_message"):
        return True
    return kind == "message" and path.role(index) in _CUT_ROLES


def _turn_start(path: _Path, index: int, start: int) -> int:
    for i in range(index, start - 1, -1):
        kind = path.entries[i].type
        if kind in ("branch_summary", "custom_message"):
            return i
        if kind == "message" and path.role(i) in _TURN_START_ROLES:
            return i
    return -1


@dataclass(slots=True)
class FileOperations:
    """Files the summarized tool calls read, wrote or edited (by ``path`` argument)."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_from(self, message: dict[str, Any]) -> None:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            return
        for block in message["content"]:
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            arguments = block.get("arguments")
            target = arguments.get("path") if isinstance(arguments, dict) else None
            if not isinstance(target, str) or not target:
                continue
            {"read": self.read, "write": self.written, "edit": self.edited}.get(
                str(block.get("name")), set()
            ).add(target)

    def add_details(self, details: Any) -> None:
        """Carry the file lists of an earlier summary's ``details`` forward."""
        if not isinstance(details, dict):
            return
        self.read.update(f for f in details.get("readFiles") or () if isinstance(f, str))
        self.edited.update(f for f in details.get("modifiedFiles") or () if isinstance(f, str))

    def lists(self) -> tuple[list[str], list[str]]:
        """(files only read, files modified), each sorted as JavaScript sorts strings."""
        modified = self.edited | self.written
        return _js_sorted(self.read - modified), _js_sorted(modified)


def _js_sorted(values: set[str]) -> list[str]:
    # Array.prototype.sort compares UTF-16 code units, not code points.
    return sorted(values, key=lambda s: s.encode("utf-16-be", "surrogatepass"))


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    first_kept_entry_id: str
    is_split_turn: bool
    tokens_before: int
    summarize: list[StoredEntry]
    turn_prefix: list[StoredEntry]
    messages_to_summarize: list[dict[str, Any]]
    turn_prefix_messages: list[dict[str, Any]]
    previous_summary: str | None
    read_files: list[str]
    modified_files: list[str]

    def to_dict(self) -> dict[str, Any]:
        """The plan as `compact --dry-run --json` prints it."""
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "readFiles": self.read_files,
            "modifiedFiles": self.modified_files,
            "summarize": [e.id for e in self.summarize],
            "turnPrefix": [e.id for e in self.turn_prefix],
            "previousSummary": self.previous_summary,
        }


def prepare_compaction(
    path: Sequence[StoredEntry], settings: CompactionSettings = CompactionSettings()
) -> CompactionPlan | None:
    """What a compaction at the end of ``path`` summarizes and keeps; None when there
    is nothing to do (the path ends with a compaction, or is empty)."""
    if not path or path[-1].type == "compaction":
        return None
    walk = _Path(path)
    previous = next((i for i in range(len(path) - 1, -1, -1) if path[i].type == "compaction"), -1)
    previous_summary: str | None = None
    start = 0
    previous_data: dict[str, Any] = {}
    if previous >= 0:
        previous_data = path[previous].data()
        summary = previous_data.get("summary")
        previous_summary = summary if isinstance(summary, str) else None
        kept = previous_data.get("firstKeptEntryId")
        start = next((i for i, e in enumerate(path) if e.id == kept), previous + 1)
    messages = context_from_path(path).messages
    tokens_before = estimate_context_tokens(messages, count_user_images=False).tokens
    cut = _find_cut_point(walk, start, len(path), settings.keep_recent_tokens)
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    summarize = _with_messages(path, start, history_end)
    prefix = (
        _with_messages(path, cut.turn_start_index, cut.first_kept_index)
        if cut.is_split_turn
        else []
    )
    files = FileOperations()
    if previous >= 0 and not previous_data.get("fromHook"):
        files.add_details(previous_data.get("details"))
    for _, message in [*summarize, *prefix]:
        files.add_from(message)
    read_files, modified_files = files.lists()
    return CompactionPlan(
        first_kept_entry_id=path[cut.first_kept_index].id,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        summarize=[e for e, _ in summarize],
        turn_prefix=[e for e, _ in prefix],
        messages_to_summarize=[m for _, m in summarize],
        turn_prefix_messages=[m for _, m in prefix],
        previous_summary=previous_summary,
        read_files=read_files,
        modified_files=modified_files,
    )


def _with_messages(
    path: Sequence[StoredEntry], start: int, end: int
) -> list[tuple[StoredEntry, dict[str, Any]]]:
    """Entries in ``path[start:end]`` that stand for a message (compactions excluded)."""
    out = []
    pruned = pruned_entry_ids(path)
    for entry in path[start:end]:
        if entry.type == "compaction":
            continue
        message = as_message(entry.type, entry.data())
        if message is not None:
            out.append((entry, pruned_output(message, entry.id) if entry.id in pruned else message))
    return out
