"""The offline summarizer: a structured summary built from the messages themselves.

Deterministic and without network, so `compact` works on a fresh install and tests
and benchmarks can run it. From the facts gleaning.py reads it writes pi's sections:

- Goal: the user's first substantive request in their words (slash commands,
  greetings and pasted logs skipped), their corrections ("Correction: …") and the
  newest later requests ("Later: …");
- Constraints & Preferences: every sentence of the user's that sets a rule or a
  preference, in any of the phrasings wording.py knows;
- Progress: Done (finished work the assistant reported, commands that failed and
  pass now, files changed that pi's file lists miss), In Progress (the latest
  request), Blocked (commands still failing, with their error; failed tool calls);
- Key Decisions the assistant stated; Next Steps: open tasks; Critical Context:
  files read that pi's lists miss, and what earlier summaries said elsewhere.

Files pi's own rules find are not repeated: execute.py appends pi's ``<read-files>``
and ``<modified-files>`` lists after the summary. On an update the previous summary
is read back (Markdown stripped, code blocks and tables left out) and merged: its
items first, the new ones after, each once; a command it lists as failing moves to
Done when it passes now. Kinds that pile up keep their newest items; over the
output budget the least important go first, goal and constraints last.

It does not choose what to summarize (planning.py) or write anything (execute.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.compaction import shell, wording
from jsonl_session.compaction.gleaning import Facts, read_facts
from jsonl_session.compaction.planning import FileOperations
from jsonl_session.compaction.prompts import NO_EARLIER_HISTORY, SummaryTask

ITEM_CHARS = 300
GOAL_CHARS = 500
CHARS_PER_TOKEN = 4  # the ratio the token estimate uses (tokens.py)

LATER = "Later: "
CORRECTION = "Correction: "
ADDITION = "Also: "
LATEST = "Latest request: "
CONTINUE = "Continue with the latest request: "  # earlier versions' wording, dropped
CONSTRAINT = "Constraint: "  # a constraint said in a split turn's first part
TOOL_CALLS = "Tool calls: "  # a split turn's calls, when nothing else is known of it
CHANGED = "Changed `"
READ = "Read `"
PASSES = " passes now"

_FILE_TAGS = re.compile(r"\n*<(read-files|modified-files)>.*?</\1>", re.DOTALL)
_COMMAND = re.compile(r"^`([^`]+)`")
_LABEL = re.compile(r"^(?:Later|Correction|Also): ")

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
# Words of a heading (ours, pi's or a model's) and the section its items go to;
# the first that the heading holds decides.
_HEADING_KEYS = (
    ("constraint", "constraints"),
    ("preference", "constraints"),
    ("rules", "constraints"),
    ("goal", "goal"),
    ("objective", "goal"),
    ("original request", "goal"),
    ("in progress", "in_progress"),
    ("current task", "in_progress"),
    ("blocked", "blocked"),
    ("blocker", "blocked"),
    ("decision", "decisions"),
    ("next", "next"),
    ("todo", "next"),
    ("remaining", "next"),
    ("open question", "next"),
    ("focus", "focus"),
    ("early progress", "done"),
    ("done", "done"),
    ("completed", "done"),
    ("progress", "done"),
)


def _has(prefix: str) -> Callable[[str], bool]:
    return lambda item: item.startswith(prefix)


def _statement(item: str) -> bool:
    return not item.startswith(CHANGED) and PASSES not in item


# (section, which items, how many of the newest to keep).
_CAPS: tuple[tuple[str, Callable[[str], bool], int], ...] = (
    ("goal", _has(LATER), 5),
    ("goal", _has(CORRECTION), 8),
    ("goal", _has(ADDITION), 8),
    ("done", _has(CHANGED), 25),
    ("done", lambda item: PASSES in item, 12),
    ("done", _statement, 12),
    ("context", _has(READ), 25),
    ("decisions", lambda item: True, 20),
    ("next", lambda item: True, 15),
    ("blocked", lambda item: True, 15),
)


@dataclass(slots=True)
class _Notes:
    sections: dict[str, list[str]] = field(default_factory=dict)
    _seen: dict[str, set[str]] = field(default_factory=dict)

    def add(self, key: str, item: str, limit: int = ITEM_CHARS) -> None:
        item = wording.shorten(wording.strip_markup(item), limit)
        if not item:
            return
        items = self.sections.setdefault(key, [])
        if key not in self._seen:
            self._seen[key] = {_norm(existing) for existing in items}
        if _norm(item) not in self._seen[key]:
            self._seen[key].add(_norm(item))
            items.append(item)

    def drop(self, key: str, unwanted: Callable[[str], bool]) -> None:
        if key in self.sections:
            self.sections[key] = [i for i in self.sections[key] if not unwanted(i)]
            self._seen.pop(key, None)

    def has_goal(self) -> bool:
        later = (LATER, CORRECTION, ADDITION)
        return any(not i.startswith(later) for i in self.sections.get("goal", []))

    def cap(self) -> None:
        """Keep only the newest items of the kinds that pile up round after round."""
        for key, matches, limit in _CAPS:
            items = self.sections.get(key, [])
            matching = [i for i in items if matches(i)]
            extra = set(matching[: max(len(matching) - limit, 0)])
            if extra:
                self.sections[key] = [i for i in items if i not in extra]
                self._seen.pop(key, None)


class ExtractiveSummarizer:
    """Structured summaries without a model (see the module docstring)."""

    name = "offline"

    def summarize(self, task: SummaryTask) -> str:
        notes = _Notes()
        if task.kind == "history" and task.previous_summary:
            _take_previous(task.previous_summary, notes)
        facts = read_facts(task.messages)
        if task.kind == "turn_prefix":
            return _turn_prefix(facts, task)
        for summary in facts.summaries:
            _take_previous(summary, notes)
        _fill(notes, facts, task.messages)
        if task.instructions and task.instructions.strip():
            for sentence in _focus(facts, task.instructions):
                notes.add("focus", sentence)
        keys = _HISTORY if task.kind == "history" else _HISTORY[:-1]
        return _render(notes, [*keys, "focus"], task.max_tokens * CHARS_PER_TOKEN)


def _add_request(notes: _Notes, request: str, latest: bool = False) -> None:
    said = _norm(wording.shorten(request, GOAL_CHARS))
    if any(_norm(_LABEL.sub("", item)) == said for item in notes.sections.get("goal", [])):
        return  # a request an earlier summary already holds
    if not notes.has_goal():
        notes.add("goal", request, GOAL_CHARS)
    elif wording.is_correction(request):
        notes.add("goal", CORRECTION + request)
    elif wording.is_addition(request):
        notes.add("goal", ADDITION + request)
    elif not latest:
        notes.add("goal", LATER + request)


def _fill(notes: _Notes, facts: Facts, messages: Sequence[dict[str, Any]]) -> None:
    if facts.requests:  # the latest request before these is now an earlier one
        for item in notes.sections.get("in_progress", []):
            if item.startswith(LATEST):
                _add_request(notes, item.removeprefix(LATEST))
        notes.drop("in_progress", _has(LATEST))
    for number, request in enumerate(facts.requests, 1):
        _add_request(notes, request, latest=number == len(facts.requests))
    for sentence in facts.constraints:
        notes.add("constraints", sentence)
    changed, read = _files_pi_misses(facts, messages)
    for path in changed:
        notes.add("done", f"{CHANGED}{path}`")
    for path in read:
        notes.add("context", f"{READ}{path}`")
    for key, command in facts.commands.items():
        earlier = [i for i in notes.sections.get("blocked", []) if _blocked_key(i) == key]
        if earlier:
            notes.drop("blocked", earlier.__contains__)  # the latest run decides
        if command.failed:
            notes.add("blocked", f"`{command.text}` {command.detail}")
        elif command.failed_before or earlier:
            before = command.failed_before or _after_command(earlier[-1])
            notes.add("done", f"`{command.text}`{PASSES} (it failed before: {before})")
    for error in facts.tool_errors.values():
        notes.add("blocked", error)
    for sentence in facts.done:
        notes.add("done", sentence)
    for sentence in facts.decisions:
        notes.add("decisions", sentence)
    for task in facts.open_tasks:
        notes.add("next", task)
    if facts.requests:
        notes.add("in_progress", LATEST + facts.requests[-1])
    notes.cap()


def _files_pi_misses(
    facts: Facts, messages: Sequence[dict[str, Any]]
) -> tuple[list[str], list[str]]:
    """(changed, read): files our rules found that pi's file lists do not hold."""
    operations = FileOperations()
    for message in messages:
        operations.add_from(message)
    pi_read, pi_modified = operations.lists()
    changed = [p for p in facts.changed if p not in pi_modified]
    known = {*pi_read, *pi_modified, *facts.changed}
    return changed, [p for p in facts.read if p not in known]


