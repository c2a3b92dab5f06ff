"""Where a session's tokens go: `breakdown`, the figures of the `stats` command
(Breakdown, Largest).

Every size is tokens.py's estimate (pi's rule) and every usage record is added up as
usage.py's RecordedUsage adds it up. What this module owns is reading a whole session for them
fast: it is one pass over every entry's line, and on a large session decoding each
line into dicts took most of `stats`. So the messages of users, assistants and tool
results are decoded into msgspec structs holding only the fields the estimate and the
usage read; msgspec skips the rest (ids, signatures, images' data, details) without
building it, and the fields it keeps hold the values a full decode gives. Any other
entry, and any line that decoder refuses (bytes that are not UTF-8, a lone surrogate,
a shape it does not expect, such as a content block that is not an object), is
decoded whole, as `StoredEntry.data` decodes it, and measured by tokens.py's
functions on dicts. Both ways give the same figures, in the same order.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.context import Projection, as_message
from jsonl_session.format.entry import StoredEntry, line_blocks, loads_object
from jsonl_session.format.walk import as_text
from jsonl_session.line_sizes import DICT_WAY, DictWay, Measured, measure_message_line
from jsonl_session.tokens import (
    assistant_chars,
    estimate_projected_context_tokens,
    estimate_tokens,
)
from jsonl_session.usage import USAGE_TYPES, RecordedUsage, UsageTally, note_usage


@dataclass(frozen=True, slots=True)
class Largest:
    entry_id: str
    line: int
    what: str  # entry type, role or tool name
    tokens: int


@dataclass(slots=True)
class Breakdown:
    """Where a session's tokens go (estimates; images in user messages counted)."""

    stored_tokens: int = 0  # every entry in the file, all branches
    path_tokens: int = 0  # the active path, as if nothing were compacted
    model_tokens: int = 0  # what the model sees from the leaf
    context_estimate: int = 0  # as pi 1.5 judges it: the last usage while not stale
    entries: int = 0
    by_entry_type: Counter[str] = field(default_factory=Counter)
    by_role: Counter[str] = field(default_factory=Counter)
    by_role_model: Counter[str] = field(default_factory=Counter)
    by_tool: Counter[str] = field(default_factory=Counter)
    by_tool_model: Counter[str] = field(default_factory=Counter)
    largest: list[Largest] = field(default_factory=list)
    recorded: RecordedUsage = field(default_factory=lambda: RecordedUsage())

    @property
    def other_branches_tokens(self) -> int:
        """Stored but off the active path."""
        return max(self.stored_tokens - self.path_tokens, 0)

    @property
    def compaction_saved_tokens(self) -> int:
        """On the active path but replaced by a compaction summary."""
        return max(self.path_tokens - self.model_tokens, 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "storedTokens": self.stored_tokens,
            "pathTokens": self.path_tokens,
            "modelTokens": self.model_tokens,
            "contextEstimate": self.context_estimate,
            "otherBranchesTokens": self.other_branches_tokens,
            "compactionSavedTokens": self.compaction_saved_tokens,
            "entries": self.entries,
            "byEntryType": dict(self.by_entry_type.most_common()),
            "byRole": dict(self.by_role.most_common()),
            "byRoleModel": dict(self.by_role_model.most_common()),
            "byTool": dict(self.by_tool.most_common()),
            "byToolModel": dict(self.by_tool_model.most_common()),
            "largest": [
                {"entryId": x.entry_id, "line": x.line, "what": x.what, "tokens": x.tokens}
                for x in self.largest
            ],
            "recordedUsage": self.recorded.to_dict(),
        }


@dataclass(slots=True)
class Stored:
    """What a session's entries hold whatever its leaf: the figures of every entry
    (`Breakdown`'s stored part) and each body entry's tokens (see `body_entries`; 0
    for one that holds no message), from which any path's are added up."""

    stored_tokens: int = 0
    by_entry_type: Counter[str] = field(default_factory=Counter)
    by_role: Counter[str] = field(default_factory=Counter)
    by_tool: Counter[str] = field(default_factory=Counter)
    largest: list[Largest] = field(default_factory=list)
    recorded: RecordedUsage = field(default_factory=lambda: RecordedUsage())
    tokens: list[int] = field(default_factory=list)


def body_entries(entries: Sequence[StoredEntry]) -> list[StoredEntry]:
    """The entries that can hold tokens or usage: the ones `measure_stored` reads."""
    return [entry for entry in entries if entry.type in _BODY_TYPES]


def is_body(entry: StoredEntry) -> bool:
    """Whether `body_entries` holds ``entry``."""
    return entry.type in _BODY_TYPES


def on_path(entries: Sequence[StoredEntry], path: Sequence[StoredEntry]) -> bytes:
    """For each of `body_entries` of ``entries`` (the order of `Stored.tokens`), 1 if
    ``path`` (a path through ``entries``: the same objects) holds it, else 0."""
    # by the entries' identities, looked up in C: a path may hold every entry
    held = set(map(id, path))
    return bytes(map(held.__contains__, map(id, body_entries(entries))))


def breakdown(count: int, path_bodies: bytes, model: Breakdown, stored: Stored) -> Breakdown:
    """Tokens stored in a session's ``count`` entries and on its active path, given
    ``stored``: `measure_stored` of their body entries (measured on every core by
    breakdown_spread.py, or read back by breakdown_cache.py), and ``path_bodies``:
    `on_path` of its path; added to ``model``: `model_figures` of the context the path
    builds (filled in and returned)."""
    out = model
    out.entries = count
    out.stored_tokens = stored.stored_tokens
    out.by_entry_type = Counter(stored.by_entry_type)
    out.by_role = Counter(stored.by_role)
    out.by_tool = Counter(stored.by_tool)
    out.largest = list(stored.largest)
    out.recorded = stored.recorded
    out.path_tokens = sum(itertools.compress(stored.tokens, path_bodies))
    return out


