"""Compaction planning: whether to compact, where to cut, and what to summarize.

Pure functions over a root-to-leaf path of entries; no I/O and no model calls
(summarizers and execution live beside this module). Every decision equals pi
1.5.2's for the same path and settings, so a compaction we plan is the one pi would
make. Planning works on the path's projection (context.py), the entries the context
draws on with the messages each contributes after edits:

- compact when the context is larger than the window minus the reserve;
- after a compaction, plan only over what the projection keeps after it; its
  summary is carried for an update and its file lists forward;
- cut by walking back from the leaf, adding up the estimates (tokens.py, user images
  included) of the messages each projected entry contributes until
  ``keep_recent_tokens`` is reached, then cutting at the first valid point at or
  after there (an entry contributing a user, assistant, bashExecution, custom,
  branch or compaction summary message; never a tool result alone), and reaching
  back over entries that contribute nothing (settings, labels, hidden entries)
  just before it;
- a failed reply that an edit omits, at the end with only such omissions after the
  cut, moves the cut one entry on (pi keeps the recovery out of the kept range);
- a cut that is not at a turn's start splits the turn: the part before the cut
  (the turn prefix) is summarized separately;
- ``tokens_before`` is pi's projected estimate: the last usage while no edit or
  compaction came after it, else every message estimated;
- nothing to summarize (or to keep) means no plan.

Tool outputs our prune entries name (pruning.py) count as their placeholder; pi
does not know prune entries, so on files that have some our figures are smaller.
pi 0.73.1 decided several of these differently (SPEC.md section 16.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.context import ProjectedEntry, entry_messages, project_path
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import items_of
from jsonl_session.tokens import estimate_projected_context_tokens, estimate_tokens

_CUT_ROLES = frozenset(
    {"bashExecution", "custom", "branchSummary", "compactionSummary", "user", "assistant"}
)
_TURN_START_ROLES = _CUT_ROLES - {"assistant"}


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
    """Positions in the projected entries: the first kept one, and the start of the
    turn it splits (-1 when the cut is not inside a turn)."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def find_cut_point(
    entries: Sequence[ProjectedEntry], start: int, end: int, keep_recent_tokens: int
) -> CutPoint:
    """Where to cut the projected ``entries[start:end]`` so that about
    ``keep_recent_tokens`` stay (see the module docstring)."""
    cuts = [i for i in range(start, end) if _has_role(entries[i], _CUT_ROLES)]
    if not cuts:
        return CutPoint(start, -1, False)
    cut = cuts[0]
    total = 0
    over_budget = False
    for index in range(end - 1, start - 1, -1):
        tokens = sum(estimate_tokens(m) for m in entries[index].messages)
        if tokens == 0:
            continue
        total += tokens
        if total >= keep_recent_tokens:
            over_budget = True
            # the closest cut at or after here; when trailing tool results alone are
            # over the budget, the last cut keeps the call they answer
            cut = next((c for c in cuts if c >= index), cuts[-1])
            break
    if over_budget and _omitted_recovery_after(entries[cut + 1 : end]):
        cut += 1
    while cut > start:
        before = entries[cut - 1]
        if before.entry.type == "compaction" or before.messages:
            break
        cut -= 1
    if _has_role(entries[cut], _TURN_START_ROLES):
        return CutPoint(cut, -1, False)
    turn_start = next(
        (i for i in range(cut, start - 1, -1) if _has_role(entries[i], _TURN_START_ROLES)), -1
    )
    return CutPoint(cut, turn_start, turn_start != -1)


def _has_role(item: ProjectedEntry, roles: frozenset[str]) -> bool:
    if item.entry.type == "compaction":
        return False
    return any(m.get("role") in roles for m in item.messages)


def _omitted_recovery_after(suffix: Sequence[ProjectedEntry]) -> bool:
    """Whether everything after the cut is omitted by edits or shows nothing of
    itself, with at least one omitted assistant reply among it and no edit that
    replaces the content of an entry outside it: a failed attempt pi recovered
    from, which must not be kept in place of the input it answered."""
    visible = {id(item): _intrinsically_visible(item) for item in suffix}
    omitted = {item.entry.id for item in suffix if visible[id(item)] and not item.messages}
    for item in suffix:
        if item.entry.type == "compaction":
            return False
        if visible[id(item)] and item.messages:
            return False
        if item.entry.type == "context_edit":
            data = item.entry.data()
            # pi tests ``replacement !== null``: an absent replacement counts as one
            if data.get("replacement", ...) is not None and data.get("targetId") not in omitted:
                return False
    return any(
        item.entry.type == "message" and item.entry.role == "assistant" and item.entry.id in omitted
        for item in suffix
    )