def _blocked_key(item: str) -> str | None:
    match = _COMMAND.match(item)
    return shell.command_key(match.group(1)) if match else None


def _after_command(item: str) -> str:
    return _COMMAND.sub("", item).strip()


def _turn_prefix(facts: Facts, task: SummaryTask) -> str:
    notes = _Notes()
    request = facts.requests[0] if facts.requests else facts.first_user_text
    if request:
        notes.add("request", request, GOAL_CHARS)
    changed, _ = _files_pi_misses(facts, task.messages)
    for path in changed:
        notes.add("early", f"{CHANGED}{path}`")
    for command in facts.commands.values():
        if command.failed:
            notes.add("follows", f"`{command.text}` {command.detail}")
        elif command.failed_before:
            notes.add(
                "early", f"`{command.text}`{PASSES} (it failed before: {command.failed_before})"
            )
    for sentence in [*facts.decisions, *facts.done]:
        notes.add("early", sentence)
    for sentence in facts.constraints:
        notes.add("follows", CONSTRAINT + sentence)
    for item in [*facts.tool_errors.values(), *facts.open_tasks]:
        notes.add("follows", item)
    if not notes.sections.get("early") and not notes.sections.get("follows") and facts.calls:
        notes.add("follows", TOOL_CALLS + "; ".join(facts.brief_calls))
    budget = task.max_tokens * CHARS_PER_TOKEN
    return _render(notes, ["request", "early", "follows"], budget)


