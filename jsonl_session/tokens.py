"""Token accounting: estimates per message and per context, and where a session's
tokens go.

The estimate is pi's, so compaction decisions made from it equal pi's: characters
(JavaScript string length, i.e. UTF-16 code units) divided by 4, rounded up; a
tool call counts its name and its arguments as compact JSON; an image in a tool
result, custom or user message counts as 4,800 characters (pi 1.5; pi 0.73 did not
count them in user messages: ``count_user_images=False``); a system message (pi 1.5)
counts its content, its sections and its tool declarations as compact JSON. A
context estimate takes the last usable assistant ``usage`` and estimates only the
messages after it. Exact counts
through a provider's counting endpoint are providers/counting.py's (they need a client).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.context import Projection, as_message
from jsonl_session.format.entry import StoredEntry, loads_object, raw_lines
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.walk import as_text, finite_number
from jsonl_session.messages import current_system_message

IMAGE_CHARS = 4800


_SLICE = 1 << 20  # characters encoded at once: a 200 MB text is not copied whole


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (an emoji counts 2, a lone
    surrogate 1). Measured by encoding, in C: a loop over characters took most of
    `stats` on a large session."""
    if text.isascii():
        return len(text)
    return (
        sum(
            len(text[start : start + _SLICE].encode("utf-16-le", "surrogatepass"))
            for start in range(0, len(text), _SLICE)
        )
        // 2
    )


def estimate_tokens(message: dict[str, Any], *, count_user_images: bool = True) -> int:
    """pi's estimate for one message (see the module docstring)."""
    role = message.get("role")
    content = message.get("content")
    chars = 0
    if role == "system":
        chars = _text_chars(content, count_images=True)
        sections = message.get("sections")
        for section in sections.values() if isinstance(sections, dict) else ():
            if isinstance(section, str):
                chars += js_length(section)
        tools = message.get("toolsAdded")
        if isinstance(tools, list | dict) or tools not in (None, False, 0, ""):
            chars += js_length(dumps(tools).decode())  # JavaScript truthiness: [] counts
    elif role == "user":
        chars = _text_chars(content, count_images=count_user_images)
    elif role == "assistant":
        chars = _assistant_chars(content, None)
    elif role in ("custom", "toolResult"):
        chars = _text_chars(content, count_images=True)
    elif role == "bashExecution":
        chars = js_length(as_text(message.get("command") or "")) + js_length(
            as_text(message.get("output") or "")
        )
    elif role in ("branchSummary", "compactionSummary"):
        chars = js_length(as_text(message.get("summary") or ""))
    return math.ceil(chars / 4)


def _assistant_chars(content: Any, calls: list[tuple[str, int]] | None) -> int:
    """An assistant message's characters; with ``calls``, each tool call's name and
    characters are added to it too (one pass for `breakdown`)."""
    chars = 0
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += js_length(as_text(block.get("text") or ""))
        elif kind == "thinking":
            chars += js_length(as_text(block.get("thinking") or ""))
        elif kind == "toolCall":
            call = _tool_call_chars(block)
            chars += call
            if calls is not None:
                calls.append((as_text(block.get("name")), call))
    return chars


def _tool_call_chars(block: dict[str, Any]) -> int:
    """A tool call's size: its name and its arguments as compact JSON."""
    arguments = dumps(block.get("arguments"))
    # ASCII JSON is as long in UTF-16 as in bytes: no need to decode it to count
    length = len(arguments) if arguments.isascii() else js_length(arguments.decode())
    return js_length(as_text(block.get("name") or "")) + length


def _text_chars(content: Any, *, count_images: bool) -> int:
    if isinstance(content, str):
        return js_length(content)
    chars = 0
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            chars += js_length(as_text(block["text"]))
        elif block.get("type") == "image" and count_images:
            chars += IMAGE_CHARS
    return chars


def usage_tokens(usage: Any) -> int:
    """The context size an assistant ``usage`` reports (total, else its parts)."""
    if not isinstance(usage, dict):
        return 0
    # a figure no double holds (1e400, 10**30) is damage: counted as missing
    total = finite_number(usage.get("totalTokens"))
    if total:
        return int(total)
    parts = ("input", "output", "cacheRead", "cacheWrite")
    return int(sum(v for k in parts if (v := finite_number(usage.get(k))) is not None))


@dataclass(frozen=True, slots=True)
class ContextEstimate:
    tokens: int
    usage_tokens: int  # from the last usable assistant usage (0 if none)
    trailing_tokens: int  # estimated for the messages after it
    last_usage_index: int | None


