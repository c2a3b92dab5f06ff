"""Session: the façade users hold to read, append to, branch and fork a session.

Owns the public methods that open, move the leaf, fork and rewrite, and what each one
writes. The pieces behind it: storage's loader reads, state.py folds the entries
(tree index, labels, name, leaf), reading.py has the reading methods and appends.py
the typed append_* methods `Session` inherits, appender.py runs appends (where an
entry attaches, deferred persistence, the checks made under the lock), context.py
builds contexts, storage's fork writes forks. Nothing here writes on a read. With
``redact=True`` (or a `Redactor`) a session redacts what it writes: every line it
appends, and the copy a fork makes (redaction/; never on reads). Compaction
(compaction/) and provider calls (providers/) live elsewhere and use this class
through its public methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import UNSET

from jsonl_session.errors import (
    SessionTreeError,
)
from jsonl_session.format.building import struct_line
from jsonl_session.format.ids import file_timestamp, new_session_id, now_timestamp
from jsonl_session.format.model import (
    CURRENT_VERSION,
    LEAF_MARKER_TYPE,
    CustomEntry,
    SessionHeader,
    encode,
)
from jsonl_session.session.appender import Appender, redactor_option
from jsonl_session.session.appends import EntryAppends
from jsonl_session.session.reading import SessionReading
from jsonl_session.session.state import SessionState
from jsonl_session.storage import paths, store
from jsonl_session.storage.cache import CacheOption
from jsonl_session.storage.fork import write_copy, write_fork
from jsonl_session.storage.loader import LoadedFile, load_entries, parse_session_bytes
from jsonl_session.storage.writer import SessionFile

if TYPE_CHECKING:
    from jsonl_session.redaction import Redactor


class Session(SessionReading, EntryAppends):
    """One session file: its header, entries, active leaf, and the ways to add to it.

    Create with `Session.create` (nothing is written until the first assistant
    message or `flush`) or `Session.open` (reads and migrates in memory only).
    """

    def __init__(
        self, path: Path, loaded: LoadedFile, *, persisted: bool, fsync: store.FsyncPolicy
    ) -> None:
        self._state = state = SessionState(path, loaded)
        self._file = SessionFile(
            path,
            loaded,
            persisted=persisted,
            fsync=fsync,
            on_entry=state.add_entry,
            on_problem=state.add_problem,
            on_reload=lambda reloaded: state.install(reloaded, keep_leaf=True),
        )
        self._appender = Appender(state, self._file)
        self._cache: CacheOption = None
        self._opened_with = -1  # entries when opened (`open`): stats may use its record

    # --- opening -------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        fsync: store.FsyncPolicy = "always",
        cache: CacheOption = None,
        redact: bool | Redactor = False,
    ) -> Session:
        """Read a session file. Migrates in memory; never writes to it. ``cache``: where
        to keep the index of a large file (see storage/cache.py; False: no cache).
        ``redact``: secrets in what it appends are replaced (see `create`)."""
        file_path = Path(path).absolute()
        loaded = load_entries(file_path, cache=cache)
        session = cls(file_path, loaded, persisted=True, fsync=fsync)
        session._cache = cache  # a fork opens its file the same way
        session._opened_with = session._state.index.count  # (builds no entry)
        session._appender.redactor = redactor_option(redact)
        return session

    @classmethod
    def create(
        cls,
        cwd: str | Path = ".",
        session_dir: str | Path | None = None,
        *,
        path: str | Path | None = None,
        parent_session: str | None = None,
        fsync: store.FsyncPolicy = "always",
        redact: bool | Redactor = False,
    ) -> Session:
        """A new session for ``cwd``; written at its first user or assistant message (as
        pi 1.5 does) or `flush`.

        The file goes to ``path`` if given, else ``session_dir``, else the folder for
        ``cwd`` under the session root (see paths.session_root). ``redact``: secrets in
        every entry appended are replaced before its line is built (never on disk).
        """
        header = _new_header(str(Path(cwd).absolute()), parent_session)
        file_path = Path(path) if path is not None else _new_file_path(session_dir, header)
        loaded = parse_session_bytes(encode(header) + b"\n", file_path)
        loaded.end_offset = 0  # nothing on disk yet
        session = cls(file_path.absolute(), loaded, persisted=False, fsync=fsync)
        session._appender.redactor = redactor_option(redact)
        return session

    # --- moving the leaf -------------------------------------------------------

    def branch(self, entry_id: str, *, marker: bool = True) -> str | None:
        """Make ``entry_id`` the active leaf, persistently.

        Appends a leaf marker (a ``custom`` entry of type jsonl-session/leaf, child
        of ``entry_id``) so the move survives a restart and pi sees the same branch.
        Returns the marker's id, or None when ``entry_id`` already is the file's leaf
        (judged after taking in what other writers appended). With ``marker=False``
        the move is in memory only, for a caller about to append there anyway (the
        new entry then records the branch, as in pi).
        """
        if not marker:
            self._state.require(entry_id)
            self._state.leaf = entry_id
            return None
        marker_id = self._appender.write_entry(
            struct_line(CustomEntry, (entry_id,), {"custom_type": LEAF_MARKER_TYPE}),
            requires=(entry_id,),
            unless_file_leaf_is=entry_id,
        )
        self._state.leaf = entry_id
        return marker_id

    def reset_leaf(self) -> None:
        """The next entry starts a new root (in memory until that entry is appended)."""
        self._state.leaf = None

    def flush(self) -> None:
        """Write a new session to disk now instead of at its first user message."""
        self._appender.flush()

    # --- forking ---------------------------------------------------------------

    def fork(
        self,
        entry_id: str | None = None,
        path: str | Path | None = None,
        *,
        cache: CacheOption = None,
        redact: bool | Redactor | None = None,
    ) -> Session:
        """A new session file holding the path root → ``entry_id`` (default: the leaf).

        Labels on the path come along; the header's parentSession is this file. The new
        file is ``path``, else beside this one (another agent's transcript: in the
        session folder for its cwd, where pi looks). It is opened with ``cache`` (as in
        `Session.open`; default: this session's). ``redact`` (default: as this session
        does): the copy's entries are written redacted, and so is what the fork appends.
        """
        self._file.check_copyable()
        target = entry_id if entry_id is not None else self._state.leaf
        if target is None:
            raise SessionTreeError(f"{self.path}: nothing to fork: the session has no entries")
        parent = str(self.path) if self._file.persisted else None
        header = _new_header(self.cwd, parent)
        folder = self.path.parent if self.dialect == "pi" else None
        new_path = Path(path) if path is not None else _new_file_path(folder, header)
        redactor = redactor_option(redact, self._appender.redactor)
        path_to, lines = self._state.path_to(target), redactor.line if redactor else None
        write_fork(new_path, header, path_to, self._state.labels, self._file.fsync, lines)
        reopen = self._cache if cache is None else cache
        forked = Session.open(new_path, fsync=self._file.fsync, cache=reopen)
        forked._appender.redactor = redactor
        return forked

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
        redact: bool | Redactor = False,
    ) -> Session:
        """Copy a whole session (migrated first) into a new file for another cwd
        (``redact``: the copy written redacted, and what it appends)."""
        source_path = Path(source).absolute()
        loaded = load_entries(source_path, cache=cache)
        header = _new_header(str(Path(target_cwd).absolute()), str(source_path))
        new_path = Path(path) if path is not None else _new_file_path(session_dir, header)
        redactor = redactor_option(redact)
        write_copy(new_path, header, loaded, fsync, redactor.line if redactor else None)
        return cls.open(new_path, fsync=fsync, cache=cache, redact=redactor or False)

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
        """Cut a torn last line off into its sidecar, split lines where another writer's
        entry follows a torn fragment (the fragment to a sidecar, the original kept as a
        backup), then migrate; return the files made. Meant for when no agent is
        writing the file."""
        if not self._file.persisted:
            return []
        made: list[Path] = []
        with self._file.writing() as handle:
            sidecar = self._file.seal(handle, at_once=True)
            made.extend([sidecar] if sidecar is not None else [])
            made.extend(self._file.split_fused(handle))
            backup = self._file.rewrite_if_needed(handle, keep_tail=False)
            made.extend([backup] if backup is not None else [])
        return made


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
