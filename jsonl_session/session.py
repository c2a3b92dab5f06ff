"""Session: the façade users hold to read, append to, branch and fork a session.

Ties the pieces together: loader.py reads, tree.py indexes, context.py builds
contexts, store.py writes. It decides *what* to write and *when* (deferred
persistence, migration before the first append, picking up other writers' lines)
and never writes on a read. Compaction and provider calls live elsewhere and use
this class through its public methods.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from jsonl_session import store
from jsonl_session.context import EMPTY_LEAF, SessionContext, build_context
from jsonl_session.errors import EntryValidationError, SessionTreeError, SessionWriteError
from jsonl_session.fork import file_bytes, fork_path_lines
from jsonl_session.ids import file_timestamp, new_entry_id, new_session_id, now_timestamp
from jsonl_session.jsonio import dumps
from jsonl_session.jsonl import StoredEntry, consumed_length, decode_envelope, split_lines
from jsonl_session.loader import (
    BadLine,
    LoadedFile,
    load_entries,
    parse_session_bytes,
    read_line,
)
from jsonl_session.model import (
    CURRENT_VERSION,
    KNOWN_ROLES,
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
    message_from_dict,
)
from jsonl_session.problems import Problem
from jsonl_session.tree import TreeIndex, TreeNode, build_tree

_DERIVED_ROLES = {
    "compactionSummary": "append_compaction",
    "branchSummary": "append_branch_summary",
}


class Session:
    """One session file: its header, entries, active leaf, and the ways to add to it.

    Create with `Session.create` (nothing is written until the first assistant
    message or `flush`) or `Session.open` (reads and migrates in memory only).
    """

    def __init__(
        self, path: Path, loaded: LoadedFile, *, persisted: bool, fsync: store.FsyncPolicy
    ) -> None:
        store.check_fsync_policy(fsync)
        self._path = path
        self._fsync: store.FsyncPolicy = fsync
        self._persisted = persisted
        self._leaf: str | None = None
        self.sealed_tails: list[Path] = []
        """Sidecar files this session moved torn last lines into."""
        self.backups: list[Path] = []
        """Backups of the file this session made before rewriting it."""
        self._install(loaded)

    def _install(self, loaded: LoadedFile, *, keep_leaf: bool = False) -> None:
        self._loaded = loaded
        self._header = loaded.header
        self._problems = list(loaded.problems)
        self._index = TreeIndex()
        self._labels: dict[str, tuple[str, str]] = {}
        self._name: str | None = None
        self._end_offset = loaded.end_offset
        self._next_line = loaded.last_line + 1
        for entry in loaded.entries:
            self._index_entry(entry)
        if not (keep_leaf and (self._leaf is None or self._leaf in self._index)):
            self._leaf = self._file_leaf()

    # --- opening -------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str, *, fsync: store.FsyncPolicy = "always") -> Session:
        """Read a session file. Migrates in memory; never writes."""
        file_path = Path(path).absolute()
        return cls(file_path, load_entries(file_path), persisted=True, fsync=fsync)

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
        ``cwd`` under the session root (see store.session_root).
        """
        cwd_text = str(Path(cwd).absolute())
        header = SessionHeader(
            version=CURRENT_VERSION,
            id=new_session_id(),
            timestamp=now_timestamp(),
            cwd=cwd_text,
            parent_session=UNSET if parent_session is None else parent_session,
        )
        if path is None:
            folder = (
                Path(session_dir) if session_dir is not None else store.session_dir_for(cwd_text)
            )
            path = folder / f"{file_timestamp(header.timestamp)}_{header.id}.jsonl"
        raw = encode(header)
        loaded = parse_session_bytes(raw + b"\n", Path(path))
        loaded.end_offset = 0  # nothing on disk yet
        return cls(Path(path).absolute(), loaded, persisted=False, fsync=fsync)

    # --- reading -------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self._path

    @property
    def is_persisted(self) -> bool:
        """Whether the file exists on disk (False until deferred persistence ends)."""
        return self._persisted

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
        return self._loaded.version_read

    @property
    def migrations(self) -> list[str]:
        """Names of the migration steps applied in memory when reading."""
        return list(self._loaded.migrations)

    @property
    def entries(self) -> list[StoredEntry]:
        """Every entry in file order (damaged lines left out; see `problems`)."""
        return list(self._index.order)

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
            raise SessionTreeError(f"{self._path}: no entry with id {text!r}", (text,))
        raise SessionTreeError(
            f"{self._path}: {text!r} matches {len(matches)} entries: {', '.join(matches[:5])}",
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
        return [] if target is None else self._index.path(target)

    def tree(self, *, fold: bool = True) -> list[TreeNode]:
        """The entries as a forest; ``fold`` hides leaf markers and label entries."""
        return build_tree(self._index, self.labels, self._leaf, fold=fold)

    def build_context(self, leaf_id: str | None = None) -> SessionContext:
        """The model context at ``leaf_id`` (default: the current leaf)."""
        target = self._leaf if leaf_id is None else leaf_id
        return build_context(
            self._index.order, EMPTY_LEAF if target is None else target, self._index
        )

    # --- appending -------------------------------------------------------------

    def append_message(self, message: dict[str, Any] | msgspec.Struct) -> str:
        """Append an agent message (pi's shapes, as a dict or a model struct)."""
        data = _message_dict(message)
        return self._append(
            lambda entry_id, parent, stamp: dumps(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": stamp,
                    "message": data,
                }
            ),
            flush=data.get("role") == "assistant",
        )

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
    ) -> str:
        self._require(first_kept_entry_id)
        return self._append_struct(
            CompactionEntry,
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
        return self._append_struct(
            BranchSummaryEntry,
            from_id=from_id,
            summary=summary,
            details=details,
            from_hook=from_hook,
        )

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
    ) -> str:
        """Move the leaf to ``entry_id`` (None: before the first entry) and append a
        branch_summary there; the summary entry itself records the leaf move."""
        if entry_id is not None:
            self._require(entry_id)
        entry = BranchSummaryEntry(
            from_id=entry_id or "root",
            summary=summary,
            details=details,
            from_hook=from_hook,
            id="",
            parent_id=entry_id,
            timestamp="",
        )

        def build(new_id: str, _parent: str | None, stamp: str) -> bytes:
            entry.id, entry.timestamp = new_id, stamp
            return encode(entry)

        return self._append(build)

    def append_custom(self, custom_type: str, data: Any = UNSET) -> str:
        """Extension state: stored, never in the model context."""
        return self._append_struct(CustomEntry, custom_type=custom_type, data=data)

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
        self._require(target_id)
        return self._append_struct(LabelEntry, target_id=target_id, label=label or UNSET)

    def append_session_info(self, name: str) -> str:
        """Name the session (an empty name clears it); the latest one counts."""
        return self._append_struct(SessionInfoEntry, name=name.strip())

    def set_label(self, target_id: str, label: str | None) -> str:
        return self.append_label(target_id, label)

    def set_name(self, name: str) -> str:
        return self.append_session_info(name)

    # --- moving the leaf -------------------------------------------------------

    def branch(self, entry_id: str) -> str | None:
        """Make ``entry_id`` the active leaf, persistently.

        Appends a leaf marker (a ``custom`` entry of type jsonl-session/leaf, child
        of ``entry_id``) so the move survives a restart and pi sees the same branch.
        Returns the marker's id, or None when ``entry_id`` already is the file's leaf.
        """
        self._require(entry_id)
        marker = self._write_entry(
            lambda new_id, _parent, stamp: encode(
                CustomEntry(
                    custom_type=LEAF_MARKER_TYPE, id=new_id, parent_id=entry_id, timestamp=stamp
                )
            ),
            unless_file_leaf_is=entry_id,
        )
        self._leaf = entry_id
        return marker

    def reset_leaf(self) -> None:
        """The next entry starts a new root (in memory until that entry is appended)."""
        self._leaf = None

    def flush(self) -> None:
        """Write a new session to disk now instead of at its first assistant message."""
        if not self._persisted:
            self._write_new_file()

    # --- forking ---------------------------------------------------------------

    def fork(self, entry_id: str | None = None, path: str | Path | None = None) -> Session:
        """A new session file holding the path root → ``entry_id`` (default: the leaf).

        Labels on the path come along; the header's parentSession is this file.
        """
        self._check_writable()
        target = entry_id if entry_id is not None else self._leaf
        if target is None:
            raise SessionTreeError("nothing to fork: the session has no entries")
        lines = fork_path_lines(self._index.path(target), self._labels)
        header = SessionHeader(
            version=CURRENT_VERSION,
            id=new_session_id(),
            timestamp=now_timestamp(),
            cwd=self.cwd,
            parent_session=str(self._path) if self._persisted else UNSET,
        )
        new_path = Path(path) if path is not None else self._sibling_path(header)
        store.write_new_file(new_path, file_bytes(encode(header), lines), self._fsync)
        return Session.open(new_path, fsync=self._fsync)

    @classmethod
    def fork_from(
        cls,
        source: str | Path,
        target_cwd: str | Path,
        session_dir: str | Path | None = None,
        *,
        path: str | Path | None = None,
        fsync: store.FsyncPolicy = "always",
    ) -> Session:
        """Copy a whole session (migrated first) into a new file for another cwd."""
        source_path = Path(source).absolute()
        loaded = load_entries(source_path)
        if not loaded.writable:
            raise SessionWriteError(
                f"{source_path}: format version {loaded.version_read} is newer than "
                f"{CURRENT_VERSION}; refusing to copy it into a version {CURRENT_VERSION} file"
            )
        cwd_text = str(Path(target_cwd).absolute())
        header = SessionHeader(
            version=CURRENT_VERSION,
            id=new_session_id(),
            timestamp=now_timestamp(),
            cwd=cwd_text,
            parent_session=str(source_path),
        )
        if path is None:
            folder = (
                Path(session_dir) if session_dir is not None else store.session_dir_for(cwd_text)
            )
            path = folder / f"{file_timestamp(header.timestamp)}_{header.id}.jsonl"
        content = file_bytes(encode(header), (e.raw for e in loaded.entries))
        store.write_new_file(Path(path), content, fsync)
        return cls.open(path, fsync=fsync)

    # --- maintenance -------------------------------------------------------------

    def migrate(self) -> Path | None:
        """Rewrite the file as version 3 if reading needed migration.

        Atomic, with the original kept as a backup; returns the backup path, or
        None when the file was already current. A torn last line stays as it is.
        """
        if not self._persisted:
            return None
        self._check_writable()
        with store.locked(self._path, self._fsync) as handle:
            self._catch_up(handle)
            self._check_writable()  # another writer may have replaced the file
            return self._rewrite_if_needed(handle, keep_tail=True)

    def repair(self) -> list[Path]:
        """Seal a torn last line into its sidecar, then migrate. Returns files made."""
        if not self._persisted:
            return []
        self._check_writable()
        made: list[Path] = []
        with store.locked(self._path, self._fsync) as handle:
            self._catch_up(handle)
            self._check_writable()  # another writer may have replaced the file
            sidecar = self._seal(handle)
            if sidecar is not None:
                made.append(sidecar)
            backup = self._rewrite_if_needed(handle, keep_tail=False)
            if backup is not None:
                made.append(backup)
        return made

    # --- internals ---------------------------------------------------------------

    def _require(self, entry_id: str) -> None:
        if entry_id not in self._index:
            raise SessionTreeError(f"{self._path}: no entry with id {entry_id!r}", (entry_id,))

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
        self._index.add(entry)
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

    def _sibling_path(self, header: SessionHeader) -> Path:
        return self._path.parent / f"{file_timestamp(header.timestamp)}_{header.id}.jsonl"

    def _check_writable(self) -> None:
        if not self._loaded.writable:
            raise SessionWriteError(
                f"{self._path}: format version {self._loaded.version_read} is newer than "
                f"{CURRENT_VERSION}, the newest this jsonl-session knows; refusing to write "
                "(reading works best-effort). Upgrade jsonl-session to write to it."
            )

    def _append_struct(self, kind: type[msgspec.Struct], **fields: Any) -> str:
        return self._append(
            lambda new_id, parent, stamp: encode(
                kind(id=new_id, parent_id=parent, timestamp=stamp, **fields)
            )
        )

    def _append(self, build: _Build, *, flush: bool = False) -> str:
        entry_id = self._write_entry(build, flush=flush)
        assert entry_id is not None  # only a conditional write can write nothing
        return entry_id

    def _write_entry(
        self, build: _Build, *, flush: bool = False, unless_file_leaf_is: str | None = None
    ) -> str | None:
        """Append the line ``build(new_id, leaf, timestamp)`` returns; return its id.

        With ``unless_file_leaf_is``, write nothing (and return None) when that entry
        already is the file's active leaf, judged after taking in other writers' lines.
        """
        if not self._persisted:
            if unless_file_leaf_is is not None and self._file_leaf() == unless_file_leaf_is:
                return None
            entry_id = new_entry_id(self._index)
            raw = _built(build, entry_id, self._leaf)
            self._add_line(raw, offset=-1)
            if flush or any(e.role == "assistant" for e in self._index.order):
                self._write_new_file()
            return entry_id
        self._check_writable()
        with store.locked(self._path, self._fsync) as handle:
            self._catch_up(handle)
            self._check_writable()  # another writer may have replaced the file
            if unless_file_leaf_is is not None and self._file_leaf() == unless_file_leaf_is:
                return None
            entry_id = new_entry_id(self._index)
            raw = _built(build, entry_id, self._leaf)
            self._seal(handle)
            self._rewrite_if_needed(handle, keep_tail=False)
            offset = handle.append(raw + b"\n")
            self._add_line(raw, offset=offset)
            self._end_offset = offset + len(raw) + 1
        return entry_id

    def _seal(self, handle: store.LockedFile) -> Path | None:
        """End the file with a newline before writing: a torn fragment goes to a
        sidecar; a whole entry that lacks its newline gets one."""
        sealed = handle.seal_tail()
        if sealed.sidecar is not None:
            self.sealed_tails.append(sealed.sidecar)
        elif sealed.needs_newline:
            handle.append(b"\n")
        else:
            return None
        self._reload(handle)
        return sealed.sidecar

    def _add_line(self, raw: bytes, offset: int) -> None:
        entry = StoredEntry.from_envelope(decode_envelope(raw), self._next_line, offset, raw)
        self._next_line += 1
        self._index_entry(entry)
        self._leaf = entry.id

    def _write_new_file(self) -> None:
        content = file_bytes(dumps(self._header), (e.raw for e in self._index.order))
        store.write_new_file(self._path, content, self._fsync)
        self._persisted = True
        offset = len(content.split(b"\n", 1)[0]) + 1
        for line, entry in enumerate(self._index.order, start=2):
            entry.line, entry.offset = line, offset
            offset += len(entry.raw) + 1
        self._end_offset = len(content)
        self._next_line = len(self._index.order) + 2
        stat = os.stat(self._path)
        self._loaded.identity = (stat.st_dev, stat.st_ino)

    def _catch_up(self, handle: store.LockedFile) -> None:
        """Take in lines other writers appended since we read (under the lock)."""
        stat = os.fstat(handle.fd)
        size = stat.st_size
        same_file = self._loaded.identity in (None, (stat.st_dev, stat.st_ino))
        if (
            not same_file
            or size < self._end_offset
            or (self._end_offset and handle.byte_at(self._end_offset - 1) != b"\n")
        ):
            self._reload(handle)
            return
        if size == self._end_offset:
            return
        if self._loaded.needs_rewrite:
            # Lines added to an old-version file need the migration too: read it all.
            self._reload(handle)
            return
        new = handle.read_from(self._end_offset)
        complete = new[: consumed_length(new)]
        lines = split_lines(complete, base_offset=self._end_offset, first_number=self._next_line)
        for line in lines:
            read, problem = read_line(line)
            if problem is not None:
                self._problems.append(problem)
            if not isinstance(read, StoredEntry):
                self._loaded.bad_lines.append(read)
            elif read.id:
                self._index_entry(read)
            else:
                self._loaded.bad_lines.append(BadLine(read.line, read.offset, read.raw))
        self._next_line += complete.count(b"\n")
        self._end_offset += len(complete)

    def _reload(self, handle: store.LockedFile) -> None:
        loaded = parse_session_bytes(handle.read_from(0), self._path)
        stat = os.fstat(handle.fd)
        loaded.identity = (stat.st_dev, stat.st_ino)
        self._install(loaded, keep_leaf=True)

    def _rewrite_if_needed(self, handle: store.LockedFile, *, keep_tail: bool) -> Path | None:
        loaded = self._loaded
        if not loaded.needs_rewrite:
            return None
        lines = sorted(
            [(e.line, e.raw) for e in self._index.order]
            + [(b.line, b.raw) for b in loaded.bad_lines]
        )
        content = file_bytes(self._header, (raw for _, raw in lines))
        if keep_tail and loaded.torn_tail is not None:
            content += loaded.torn_tail.raw
        backup = handle.replace_contents(content, f"v{loaded.version_read}.bak")
        self.backups.append(backup)
        self._reload(handle)
        return backup