def _intrinsically_visible(item: ProjectedEntry) -> bool:
    """Whether the entry shows the model something before any edit."""
    kind = item.entry.type
    if kind == "context_edit":
        return False
    if item.messages:
        return True
    if kind not in _SHOWABLE_TYPES:
        return False
    return bool(entry_messages(kind, item.entry.data()))


_SHOWABLE_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})


@dataclass(slots=True)
class FileOperations:
    """Files the summarized tool calls read, wrote or edited (by ``path`` argument)."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_from(self, message: dict[str, Any]) -> None:
        """The calls of an assistant message, or those a tool result records as made
        from its script (pi 1.5's ``nestedCalls``)."""
        role = message.get("role")
        if role == "toolResult":
            nested = message.get("nestedCalls")
            calls = nested.get("calls") if isinstance(nested, dict) else None
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict):
                    self._add(call.get("name"), call.get("arguments"))
            return
        if role != "assistant" or not isinstance(message.get("content"), list):
            return
        for block in message["content"]:
            is_call = isinstance(block, dict) and block.get("type") == "toolCall"
            if is_call and "arguments" in block and "name" in block:
                self._add(block["name"], block["arguments"])

    def _add(self, tool: Any, arguments: Any) -> None:
        target = arguments.get("path") if isinstance(arguments, dict) else None
        if isinstance(target, str) and target:
            {"read": self.read, "write": self.written, "edit": self.edited}.get(
                tool if isinstance(tool, str) else "", set()
            ).add(target)

    def add_details(self, details: Any) -> None:
        """Carry the file lists of an earlier summary's ``details`` forward."""
        if not isinstance(details, dict):
            return
        self.read.update(f for f in items_of(details.get("readFiles")) if isinstance(f, str))
        self.edited.update(f for f in items_of(details.get("modifiedFiles")) if isinstance(f, str))

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
    is nothing to do: the path is empty or ends with a compaction, or nothing before
    the cut would be summarized."""
    if not path or path[-1].type == "compaction":
        return None
    projection = project_path(path)
    projected = projection.entries
    # only the last compaction is projected with messages, and always first
    previous = projected[0] if projected and projected[0].entry.type == "compaction" else None
    start = 0 if previous is None else 1
    previous_data = {} if previous is None else previous.entry.data()
    summary = previous_data.get("summary")
    tokens_before = estimate_projected_context_tokens(projection, path).tokens
    cut = find_cut_point(projected, start, len(projected), settings.keep_recent_tokens)
    if cut.first_kept_index >= len(projected):
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    summarize = _with_messages(projected[start:history_end])
    prefix = (
        _with_messages(projected[cut.turn_start_index : cut.first_kept_index])
        if cut.is_split_turn
        else []
    )
    if not summarize and not prefix:
        return None
    files = FileOperations()
    if previous is not None and not previous_data.get("fromHook"):
        files.add_details(previous_data.get("details"))
    for _, message in [*summarize, *prefix]:
        files.add_from(message)
    read_files, modified_files = files.lists()
    return CompactionPlan(
        first_kept_entry_id=projected[cut.first_kept_index].entry.id,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        summarize=_sources(summarize),
        turn_prefix=_sources(prefix),
        messages_to_summarize=[m for _, m in summarize],
        turn_prefix_messages=[m for _, m in prefix],
        previous_summary=summary if isinstance(summary, str) else None,
        read_files=read_files,
        modified_files=modified_files,
    )


def _with_messages(entries: Sequence[ProjectedEntry]) -> list[tuple[StoredEntry, dict[str, Any]]]:
    """The messages a summary covers, each with its entry: what the entries contribute
    (after edits), but no system message (the compaction carries the prompt) and
    nothing from an older compaction."""
    return [
        (item.entry, message)
        for item in entries
        if item.entry.type != "compaction"
        for message in item.messages
        if message.get("role") != "system"
    ]


def _sources(pairs: Sequence[tuple[StoredEntry, dict[str, Any]]]) -> list[StoredEntry]:
    """The entries the messages came from, each once, in order."""
    seen: dict[int, StoredEntry] = {}
    for entry, _ in pairs:
        seen.setdefault(id(entry), entry)
    return list(seen.values())
