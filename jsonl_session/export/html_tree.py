"""The branch index of the HTML export: one line per run, nested where it branches.

Owns `branch_index`: nothing for a session that never branches; otherwise each run
(views/runs.py: a chain of entries between branch points, however long) as one line
with its number, what it starts with, how many entries it holds and its labels. The
runs on the path to the leaf are marked, the run holding the leaf is "active", and a
run links to where the page shows it. The page around it is html.py's.
"""

from __future__ import annotations

from jsonl_session.export.markup import escape
from jsonl_session.export.plan import ExportPlan
from jsonl_session.views.runs import Run, iter_runs

_SAYS = ("message", "compaction", "branch_summary", "custom_message")  # not small notes


def branch_index(plan: ExportPlan) -> str:
    """The index as a ``<nav>``, or "" when the session has no branches."""
    if not plan.has_branches:
        return ""
    runs = list(iter_runs(plan.runs))
    ends = sum(not run.branches for run in runs)
    out = [
        '<nav class="branches"><h2>Branches</h2><details open>',
        f"<summary>{ends} branches · {len(runs)} runs between branch points</summary><ul>",
    ]
    stack: list[Run | str] = list(reversed(plan.runs))
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        out.append(_run_line(plan, item))
        if item.branches:
            out.append("<ul>")
            stack.append("</ul></li>")
            stack.extend(reversed(item.branches))
        else:
            out.append("</li>")
    out.append("</ul></details></nav>")
    return "".join(out)


def run_anchor(run: Run) -> str:
    return f"run-{run.number}"


def _run_line(plan: ExportPlan, run: Run) -> str:
    on_path = run.entries[0].id in plan.active
    target = _target(plan, run)
    number = escape(run.number)
    number = (
        f'<a class="run" href="#{target}">{number}</a>'
        if target
        else f'<span class="run">{number}</span>'
    )
    count = len(run.entries)
    facts = f'<span class="count">· {count} {"entry" if count == 1 else "entries"}</span>'
    badge = ' <span class="badge">active</span>' if run is plan.leaf_run else ""
    labels = "".join(_label(plan, entry.id) for entry in run.entries if entry.id in plan.labels)
    css = "on-path" if on_path else ("" if target else "off")
    line = f'{number}<span class="gist">{escape(_gist(plan, run))}</span> {facts}{badge}{labels}'
    return (
        f'<li class="{css}"><span class="line">{line}</span>'
        if css
        else f'<li><span class="line">{line}</span>'
    )


def _target(plan: ExportPlan, run: Run) -> str:
    """Where the run is on the page: its heading, or its first entry shown; "" if not shown."""
    if plan.all_branches:
        return run_anchor(run)
    first = next((e.id for e in run.entries if e.id in plan.anchors), None)
    return f"e-{first}" if first else ""


def _gist(plan: ExportPlan, run: Run) -> str:
    """What a run is about: its first user message, else its first message or summary,
    else its first entry (only the entry chosen is viewed, so redacted and counted)."""
    early = run.entries[:50]
    entry = next((e for e in early if e.role == "user"), None)
    entry = entry or next((e for e in early if e.type in _SAYS), None) or early[0]
    chosen = plan.view(entry)
    if chosen.is_note:
        return chosen.summary(80).removeprefix(chosen.heading + ": ")
    return chosen.summary(80)


def _label(plan: ExportPlan, entry_id: str) -> str:
    text = escape(plan.labels[entry_id])
    if entry_id in plan.anchors:
        return f'<a class="label" href="#e-{escape(entry_id)}">{text}</a>'
    return f'<span class="label">{text}</span>'
