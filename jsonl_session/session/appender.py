"""Appending to a session: the locked append protocol seen from the session's side.

Owns deciding where a new entry attaches (the leaf), giving it a fresh id once the
file is locked and up to date, refusing when an entry it refers to has gone or another
program wrote since the caller planned (``expect_revision``), deferred persistence (a
new session's file is written whole at its first user or assistant message), and folding what
was written back into the state. The byte-level protocol (locks, catching up,
sealing, rewrites) is storage/writer.py's; what the line holds is format/building.py's.
A session that redacts what it writes (``redact=True``) passes every line it builds
through its `Redactor` (redaction/) before the line is written or folded in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from jsonl_session.errors import SessionTreeError, SessionWriteError, UnsyncedWrite
from jsonl_session.format.building import Build, Complete, built, struct_line
from jsonl_session.format.entry import StoredEntry, decode_envelope
from jsonl_session.format.ids import new_entry_id
from jsonl_session.format.jsonio import dumps, kept
from jsonl_session.session.state import SessionState
from jsonl_session.storage.writer import SessionFile

if TYPE_CHECKING:
    from jsonl_session.redaction import Redactor


class Appender:
    """Writes entries of one session to its file and into its state."""

    def __init__(
        self, state: SessionState, file: SessionFile, redactor: Redactor | None = None
    ) -> None:
        self.state = state
        self.file = file
        self.redactor = redactor

    def append_struct(
        self,
        entry_type: type[msgspec.Struct],
        /,
        *,
        attach_to: tuple[str | None] | None = None,
        requires: tuple[str, ...] = (),
        expect_revision: int | None = None,
        complete: Complete | None = None,
        **fields: Any,
    ) -> str:
        """Append an entry of a model type (see building.struct_line)."""
        build = struct_line(entry_type, attach_to, fields, complete)
        return self.append(build, requires=requires, expect_revision=expect_revision)

    def append(
        self,
        build: Build,
        *,
        flush: bool = False,
        requires: tuple[str, ...] = (),
        expect_revision: int | None = None,
    ) -> str:
        entry_id = self.write_entry(
            build, flush=flush, requires=requires, expect_revision=expect_revision
        )
        assert entry_id is not None  # only a conditional write can write nothing
        return entry_id

    def write_entry(
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
        state = self.state
        state.index.expect_writes()  # each append then costs the same at any size
        for entry_id in requires:
            state.require(entry_id)
        if self.redactor is not None:
            build = _redacting(build, self.redactor)
        if not self.file.persisted:
            if unless_file_leaf_is is not None and state.file_leaf() == unless_file_leaf_is:
                return None
            entry_id = new_entry_id(state.index)
            raw = built(build, entry_id, state.leaf)
            if flush:
                # The file is written whole, then the entry joins: a failed write
                # leaves the session as it was and no file behind.
                self.file.create(state.header, [*(e.raw for e in state.index.order), raw])
            self._add_line(raw, offset=-1)
            self.renumber()
            return entry_id
        leaf = state.leaf
        with self.file.writing() as handle:
            self.file.prepare(handle)
            for needed in (*requires, *(() if leaf is None else (leaf,))):
                if needed not in state.index:
                    raise SessionTreeError(
                        f"{state.path}: entry {needed} is no longer in the file (did another "
                        "program rewrite it?); nothing written. Open the file again.",
                        (needed,),
                    )
            if unless_file_leaf_is is not None and state.file_leaf() == unless_file_leaf_is:
                return None
            revision = state.index.count
            if expect_revision is not None and revision != expect_revision:
                raise SessionWriteError(
                    f"{state.path}: another program wrote to the file while this entry was "
                    f"being prepared ({revision} entries now, {expect_revision} before); "
                    "nothing written. Run it again."
                )
            entry_id = new_entry_id(state.index)
            raw = built(build, entry_id, state.leaf)
            try:
                line, offset = self.file.append(handle, raw)
            except UnsyncedWrite as exc:
                self._add_line(raw, exc.offset, exc.line)  # it is in the file
                raise
        self._add_line(raw, offset, line)
        return entry_id

    def flush(self) -> None:
        """Write a new session's file now instead of at its first user message."""
        if not self.file.persisted:
            self.file.create(self.state.header, [e.raw for e in self.state.index.order])
            self.renumber()

    def _add_line(self, raw: bytes, offset: int, line: int = 0) -> None:
        raw = kept(raw)  # (held for as long as the session is)
        entry = StoredEntry.from_envelope(decode_envelope(raw), line, offset, raw)
        self.state.add_entry(entry)
        self.state.leaf = entry.id

    def renumber(self) -> None:
        """Line numbers and offsets of entries not yet on disk, or just written."""
        offset = len(dumps(self.state.header)) + 1 if self.file.persisted else -1
        for line, entry in enumerate(self.state.index.order, start=2):
            entry.line = line
            if offset >= 0:
                entry.offset = offset
                offset += len(entry.raw) + 1


def _redacting(build: Build, redactor: Redactor) -> Build:
    """``build`` with its line redacted: the secret never reaches the file or the
    state (ids, parents and timestamps are structure and stay as built)."""

    def redacted(entry_id: str, parent: str | None, stamp: str) -> bytes:
        return redactor.line(build(entry_id, parent, stamp))

    return redacted


def redactor_option(
    redact: bool | Redactor | None, default: Redactor | None = None
) -> Redactor | None:
    """What a ``redact=`` option asks for. The patterns are loaded only for a session
    that redacts: reading and plain appends never pay for them."""
    if redact is None:
        return default
    if redact is False:
        return None
    from jsonl_session.redaction import redactor_for

    return redactor_for(redact)