_Build = Callable[[str, str | None, str], bytes]


def _built(build: _Build, entry_id: str, parent: str | None) -> bytes:
    try:
        return build(entry_id, parent, now_timestamp())
    except (TypeError, ValueError) as exc:  # values JSON cannot hold
        raise EntryValidationError(f"entry cannot be written as JSON: {exc}") from None


def _message_dict(message: dict[str, Any] | msgspec.Struct) -> dict[str, Any]:
    data = msgspec.to_builtins(message) if isinstance(message, msgspec.Struct) else message
    if not isinstance(data, dict) or not isinstance(data.get("role"), str):
        raise EntryValidationError("a message must be an object with a string 'role'")
    role = data["role"]
    if role in _DERIVED_ROLES:
        raise EntryValidationError(
            f"role {role!r} is derived when building context; use Session.{_DERIVED_ROLES[role]}"
        )
    if role in KNOWN_ROLES:
        try:
            message_from_dict(data)
        except msgspec.ValidationError as exc:
            raise EntryValidationError(f"{role} message: {exc}") from None
    return data


def _new_file_path(session_dir: str | Path | None, cwd: str, header: SessionHeader) -> Path:
    folder = Path(session_dir) if session_dir is not None else store.session_dir_for(cwd)
    return folder / f"{file_timestamp(header.timestamp)}_{header.id}.jsonl"
