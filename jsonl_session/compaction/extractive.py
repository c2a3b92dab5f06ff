"""The offline summarizer: a structured summary built from the messages themselves.

Deterministic and without network, so `compact` works on a fresh install and tests
and benchmarks can run it. It reads the summarized messages (pi's shapes) and
collects, in order: the user's goals and latest request, sentences that set
constraints or preferences, decisions the assistant states, files read and changed
by tool calls, commands run and whether they failed (a later successful run of the
same command clears an earlier failure), errors, and open tasks. On an update it
parses the previous summary's sections and keeps every item of it, adding the new
ones after them. When the text would exceed the output budget, the least important
items go first (routine commands, then done work); goals and constraints go last.

It does not choose what to summarize (planning.py) or write anything (execute.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.compaction.prompts import NO_EARLIER_HISTORY, SummaryTask, clip, describe_call
from jsonl_session.messages import command_text, content_blocks, joined_text

ITEM_CHARS = 300
CHARS_PER_TOKEN = 4  # the ratio the token estimate uses (tokens.py)

_WRITE_TOOLS = frozenset(
    {"write", "edit", "create", "write_file", "edit_file", "multi_edit", "str_replace"}
)
_SHELL_TOOLS = frozenset({"bash", "shell", "exec", "run", "terminal", "execute_command"})
_PATH_KEYS = ("path", "file_path", "filePath", "filename", "file")

_CONSTRAINT = re.compile(
    r"\b(must|mustn't|never|always|do not|don't|avoid|prefer|should|shouldn't|only use|"
    r"make sure|stick to|required?|requirement|not allowed|no more than|at most|at least|"
    r"instead|please use|please keep)\b|,\s*not\s",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(i'll use|i will use|we'll use|let's use|decided|decision|going with|chose|"
    r"instead of|rather than|switch(?:ed|ing)? to|opt(?:ed)? for|the fix is|root cause)\b",
    re.IGNORECASE,
)
_OPEN_TASK = re.compile(
    r"(?-i:\bTODO\b)|\b(still need|remaining|not yet|left to do|next step|follow[- ]up|unresolved|"
    r"later|open question|pending)\b",
    re.IGNORECASE,
)
_EXIT = re.compile(r"\bexit(?:ed)?(?: with)?(?: code| status)?[:= ]+(-?\d+)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)")
_FILE_TAGS = re.compile(r"\n*<(read-files|modified-files)>.*?</\1>", re.DOTALL)

# Section keys, in the order they are shown, and the order items are dropped in
# when over budget (first listed, first dropped).
_HISTORY = ("goal", "constraints", "done", "in_progress", "blocked", "decisions", "next", "context")
_DROP_ORDER = ("context", "done", "decisions", "in_progress", "next", "blocked", "focus")
_TITLES = {
    "goal": "## Goal",
    "constraints": "## Constraints & Preferences",
    "done": "### Done",
    "in_progress": "### In Progress",
    "blocked": "### Blocked",
    "decisions": "## Key Decisions",
    "next": "## Next Steps",
    "context": "## Critical Context",
    "focus": "## Requested Focus",
    "request": "## Original Request",
    "early": "## Early Progress",
    "follows": "## Context for What Follows",
}
_HEADING_KEYS = (
    ("constraint", "constraints"),
    ("preference", "constraints"),
    ("goal", "goal"),
    ("done", "done"),
    ("in progress", "in_progress"),
    ("blocked", "blocked"),
    ("decision", "decisions"),
    ("next", "next"),
    ("focus", "focus"),
    ("original request", "goal"),
    ("early progress", "done"),
)


LATER = "Later: "
LATEST = "Latest request: "
CONTINUE = "Continue with the latest request: "
# (section, item prefix, how many of the newest to keep). Files changed are also in
# the summary's file lists, which are carried forward whole.
_CAPS = (("goal", LATER, 5), ("done", "Ran `", 8), ("done", "Changed `", 25))


@dataclass(slots=True)
class _Command:
    text: str
    failed: bool
    detail: str


@dataclass(slots=True)
class _Notes:
    sections: dict[str, list[str]] = field(default_factory=dict)
    _seen: dict[str, set[str]] = field(default_factory=dict)

    def drop(self, key: str, prefix: str) -> None:
        """Forget the items of a section that start with ``prefix``."""
        if key in self.sections:
            self.sections[key] = [i for i in self.sections[key] if not i.startswith(prefix)]
            self._seen.pop(key, None)

    def cap(self) -> None:
        """Keep only the newest items of the kinds that pile up round after round."""
        for key, prefix, limit in _CAPS:
            items = self.sections.get(key, [])
            matching = [i for i in items if i.startswith(prefix)]
            extra = set(matching[: max(len(matching) - limit, 0)])
            if extra:
                self.sections[key] = [i for i in items if i not in extra]
                self._seen.pop(key, None)

    def add(self, key: str, item: str) -> None:
        item = clip(" ".join(item.split()), ITEM_CHARS)
        if not item:
            return
        items = self.sections.setdefault(key, [])
        if key not in self._seen:
            self._seen[key] = {_norm(existing) for existing in items}
        seen = self._seen[key]
        if _norm(item) not in seen:
            seen.add(_norm(item))
            items.append(item)


class ExtractiveSummarizer:
    """Structured summaries without a model (see the module docstring)."""

    name = "offline"

    def summarize(self, task: SummaryTask) -> str:
        notes = _Notes()
        if task.kind == "history" and task.previous_summary:
            _take_previous(task.previous_summary, notes)
        facts = _read(task.messages)
        if task.kind == "turn_prefix":
            return _turn_prefix(facts, task)
        _fill(notes, facts)
        if task.instructions and task.instructions.strip():
            for sentence in _focus(facts, task.instructions):
                notes.add("focus", sentence)
        keys = _HISTORY if task.kind == "history" else _HISTORY[:-1]
        return _render(notes, [*keys, "focus"], task.max_tokens * CHARS_PER_TOKEN)


@dataclass(slots=True)
class _Facts:
    requests: list[str] = field(default_factory=list)
    user_sentences: list[str] = field(default_factory=list)
    assistant_sentences: list[str] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    commands: dict[str, _Command] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)


def _read(messages: Sequence[dict[str, Any]]) -> _Facts:
    facts = _Facts()
    pending: dict[str, str] = {}  # tool call id -> command text
    for message in messages:
        role = message.get("role")
        if role == "user" or role == "custom":
            text = joined_text(message.get("content")).strip()
            if text and role == "user":
                facts.requests.append(text)
            facts.user_sentences.extend(_sentences(text))
        elif role == "assistant":
            facts.assistant_sentences.extend(_sentences(joined_text(message.get("content"))))
            for block in content_blocks(message.get("content")):
                if block.get("type") == "toolCall":
                    _take_call(block, facts, pending)
        elif role == "toolResult":
            _take_result(message, facts, pending)
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                continue  # the user kept it from the model; keep it out of summaries too
            code = message.get("exitCode")
            failed = bool(message.get("cancelled")) or (isinstance(code, int) and code != 0)
            output = str(message.get("output") or "")
            _record_command(facts, str(message.get("command") or ""), failed, output, code)
            facts.user_sentences.extend(_sentences(command_text(message))[:1])
        elif role in ("compactionSummary", "branchSummary"):
            summary = message.get("summary")
            if isinstance(summary, str):
                facts.summaries.append(_FILE_TAGS.sub("", summary))
    return facts


def _take_call(block: dict[str, Any], facts: _Facts, pending: dict[str, str]) -> None:
    name = str(block.get("name") or "").lower()
    arguments = block.get("arguments")
    arguments = arguments if isinstance(arguments, dict) else {}
    target = next((arguments[k] for k in _PATH_KEYS if isinstance(arguments.get(k), str)), None)
    if target and name in _WRITE_TOOLS:
        _append_new(facts.modified, target)
    command = arguments.get("command", arguments.get("cmd"))
    if name in _SHELL_TOOLS and isinstance(command, str) and isinstance(block.get("id"), str):
        pending[block["id"]] = command
    facts.calls.append(describe_call(block))


def _take_result(message: dict[str, Any], facts: _Facts, pending: dict[str, str]) -> None:
    output = joined_text(message.get("content"))
    command = pending.pop(str(message.get("toolCallId")), None)
    exit_match = _EXIT.search(output[-400:])
    code = int(exit_match.group(1)) if exit_match else None
    failed = bool(message.get("isError")) or (code is not None and code != 0)
    if command is not None:
        _record_command(facts, command, failed, output, code)
    elif failed:
        name = message.get("toolName") or "a tool"
        facts.errors.append(f"{name} failed: {_first_line(output)}")


def _record_command(facts: _Facts, command: str, failed: bool, output: str, code: Any) -> None:
    if not command.strip():
        return
    status = f"exit {code}" if isinstance(code, int) and code != 0 else "failed"
    detail = f"{status}: {_first_error_line(output)}" if failed else ""
    facts.commands.pop(command, None)  # the latest run decides, and moves to the end
    facts.commands[command] = _Command(command, failed, detail)


def _fill(notes: _Notes, facts: _Facts) -> None:
    for summary in facts.summaries:
        _take_previous(summary, notes)
    requests = list(facts.requests)
    if requests and not notes.sections.get("goal"):
        notes.add("goal", requests.pop(0))
    for request in requests[:-1]:
        notes.add("goal", f"{LATER}{request}")
    for sentence in facts.user_sentences:
        if _CONSTRAINT.search(sentence):
            notes.add("constraints", sentence)
    for path in facts.modified:
        notes.add("done", f"Changed `{path}`")
    for command in facts.commands.values():
        if command.failed:
            notes.add("blocked", f"`{command.text}` {command.detail}")
        else:
            notes.add("done", f"Ran `{command.text}`")
            notes.drop("blocked", f"`{command.text}` ")  # it works now
    for error in facts.errors:
        notes.add("blocked", error)
    for sentence in facts.assistant_sentences:
        if _DECISION.search(sentence):
            notes.add("decisions", sentence)
    for sentence in [*facts.user_sentences, *facts.assistant_sentences]:
        if _OPEN_TASK.search(sentence):
            notes.add("next", sentence)
    if facts.requests:
        latest = facts.requests[-1]
        notes.add("in_progress", f"{LATEST}{latest}")
        notes.add("next", f"{CONTINUE}{latest}")
    notes.cap()


def _turn_prefix(facts: _Facts, task: SummaryTask) -> str:
    notes = _Notes()
    if facts.requests:
        notes.add("request", facts.requests[0])
    for path in facts.modified:
        notes.add("early", f"Changed `{path}`")
    for command in facts.commands.values():
        state = command.detail if command.failed else "succeeded"
        notes.add("early", f"Ran `{command.text}` ({state})")
    for sentence in facts.assistant_sentences:
        if _DECISION.search(sentence):
            notes.add("early", sentence)
    for error in facts.errors:
        notes.add("follows", error)
    if not notes.sections and facts.calls:
        notes.add("follows", "Tool calls: " + "; ".join(facts.calls))
    budget = task.max_tokens * CHARS_PER_TOKEN
    return _render(notes, ["request", "early", "follows"], budget)


def _take_previous(summary: str, notes: _Notes) -> None:
    """Every item of an earlier summary, under the section its heading names."""
    key = "context"
    original_request = False
    for line in _FILE_TAGS.sub("", summary).splitlines():
        stripped = line.strip()
        if not stripped or stripped == "---" or stripped in ("(none)", "- (none)"):
            continue
        if stripped == NO_EARLIER_HISTORY:
            continue
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip().lower()
            key = next((k for word, k in _HEADING_KEYS if word in heading), "context")
            original_request = heading == "original request"
            continue
        if stripped.startswith("**") and stripped.endswith(":**"):
            continue  # a label line such as a split turn's heading
        item = _BULLET.sub("", stripped)
        if item.startswith((LATEST, CONTINUE)):
            continue  # replaced by the newer latest request
        if original_request and not item.startswith(LATER):
            item = LATER + item
        notes.add(key, item)


def _focus(facts: _Facts, instructions: str) -> list[str]:
    """Sentences that mention a word of the caller's instructions (4+ letters)."""
    words = {w.lower() for w in re.findall(r"[A-Za-z0-9_./-]{4,}", instructions)}
    found = [f"Instructions: {instructions.strip()}"]
    for sentence in [*facts.user_sentences, *facts.assistant_sentences, *facts.calls]:
        lowered = sentence.lower()
        if any(word in lowered for word in words):
            found.append(sentence)
    return found


