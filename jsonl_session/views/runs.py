"""The branch structure of a session as runs: chains of entries between branch points.

Owns grouping a session's tree into runs numbered ``1``, ``1.2``, ..., so every view
nests only as deep as the conversation branches, however long its chains. Used by the
exports and their branch outlines. `session_runs` builds them from the session's
entries without a node per entry (a large session's tree of nodes costs tens of MB);
`runs_of` from tree.py's TreeNode forest, which it falls back to when parents go
round a cycle (where tree.py decides which entry starts the cycle's view). Pure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING

from jsonl_session.format.entry import StoredEntry
from jsonl_session.tree import TreeNode

if TYPE_CHECKING:
    from jsonl_session.session import Session

_ID = attrgetter("id")


@dataclass(slots=True)
class Run:
    """A chain of entries in which no entry but the last has more than one child.
    ``number`` is ``"2"`` for the second root, ``"1.3"`` for the third branch from
    the end of run ``1``; ``from_id`` is the entry the run continues from."""

    number: str
    from_id: str | None
    entries: list[StoredEntry] = field(default_factory=list)
    branches: list[Run] = field(default_factory=list)


def session_runs(session: Session, *, fold: bool = True) -> list[Run]:
    """The runs of ``session.tree(fold=fold)`` (``runs_of`` of it), built from the
    entries: the same runs, numbers and order, without a tree node per entry."""
    runs = _runs_from_entries(session.entries, fold)
    return runs if runs is not None else runs_of(session.tree(fold=fold))


def runs_of(roots: list[TreeNode]) -> list[Run]:
    """The forest as runs; iterative, so long chains and deep branching are fine."""
    top = [Run(str(i), None) for i in range(1, len(roots) + 1)]
    pending = list(zip(top, roots, strict=True))
    while pending:
        run, node = pending.pop()
        while True:
            run.entries.append(node.entry)
            if len(node.children) != 1:
                break
            node = node.children[0]
        for i, child in enumerate(node.children, start=1):
            branch = Run(f"{run.number}.{i}", node.entry.id)
            run.branches.append(branch)
            pending.append((branch, child))
    return top


def iter_runs(runs: list[Run]) -> Iterator[Run]:
    """Runs depth first (a run, then its branches), without recursion."""
    stack = list(reversed(runs))
    while stack:
        run = stack.pop()
        yield run
        stack.extend(reversed(run.branches))


def _runs_from_entries(order: Sequence[StoredEntry], fold: bool) -> list[Run] | None:
    """tree.py's `build_tree` then `runs_of`, rule for rule (each id's last entry, in
    file order; hidden entries looked through to the nearest shown ancestor; a
    missing parent makes a root); None when some entry is not reached from a root
    (parents in a cycle), which `build_tree` has its own way of showing."""
    # each id's last entry, as the session's index keeps it (a dict made in one call:
    # a session of 200,000 entries is walked here with no call per entry it can spare)
    by_id = dict(zip(map(_ID, order), order, strict=True))
    kept = order if len(by_id) == len(order) else [e for e in order if by_id[e.id] is e]
    hidden_parent: dict[str, str | None] = {}
    if fold:
        for entry in kept:
            kind = entry.type
            if kind == "label" or (kind == "custom" and entry.is_leaf_marker):
                hidden_parent[entry.id] = entry.parent_id
    # one child kept as itself, more as a list: most entries have one child
    children: dict[str, StoredEntry | list[StoredEntry]] = {}
    roots: list[StoredEntry] = []
    shown = 0
    for entry in kept:
        if entry.id in hidden_parent:
            continue
        shown += 1
        parent_id = entry.parent_id
        if parent_id is not None and (parent_id in hidden_parent or parent_id not in by_id):
            parent_id = _shown_ancestor(entry, hidden_parent, by_id)
        if parent_id is None:
            roots.append(entry)
            continue
        kids = children.get(parent_id)
        if kids is None:
            children[parent_id] = entry
        elif isinstance(kids, list):
            kids.append(entry)
        else:
            children[parent_id] = [kids, entry]
    top = [Run(str(i), None) for i in range(1, len(roots) + 1)]
    pending = list(zip(top, roots, strict=True))
    reached = 0
    child_of = children.get
    while pending:
        run, entry = pending.pop()
        add = run.entries.append
        while True:
            add(entry)
            reached += 1
            kids = child_of(entry.id)
            if kids is None:
                break
            if not isinstance(kids, list):
                entry = kids
                continue
            for i, child in enumerate(kids, start=1):
                branch = Run(f"{run.number}.{i}", entry.id)
                run.branches.append(branch)
                pending.append((branch, child))
            break
    return top if reached == shown else None


def _shown_ancestor(
    entry: StoredEntry, hidden_parent: dict[str, str | None], by_id: dict[str, StoredEntry]
) -> str | None:
    """tree.py's rule: the parent, looking through hidden entries; None at a missing
    parent or a loop of hidden entries."""
    parent_id = entry.parent_id
    if parent_id is None or (parent_id not in hidden_parent and parent_id in by_id):
        return parent_id
    seen = {entry.id}
    while parent_id is not None and parent_id in hidden_parent:
        if parent_id in seen:
            return None
        seen.add(parent_id)
        parent_id = hidden_parent[parent_id]
    if parent_id is None or parent_id not in by_id:
        return None
    return parent_id
