"""What an export shows: the plan every readable format renders.

Owns ExportPlan (the active path or every branch, the header facts with the messages
and the tokens and cost the replies report, labels beside the entries they mark, the
one run that holds the leaf, each entry's view made and redacted once) and ExportResult.
What an entry says comes from views/transcript.py (`view_entry`), the runs of the
branch tree from views/runs.py; secrets are replaced by views/redact.py's `Redactor`. Rendering is
markdown.py's and html.py's; the JSON document is json.py's; choosing a format and
writing the file is render.py's.

Redaction counts each secret once per place it comes from (an entry, a label,
the name, the header), however often the export shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from jsonl_session.errors import SessionTreeError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import as_text, finite_number
from jsonl_session.session.facade import Session
from jsonl_session.views.describe import one_line
from jsonl_session.views.redact import Redactor
from jsonl_session.views.runs import Run, iter_runs, runs_of
from jsonl_session.views.transcript import EntryView, view_entry

ExportFormat = Literal["markdown", "html", "json"]
FORMATS: tuple[ExportFormat, ...] = ("markdown", "html", "json")


@dataclass(frozen=True, slots=True)
class ExportResult:
    """The exported text and how many secrets of each kind were replaced."""

    text: str
    redactions: dict[str, int] = field(default_factory=dict)

    @property
    def redacted(self) -> int:
        return sum(self.redactions.values())


class ExportPlan:
    """What an export shows, with each entry's view made (and redacted) once."""

    def __init__(
        self, session: Session, leaf_id: str | None, all_branches: bool, redact: bool
    ) -> None:
        self.session = session
        self.redactor = Redactor(enabled=redact)
        self.all_branches = all_branches
        self.leaf_id = leaf_id if leaf_id is not None else session.leaf_id
        try:
            path = session.branch_path(self.leaf_id) if self.leaf_id else []
        except SessionTreeError:
            if not all_branches:
                raise
            path = []  # a cycle: every branch is still shown, none highlighted
        self.path = [e for e in path if not (e.is_leaf_marker or e.type == "label")]
        self.active = {e.id for e in path}
        self.runs = runs_of(session.tree())
        self.labels = {k: self.redactor.text(v) for k, v in session.labels.items()}
        self.name = self.redactor.text(session.name) if session.name else None
        self._views: dict[str, EntryView] = {}
        self.shown: list[tuple[Run | None, list[StoredEntry]]] = (
            [(run, [n.entry for n in run.nodes]) for run in iter_runs(self.runs)]
            if all_branches
            else [(None, self.path)]
        )
        self.anchors = {e.id for _, entries in self.shown for e in entries}
        self.leaf_run = next(
            (
                run
                for run in iter_runs(self.runs)
                if any(n.entry.id == self.leaf_id for n in run.nodes)
            ),
            None,
        )

    @property
    def has_branches(self) -> bool:
        """More than one run: the session branches (or has more than one root)."""
        return len(self.runs) > 1 or any(run.branches for run in self.runs)

    def run_title(self, run: Run) -> str:
        title = f"Branch {run.number}"
        title += f" · from {run.from_id}" if run.from_id is not None else ""
        return title + (" · active" if run is self.leaf_run else "")

    def view(self, entry: StoredEntry) -> EntryView:
        """The view of ``entry``, kept until `take_view` takes it (for a title or an
        outline that shows an entry before its turn)."""
        if entry.id not in self._views:
            self._views[entry.id] = view_entry(entry, self.redactor)
        return self._views[entry.id]

    def take_view(self, entry: StoredEntry) -> EntryView:
        """The view of ``entry`` where the export shows it: the one `view` made, else a
        new one; not kept, so an export holds one entry's view at a time. Each entry is
        shown once, so each secret is counted once."""
        made = self._views.pop(entry.id, None)
        return made if made is not None else view_entry(entry, self.redactor)

    def title(self) -> str:
        if self.name:
            return one_line(self.name, 100)
        first = next((e for e in self.session.entries if e.role == "user"), None)
        text = (
            next((p.text for p in self.view(first).parts if p.kind == "text"), "") if first else ""
        )
        return one_line(text, 100) if text.strip() else f"Session {self.session.id}"

    def facts(self) -> list[tuple[str, str]]:
        header = self.session.header_data
        r = self.redactor
        facts = [("session", as_text(header.get("id", ""))), ("cwd", r.text(self.session.cwd))]
        facts.append(("created", as_text(header.get("timestamp", ""))))
        model, thinking = _model_and_thinking(self.path)
        facts += [("model", r.text(model))] if model else []
        facts += [("thinking level", thinking)] if thinking else []
        if isinstance(header.get("parentSession"), str):
            facts.append(("forked from", r.text(header["parentSession"])))
        if self.name:
            facts.append(("name", self.name))
        ends = sum(not run.branches for run in iter_runs(self.runs))
        entries = f"{len(self.session.entries)}, {ends} branches" if ends > 1 else ""
        facts.append(("entries", entries or str(len(self.session.entries))))
        facts += _usage_facts([e for _, shown in self.shown for e in shown])
        shown = "every branch" if self.all_branches else f"the path to {self.leaf_id or '(none)'}"
        facts.append(("exported", shown))
        if self.session.problems:
            facts.append(("problems", f"{len(self.session.problems)} (see jsonl-session doctor)"))
        return facts


def _model_and_thinking(path: list[StoredEntry]) -> tuple[str, str]:
    model = thinking = ""
    for entry in path:
        if entry.type == "model_change" or entry.role == "assistant":
            data = entry.data()
            source = data.get("message", {}) if entry.type == "message" else data
            key = "modelId" if entry.type == "model_change" else "model"
            model = f"{as_text(source.get('provider'))}/{as_text(source.get(key))}"
        elif entry.type == "thinking_level_change":
            thinking = as_text(entry.data().get("thinkingLevel"))
    return model, thinking


def _usage_facts(entries: list[StoredEntry]) -> list[tuple[str, str]]:
    """Messages by role and the tokens and cost the assistant replies report."""
    roles: dict[str, int] = {}
    calls = 0
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0
    for entry in entries:
        if entry.type != "message" or entry.role is None:
            continue
        roles[entry.role] = roles.get(entry.role, 0) + 1
        if entry.role != "assistant":
            continue
        message = entry.data().get("message", {})
        content = message.get("content")
        if isinstance(content, list):
            calls += sum(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)
        usage = message.get("usage")
        if isinstance(usage, dict):
            for key in tokens:
                value = finite_number(usage.get(key))
                tokens[key] += int(value) if value is not None else 0
            spent = usage.get("cost", {}).get("total") if isinstance(usage.get("cost"), dict) else 0
            cost += float(finite_number(spent) or 0.0)
    if not roles:
        return []
    said = [f"{roles[r]} {r}" for r in ("user", "assistant") if r in roles]
    said += [_plural(roles["toolResult"], "tool result")] if "toolResult" in roles else []
    said += [_plural(calls, "tool call")] if calls else []
    facts = [("messages", " · ".join(said))]
    if any(tokens.values()):
        names = {
            "input": "in",
            "output": "out",
            "cacheRead": "cache read",
            "cacheWrite": "cache write",
        }
        used = [f"{_count(n)} {names[k]}" for k, n in tokens.items() if n]
        facts.append(("tokens", " · ".join(used) + (f" · ${cost:.2f}" if cost else "")))
    return facts


def _count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