def estimate_context_tokens(
    messages: Sequence[dict[str, Any]], *, count_user_images: bool = True
) -> ContextEstimate:
    """The context's size: the last assistant usage that is not from an aborted or
    failed turn and reports some tokens, plus estimates of the messages after it (all
    estimated if none). ``count_user_images=False``: pi 0.73's rule (see the module
    docstring)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            message.get("role") == "assistant"
            and message.get("stopReason") not in ("aborted", "error")
            and (known := usage_tokens(message.get("usage"))) > 0
        ):
            after = messages[index + 1 :]
            trailing = sum(estimate_tokens(m, count_user_images=count_user_images) for m in after)
            return ContextEstimate(known + trailing, known, trailing, index)
    estimated = sum(estimate_tokens(m, count_user_images=count_user_images) for m in messages)
    return ContextEstimate(estimated, 0, estimated, None)


def estimate_projected_context_tokens(
    projection: Projection, path: Sequence[StoredEntry]
) -> ContextEstimate:
    """The size of the context ``projection`` builds from ``path`` (pi 1.5's
    estimateProjectedContextTokens): estimate_context_tokens while the usage it rests
    on was recorded after the path's last context edit and last compaction; else that
    usage measured a context that is no longer sent, so every message is estimated,
    the system messages as the one prompt they replay into."""
    messages = projection.messages
    estimate = estimate_context_tokens(messages)
    if estimate.last_usage_index is not None:
        source = _source_of(projection, estimate.last_usage_index)
        measured_at = next((i for i, e in enumerate(path) if e.id == source), -1)
        invalidated_at = next(
            (i for i in range(len(path) - 1, -1, -1) if path[i].type in _INVALIDATING),
            -1,
        )
        if measured_at > invalidated_at:
            return estimate
    system = current_system_message(messages)
    tokens = estimate_tokens(system) if system is not None else 0
    tokens += sum(estimate_tokens(m) for m in messages if m.get("role") != "system")
    return ContextEstimate(tokens, 0, tokens, None)


# entries after which a recorded usage no longer measures what is sent
_INVALIDATING = frozenset({"context_edit", "compaction"})


def _source_of(projection: Projection, message_index: int) -> str | None:
    """The id of the entry the projection's ``message_index``-th message came from."""
    seen = 0
    for item in projection.entries:
        seen += len(item.messages)
        if message_index < seen:
            return item.entry.id
    return None


def estimate_messages_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """The estimates of the messages, added up, ignoring recorded usage (which goes
    stale once a compaction or pruning changes what is sent)."""
    return sum(estimate_tokens(m) for m in messages)


@dataclass(frozen=True, slots=True)
class Largest:
    entry_id: str
    line: int
    what: str  # entry type, role or tool name
    tokens: int


USAGE_KEYS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")


UsageFigures = tuple[dict[str, int], float]


def usage_figures(usage: dict[str, Any]) -> UsageFigures:
    """The token counts (by USAGE_KEYS, those present) and the cost of one usage
    record; a figure no double holds (1e400, 10**30) is damage, counted as missing."""
    tokens = {}
    for key in USAGE_KEYS:
        value = usage.get(key)
        if value.__class__ is int and -(2**53) <= value <= 2**53:  # most records: plain
            tokens[key] = value
        elif (number := finite_number(value)) is not None:
            tokens[key] = int(number)
    cost = usage.get("cost")
    total = finite_number(cost.get("total") if isinstance(cost, dict) else None)
    return tokens, float(total) if total is not None else 0.0


@dataclass(slots=True)
class UsageTotal:
    """Tokens and cost that usage records add up to."""

    tokens: Counter[str] = field(default_factory=Counter)  # by USAGE_KEYS
    cost: float = 0.0  # US dollars, as recorded
    records: int = 0

    def add(self, usage: dict[str, Any]) -> None:
        self.add_figures(usage_figures(usage))

    def add_figures(self, figures: UsageFigures) -> None:
        tokens, cost = figures
        self.records += 1
        counts = self.tokens
        for key, value in tokens.items():  # Counter.update is slower, in Python
            counts[key] += value
        self.cost += cost

    def to_dict(self) -> dict[str, Any]:
        tokens = {key: self.tokens.get(key, 0) for key in USAGE_KEYS}
        return {**tokens, "cost": round(self.cost, 10), "records": self.records}


