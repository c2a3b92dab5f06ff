"""The branch structure of a session as runs: chains of entries between branch points.

Owns grouping a session's tree into runs numbered ``1``, ``1.2``, ..., so every view
nests only as deep as the conversation branches, however long its chains. Used by the
exports and their branch outlines. `session_runs` builds them from the session's
entries without a node per entry (a large session's tree of nodes costs tens of MB);
`runs_of` from tree.py's TreeNode forest, which it falls back to when parents go
round a cycle (where tree.py decides which entry starts the cycle's view). Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jsonl_session.format.entry import StoredEntry
from jsonl_session.tree import TreeNode

if TYPE_CHECKING:
    from jsonl_session.session import Session


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
    runs = _runs_from_entries(session.entries, session.get, fold)
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


def _runs_from_entries(
    order: Sequence[StoredEntry], get: Callable[[str], StoredEntry | None], fold: bool
) -> list[Run] | None:
    """tree.py's `build_tree` then `runs_of`, rule for rule (each id's last entry, in
    file order; hidden entries looked through to the nearest shown ancestor; a
    missing parent makes a root); None when some entry is not reached from a root
    (parents in a cycle), which `build_tree` has its own way of showing."""
    hidden_parent: dict[str, str | None] = {}
    if fold:
        for entry in order:
            if (entry.type == "label" or entry.is_leaf_marker) and get(entry.id) is entry:
                hidden_parent[entry.id] = entry.parent_id
    # one child kept as itself, more as a list: most entries have one child
    children: dict[str, StoredEntry | list[StoredEntry]] = {}
    roots: list[StoredEntry] = []
    shown = 0
    for entry in order:
        if entry.id in hidden_parent or get(entry.id) is not entry:
            continue
        shown += 1
        parent_id = _shown_ancestor(entry, hidden_parent, get)
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
    while pending:
        run, entry = pending.pop()
        while True:
            run.entries.append(entry)
            reached += 1
            kids = children.get(entry.id)
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
    entry: StoredEntry,
    hidden_parent: dict[str, str | None],
    get: Callable[[str], StoredEntry | None],
) -> str | None:
    """tree.py's rule: the parent, looking through hidden entries; None at a missing
    parent or a loop of hidden entries."""
    parent_id = entry.parent_id
    if parent_id is None or (parent_id not in hidden_parent and get(parent_id) is not None):
        return parent_id
    seen = {entry.id}
    while parent_id is not None and parent_id in hidden_parent:
        if parent_id in seen:
            return None
        seen.add(parent_id)
        parent_id = hidden_parent[parent_id]
    if parent_id is None or get(parent_id) is None:
        return None
    return parent_id
