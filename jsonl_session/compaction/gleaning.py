"""Reading the messages a summary covers into facts, for the offline summarizer.

Owns going through pi-shaped messages once and collecting: the user's requests in
their words, their constraints and preferences, decisions and finished work the
assistant states, open tasks (sentences, unchecked task items, items listed under
"Remaining:" or "Next steps"), files read and changed by tool calls (pi's tools,
other agents' names and argument keys, patches and shell commands such as
``sed -i`` or ``cat > f``), commands that failed and whether a later run of the same
command passed, and tools that failed. What a sentence is, is wording.py's; making a
summary of the facts is extractive.py's. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.compaction import shell, wording
from jsonl_session.compaction.prompts import describe_call
from jsonl_session.format.walk import as_text
from jsonl_session.messages import content_blocks, joined_text

DETAIL_CHARS = 160

_READ_TOOLS = frozenset({"read", "read_file", "readfile", "view", "view_file", "open_file", "cat"})
_WRITE_TOOLS = frozenset(
    {
        "write", "edit", "create", "write_file", "edit_file", "multi_edit", "multiedit",
        "str_replace", "create_file", "replace", "insert", "notebook_edit", "notebookedit",
        "search_replace", "apply_patch", "patch", "delete_file", "remove_file",
    }
)  # fmt: skip
_EDITOR_TOOLS = frozenset({"str_replace_based_edit_tool", "str_replace_editor", "text_editor"})
_SHELL_TOOLS = frozenset(
    {"bash", "shell", "exec", "run", "terminal", "execute_command", "run_command", "sh"}
)
_PATH_KEYS = ("path", "file_path", "filePath", "filename", "file", "target_file", "notebook_path")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
_EXIT = re.compile(r"\bexit(?:ed)?(?: with)?(?: code| status)?[:= ]+(-?\d+)", re.IGNORECASE)
_ABORTED = re.compile(r"command (?:was )?(?:aborted|cancelled|canceled|interrupted)", re.I)
_ERROR_LINE = re.compile(
    r"\w*(?:error|exception)\b|assert|denied|cannot|can't|not found|no such|panic|fatal|"
    r"invalid|missing|undefined|refused|timed? ?out",
    re.IGNORECASE,
)
_ERROR_START = re.compile(
    r"^(?:E\s+|npm ERR! |\w+: )?(?:\w*(?:Error|Exception)|error|fatal|panic)\b[\s:\[(]"
)
_FAIL_LINE = re.compile(r"fail", re.IGNORECASE)
_PI_EXIT_LINE = re.compile(r"^command exited with code -?\d+$", re.IGNORECASE)


@dataclass(slots=True)
class Command:
    """The latest run of one command (by wording.command_key)."""

    text: str
    failed: bool
    detail: str = ""  # how the latest run failed
    failed_before: str = ""  # how an earlier run failed, when this one passed


@dataclass(slots=True)
class Facts:
    requests: list[str] = field(default_factory=list)
    first_user_text: str = ""
    constraints: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    open_tasks: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    commands: dict[str, Command] = field(default_factory=dict)
    tool_errors: dict[tuple[str, str], str] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # each call in full, for a focus
    brief_calls: list[str] = field(default_factory=list)  # each call's tool and target
    sentences: list[str] = field(default_factory=list)


def read_facts(messages: Sequence[dict[str, Any]]) -> Facts:
    """The facts of ``messages`` (pi's shapes), in the order they came."""
    facts = _Reader()
    for message in messages:
        facts.take(message)
    return facts.facts


class _Reader:
    def __init__(self) -> None:
        self.facts = Facts()
        self.pending: dict[str, tuple[str, str, str]] = {}  # call id -> (tool, target, command)

    def take(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        if role == "user":
            self.user(joined_text(message.get("content")))
        elif role == "assistant":
            self.assistant(message)
        elif role == "toolResult":
            self.result(message)
        elif role == "bashExecution" and not message.get("excludeFromContext"):
            # excluded: the user kept it from the model; keep it out of summaries too
            code = message.get("exitCode")
            failed = isinstance(code, int) and code != 0
            if not message.get("cancelled"):
                self.command(as_text(message.get("command") or ""), failed, message, code)
        elif role in ("compactionSummary", "branchSummary"):
            summary = message.get("summary")
            if isinstance(summary, str):
                self.facts.summaries.append(summary)

    def user(self, text: str) -> None:
        facts = self.facts
        if not text.strip() or wording.is_slash_command(text):
            return  # a slash command says nothing to summarize
        if not facts.first_user_text:
            facts.first_user_text = text.strip()
        request = wording.request_text(text)
        if request is not None:
            facts.requests.append(request)
        for sentence in wording.sentences(text):
            facts.sentences.append(sentence)
            if wording.is_constraint(sentence):
                facts.constraints.append(sentence)
            elif wording.is_open_task(sentence):
                facts.open_tasks.append(sentence)
        facts.open_tasks.extend(_listed_tasks(text))

    def assistant(self, message: dict[str, Any]) -> None:
        facts = self.facts
        text = joined_text(message.get("content"))
        calls = [b for b in content_blocks(message.get("content")) if b.get("type") == "toolCall"]
        final = not calls
        done_here = 0
        for sentence in wording.sentences(text):
            facts.sentences.append(sentence)
            if wording.is_decision(sentence):
                facts.decisions.append(sentence)
            elif wording.is_open_task(sentence) and not _offer(sentence):
                facts.open_tasks.append(sentence)
            elif final and done_here < 2 and wording.is_done_statement(sentence):
                facts.done.append(sentence)
                done_here += 1
        facts.open_tasks.extend(_listed_tasks(text))
        for block in calls:
            self.call(block)

    def call(self, block: dict[str, Any]) -> None:
        name = as_text(block.get("name") or "")
        arguments = block.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        reads, changes = call_files(name, arguments)
        for path in reads:
            _append_new(self.facts.read, path)
        for path in changes:
            _append_new(self.facts.changed, path)
        command = arguments.get("command", arguments.get("cmd"))
        is_shell = name.lower() in _SHELL_TOOLS and isinstance(command, str)
        target = next(iter(changes or reads), "")
        if isinstance(block.get("id"), str):
            self.pending[block["id"]] = (name, target, str(command) if is_shell else "")
        self.facts.calls.append(describe_call(block))
        shown = shell.command_display(str(command)) if is_shell else target
        self.facts.brief_calls.append(f"{name} `{shown}`" if shown else name)

    def result(self, message: dict[str, Any]) -> None:
        name, target, command = self.pending.pop(as_text(message.get("toolCallId")), ("", "", ""))
        output = joined_text(message.get("content"))
        exit_match = _EXIT.search(output[-400:])
        code = int(exit_match.group(1)) if exit_match else None
        failed = bool(message.get("isError")) or (code is not None and code != 0)
        if command:
            if not _ABORTED.search(output[-200:]):
                self.command(command, failed, {"output": output}, code)
            return
        tool = name or str(message.get("toolName") or "a tool")
        key = (tool, target)
        if failed and tool.lower() not in _READ_TOOLS:
            self.facts.tool_errors[key] = f"{tool} failed: {first_error_line(output)}"
        elif not failed:
            self.facts.tool_errors.pop(key, None)

    def command(self, command: str, failed: bool, message: dict[str, Any], code: Any) -> None:
        if not command.strip():
            return
        reads, changes = shell.shell_files(command)
        for path in changes:
            _append_new(self.facts.changed, path)
        for path in reads:
            _append_new(self.facts.read, path)
        if shell.is_routine(command):
            return
        key = shell.command_key(command)
        earlier = self.facts.commands.pop(key, None)  # the latest run decides; it moves last
        shown = shell.command_display(command)
        if failed:
            status = f"exit {code}" if isinstance(code, int) and code != 0 else "failed"
            detail = f"{status}: {first_error_line(str(message.get('output') or ''))}"
            self.facts.commands[key] = Command(shown, True, detail)
        else:
            before = "" if earlier is None else earlier.detail or earlier.failed_before
            self.facts.commands[key] = Command(shown, False, failed_before=before)


def _offer(sentence: str) -> bool:
    """An assistant's question back to the user, or narration: not a task."""
    question = sentence.rstrip().endswith("?") and "open question" not in sentence.lower()
    return question or wording.is_narration(sentence)


def _listed_tasks(text: str) -> list[str]:
    """Unchecked task items, and items listed under an intro such as "Remaining:"."""
    tasks: list[str] = []
    under_intro = False
    for line in wording.prose_lines(text):
        if line.checked is False or (line.bullet and under_intro and line.checked is None):
            tasks.append(line.text)
        if not line.bullet:
            under_intro = wording.is_task_intro(line)
    return tasks


def call_files(name: str, arguments: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(files read, files changed) by one tool call."""
    tool = name.lower()
    paths = [arguments[k] for k in _PATH_KEYS if isinstance(arguments.get(k), str) and arguments[k]]
    listed = arguments.get("paths")
    if isinstance(listed, list):
        paths += [p for p in listed if isinstance(p, str) and p]
    if tool in _EDITOR_TOOLS:
        viewing = arguments.get("command") == "view"
        return (paths, []) if viewing else ([], paths)
    if tool in ("apply_patch", "patch"):
        patch = next((v for v in arguments.values() if isinstance(v, str) and "***" in v), "")
        paths += [a or b for a, b in _PATCH_FILE.findall(patch)]
        paths += re.findall(r"^\+\+\+ b/(\S+)", patch, re.M)
    if tool in _WRITE_TOOLS:
        return [], paths
    if tool in _READ_TOOLS:
        return paths, []
    command = arguments.get("command", arguments.get("cmd"))
    if tool in _SHELL_TOOLS and isinstance(command, str):
        return shell.shell_files(command)
    return [], []


def first_error_line(text: str) -> str:
    """The line of a failed command's output that says most about the failure: one
    that starts with an error's name, else one that names an error, else one that
    says something failed, else the first (pi's "Command exited with code" last)."""
    lines = [line.strip() for line in text.splitlines() if 3 < len(line.strip()) < 400]
    useful = [line for line in lines if not _PI_EXIT_LINE.match(line)] or lines
    for pattern in (_ERROR_START, _ERROR_LINE, _FAIL_LINE):
        marked = [line for line in useful if pattern.search(line)]
        if marked:
            return wording.shorten(marked[0], DETAIL_CHARS)
    return wording.shorten(useful[0], DETAIL_CHARS) if useful else "(no output)"


def _append_new(items: list[str], value: str) -> None:
    if value not in items:
        items.append(value)
