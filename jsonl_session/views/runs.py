"""The branch structure of a session as runs: chains of entries between branch points.

Owns grouping a session's tree into runs numbered ``1``, ``1.2``, ..., so every view
nests only as deep as the conversation branches, however long its chains. Used by the
exports and their branch outlines. `session_runs` builds them from the session's
entries without a node per entry (a large session's tree of nodes costs tens of MB);
`runs_of` from the TreeNode forest (tree_forest.py's), which it falls back to when
parents go round a cycle (where tree_forest.py decides which entry starts the cycle's
view). Pure.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, eq, not_
from typing import TYPE_CHECKING

from jsonl_session.format.entry import StoredEntry
from jsonl_session.tree import TreeNode

if TYPE_CHECKING:
    from jsonl_session.session import Session

_ID, _TYPE, _PARENT_ID = attrgetter("id"), attrgetter("type"), attrgetter("parent_id")
_MAY_HIDE = frozenset(("label", "custom"))  # label entries and leaf markers


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
    """tree_forest.py's `build_tree` then `runs_of`, rule for rule (each id's last entry, in
    file order; hidden entries looked through to the nearest shown ancestor; a
    missing parent makes a root); None when some entry is not reached from a root
    (parents in a cycle), which `build_tree` has its own way of showing.

    Most entries follow the entry just before them in the file, its only child: those
    are found with no call per entry (a session of 200,000 entries is a few passes
    in C), and a run's stretch of them is taken as one slice of the entries. Only the
    others (roots, branches, entries after a hidden one) are looked at one by one."""
    every = list(map(_ID, order))
    last = dict(zip(every, range(len(order)), strict=True))  # each id's last entry
    if len(last) == len(order):
        kept, ids, position = list(order), every, last
    else:
        kept = [order[i] for i in sorted(last.values())]
        ids = list(map(_ID, kept))
        position = dict(zip(ids, range(len(kept)), strict=True))
    count = len(kept)
    hidden_parent: dict[str, str | None] = {}
    hidden: list[int] = []
    if fold:
        for at in compress(range(count), map(_MAY_HIDE.__contains__, map(_TYPE, kept))):
            entry = kept[at]
            if entry.type == "label" or entry.is_leaf_marker:
                hidden_parent[entry.id] = entry.parent_id
                hidden.append(at)
    # follows[i]: entry i's parent is entry i - 1 and neither is hidden (follows[0]: no)
    follows = [False, *map(eq, map(_PARENT_ID, kept[1:]), ids[:-1])]
    for at in hidden:
        follows[at] = False
        if at + 1 < count:
            follows[at + 1] = False
    hidden_at = set(hidden)
    # the other entries shown: a root, or a child of an entry not just before it
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for at in compress(range(count), map(not_, follows)):
        if at in hidden_at:
            continue
        parent_id = _shown_ancestor(kept[at], hidden_parent, position)
        if parent_id is None:
            roots.append(at)
        else:
            children.setdefault(position[parent_id], []).append(at)
    # a stretch ends at an entry whose next does not follow it, or that has others
    broken = compress(range(count - 1), map(not_, follows[1:]))  # (next not following)
    ends = sorted({*broken, count - 1, *children}) if count else []
    top = [Run(str(i), None) for i in range(1, len(roots) + 1)]
    pending = list(zip(top, roots, strict=True))
    reached = 0
    while pending:
        run, at = pending.pop()
        while True:
            end = ends[bisect_left(ends, at)]
            run.entries.extend(kept[at : end + 1])
            reached += end + 1 - at
            kids = children.get(end, [])
            if end + 1 < count and follows[end + 1]:
                kids = sorted([*kids, end + 1])
            if len(kids) == 1:
                at = kids[0]
                continue
            for i, child in enumerate(kids, start=1):
                branch = Run(f"{run.number}.{i}", kept[end].id)
                run.branches.append(branch)
                pending.append((branch, child))
            break
    return top if reached == count - len(hidden) else None


def _shown_ancestor(
    entry: StoredEntry, hidden_parent: dict[str, str | None], by_id: Container[str]
) -> str | None:
    """tree_forest.py's rule: the parent, looking through hidden entries; None at a missing
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