def model_figures(path: Sequence[StoredEntry], projection: Projection) -> Breakdown:
    """The figures of what the model sees from the leaf of ``path``, which
    ``projection`` built: the rest of a `Breakdown` is `breakdown`'s (those need the
    stored figures; these do not, so they can be made while workers measure)."""
    out = Breakdown()
    sent = [m for m in projection.messages if not m.get("excludeFromContext")]
    for message in sent:
        tokens = _count(message, out.by_tool_model)
        out.model_tokens += tokens
        out.by_role_model[as_text(message.get("role"))] += tokens
    out.context_estimate = estimate_projected_context_tokens(projection, path).tokens
    return out


def measure_stored(bodies: Sequence[StoredEntry], largest: int = 10) -> Stored:
    """The figures of ``bodies`` (`body_entries` of a session's entries, in order):
    one pass, each line decoded once, for its size and its usage. (On every core:
    breakdown_spread.py.)"""
    tally = UsageTally()
    out = measure_part(bodies, largest, tally)
    out.recorded = tally.recorded()
    return out


def measure_part(bodies: Sequence[StoredEntry], largest: int, tally: UsageTally) -> Stored:
    """`measure_stored` of ``bodies``, their usage added to ``tally`` (``recorded``
    left empty): for a session measured whole, or in parts, one process each."""
    out = Stored()
    # the `largest` biggest so far, smallest first: (tokens, -position, entry, role,
    # tool name); of equal sizes the earlier entry is kept, as a stable sort would
    top: list[tuple[int, int, StoredEntry, Any, Any]] = []
    tools = out.by_tool
    by_type = out.by_entry_type
    by_role = out.by_role
    each = out.tokens
    stored = 0
    position = 0
    for run, block, start in line_blocks(bodies):  # read from disk in blocks
        view = memoryview(block if block is not None else b"")
        size = len(view)
        for entry in run:
            position += 1
            measured: Measured | DictWay | None
            if block is None or entry.inline is not None:
                measured = _measure(entry, tools, tally)
            else:
                at = entry.offset - start
                end = at + entry.length
                measured = DICT_WAY
                # the block holds the whole line, a line end after it (as
                # `StoredEntry.checked` checks, which raises else; both ways check the id)
                if entry.type == "message" and (
                    end == size or (end < size and block[end] in _LINE_ENDS)
                ):
                    measured = measure_message_line(entry, view[at:end], tools, tally)
                if measured is DICT_WAY:
                    measured = _measure_dict(entry, entry.checked(block, at), tools, tally)
            if measured is None:
                each.append(0)
                continue
            tokens, role, tool_name = measured
            each.append(tokens)
            stored += tokens
            by_type[entry.type] += tokens
            by_role[role] += tokens
            if largest > 0:
                if len(top) < largest:
                    heapq.heappush(top, (tokens, -position, entry, role, tool_name))
                elif tokens > top[0][0]:  # (a later entry of equal size never displaces)
                    heapq.heapreplace(top, (tokens, -position, entry, role, tool_name))
    out.stored_tokens = stored
    top.sort(key=lambda item: item[:2], reverse=True)
    out.largest = [Largest(e.id, e.line, _what(r, n), tokens) for tokens, _, e, r, n in top]
    return out


_BODY_TYPES = USAGE_TYPES | {"custom_message"}


# --- one entry ---------------------------------------------------------------------


def _measure(entry: StoredEntry, tools: Counter[str], tally: UsageTally) -> Measured | None:
    """The tokens, role and tool name of an entry whose line is in memory, or None
    when it holds no message (see `measure_message_line`). A message's line is
    measured by line_sizes.py, unless it refuses it; any other line, the dict way."""
    raw = entry.raw
    if entry.type == "message":
        measured = measure_message_line(entry, raw, tools, tally)
        if measured is not DICT_WAY:
            return measured
    return _measure_dict(entry, raw, tools, tally)


_LINE_ENDS = (10, 13)  # LF, CR


def _measure_dict(
    entry: StoredEntry, raw: bytes, tools: Counter[str], tally: UsageTally
) -> Measured | None:
    """What `measure_message_line` finds, from the entry's body decoded as
    `StoredEntry.data` decodes it, for any entry."""
    data = loads_object(raw)
    note_usage(tally, entry, data)
    found = _entry_message(entry.type, data)
    if found is None:
        return None
    return _count(found, tools), as_text(found.get("role")), found.get("toolName")


def _entry_message(entry_type: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """The message an entry holds or stands for (a compaction: its summary)."""
    if entry_type == "compaction":
        return {"role": "compactionSummary", "summary": data.get("summary", "")}
    return as_message(entry_type, data)


def _count(message: dict[str, Any], tools: Counter[str]) -> int:
    """The estimate of ``message``, adding to ``tools`` what it gives a tool: a tool
    result's to its tool, an assistant's tool calls' to theirs."""
    role = message.get("role")
    if role == "assistant":
        calls: list[tuple[str, int]] = []
        chars = assistant_chars(message.get("content"), calls)
        for name, call in calls:
            tools[name] += math.ceil(call / 4)
        return math.ceil(chars / 4)
    tokens = estimate_tokens(message)
    if role == "toolResult":
        tools[as_text(message.get("toolName"))] += tokens
    return tokens


def _what(role: Any, tool_name: Any) -> str:
    """How the largest entries name a message: its role, a tool result's tool too."""
    text = as_text(role)
    return f"toolResult {as_text(tool_name)}" if text == "toolResult" else text
