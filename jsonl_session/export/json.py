"""The JSON export: every entry as in the file, and the tree as runs nested only where
the conversation branches, for programs that read a session without this library.

It does not use plan.py (every entry goes in, whatever the branch); the runs come from
views/runs.py, secrets are replaced by views/redact.py's `Redactor`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonl_session.errors import SessionTreeError
from jsonl_session.export.plan import ExportResult
from jsonl_session.format.entry import StoredEntry, loads_object, raw_lines
from jsonl_session.format.jsonio import dumps
from jsonl_session.session import Session
from jsonl_session.views.redact import Redactor
from jsonl_session.views.runs import Run, iter_runs, session_runs


def export_json(
    session: Session, leaf_id: str | None = None, all_branches: bool = True, redact: bool = False
) -> ExportResult:
    """``{"header", "entries", "tree", "leafId", "name", "labels"}``: every entry as in
    the file (so ``all_branches`` changes nothing) and the tree as runs, nested only
    where the conversation branches: ``{"from": <id the run continues from>,
    "entries": [{"id", "type", "role"?, "customType"?, "label"?, "active"?}],
    "branches": [<run>, ...]}`` (``active``: on the path to the leaf)."""
    redactor = Redactor(enabled=redact)
    text = "".join(iter_json(session, leaf_id, redactor))
    return ExportResult(text, redactor.summary())


_BATCH = 1024  # entries whose lines are read from disk at once


def iter_json(session: Session, leaf_id: str | None, redactor: Redactor) -> Iterator[str]:
    """The JSON document of `export_json` in pieces, one entry at a time (memory
    bounded by the largest entry); ``redactor`` counts what it replaced."""
    leaf = leaf_id if leaf_id is not None else session.leaf_id
    try:
        active = {e.id for e in session.branch_path(leaf)} if leaf else set()
    except SessionTreeError:
        active = set()
    yield '{"header":' + _text(redactor.value(session.header_data)) + ',"entries":['
    entries = session.entries
    for start in range(0, len(entries), _BATCH):
        batch = entries[start : start + _BATCH]
        for index, raw in enumerate(raw_lines(batch), start=start):
            yield ("," if index else "") + _text(redactor.value(loads_object(raw)))
    # labels and the name repeat text of label and session_info entries: not counted again
    again = Redactor(enabled=redactor.enabled)
    labels = {k: again.text(v) for k, v in session.labels.items()}
    tree = _json_runs(session_runs(session, fold=False), labels, active)
    name = again.text(session.name) if session.name else None
    yield (
        f'],"tree":{_text(tree)},"leafId":{_text(leaf)},"name":{_text(name)},'
        f'"labels":{_text(labels)}}}\n'
    )


def _text(value: Any) -> str:
    return dumps(value).decode()


def _json_runs(runs: list[Run], labels: dict[str, str], active: set[str]) -> list[dict[str, Any]]:
    made: dict[int, dict[str, Any]] = {}
    for run in iter_runs(runs):  # a run comes before its branches
        item = made.setdefault(id(run), {"from": run.from_id})
        item["entries"] = [_json_node(entry, labels, active) for entry in run.entries]
        item["branches"] = [made.setdefault(id(b), {"from": b.from_id}) for b in run.branches]
    return [made[id(run)] for run in runs]


def _json_node(entry: StoredEntry, labels: dict[str, str], active: set[str]) -> dict[str, Any]:
    node: dict[str, Any] = {"id": entry.id, "type": entry.type}
    more = {"role": entry.role, "customType": entry.custom_type, "label": labels.get(entry.id)}
    node.update((key, value) for key, value in more.items() if value)
    return node | ({"active": True} if entry.id in active else {})