def _take_previous(summary: str, notes: _Notes) -> None:
    """Every item of an earlier summary (ours, pi's or a model's), under the section
    its heading names; its code blocks, tables and labels left out."""
    key = "context"
    original_request = False
    for line in wording.prose_lines(_FILE_TAGS.sub("", summary), keep_pastes=True):
        if line.heading:
            title = line.text.lower()
            found = next((k for word, k in _HEADING_KEYS if word in title), None)
            if found is not None or line.level <= 2:
                key = found or "context"
            original_request = title.startswith("original request")
            continue
        item = line.text
        if item in ("(none)", NO_EARLIER_HISTORY) or item.startswith((CONTINUE, TOOL_CALLS)):
            continue  # replaced by the newer request; only for the turn that went on
        if item.endswith(":") and not line.bullet:
            continue  # a label, such as a split turn's heading
        if original_request:
            _add_request(notes, item.removeprefix(LATER))
        elif item.startswith(CONSTRAINT):
            notes.add("constraints", item.removeprefix(CONSTRAINT))
        else:
            notes.add(key, item, GOAL_CHARS if key == "goal" else ITEM_CHARS)


def _focus(facts: Facts, instructions: str) -> list[str]:
    """Sentences that mention a word of the caller's instructions (4+ letters)."""
    words = {w.lower() for w in re.findall(r"[A-Za-z0-9_./-]{4,}", instructions)}
    found = [f"Instructions: {instructions.strip()}"]
    for sentence in [*facts.sentences, *facts.calls]:
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


def _norm(item: str) -> str:
    return re.sub(r"\W+", " ", item.lower()).strip()
