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
from jsonl_session.views.runs import Run, session_runs
from jsonl_session.views.slices import (
    EntryRecord,
    LazySlices,
    Piece,
    Slice,
    export_workers,
    lines_size,
    record,
    rendered_pieces,
    slices_of,
    text_of,
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
    text = "".join(map(text_of, iter_json(session, leaf_id, redactor)))
    return ExportResult(text, redactor.summary())


_BATCH = 1024  # entries whose lines are read from disk at once
_TREE_BATCH = 256  # entries of the tree written in one piece (a few dozen bytes each)


def iter_json(
    session: Session, leaf_id: str | None, redactor: Redactor, workers: int | None = 1
) -> Iterator[Piece]:
    """The JSON document of `export_json` in pieces, one entry at a time (memory
    bounded by the largest entry); ``redactor`` counts what it replaced. A long
    session's entries are written by ``workers`` processes (views/slices.py)."""
    leaf = leaf_id if leaf_id is not None else session.leaf_id
    try:
        active = {e.id for e in session.branch_path(leaf)} if leaf else set()
    except SessionTreeError:
        active = set()
    entries = session.entries
    # another agent's file: its entries' lines are not the file's, one process reads it
    count = export_workers(workers, lines_size(entries)) if session.dialect == "pi" else 1
    yield '{"header":' + _text(redactor.value(session.header_data)) + ',"entries":['
    if count > 1:
        cuts = slices_of(entries)
        path = str(session.path)

        def make(index: int) -> Slice:
            start, stop = cuts[index]
            records: list[EntryRecord | bytes] = [record(e) for e in entries[start:stop]]
            return Slice(json_entry, path, redactor.enabled, records, separator=",")

        # each slice's text in pieces, as the workers wrote them (a file takes them as
        # they are): a comma before each slice's first
        last = -1
        for index, piece in rendered_pieces(
            LazySlices(len(cuts), make), count, redactor, utf8=True
        ):
            if index != last:
                if index:
                    yield ","
                last = index
            yield piece
    else:
        for start in range(0, len(entries), _BATCH):
            batch = entries[start : start + _BATCH]
            for index, raw in enumerate(raw_lines(batch), start=start):
                yield ("," if index else "") + _text(redactor.value(loads_object(raw)))
    # labels and the name repeat text of label and session_info entries: not counted again
    again = Redactor(enabled=redactor.enabled)
    labels = {k: again.text(v) for k, v in session.labels.items()}
    yield '],"tree":'
    yield from _tree_pieces(session_runs(session, fold=False), labels, active)
    name = again.text(session.name) if session.name else None
    yield f',"leafId":{_text(leaf)},"name":{_text(name)},"labels":{_text(labels)}}}\n'


def json_entry(
    _entry: StoredEntry | bytes,
    data: dict[str, Any] | None,
    _said: Any,
    _shared: Any,
    redactor: Redactor,
) -> str:
    """One entry of the document, from its body (views/slices.py's `Render`)."""
    return _text(redactor.value(data))


def _text(value: Any) -> str:
    return dumps(value).decode()


def _tree_pieces(runs: list[Run], labels: dict[str, str], active: set[str]) -> Iterator[str]:
    """The runs as JSON, ``[{"from", "entries", "branches"}, ...]``, written as they
    are walked (a run's entries a batch at a time), not built as one value: the text
    is what dumping the whole tree writes."""
    pending: list[Run | str] = ["]"]
    pending.extend(_between(runs))
    yield "["
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            yield item
            continue
        yield '{"from":' + _text(item.from_id) + ',"entries":['
        for start in range(0, len(item.entries), _TREE_BATCH):
            nodes = item.entries[start : start + _TREE_BATCH]
            text = ",".join(_text(_json_node(entry, labels, active)) for entry in nodes)
            yield ("," if start else "") + text
        yield '],"branches":['
        pending.append("]}")
        pending.extend(_between(item.branches))


def _between(runs: list[Run]) -> list[Run | str]:
    """``runs`` with commas between them, reversed (for a stack to pop in order)."""
    out: list[Run | str] = []
    for index, run in enumerate(runs):
        out += [",", run] if index else [run]
    out.reverse()
    return out


def _json_node(entry: StoredEntry, labels: dict[str, str], active: set[str]) -> dict[str, Any]:
    node: dict[str, Any] = {"id": entry.id, "type": entry.type}
    more = {"role": entry.role, "customType": entry.custom_type, "label": labels.get(entry.id)}
    node.update((key, value) for key, value in more.items() if value)
    return node | ({"active": True} if entry.id in active else {})
