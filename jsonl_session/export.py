"""Exporting a session as Markdown, one self-contained HTML page, or JSON.

Owns the three export formats, what each shows (the active path or every branch,
the header facts, labels beside the entries they mark) and writing an export to a
file safely. What an entry says comes from transcript.py (`view_entry`), the runs
of the branch tree too; secrets are replaced by redact.py's `Redactor`. The HTML
page needs no network and no JavaScript: inline CSS, ``<details>`` for tool calls
and outputs, images as ``data:`` URLs, every session text escaped.

Redaction counts each secret once per place it comes from (an entry, a label,
the name, the header), however often the export shows it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jsonl_session.describe import one_line
from jsonl_session.errors import SessionTreeError, SessionWriteError
from jsonl_session.export_html import render_html
from jsonl_session.jsonio import dumps
from jsonl_session.jsonl import StoredEntry
from jsonl_session.redact import Redactor
from jsonl_session.session import Session
from jsonl_session.transcript import EntryView, Part, Run, iter_runs, runs_of, view_entry

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

    def run_title(self, run: Run) -> str:
        title = f"Branch {run.number}"
        title += f" · from {run.from_id}" if run.from_id is not None else ""
        return title + (" · active" if run.nodes[0].entry.id in self.active else "")

    def view(self, entry: StoredEntry) -> EntryView:
        if entry.id not in self._views:
            self._views[entry.id] = view_entry(entry, self.redactor)
        return self._views[entry.id]

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
        facts = [("session", str(header.get("id", ""))), ("cwd", r.text(self.session.cwd))]
        facts.append(("created", str(header.get("timestamp", ""))))
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
        shown = "every branch" if self.all_branches else f"the path to {self.leaf_id or '(none)'}"
        facts.append(("exported", shown))
        if self.session.problems:
            facts.append(("problems", f"{len(self.session.problems)} (see jsonl-session doctor)"))
        return facts


def export_session(
    session: Session,
    fmt: ExportFormat,
    *,
    leaf_id: str | None = None,
    all_branches: bool = False,
    redact: bool = False,
) -> ExportResult:
    """Export in ``fmt``; see export_markdown, export_html and export_json."""
    if fmt == "json":
        return export_json(session, leaf_id, redact=redact)
    plan = ExportPlan(session, leaf_id, all_branches, redact)
    return ExportResult(
        render_html(plan) if fmt == "html" else _markdown(plan), plan.redactor.summary()
    )


def export_markdown(
    session: Session, leaf_id: str | None = None, all_branches: bool = False, redact: bool = False
) -> ExportResult:
    """Markdown readable on its own: title, facts, then the path to the leaf (default:
    the active leaf) or, with ``all_branches``, an outline and every branch."""
    return export_session(
        session, "markdown", leaf_id=leaf_id, all_branches=all_branches, redact=redact
    )


def export_html(
    session: Session, leaf_id: str | None = None, all_branches: bool = False, redact: bool = False
) -> ExportResult:
    """One self-contained HTML page: facts, the branch tree, the conversation."""
    return export_session(
        session, "html", leaf_id=leaf_id, all_branches=all_branches, redact=redact
    )


def export_json(
    session: Session, leaf_id: str | None = None, all_branches: bool = True, redact: bool = False
) -> ExportResult:
    """``{"header", "entries", "tree", "leafId", "name", "labels"}``: every entry as in
    the file (so ``all_branches`` changes nothing) and the tree as runs, nested only
    where the conversation branches: ``{"from": <id the run continues from>,
    "entries": [{"id", "type", "role"?, "customType"?, "label"?, "active"?}],
    "branches": [<run>, ...]}`` (``active``: on the path to the leaf)."""
    redactor = Redactor(enabled=redact)
    leaf = leaf_id if leaf_id is not None else session.leaf_id
    try:
        active = {e.id for e in session.branch_path(leaf)} if leaf else set()
    except SessionTreeError:
        active = set()
    entries = [redactor.value(e.data()) for e in session.entries]
    # labels and the name repeat text of label and session_info entries: not counted again
    again = Redactor(enabled=redact)
    labels = {k: again.text(v) for k, v in session.labels.items()}
    document = {
        "header": redactor.value(session.header_data),
        "entries": entries,
        "tree": _json_runs(runs_of(session.tree(fold=False)), labels, active),
        "leafId": leaf,
        "name": again.text(session.name) if session.name else None,
        "labels": labels,
    }
    return ExportResult(dumps(document).decode() + "\n", redactor.summary())


def write_export(
    text: str, output: Path, *, force: bool = False, source: Path | None = None
) -> Path:
    """Write an export to ``output``: never over ``source`` (the session), and over an
    existing file only with ``force``. Raises SessionWriteError when refused."""
    if source is not None and output.exists() and os.path.samefile(output, source):
        raise SessionWriteError(f"{output}: is the session being exported; choose another file")
    if output.is_dir():
        raise SessionWriteError(f"{output}: is a directory")
    data = text.encode("utf-8", errors="backslashreplace")
    try:
        with open(output, "wb" if force else "xb") as handle:
            handle.write(data)
    except FileExistsError:
        raise SessionWriteError(f"{output}: already exists; use --force to replace it") from None
    return output


def _model_and_thinking(path: list[StoredEntry]) -> tuple[str, str]:
    model = thinking = ""
    for entry in path:
        if entry.type == "model_change" or entry.role == "assistant":
            data = entry.data()
            source = data.get("message", {}) if entry.type == "message" else data
            key = "modelId" if entry.type == "model_change" else "model"
            model = f"{source.get('provider')}/{source.get(key)}"
        elif entry.type == "thinking_level_change":
            thinking = str(entry.data().get("thinkingLevel"))
    return model, thinking


def _json_runs(runs: list[Run], labels: dict[str, str], active: set[str]) -> list[dict[str, Any]]:
    made: dict[int, dict[str, Any]] = {}
    for run in iter_runs(runs):  # a run comes before its branches
        item = made.setdefault(id(run), {"from": run.from_id})
        item["entries"] = [_json_node(node.entry, labels, active) for node in run.nodes]
        item["branches"] = [made.setdefault(id(b), {"from": b.from_id}) for b in run.branches]
    return [made[id(run)] for run in runs]


def _json_node(entry: StoredEntry, labels: dict[str, str], active: set[str]) -> dict[str, Any]:
    node: dict[str, Any] = {"id": entry.id, "type": entry.type}
    more = {"role": entry.role, "customType": entry.custom_type, "label": labels.get(entry.id)}
    node.update((key, value) for key, value in more.items() if value)
    return node | ({"active": True} if entry.id in active else {})


# --- Markdown ------------------------------------------------------------------------


def _markdown(plan: ExportPlan) -> str:
    lines = [f"# {plan.title()}", ""]
    lines += [f"- **{key}:** {value}" for key, value in plan.facts()] + [""]
    if plan.all_branches:
        lines += ["## Branches", "", *_outline(plan), ""]
    for run, entries in plan.shown:
        lines += [f"## {plan.run_title(run) if run else 'Conversation'}", ""]
        for entry in entries:
            lines += _md_entry(plan, plan.view(entry))
    return "\n".join(lines).rstrip() + "\n"


def _outline(plan: ExportPlan) -> list[str]:
    lines, depth = [], {id(run): 0 for run in plan.runs}
    for run in iter_runs(plan.runs):
        depth.update((id(branch), depth[id(run)] + 1) for branch in run.branches)
        first, last, count = run.nodes[0].entry, run.nodes[-1].entry, len(run.nodes)
        facts = [f"{count} entries" if count > 1 else "1 entry"]
        facts += ["**active**"] if last.id in plan.active else []
        facts += ["leaf"] if last.id == plan.leaf_id else []
        labelled = [n.entry.id for n in run.nodes if n.entry.id in plan.labels]
        facts += [f"{_code(i)} *{plan.labels[i]}*" for i in labelled]
        summary = plan.view(first).summary(60)
        line = f"**{run.number}** {_code(first.id)} {summary} ({' · '.join(facts)})"
        lines.append("  " * depth[id(run)] + "- " + line)
    return lines


def _md_entry(plan: ExportPlan, view: EntryView) -> list[str]:
    entry = view.entry
    label = plan.labels.get(entry.id)
    tag = f" · label **{label}**" if label else ""
    if view.is_note:
        note = " · ".join(p.text for p in view.parts if p.kind == "note")
        lines = [f"*{note}* · {_code(entry.id)}{tag}", ""]
        parts = [p for p in view.parts if p.kind != "note"]
    else:
        detail = f" · {view.detail}" if view.detail else ""
        lines = [
            f"### {view.heading}{detail}",
            "",
            f"{_code(entry.id)} · {entry.timestamp}{tag}",
            "",
        ]
        parts = view.parts
    for part in parts:
        lines += _md_part(part)
    return lines


def _md_part(part: Part) -> list[str]:
    if part.kind == "text":
        return [part.text, ""]
    if part.kind == "thinking":
        quoted = [f"> {line}" if line else ">" for line in part.text.split("\n")]
        return ["> **Thinking**", ">", *quoted, ""]
    if part.kind == "tool-call":
        call = f"**Tool call** {_code(part.title)}" + (f" · {_code(part.ref)}" if part.ref else "")
        return [call, "", _fence(part.text, "json"), ""]
    if part.kind == "output":
        title = "**Error output**" if part.title == "error" else "**Output**"
        text = part.text.removesuffix("\n")
        return [title, "", _fence(text), ""] if text else ["*(no output)*", ""]
    if part.kind == "command":
        return [_fence(f"$ {part.text}", "sh"), ""]
    if part.kind == "image":
        return [f"*[image: {part.mime or 'unknown type'}, {len(part.text) * 3 // 4} bytes]*", ""]
    if part.kind == "error":
        return [f"**Error:** {part.text}", ""]
    if part.kind == "note":
        return [f"*{part.text}*", ""]
    return [f"**{part.title or 'data'}**", "", _fence(part.text, "json"), ""]


def _fence(text: str, lang: str = "") -> str:
    ticks = "`" * max(3, 1 + max(map(len, re.findall("`+", text)), default=0))
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


# --- HTML ----------------------------------------------------------------------------
