"""What a session knows of its file, folded from its entries: the tree index, labels,
name, the active leaf, and what was read (header, version, migrations, problems).

Owns the fold: taking in a loaded file or more entries and keeping labels and name
current, finding the file's leaf by pi's rule (looking through our leaf markers), and
following paths with errors that name the file. Writing is appender.py's; the public
methods are facade.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import Any

from jsonl_session.errors import SessionTreeError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.problems import Problem
from jsonl_session.storage.loader import LoadedFile
from jsonl_session.tree import TreeIndex

_NOTED = frozenset(("label", "session_info"))  # the entries that set labels and the name
_TYPE = attrgetter("type")


class SessionState:
    """The entries of one session file and what they set."""

    def __init__(self, path: Path, loaded: LoadedFile) -> None:
        self.path = path
        self.leaf: str | None = None
        self.install(loaded)

    def install(self, loaded: LoadedFile, *, keep_leaf: bool = False) -> None:
        """Take in a whole loaded file (at opening, or after another program rewrote it)."""
        self.header: dict[str, Any] = loaded.header
        self.version_read = loaded.version_read
        self.migrations = list(loaded.migrations)
        self.problems: list[Problem] = list(loaded.problems)
        table = loaded.table
        self.index = TreeIndex(table=table)
        self.labels: dict[str, tuple[str, str]] = {}
        self.name: str | None = None
        for entry in table.noted if table is not None else ():
            self._note(entry)
        self.add_entries(loaded.read_entries)
        if not keep_leaf:
            self.leaf = self.file_leaf()
        # On a re-read the leaf stays, even if the file no longer has it: writes are
        # then refused (see Appender.write_entry) rather than attached somewhere else.

    def add_entry(self, entry: StoredEntry) -> None:
        self.add_entries([entry])

    def add_entries(self, entries: Sequence[StoredEntry]) -> None:
        self.index.extend(entries)
        for entry in compress(entries, map(_NOTED.__contains__, map(_TYPE, entries))):
            self._note(entry)

    def add_problem(self, problem: Problem) -> None:
        self.problems.append(problem)

    def file_leaf(self) -> str | None:
        """The active leaf by pi's rule (last entry), looking through leaf markers."""
        entry = self.index.last_entry()
        seen: set[str] = set()
        while entry is not None and entry.is_leaf_marker and entry.id not in seen:
            seen.add(entry.id)
            if entry.parent_id is None:
                return None
            entry = self.index.get(entry.parent_id)
        return None if entry is None else entry.id

    def require(self, entry_id: str) -> None:
        if entry_id not in self.index:
            raise SessionTreeError(f"{self.path}: no entry with id {entry_id!r}", (entry_id,))

    def children_without_markers(self, entry_id: str | None) -> list[StoredEntry]:
        """Children of an entry in file order, looking through our leaf markers: an
        entry appended under one counts as a child of the marker's entry."""
        found: list[StoredEntry] = []
        pending = list(self.index.children(entry_id))
        seen: set[str] = set()
        while pending:
            entry = pending.pop()
            if not entry.is_leaf_marker:
                found.append(entry)
            elif entry.id not in seen:  # a cycle of markers: each looked through once
                seen.add(entry.id)
                pending.extend(self.index.children(entry.id))
        return sorted(found, key=lambda entry: entry.line)

    def path_to(self, leaf: str) -> list[StoredEntry]:
        try:
            return self.index.path(leaf)
        except SessionTreeError as exc:
            raise SessionTreeError(f"{self.path}: {exc}", exc.entry_ids) from None

    def current_labels(self) -> dict[str, str]:
        return {target: text for target, (text, _) in self.labels.items()}

    def _note(self, entry: StoredEntry) -> None:
        """What a label or session_info entry sets."""
        if entry.type == "label":
            data = entry.data()
            target, text = data.get("targetId"), data.get("label")
            if isinstance(target, str):
                if isinstance(text, str) and text:
                    self.labels[target] = (text, entry.timestamp)
                else:
                    self.labels.pop(target, None)
        elif entry.type == "session_info":
            name = entry.data().get("name")
            self.name = name.strip() or None if isinstance(name, str) else None