def _render(notes: _Notes, keys: Sequence[str], budget_chars: int) -> str:
    sections = {k: list(notes.sections.get(k, [])) for k in keys}
    text = _layout(sections)
    excess = len(text) - budget_chars
    while excess > 0:
        victim = next((k for k in _DROP_ORDER if k in sections and len(sections[k]) > 1), None)
        if victim is None:
            victim = next((k for k in reversed(keys) if len(sections[k]) > 1), None)
        if victim is None:
            break
        # the oldest item of the least important section; its line and bullet go
        count = len(sections[victim])
        excess -= len(_bullet(victim, count)) + len(sections[victim].pop(0)) + 1
        if excess <= 0:
            text = _layout(sections)  # bullets differ in width: check exactly
            excess = len(text) - budget_chars
    return _layout(sections)


def _layout(sections: dict[str, list[str]]) -> str:
    lines: list[str] = []
    for key, items in sections.items():
        if key == "focus" and not items:
            continue
        if key == "done":
            lines.append("## Progress")
        lines.append(_TITLES[key])
        if not items:
            lines.append("- (none)")
        lines.extend(_bullet(key, number) + item for number, item in enumerate(items, 1))
        lines.append("")
    return "\n".join(lines).strip()


def _bullet(key: str, number: int) -> str:
    if key == "done":
        return "- [x] "
    if key == "in_progress":
        return "- [ ] "
    return f"{number}. " if key == "next" else "- "


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if len(s.strip()) > 3]


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "(no output)")


def _first_error_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    marked = [line for line in lines if re.search(r"error|fail|exception|denied", line, re.I)]
    return (marked or lines or ["(no output)"])[0]


def _append_new(items: list[str], value: str) -> None:
    if value not in items:
        items.append(value)


def _norm(item: str) -> str:
    return re.sub(r"\W+", " ", item.lower()).strip()
