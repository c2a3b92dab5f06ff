"""What a session says about its file and entries, read from memory: the header, the
entries and their tree, the leaf, labels and name, problems, contexts, the system
prompt and tools, and where the tokens go.

Owns these reading methods, which `Session` (facade.py) inherits; none of them writes.
Opening, moving the leaf, forking and rewriting (what each writes) are facade.py's;
the typed appends are appends.py's; the fold the answers come from is state.py's;
contexts are context.py's, the forest tree_forest.py's and the token figures
figures.py's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from jsonl_session.breakdown import Breakdown
from jsonl_session.context import EMPTY_LEAF, Projection, SessionContext, project_path
from jsonl_session.errors import SessionTreeError
from jsonl_session.format.entry import StoredEntry, entry_lines, loads_object
from jsonl_session.format.model import SessionHeader
from jsonl_session.format.problems import Problem
from jsonl_session.format.values import session_value_problems
from jsonl_session.format.walk import as_text
from jsonl_session.messages import current_system_message, current_tools, system_message_text
from jsonl_session.session.appender import Appender
from jsonl_session.session.figures import session_breakdown
from jsonl_session.session.state import SessionState
from jsonl_session.storage.cache import CacheOption
from jsonl_session.storage.writer import SessionFile
from jsonl_session.tree import TreeNode
from jsonl_session.tree_forest import build_tree

if TYPE_CHECKING:
    from jsonl_session.redaction import Redactor


class SessionReading:
    """Reading a session; ``_state``, ``_file``, ``_appender``, ``_cache`` and
    ``_opened_with`` are the session's (see `Session.__init__`)."""

    _state: SessionState
    _file: SessionFile
    _appender: Appender
    _cache: CacheOption
    _opened_with: int

    @property
    def path(self) -> Path:
        return self._file.path

    @property
    def is_persisted(self) -> bool:
        """Whether the file exists on disk (False until deferred persistence ends)."""
        return self._file.persisted

    @property
    def sealed_tails(self) -> list[Path]:
        """Sidecar files this session copied torn last lines into."""
        return list(self._file.sealed_tails)

    @property
    def backups(self) -> list[Path]:
        """Backups of the file this session made before rewriting it."""
        return list(self._file.backups)

    @property
    def redactor(self) -> Redactor | None:
        """What redacts this session's writes (``counts``: what it replaced), or None."""
        return self._appender.redactor

    @property
    def header(self) -> SessionHeader:
        return msgspec.convert(self._state.header, type=SessionHeader, strict=False)

    @property
    def header_data(self) -> dict[str, Any]:
        """The header as a dict in the file's shape (after migration), unknown keys kept."""
        return dict(self._state.header)

    @property
    def id(self) -> str:
        # a damaged header may hold no id, or not a string: shown, never a crash
        return as_text(self._state.header.get("id", ""))

    @property
    def cwd(self) -> str:
        cwd = self._state.header.get("cwd")
        return cwd if isinstance(cwd, str) else ""

    @property
    def version_read(self) -> int:
        """The format version the file had on disk (migration happens in memory)."""
        return self._state.version_read

    @property
    def migrations(self) -> list[str]:
        """Names of the migration steps applied in memory when reading."""
        return list(self._state.migrations)

    @property
    def entries(self) -> list[StoredEntry]:
        """Every entry in file order (damaged lines left out; see `problems`)."""
        return self._state.index.file_order_copy()

    def entry_data(self, entries: Sequence[StoredEntry] | None = None) -> Iterator[dict[str, Any]]:
        """Each entry's body, as `StoredEntry.data` gives it, in file order (or of
        ``entries``, in their order), the lines read a batch at a time: a large
        session is never held decoded."""
        chosen = self._state.index.file_order_copy() if entries is None else entries
        for _, raw in entry_lines(chosen):
            yield loads_object(raw)

    @property
    def revision(self) -> int:
        """How many entries this session knows: pass it back as ``expect_revision``
        to an append that must not happen if another program wrote in between."""
        return self._state.index.count

    @property
    def dialect(self) -> str:
        """Which agent wrote the file: "pi", "claude" (Claude Code) or "codex"."""
        return self._file.loaded.dialect

    @property
    def not_carried(self) -> dict[str, int]:
        """For another agent's file, what its reader left out (description -> count)."""
        return dict(self._file.loaded.not_carried)

    @property
    def problems(self) -> list[Problem]:
        """What is wrong with the file: bad lines, torn tail, duplicates, parents, cycles."""
        found = self._state.problems + self._state.index.problems()
        return sorted(found, key=lambda p: p.line or 0)

    def check_values(self) -> list[Problem]:
        """Values of the wrong type, numbers no double holds and times the clock cannot
        hold, each with its line (kind ``invalid-value``; format/values.py). Reads every
        entry's body, so it costs about an export; `problems` does not include them.
        Another agent's file is checked by its reader, not here (an empty list)."""
        if self.dialect != "pi":
            return []
        return session_value_problems(self.header_data, self.entries)

    @property
    def leaf_id(self) -> str | None:
        """Where the next entry attaches; None before the first entry."""
        return self._state.leaf

    @property
    def name(self) -> str | None:
        return self._state.name

    @property
    def labels(self) -> dict[str, str]:
        """Current label text by target entry id."""
        return self._state.current_labels()

    def get(self, entry_id: str) -> StoredEntry | None:
        return self._state.index.get(entry_id)

    def resolve_id(self, text: str) -> str:
        """The entry id ``text`` names: the id itself or a unique prefix of one."""
        if text in self._state.index:
            return text
        matches = [i for i in self._state.index.by_id if i.startswith(text)] if text else []
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise SessionTreeError(f"{self.path}: no entry with id {text!r}", (text,))
        raise SessionTreeError(
            f"{self.path}: {text!r} matches {len(matches)} entries: {', '.join(matches[:5])}",
            tuple(matches),
        )

    def children(self, entry_id: str | None) -> list[StoredEntry]:
        """Direct children of an entry (None: the roots), in file order. Leaf markers
        (our bookkeeping, see `branch`) are left out; an entry appended under one
        counts as a child of the marker's entry."""
        return self._state.children_without_markers(entry_id)

    def roots(self) -> list[StoredEntry]:
        return self._state.index.roots()

    def branch_path(self, leaf: str | None = None) -> list[StoredEntry]:
        """Entries from the root to ``leaf`` (default: the current leaf)."""
        target = self._state.leaf if leaf is None else leaf
        return [] if target is None else self._state.path_to(target)

    def tree(self, *, fold: bool = True) -> list[TreeNode]:
        """The entries as a forest; ``fold`` hides leaf markers and label entries."""
        return build_tree(self._state.index, self.labels, self._state.leaf, fold=fold)

    def build_context(self, leaf_id: str | None = None, *, pruning: bool = True) -> SessionContext:
        """The model context at ``leaf_id`` (default: the current leaf); ``pruning=False``
        shows pruned tool outputs whole, as pi does."""
        return self.projection(leaf_id, pruning=pruning).context()

    def projection(self, leaf_id: str | None = None, *, pruning: bool = True) -> Projection:
        """The context at ``leaf_id`` with its provenance: each entry it draws on, in
        order, with the messages that entry contributes (pi's session projection)."""
        target = self._state.leaf if leaf_id is None else leaf_id
        if target is None or target == EMPTY_LEAF:
            return Projection()
        return project_path(self._state.path_to(target), pruning=pruning)

    def system_message(self, leaf_id: str | None = None) -> dict[str, Any] | None:
        """The system messages in the context at ``leaf_id`` replayed into one: the
        current prompt (``content``, ``sections``) and tools (``toolsAdded``), or None
        when the transcript declares neither."""
        return current_system_message(self.build_context(leaf_id).messages)

    def system_prompt(self, leaf_id: str | None = None) -> str:
        """The current system prompt at ``leaf_id`` as one text ("" when none)."""
        return system_message_text(self.system_message(leaf_id))

    def tools(self, leaf_id: str | None = None) -> list[dict[str, Any]]:
        """The tools declared at ``leaf_id`` (name, description, parameters), in order."""
        return current_tools(self.build_context(leaf_id).messages)

    def token_breakdown(
        self, leaf_id: str | None = None, *, largest: int = 10, workers: int | None = 1
    ) -> Breakdown:
        """Where the tokens go: stored, on the active path, model-facing (breakdown.py);
        for a session as opened, the stored figures of a file unchanged since they were
        last measured come from the cache (breakdown_cache.py). ``workers``: processes
        to measure a long session with (None: one per core; breakdown_spread.py); the
        figures are the same. Spawned workers import ``__main__`` again: a script
        asking for them keeps its work under ``if __name__ == "__main__":``."""
        index = self._state.index
        opened = index.count == self._opened_with  # as read from its file
        return session_breakdown(self, index, opened, self._cache, leaf_id, largest, workers)
