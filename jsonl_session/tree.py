"""The tree of a loaded session: ids, children, roots, paths, the leaf, and the nodes
of its tree views (`TreeNode`, walked by `iter_nodes`; laid out by tree_forest.py).

Owns the parent links and what can go wrong with them: duplicate ids, parents that
do not exist, cycles. All of it is detected in linear time and reported as
problems. A path ends at a parent that does not exist (as in pi); a path through a
cycle raises SessionTreeError naming the entries. Nothing ever loops. Pure: no I/O.
The leaf here is pi's (the last entry); looking through our leaf markers is
session/state.py's. A run of cached entries (an `EntryRun`, such as storage/table.py's
EntryTable) stands in for its entries until every one is needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Protocol

from jsonl_session.errors import SessionTreeError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.problems import Problem

_ID = attrgetter("id")


class EntryRun(Protocol):
    """A run of entries in file order kept outside the index, answering by position
    without building an object per entry (storage/table.py's EntryTable is one)."""

    missing: frozenset[str]  # parent ids no entry of the run has

    @property
    def clean(self) -> bool:
        """Each id once and each parent before its child (so no cycles)."""
        ...

    def __len__(self) -> int: ...

    def __getitem__(self, position: int) -> StoredEntry: ...

    def materialise(self) -> list[StoredEntry]:
        """Every entry, in order."""
        ...

    def position(self, entry_id: str) -> int | None: ...

    def expect_lookups(self) -> None:
        """Many `position` lookups are coming: make each cost the same at any size."""
        ...

    def chain(self, position: int) -> list[int]:
        """``position`` and its ancestors' positions, up to a root or a missing parent."""
        ...

    def orphans(self) -> list[int]:
        """The positions of the entries whose parent no entry has, in order."""
        ...

    def at(self, positions: list[int]) -> list[StoredEntry]:
        """The entries at ``positions``, in that order."""
        ...


@dataclass(slots=True)
class TreeNode:
    entry: StoredEntry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    on_active_path: bool = False


class TreeIndex:
    """Index over entries in file order; later entries can be added with `extend`.

    The children lists are built on first use: opening a session needs ids and
    parents, not the whole tree. Entries from an index-cache record (an `EntryRun`,
    storage/table.py's EntryTable) stay in the table while that answers: lookups by
    id, the last entry and paths go through it, and only the entries a path holds are
    built; its problems are its missing parents, found from its parent positions.
    Anything that needs every entry (`by_id`, `order`, children, roots, the
    problems once entries were added), or an added entry that reuses a table id or
    is a parent the table lacks, builds them all first.
    """

    def __init__(self, entries: Iterable[StoredEntry] = (), *, table: EntryRun | None = None):
        self._by_id: dict[str, StoredEntry] = {}
        self._order: list[StoredEntry] = []
        self.duplicates: list[Problem] = []
        self._children: dict[str | None, list[str]] | None = None
        # Entries after the table, while it stands in for its entries (a clean table
        # only: each id once, each parent before its child).
        self._table = table if table is not None and table.clean else None
        if table is not None and self._table is None:
            self.extend(table.materialise())
        self.extend(entries)

    @property
    def by_id(self) -> dict[str, StoredEntry]:
        """The entry of each id (an id used again: its last entry)."""
        self._build_all()
        return self._by_id

    @property
    def order(self) -> list[StoredEntry]:
        """Every entry in file order, duplicates included."""
        self._build_all()
        return self._order

    def in_file_order(self) -> list[StoredEntry]:
        """`order`, without the index of every id that `order` builds (a caller that
        only walks the entries needs none): the table's entries, then those added."""
        if self._table is None:
            return self._order
        return [*self._table.materialise(), *self._order]

    def file_order_copy(self) -> list[StoredEntry]:
        """`in_file_order` as a list the caller may keep and change (copied once)."""
        entries = self.in_file_order()
        return list(entries) if entries is self._order else entries

    def from_the_end(self) -> Iterator[StoredEntry]:
        """`in_file_order` from the last entry back, building only those asked for (a
        table's block by block; `in_file_order` later gives the same objects)."""
        yield from reversed(self._order)
        table = self._table
        if table is not None:
            for position in range(len(table) - 1, -1, -1):
                yield table[position]

    @property
    def count(self) -> int:
        """How many entries, in file order (duplicates included)."""
        return len(self._order) + (len(self._table) if self._table is not None else 0)

    def _build_all(self) -> None:
        table = self._table
        if table is not None:
            self._table = None
            later = self._order
            self._by_id, self._order = {}, []
            self.extend(table.materialise())
            self.extend(later)

    def add(self, entry: StoredEntry) -> None:
        self.extend((entry,))

    def expect_writes(self) -> None:
        """Entries are about to be added one by one (each new id looked for): see
        EntryTable.expect_lookups."""
        if self._table is not None:
            self._table.expect_lookups()

    def extend(self, entries: Iterable[StoredEntry]) -> None:
        new = entries if isinstance(entries, list | tuple) else list(entries)
        table = self._table
        if table is not None and any(
            e.id in table.missing or table.position(e.id) is not None for e in new
        ):
            self._build_all()  # the table's parent links would change
        fresh = dict(zip(map(_ID, new), new, strict=True))
        # keys() on both sides: isdisjoint then walks the smaller, not the whole index
        if len(fresh) != len(new) or not fresh.keys().isdisjoint(self._by_id.keys()):
            # An id used again (rare): one by one, for the problems. An id seen
            # before keeps its place in by_id, as when all come in one call.
            self._build_all()
            for entry in new:
                self._add_one(entry)
            return
        self._by_id.update(fresh)
        self._order.extend(new)
        if self._children is not None:
            for entry in new:
                self._children.setdefault(entry.parent_id, []).append(entry.id)

    def _add_one(self, entry: StoredEntry) -> None:
        previous = self._by_id.get(entry.id)
        if previous is not None:
            # Later lines win, as in pi; the earlier one stays in the file.
            self.duplicates.append(
                Problem(
                    "duplicate-id",
                    f"id {entry.id} is used again (first on line {previous.line}); "
                    "the later entry wins",
                    entry.line,
                    entry.id,
                )
            )
        self._by_id[entry.id] = entry
        self._order.append(entry)
        self._children = None

    @property
    def children_of(self) -> dict[str | None, list[str]]:
        """Child ids by parent id, in file order; an id used again sits only under
        the parent of its last entry."""
        if self._children is None:
            children: dict[str | None, list[str]] = {}
            by_id = self.by_id
            for entry in self._order:
                if by_id[entry.id] is entry:
                    children.setdefault(entry.parent_id, []).append(entry.id)
            self._children = children
        return self._children

    def __contains__(self, entry_id: object) -> bool:
        if entry_id in self._by_id:
            return True
        return (
            self._table is not None
            and isinstance(entry_id, str)
            and (self._table.position(entry_id) is not None)
        )

    def __len__(self) -> int:
        return len(self._by_id) + (len(self._table) if self._table is not None else 0)

    def get(self, entry_id: str) -> StoredEntry | None:
        found = self._by_id.get(entry_id)
        if found is None and self._table is not None and isinstance(entry_id, str):
            position = self._table.position(entry_id)
            found = None if position is None else self._table[position]
        return found

    def children(self, entry_id: str | None) -> list[StoredEntry]:
        return [self.by_id[i] for i in self.children_of.get(entry_id, [])]

    def last_entry(self) -> StoredEntry | None:
        """The last entry in file order: pi's rule for the active leaf."""
        if self._order:
            return self._order[-1]
        return self._table[-1] if self._table is not None and len(self._table) else None

    def roots(self) -> list[StoredEntry]:
        """Entries with no parent, then entries whose parent is missing (orphans)."""
        out = list(self.children(None))
        out.extend(
            self.by_id[child]
            for parent, kids in self.children_of.items()
            if parent is not None and parent not in self.by_id
            for child in kids
        )
        return out

    def path(self, leaf_id: str) -> list[StoredEntry]:
        """Entries from the root to ``leaf_id``; O(path length).

        A parent that does not exist ends the path there, as in pi, whose own forks
        leave such gaps after dropping label entries; `problems` reports it. Raises
        SessionTreeError for an unknown leaf or a cycle.
        """
        entry = self.get(leaf_id)
        if entry is None:
            raise SessionTreeError(f"no entry with id {leaf_id!r}", (leaf_id,))
        path: list[StoredEntry] = []
        append = path.append
        get = self._by_id.get
        # A walk longer than there are entries has gone round a cycle: only then is
        # it walked again, keeping what it saw, to name the cycle.
        for _ in range(len(self._by_id) + 2):
            append(entry)
            parent_id = entry.parent_id
            if parent_id is None:
                break
            parent = get(parent_id)
            if parent is None:
                if self._table is not None:
                    path.extend(self._table_path(parent_id))
                break
            entry = parent
        else:
            raise self._cycle(path[0])
        path.reverse()
        return path

    def _cycle(self, entry: StoredEntry) -> SessionTreeError:
        """The cycle a walk up from ``entry`` goes round (it does: it outlasted the
        entries), named from the first entry it reaches twice."""
        path: list[StoredEntry] = []
        seen: set[str] = set()
        while entry.id not in seen:
            seen.add(entry.id)
            path.append(entry)
            parent_id = entry.parent_id
            assert parent_id is not None  # a walk that ends has no cycle
            entry = self._by_id[parent_id]
        start = next(i for i, e in enumerate(path) if e.id == entry.id)
        loop = [e.id for e in path[start:]]
        return SessionTreeError("parent cycle: " + " -> ".join([*loop, entry.id]), tuple(loop))

    def _table_path(self, entry_id: str) -> list[StoredEntry]:
        """The table's entry ``entry_id`` and its ancestors (the table's parents are
        all in it: an entry added later cannot be one, see `extend`)."""
        assert self._table is not None
        position = self._table.position(entry_id)
        if position is None:
            return []
        return self._table.at(self._table.chain(position))

    def problems(self) -> list[Problem]:
        """Duplicate ids, missing parents and cycles, in file order."""
        if self._table is not None and not self._order:
            # a clean table alone has no duplicate and no cycle: its missing parents
            # are found from its parent positions, without building every entry
            table = self._table
            return [_missing_parent(entry) for entry in table.at(table.orphans())]
        found = list(self.duplicates)
        by_id = self.by_id
        ordered = True  # every parent on an earlier line: then no link can come back
        for entry in by_id.values():  # (one pass with no call per entry: 200,000 of them)
            parent_id = entry.parent_id
            if parent_id is None:
                continue
            parent = by_id.get(parent_id)
            if parent is None:
                found.append(_missing_parent(entry))
            elif parent.line >= entry.line:
                ordered = False
        if not ordered:
            found.extend(self._cycles())
        return sorted(found, key=lambda p: p.line or 0)

    def _cycles(self) -> list[Problem]:
        # Each entry has one parent, so following parents from every entry and
        # colouring what was visited finds every cycle in linear time.
        state: dict[str, int] = {}  # 1 = on the current walk, 2 = done
        found: list[Problem] = []
        for start in self.by_id:
            walk: list[str] = []
            current: str | None = start
            while current is not None and current in self.by_id and current not in state:
                state[current] = 1
                walk.append(current)
                current = self.by_id[current].parent_id
            if current is not None and state.get(current) == 1:
                loop = walk[walk.index(current) :]
                first = min((self.by_id[i] for i in loop), key=lambda e: e.line)
                found.append(
                    Problem(
                        "cycle",
                        "parent cycle: " + " -> ".join([*loop, current]),
                        first.line,
                        first.id,
                    )
                )
            for visited in walk:
                state[visited] = 2
        return found


def _missing_parent(entry: StoredEntry) -> Problem:
    return Problem(
        "missing-parent",
        f"entry {entry.id} has parent {entry.parent_id}, which does not exist",
        entry.line,
        entry.id,
    )


def iter_nodes(roots: Sequence[TreeNode]) -> Iterable[tuple[int, TreeNode]]:
    """Depth-first (depth, node) pairs without recursion."""
    stack = [(0, node) for node in reversed(roots)]
    while stack:
        depth, node = stack.pop()
        yield depth, node
        stack.extend((depth + 1, child) for child in reversed(node.children))
