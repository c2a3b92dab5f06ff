"""The forest a session shows (`Session.tree`): its entries as TreeNodes, folded or not.

Owns how the forest is laid out: with ``fold``, leaf markers and label entries are
left out and their children hang from the nearest shown ancestor; children are in
file order; each node carries its label and whether it is on the active path; entries
in a parent cycle, which no root reaches, are shown from their first entry in file
order, so nothing drops out of the view. Built without recursion, so deep sessions
do not overflow. The parent links it reads and the nodes it makes are tree.py's
(`TreeIndex`, `TreeNode`, `iter_nodes`); printing the forest is the CLI's. Pure: no I/O.
"""

from __future__ import annotations

from jsonl_session.errors import SessionTreeError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.tree import TreeIndex, TreeNode, iter_nodes


def build_tree(
    index: TreeIndex,
    labels: dict[str, str],
    active_leaf: str | None,
    *,
    fold: bool = True,
) -> list[TreeNode]:
    """The forest of entries as nodes; with ``fold`` leaf markers and label entries
    are left out and their children hang from the nearest shown ancestor.

    Children are in file order. Iterative, so deep sessions do not overflow.
    """
    active: set[str] = set()
    if active_leaf is not None:
        try:
            active = {e.id for e in index.path(active_leaf)}
        except SessionTreeError:
            active = set()

    def hidden(entry: StoredEntry) -> bool:
        return fold and (entry.is_leaf_marker or entry.type == "label")

    nodes: dict[str, TreeNode] = {}
    roots: list[TreeNode] = []
    for entry in index.by_id.values():
        if not hidden(entry):
            nodes[entry.id] = TreeNode(
                entry, label=labels.get(entry.id), on_active_path=entry.id in active
            )
    for entry in index.order:
        node = nodes.get(entry.id)
        if node is None or index.by_id.get(entry.id) is not entry:
            continue
        parent = _shown_ancestor(index, entry, nodes)
        if parent is None:
            roots.append(node)
        else:
            nodes[parent].children.append(node)
    _break_cycles(roots, nodes)
    return roots


def _break_cycles(roots: list[TreeNode], nodes: dict[str, TreeNode]) -> None:
    """Entries in a parent cycle hang from each other and from no root; show each
    cycle from its first entry in file order, so nothing drops out of the view."""
    reached = {node.entry.id for _, node in iter_nodes(roots)}
    if len(reached) == len(nodes):
        return
    owner = {child.entry.id: node for node in nodes.values() for child in node.children}
    for node in sorted(nodes.values(), key=lambda n: n.entry.line):
        if node.entry.id in reached:
            continue
        parent = owner.get(node.entry.id)
        if parent is not None:
            parent.children.remove(node)
        roots.append(node)
        reached.update(n.entry.id for _, n in iter_nodes([node]))


def _shown_ancestor(index: TreeIndex, entry: StoredEntry, shown: dict[str, TreeNode]) -> str | None:
    seen = {entry.id}
    parent_id = entry.parent_id
    while parent_id is not None and parent_id not in shown:
        parent = index.by_id.get(parent_id)
        if parent is None or parent_id in seen:
            return None
        seen.add(parent_id)
        parent_id = parent.parent_id
    return parent_id
