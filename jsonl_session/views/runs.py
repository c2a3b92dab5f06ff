"""The branch structure of a session as runs: chains of entries between branch points.

Owns grouping a tree (tree.py's TreeNode forest) into runs numbered ``1``, ``1.2``,
..., so every view nests only as deep as the conversation branches, however long its
chains. Used by the exports and their branch outlines. Pure.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from jsonl_session.tree import TreeNode


@dataclass(slots=True)
class Run:
    """A chain of entries in which no entry but the last has more than one child.
    ``number`` is ``"2"`` for the second root, ``"1.3"`` for the third branch from
    the end of run ``1``; ``from_id`` is the entry the run continues from."""

    number: str
    from_id: str | None
    nodes: list[TreeNode] = field(default_factory=list)
    branches: list[Run] = field(default_factory=list)


def runs_of(roots: list[TreeNode]) -> list[Run]:
    """The forest as runs; iterative, so long chains and deep branching are fine."""
    top = [Run(str(i), None) for i in range(1, len(roots) + 1)]
    pending = list(zip(top, roots, strict=True))
    while pending:
        run, node = pending.pop()
        while True:
            run.nodes.append(node)
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
