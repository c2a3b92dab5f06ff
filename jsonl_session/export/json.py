"""The JSON export: every entry as in the file, and the tree as runs nested only where
the conversation branches, for programs that read a session without this library.

It does not use plan.py (every entry goes in, whatever the branch); the runs come from
views/runs.py, secrets are replaced by views/redact.py's `Redactor`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from jsonl_session.errors import SessionTreeError
from jsonl_session.export.plan import ExportResult
from jsonl_session.format.entry import StoredEntry, entry_lines, loads_object
from jsonl_session.format.jsonio import dumps, loads_js
from jsonl_session.session import Session
from jsonl_session.views.pieces import Piece, Utf8Piece, text_of
from jsonl_session.views.redact import Redactor
from jsonl_session.views.runs import Run, session_runs
from jsonl_session.views.slices import (
    LazySlices,
    Slice,
    export_workers,
    lines_size,
    packed_records,
    rendered_pieces,
    slices_of,
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


_TREE_BATCH = 256  # entries of the tree written in one piece (a few dozen bytes each)


def iter_json(
    session: Session, leaf_id: str | None, redactor: Redactor, workers: int | None = 1
) -> Iterator[Piece]:
    """The JSON document of `export_json` in pieces, one entry at a time (memory
    bounded by the largest entry); ``redactor`` counts what it replaced. A long
    session's entries are written by ``workers`` processes (views/slices.py)."""
    leaf = leaf_id if leaf_id is not None else session.leaf_id
    entries = session.entries
    # another agent's file: its entries' lines are not the file's, one process reads it
    count = export_workers(workers, lines_size(entries)) if session.dialect == "pi" else 1
    yield '{"header":' + _text(redactor.value(session.header_data)) + ',"entries":['
    tree: list[str] = []
    steps = _tree_steps(session, leaf, redactor.enabled, tree)
    if count > 1:
        cuts = slices_of(entries)
        path = str(session.path)

        def make(index: int) -> Slice:
            start, stop = cuts[index]
            records = packed_records(entries[start:stop])
            return Slice(json_entry, path, redactor.enabled, records, separator=",", body=loads_js)

        def runs_first() -> None:
            for _ in range(_FIRST_STEPS):
                next(steps, None)

        # each slice's text in pieces, as the workers wrote them (a file takes them as
        # they are): a comma before each slice's first. The tree is made meanwhile:
        # its runs while the workers start, its text a step after each piece
        last = -1
        for index, piece in rendered_pieces(
            LazySlices(len(cuts), make), count, redactor, utf8=True, meanwhile=runs_first
        ):
            if index != last:
                if index:
                    yield ","
                last = index
            yield piece
            next(steps, None)
    else:
        yield from _entry_pieces(entries, redactor)
    for _ in steps:
        pass
    yield '],"tree":'
    yield from tree


_FIRST_STEPS = 2  # the active path, then the runs


def _tree_steps(session: Session, leaf: str | None, redact: bool, out: list[str]) -> Iterator[None]:
    """Make the tree's part of the document (from ``"tree":`` on) into ``out``, a step
    at a time: the active path, the runs (tenths of a second each on a long
    session), then a batch of nodes each."""
    try:
        active = {e.id for e in session.branch_path(leaf)} if leaf else set()
    except SessionTreeError:
        active = set()
    yield
    # labels and the name repeat text of label and session_info entries: not counted again
    again = Redactor(enabled=redact)
    labels = {k: again.text(v) for k, v in session.labels.items()}
    runs = session_runs(session, fold=False)
    yield
    for piece in _tree_pieces(runs, labels, active):
        out.append(piece)
        yield
    name = again.text(session.name) if session.name else None
    out.append(f',"leafId":{_text(leaf)},"name":{_text(name)},"labels":{_text(labels)}}}\n')


def _entry_pieces(entries: list[StoredEntry], redactor: Redactor) -> Iterator[Utf8Piece]:
    """The entries of the document, a comma before each but the first, one at a time
    (a file joins them: `encoded_pieces`)."""
    for index, (entry, raw) in enumerate(entry_lines(entries)):
        text = json_entry(entry, loads_js(raw), None, None, redactor)
        yield Utf8Piece(b"," + text if index else text)


def json_entry(
    entry: StoredEntry | bytes, data: Any, _said: Any, _shared: Any, redactor: Redactor
) -> bytes:
    """One entry of the document, from its body as `loads_js` reads it, as UTF-8
    (views/slices.py's `Render`): what `dumps` writes of the body `loads_object`
    reads."""
    redacted = redactor.value(data)
    try:
        return orjson.dumps(redacted)
    except TypeError:  # (rare, see loads_js) the body read and written the general way
        assert isinstance(entry, StoredEntry)  # the document holds entries only
        again = Redactor(enabled=redactor.enabled)  # (its secrets are counted already)
        return dumps(again.value(loads_object(entry.raw)))


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
            nodes = [
                _json_node(e, labels, active) for e in item.entries[start : start + _TREE_BATCH]
            ]
            yield ("," if start else "") + _text(nodes)[1:-1]  # (one dump, its brackets cut)
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
    if entry.role:
        node["role"] = entry.role
    if entry.custom_type:
        node["customType"] = entry.custom_type
    label = labels.get(entry.id)
    if label:
        node["label"] = label
    if entry.id in active:
        node["active"] = True
    return node