@dataclass(slots=True)
class RecordedUsage:
    """The usage a session recorded, all branches: assistant replies, usage entries
    (pi 1.5: cache warming, classifiers, ...) and the calls that wrote compaction and
    branch summaries; by model (``provider/model``) and by kind (``assistant``,
    ``compaction``, ``branch_summary`` or a usage entry's own kind)."""

    total: UsageTotal = field(default_factory=UsageTotal)
    by_model: dict[str, UsageTotal] = field(default_factory=dict)
    by_kind: dict[str, UsageTotal] = field(default_factory=dict)

    def add(self, usage: Any, model: str, kind: str) -> None:
        if not isinstance(usage, dict):
            return
        figures = usage_figures(usage)  # once for the three totals
        self.total.add_figures(figures)
        by_model = self.by_model.get(model)
        if by_model is None:
            by_model = self.by_model[model] = UsageTotal()
        by_model.add_figures(figures)
        by_kind = self.by_kind.get(kind)
        if by_kind is None:
            by_kind = self.by_kind[kind] = UsageTotal()
        by_kind.add_figures(figures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total.to_dict(),
            "byModel": {k: v.to_dict() for k, v in self.by_model.items()},
            "byKind": {k: v.to_dict() for k, v in self.by_kind.items()},
        }


def recorded_usage(entries: Sequence[StoredEntry]) -> RecordedUsage:
    """What the usage records of ``entries`` add up to (see RecordedUsage)."""
    found = RecordedUsage()
    for entry in entries:
        if entry.type in _USAGE_TYPES:
            _note_usage(found, entry, entry.data())
    return found


_USAGE_TYPES = frozenset({"message", "usage", "compaction", "branch_summary"})


def _note_usage(found: RecordedUsage, entry: StoredEntry, data: dict[str, Any]) -> None:
    """Add the usage one entry records, given its body."""
    if entry.type == "message" and entry.role == "assistant":
        message = data.get("message")
        if isinstance(message, dict):
            model = f"{as_text(message.get('provider'))}/{as_text(message.get('model'))}"
            found.add(message.get("usage"), model, "assistant")
    elif entry.type == "usage":
        model = f"{as_text(data.get('provider'))}/{as_text(data.get('model'))}"
        found.add(data.get("usage"), model, as_text(data.get("kind")))
    elif entry.type in ("compaction", "branch_summary"):
        found.add(data.get("usage"), "(summaries)", entry.type)


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


def breakdown(
    entries: Sequence[StoredEntry],
    path: Sequence[StoredEntry],
    projection: Projection,
    *,
    largest: int = 10,
) -> Breakdown:
    """Tokens stored in ``entries``, on the active ``path`` and in the context its
    ``projection`` builds."""
    out = Breakdown(entries=len(entries))
    on_path = {id(entry) for entry in path}
    # the `largest` biggest so far, smallest first: (tokens, -position, entry, message);
    # of equal sizes the earlier entry is kept, as a stable sort would keep it
    top: list[tuple[int, int, StoredEntry, dict[str, Any]]] = []
    bodies = [entry for entry in entries if entry.type in _BODY_TYPES]
    for start in range(0, len(bodies), _BATCH):
        batch = bodies[start : start + _BATCH]
        # each body decoded once, for its size and its usage; read from disk in blocks
        for position, (entry, raw) in enumerate(zip(batch, raw_lines(batch), strict=True)):
            data = loads_object(raw)
            _note_usage(out.recorded, entry, data)
            message = _entry_message(entry.type, data)
            if message is None:
                continue
            tokens = _count(message, out.by_tool)
            if id(entry) in on_path:
                out.path_tokens += tokens
            out.stored_tokens += tokens
            out.by_entry_type[entry.type] += tokens
            out.by_role[as_text(message.get("role"))] += tokens
            if largest > 0:
                item = (tokens, -(start + position), entry, message)
                if len(top) < largest:
                    heapq.heappush(top, item)
                elif item[:2] > top[0][:2]:
                    heapq.heapreplace(top, item)
    sent = [m for m in projection.messages if not m.get("excludeFromContext")]
    for message in sent:
        tokens = _count(message, out.by_tool_model)
        out.model_tokens += tokens
        out.by_role_model[as_text(message.get("role"))] += tokens
    out.context_estimate = estimate_projected_context_tokens(projection, path).tokens
    top.sort(key=lambda item: item[:2], reverse=True)
    out.largest = [Largest(e.id, e.line, _what(m), tokens) for tokens, _, e, m in top]
    return out


_BATCH = 1024  # entries whose lines are read at once


_BODY_TYPES = _USAGE_TYPES | {"custom_message"}


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
        chars = _assistant_chars(message.get("content"), calls)
        for name, call in calls:
            tools[name] += math.ceil(call / 4)
        return math.ceil(chars / 4)
    tokens = estimate_tokens(message)
    if role == "toolResult":
        tools[as_text(message.get("toolName"))] += tokens
    return tokens


def _what(message: dict[str, Any]) -> str:
    role = as_text(message.get("role"))
    return f"toolResult {as_text(message.get('toolName'))}" if role == "toolResult" else role
