"""Session: the façade users hold to read, append to, branch and fork a session.

Ties the pieces together: loader.py reads, tree.py indexes, context.py builds
contexts, writer.py runs the write protocol, fork.py writes forks. This module
decides *what* to write and *when* (deferred persistence, the leaf each entry
attaches to) and never writes on a read. Compaction and provider calls live
elsewhere and use this class through its public methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from jsonl_session.context import EMPTY_LEAF, SessionContext, context_from_path
from jsonl_session.errors import (
    EntryValidationError,
    SessionTreeError,
    SessionWriteError,
    UnsyncedWrite,
)
from jsonl_session.format.building import Build, built, message_line, struct_line
from jsonl_session.format.entry import StoredEntry, decode_envelope
from jsonl_session.format.ids import file_timestamp, new_entry_id, new_session_id, now_timestamp
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.model import (
    CURRENT_VERSION,
    LEAF_MARKER_TYPE,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    encode,
)
from jsonl_session.format.problems import Problem
from jsonl_session.storage import paths, store
from jsonl_session.storage.cache import CacheOption
from jsonl_session.storage.fork import write_copy, write_fork
from jsonl_session.storage.loader import LoadedFile, load_entries, parse_session_bytes
from jsonl_session.storage.writer import SessionFile
from jsonl_session.tokens import Breakdown, breakdown
from jsonl_session.tree import TreeIndex, TreeNode, build_tree


class Session:
    """One session file: its header, entries, active leaf, and the ways to add to it.

    Create with `Session.create` (nothing is written until the first assistant
    message or `flush`) or `Session.open` (reads and migrates in memory only).
    """

    def __init__(
        self, path: Path, loaded: LoadedFile, *, persisted: bool, fsync: store.FsyncPolicy
    ) -> None:
        self._leaf: str | None = None
        self._install(loaded)
        self._file = SessionFile(
            path,
            loaded,
            persisted=persisted,
            fsync=fsync,
            on_entry=self._index_entry,
            on_problem=lambda problem: self._problems.append(problem),
            on_reload=lambda reloaded: self._install(reloaded, keep_leaf=True),
        )

    def _install(self, loaded: LoadedFile, *, keep_leaf: bool = False) -> None:
        self._header = loaded.header
        self._version_read = loaded.version_read
        self._migrations = list(loaded.migrations)
        self._problems = list(loaded.problems)
        table = loaded.table
        self._index = TreeIndex(table=table)
        self._labels: dict[str, tuple[str, str]] = {}
        self._name: str | None = None
        self._has_assistant = table is not None and table.has_assistant
        for entry in table.noted if table is not None else ():
            self._note(entry)
        self._index_entries(loaded.read_entries)
        if not keep_leaf:
            self._leaf = self._file_leaf()
        # On a re-read the leaf stays, even if the file no longer has it: writes are
        # then refused (see _write_entry) rather than attached somewhere else.

    # --- opening -------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        fsync: store.FsyncPolicy = "always",
        cache: CacheOption = None,
    ) -> Session:
        """Read a session file. Migrates in memory; never writes to it. ``cache``: where
        to keep the index of a large file (see cache.py; False: no cache)."""
        file_path = Path(path).absolute()
        return cls(file_path, load_entries(file_path, cache=cache), persisted=True, fsync=fsync)

    @classmethod
    def create(
        cls,
        cwd: str | Path = ".",
        session_dir: str | Path | None = None,
        *,
        path: str | Path | None = None,
        parent_session: str | None = None,
        fsync: store.FsyncPolicy = "always",
    ) -> Session:
        """A new session for ``cwd``; written on the first assistant message or `flush`.

        The file goes to ``path`` if given, else ``session_dir``, else the folder for
        ``cwd`` under the session root (see paths.session_root).
        """
        header = _new_header(str(Path(cwd).absolute()), parent_session)
        file_path = Path(path) if path is not None else _new_file_path(session_dir, header)
        loaded = parse_session_bytes(encode(header) + b"\n", file_path)
        loaded.end_offset = 0  # nothing on disk yet
        return cls(file_path.absolute(), loaded, persisted=False, fsync=fsync)

    # --- reading -------------------------------------------------------------

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
    def header(self) -> SessionHeader:
        return msgspec.convert(self._header, type=SessionHeader, strict=False)

    @property
    def header_data(self) -> dict[str, Any]:
        """The header as a dict in the file's shape (after migration), unknown keys kept."""
        return dict(self._header)

    @property
    def id(self) -> str:
        return str(self._header["id"])

    @property
    def cwd(self) -> str:
        cwd = self._header.get("cwd")
        return cwd if isinstance(cwd, str) else ""

    @property
    def version_read(self) -> int:
        """The format version the file had on disk (migration happens in memory)."""
        return self._version_read

    @property
    def migrations(self) -> list[str]:
        """Names of the migration steps applied in memory when reading."""
        return list(self._migrations)

    @property
    def entries(self) -> list[StoredEntry]:
        """Every entry in file order (damaged lines left out; see `problems`)."""
        return list(self._index.order)

    @property
    def revision(self) -> int:
        """How many entries this session knows: pass it back as ``expect_revision``
        to an append that must not happen if another program wrote in between."""
        return self._index.count

    @property
    def problems(self) -> list[Problem]:
        """What is wrong with the file: bad lines, torn tail, duplicates, parents, cycles."""
        found = self._problems + self._index.problems()
        return sorted(found, key=lambda p: p.line or 0)

    @property
    def leaf_id(self) -> str | None:
        """Where the next entry attaches; None before the first entry."""
        return self._leaf

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def labels(self) -> dict[str, str]:
        """Current label text by target entry id."""
        return {target: text for target, (text, _) in self._labels.items()}

    def get(self, entry_id: str) -> StoredEntry | None:
        return self._index.get(entry_id)

    def resolve_id(self, text: str) -> str:
        """The entry id ``text`` names: the id itself or a unique prefix of one."""
        if text in self._index:
            return text
        matches = [i for i in self._index.by_id if i.startswith(text)] if text else []
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise SessionTreeError(f"{self.path}: no entry with id {text!r}", (text,))
        raise SessionTreeError(
            f"{self.path}: {text!r} matches {len(matches)} entries: {', '.join(matches[:5])}",
            tuple(matches),
        )

    def children(self, entry_id: str | None) -> list[StoredEntry]:
        """Direct children of an entry (None: the roots), in file order."""
        return self._index.children(entry_id)

    def roots(self) -> list[StoredEntry]:
        return self._index.roots()

    def branch_path(self, leaf: str | None = None) -> list[StoredEntry]:
        """Entries from the root to ``leaf`` (default: the current leaf)."""
        target = self._leaf if leaf is None else leaf
        return [] if target is None else self._path_to(target)

    def tree(self, *, fold: bool = True) -> list[TreeNode]:
        """The entries as a forest; ``fold`` hides leaf markers and label entries."""
        return build_tree(self._index, self.labels, self._leaf, fold=fold)

    def build_context(self, leaf_id: str | None = None, *, pruning: bool = True) -> SessionContext:
        """The model context at ``leaf_id`` (default: the current leaf); ``pruning=False``
        shows pruned tool outputs whole, as pi does."""
        target = self._leaf if leaf_id is None else leaf_id
        if target is None or target == EMPTY_LEAF:
            return SessionContext()
        return context_from_path(self._path_to(target), pruning=pruning)

    def token_breakdown(self, leaf_id: str | None = None, *, largest: int = 10) -> Breakdown:
        """Where the tokens go: stored, on the active path, model-facing (tokens.py)."""
        target = self._leaf if leaf_id is None else leaf_id
        path = self.branch_path(target) if target else []
        return breakdown(self._index.order, path, self.build_context(leaf_id), largest=largest)

    # --- appending -------------------------------------------------------------

    def append_message(self, message: dict[str, Any] | msgspec.Struct) -> str:
        """Append an agent message (pi's shapes, as a dict or a model struct)."""
        build, role = message_line(message)
        return self._append(build, flush=role == "assistant")

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append_struct(ModelChangeEntry, provider=provider, model_id=model_id)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._append_struct(ThinkingLevelChangeEntry, thinking_level=thinking_level)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
        *,
        expect_revision: int | None = None,
    ) -> str:
        return self._append_struct(
            CompactionEntry,
            requires=(first_kept_entry_id,),
            expect_revision=expect_revision,
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
            from_hook=from_hook,
        )

    def append_branch_summary(
        self,
        from_id: str,
        summary: str,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
    ) -> str:
        """Append a branch_summary as a child of the current leaf."""
        fields = {"from_id": from_id, "summary": summary, "details": details}
        return self._append_struct(BranchSummaryEntry, from_hook=from_hook, **fields)

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
        *,
        expect_revision: int | None = None,
    ) -> str:
        """Move the leaf to ``entry_id`` (None: before the first entry) and append a
        branch_summary there; the summary entry itself records the leaf move."""
        fields = {"from_id": entry_id or "root", "summary": summary, "details": details}
        return self._append_struct(
            BranchSummaryEntry,
            attach_to=(entry_id,),
            requires=() if entry_id is None else (entry_id,),
            expect_revision=expect_revision,
            from_hook=from_hook,
            **fields,
        )

    def append_custom(
        self, custom_type: str, data: Any = UNSET, *, expect_revision: int | None = None
    ) -> str:
        """Extension state: stored, never in the model context."""
        return self._append_struct(
            CustomEntry, custom_type=custom_type, data=data, expect_revision=expect_revision
        )

    def append_custom_message(
        self,
        custom_type: str,
        content: str | list[Any],
        display: bool = True,
        details: Any = UNSET,
    ) -> str:
        """A message an extension adds to the model context (as a user message)."""
        return self._append_struct(
            CustomMessageEntry,
            custom_type=custom_type,
            content=content,
            display=display,
            details=details,
        )

    def append_label(self, target_id: str, label: str | None = None) -> str:
        """Set (or with no text, clear) the label of an entry."""
        return self._append_struct(
            LabelEntry, requires=(target_id,), target_id=target_id, label=label or UNSET
        )

    def append_session_info(self, name: str) -> str:
        """Name the session (an empty name clears it); the latest one counts."""
        if not isinstance(name, str):
            raise EntryValidationError(f"a session name must be a string, not {name!r}")
        return self._append_struct(SessionInfoEntry, name=name.strip())

    # --- moving the leaf -------------------------------------------------------

    def branch(self, entry_id: str) -> str | None:
        """Make ``entry_id`` the active leaf, persistently.

        Appends a leaf marker (a ``custom`` entry of type jsonl-session/leaf, child
        of ``entry_id``) so the move survives a restart and pi sees the same branch.
        Returns the marker's id, or None when ``entry_id`` already is the file's leaf
        (judged after taking in what other writers appended).
        """
        marker = self._write_entry(
            struct_line(CustomEntry, (entry_id,), {"custom_type": LEAF_MARKER_TYPE}),
            requires=(entry_id,),
            unless_file_leaf_is=entry_id,
        )
        self._leaf = entry_id
        return marker

    def reset_leaf(self) -> None:
        """The next entry starts a new root (in memory until that entry is appended)."""
        self._leaf = None

    def flush(self) -> None:
        """Write a new session to disk now instead of at its first assistant message."""
        if not self._file.persisted:
            self._file.create(self._header, [e.raw for e in self._index.order])
            self._renumber()

    # --- forking ---------------------------------------------------------------

    def fork(self, entry_id: str | None = None, path: str | Path | None = None) -> Session:
        """A new session file holding the path root → ``entry_id`` (default: the leaf).

        Labels on the path come along; the header's parentSession is this file.
        """
        self._file.check_writable()
        target = entry_id if entry_id is not None else self._leaf
        if target is None:
            raise SessionTreeError(f"{self.path}: nothing to fork: the session has no entries")
        parent = str(self.path) if self._file.persisted else None
        header = _new_header(self.cwd, parent)
        new_path = Path(path) if path is not None else _new_file_path(self.path.parent, header)
        write_fork(new_path, header, self._path_to(target), self._labels, self._file.fsync)
        return Session.open(new_path, fsync=self._file.fsync)

    @classmethod
    def fork_from(
        cls,
        source: str | Path,
        target_cwd: str | Path,
        session_dir: str | Path | None = None,
        *,
        path: str | Path | None = None,
        fsync: store.FsyncPolicy = "always",
        cache: CacheOption = None,
    ) -> Session:
        """Copy a whole session (migrated first) into a new file for another cwd."""
        source_path = Path(source).absolute()
        loaded = load_entries(source_path, cache=cache)
        header = _new_header(str(Path(target_cwd).absolute()), str(source_path))
        new_path = Path(path) if path is not None else _new_file_path(session_dir, header)
        write_copy(new_path, header, loaded, fsync)
        return cls.open(new_path, fsync=fsync)

    # --- maintenance -------------------------------------------------------------

    def migrate(self) -> Path | None:
        """Rewrite the file as version 3 if reading needed migration.

        Atomic, with the original kept as a backup; returns the backup path, or
        None when the file was already current. A torn last line stays as it is.
        """
        if not self._file.persisted:
            return None
        with self._file.writing() as handle:
            return self._file.rewrite_if_needed(handle, keep_tail=True)

    def repair(self) -> list[Path]:
        """Cut a torn last line off into its sidecar, then migrate; return the files
        made. Meant for when no agent is writing the file."""
        if not self._file.persisted:
            return []
        made: list[Path] = []
        with self._file.writing() as handle:
            sidecar = self._file.seal(handle, at_once=True)
            backup = self._file.rewrite_if_needed(handle, keep_tail=False)
            made.extend(p for p in (sidecar, backup) if p is not None)
        return made

    # --- internals ---------------------------------------------------------------

    def _require(self, entry_id: str) -> None:
        if entry_id not in self._index:
            raise SessionTreeError(f"{self.path}: no entry with id {entry_id!r}", (entry_id,))

    def _path_to(self, leaf: str) -> list[StoredEntry]:
        try:
            return self._index.path(leaf)
        except SessionTreeError as exc:
            raise SessionTreeError(f"{self.path}: {exc}", exc.entry_ids) from None

    def _file_leaf(self) -> str | None:
        """The active leaf by pi's rule (last entry), looking through leaf markers."""
        entry = self._index.last_entry()
        seen: set[str] = set()
        while entry is not None and entry.is_leaf_marker and entry.id not in seen:
            seen.add(entry.id)
            if entry.parent_id is None:
                return None
            entry = self._index.get(entry.parent_id)
        return None if entry is None else entry.id

    def _index_entry(self, entry: StoredEntry) -> None:
        self._index_entries([entry])

    def _index_entries(self, entries: list[StoredEntry]) -> None:
        self._index.extend(entries)
        if not self._has_assistant:
            self._has_assistant = any(e.role == "assistant" for e in entries)
        for entry in entries:
            if entry.type in ("label", "session_info"):
                self._note(entry)

    def _note(self, entry: StoredEntry) -> None:
        """What a label or session_info entry sets."""
        if entry.type == "label":
            data = entry.data()
            target, text = data.get("targetId"), data.get("label")
            if isinstance(target, str):
                if isinstance(text, str) and text:
                    self._labels[target] = (text, entry.timestamp)
                else:
                    self._labels.pop(target, None)
        elif entry.type == "session_info":
            name = entry.data().get("name")
            self._name = name.strip() or None if isinstance(name, str) else None

    def _append_struct(
        self,
        kind: type[msgspec.Struct],
        *,
        attach_to: tuple[str | None] | None = None,
        requires: tuple[str, ...] = (),
        expect_revision: int | None = None,
        **fields: Any,
    ) -> str:
        """Append an entry of a model type (see entries.struct_line)."""
        build = struct_line(kind, attach_to, fields)
        return self._append(build, requires=requires, expect_revision=expect_revision)

    def _append(
        self,
        build: Build,
        *,
        flush: bool = False,
        requires: tuple[str, ...] = (),
        expect_revision: int | None = None,
    ) -> str:
        entry_id = self._write_entry(
            build, flush=flush, requires=requires, expect_revision=expect_revision
        )
        assert entry_id is not None  # only a conditional write can write nothing
        return entry_id

    def _write_entry(
        self,
        build: Build,
        *,
        flush: bool = False,
        requires: tuple[str, ...] = (),
        unless_file_leaf_is: str | None = None,
        expect_revision: int | None = None,
    ) -> str | None:
        """Append the line ``build`` makes; return its id.

        ``requires``: entries the new one refers to; checked now and again once the
        file is locked and up to date (another program may have rewritten it). With
        ``unless_file_leaf_is``, write nothing (and return None) when that entry
        already is the file's active leaf, judged after taking in other writers' lines.
        With ``expect_revision``, refuse when another program wrote entries since the
        session had that many (what was planned on them may no longer hold).
        """
        for entry_id in requires:
            self._require(entry_id)
        if not self._file.persisted:
            if unless_file_leaf_is is not None and self._file_leaf() == unless_file_leaf_is:
                return None
            entry_id = new_entry_id(self._index)
            raw = built(build, entry_id, self._leaf)
            if flush or self._has_assistant:
                # The file is written whole, then the entry joins: a failed write
                # leaves the session as it was and no file behind.
                self._file.create(self._header, [*(e.raw for e in self._index.order), raw])
            self._add_line(raw, offset=-1)
            self._renumber()
            return entry_id
        leaf = self._leaf
        with self._file.writing() as handle:
            self._file.prepare(handle)
            for needed in (*requires, *(() if leaf is None else (leaf,))):
                if needed not in self._index:
                    raise SessionTreeError(
                        f"{self.path}: entry {needed} is no longer in the file (did another "
                        "program rewrite it?); nothing written. Open the file again.",
                        (needed,),
                    )
            if unless_file_leaf_is is not None and self._file_leaf() == unless_file_leaf_is:
                return None
            if expect_revision is not None and self.revision != expect_revision:
                raise SessionWriteError(
                    f"{self.path}: another program wrote to the file while this entry was "
                    f"being prepared ({self.revision} entries now, {expect_revision} before); "
                    "nothing written. Run it again."
                )
            entry_id = new_entry_id(self._index)
            raw = built(build, entry_id, self._leaf)
            try:
                line, offset = self._file.append(handle, raw)
            except UnsyncedWrite as exc:
                self._add_line(raw, exc.offset, exc.line)  # it is in the file
                raise
        self._add_line(raw, offset, line)
        return entry_id

    def _add_line(self, raw: bytes, offset: int, line: int = 0) -> None:
        entry = StoredEntry.from_envelope(decode_envelope(raw), line, offset, raw)
        self._index_entry(entry)
        self._leaf = entry.id

    def _renumber(self) -> None:
        """Line numbers and offsets of entries not yet on disk, or just written."""
        offset = len(dumps(self._header)) + 1 if self._file.persisted else -1
        for line, entry in enumerate(self._index.order, start=2):
            entry.line = line
            if offset >= 0:
                entry.offset = offset
                offset += len(entry.raw) + 1


def _new_header(cwd: str, parent_session: str | None) -> SessionHeader:
    return SessionHeader(
        version=CURRENT_VERSION,
        id=new_session_id(),
        timestamp=now_timestamp(),
        cwd=cwd,
        parent_session=UNSET if parent_session is None else parent_session,
    )


def _new_file_path(folder: str | Path | None, header: SessionHeader) -> Path:
    """``<folder>/<timestamp>_<id>.jsonl``; the folder defaults to the cwd's under the root."""
    base = Path(folder) if folder is not None else paths.session_dir_for(header.cwd)
    return base / f"{file_timestamp(header.timestamp)}_{header.id}.jsonl"
