"""A pydantic-ai `ConversationStore` whose conversations are pi session files.

Owns where conversations live and the store's primitives: one conversation is one
session file in the store's folder (default: the library's folder for the cwd),
named and identified by its session id, which is the ``conversation_id`` (so an id
must follow pi's rule; others are refused). A new conversation's file is written at
its first save, whatever it holds (an empty fork too), and given up (the save a
`ConversationConflict`) when another file for the id appeared meanwhile, so two
processes starting one conversation never both succeed; a fork is a new file holding
the path to the fork point (storage's `write_fork`, as `Session.fork` writes one),
its header naming the source file; `delete` removes the file.

How the file holds the log, the head and the record is pydantic_ai_log.py's; the pi
shapes of the messages are pydantic_ai_messages.py's. The header is built here
(format/model) because `Session.create` and `Session.fork` mint their own session
ids. File I/O runs on the caller's thread: appends are single small writes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from msgspec import UNSET

from jsonl_session.extras import needs_extra

with needs_extra("pydantic-ai", "the pydantic-ai session store"):
    from pydantic_ai.conversation_store import (
        ConversationConflict,
        ConversationEntry,
        ConversationRecord,
        ConversationStore,
    )
    from pydantic_ai.exceptions import UserError

from jsonl_session.errors import JsonlSessionError, SessionWriteError
from jsonl_session.format.ids import file_timestamp, now_timestamp
from jsonl_session.format.model import CURRENT_VERSION, SessionHeader, encode
from jsonl_session.integrations.pydantic_ai_log import (
    append_save,
    carrier,
    has_record,
    history,
    record_of,
)
from jsonl_session.session import Session
from jsonl_session.storage.fork import write_fork
from jsonl_session.storage.paths import session_dir_for
from jsonl_session.storage.store import FsyncPolicy, write_new_file

SESSION_ID = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")  # pi's rule


class SessionFileConversationStore(ConversationStore):
    """Conversations kept as pi session files, one file per conversation.

    ``folder``: where the files go (default: `session_dir_for` the ``cwd``); ``cwd``:
    the working directory new sessions name; ``fsync`` as for `Session.open`. A fork
    holds its own copy of the entries it shares, so deleting its source keeps it whole.
    """

    def __init__(
        self,
        folder: str | Path | None = None,
        *,
        cwd: str | Path = ".",
        fsync: FsyncPolicy = "always",
    ) -> None:
        self.cwd = str(Path(cwd).absolute())
        self.folder = Path(folder) if folder is not None else session_dir_for(self.cwd)
        self.fsync: FsyncPolicy = fsync
        # entry id -> a file holding it: the primitives that read entries get no
        # conversation id, and the ids reached are those of records just read
        self._where: dict[str, Path] = {}

    def path_for(self, conversation_id: str) -> Path | None:
        """The session file of a conversation, or None when the folder has none (of two
        files that two stores made at once, the earlier: the other is going)."""
        found = self._files_of(conversation_id)
        return found[0] if found else None

    def _files_of(self, conversation_id: str) -> list[Path]:
        """The files named for ``conversation_id``, oldest first."""
        if not SESSION_ID.match(conversation_id):
            raise UserError(
                f"conversation id {conversation_id!r} cannot be a pi session id: use letters, "
                "digits, '.', '_' and '-', starting and ending with a letter or digit"
            )
        name = f"{conversation_id}.jsonl"
        # <timestamp>_<id>.jsonl: the timestamp holds no "_", an id may ("a_b" is not "b")
        return sorted(p for p in self.folder.glob(f"*_{name}") if p.name.split("_", 1)[1] == name)

    # --- the storage primitives --------------------------------------------------

    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        path = self.path_for(conversation_id)
        session = self._open(path) if path is not None else None
        return self._record(session) if session is not None else None

    async def read_records(
        self, *, scope: str | None = None, limit: int | None = None
    ) -> Sequence[ConversationRecord]:
        records: list[ConversationRecord] = []
        for path in sorted(self.folder.glob("*.jsonl")):
            try:
                session = self._open(path)
            except JsonlSessionError:
                continue  # a damaged file is no conversation to list (the CLI reports it)
            # only what this store saved: a plain pi session loads, but is not listed
            if session is None or not has_record(session):
                continue
            record = self._record(session)
            if scope is None or record.scope == scope:
                records.append(record)
        records.sort(key=lambda record: record.updated_at, reverse=True)
        return records[:limit]

    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        conversation_id = record.conversation_id
        path = self.path_for(conversation_id)
        session = self._open(path) if path is not None else None
        current = self._record(session) if session is not None else None
        if (current.revision if current is not None else None) != expected_revision:
            raise ConversationConflict(conversation_id)
        if session is not None:
            checked = session.revision
        elif path is not None:
            # a file found holding nothing is claimed as such: the store that created it
            # a moment ago may be writing its first save to it right now
            session, checked = self._new_session(record, path)
        else:
            # Checked against what this store wrote, not what it finds on opening: a store
            # that took the file over as holding nothing may have saved to it since.
            session, checked = self._new_session(record, None)
        append_save(session, record, new_entries, checked=checked)
        for entry in new_entries:
            self._where[entry.id] = session.path

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        path = self.path_for(conversation_id)
        session = self._open(path) if path is not None else None
        if path is None or session is None or record_of(session).revision != expected_revision:
            raise ConversationConflict(conversation_id)
        path.unlink()
        self._where = {key: where for key, where in self._where.items() if where != path}

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        return (await self.read_history(entry_id, limit=1))[0]

    async def read_history(
        self, head_id: str | None, *, limit: int | None = None
    ) -> list[ConversationEntry]:
        """One pass over the file holding ``head_id`` (the base class reads entry by entry)."""
        if head_id is None:
            return []
        hinted = self._where.get(head_id)
        for path in [*([hinted] if hinted else []), *sorted(self.folder.glob("*.jsonl"))]:
            # a look at the bytes first: most files of a folder are not the one
            if not path.exists() or head_id.encode() not in path.read_bytes():
                continue
            try:
                session = self._open(path)
            except JsonlSessionError:
                continue
            found = carrier(session, head_id) if session is not None else None
            if session is not None and found is not None:
                self._where[head_id] = path
                return history(session, found, limit)
        raise KeyError(head_id)

    # --- files -------------------------------------------------------------------------

    def _open(self, path: Path) -> Session | None:
        """The session at ``path``; None when it is gone or holds nothing yet (a save
        that died after creating the file: the next save for the id takes it over)."""
        try:
            session = Session.open(path, fsync=self.fsync)
        except FileNotFoundError:
            return None
        return session if session.revision else None

    def _record(self, session: Session) -> ConversationRecord:
        record = record_of(session)
        for entry_id in [record.head_id, *record.branches]:
            if entry_id is not None:
                self._where[entry_id] = session.path
        return record

    def _new_session(self, record: ConversationRecord, path: Path | None) -> tuple[Session, int]:
        """The file of a new conversation: a copy of the path to a fork point, or just
        its header; and how many entries it held as written (the revision a save to it
        expects). ``path``: a file a save that died left holding nothing."""
        if path is not None:
            return Session.open(path, fsync=self.fsync), 0
        stamp = now_timestamp()
        new_path = self.folder / f"{file_timestamp(stamp)}_{record.conversation_id}.jsonl"
        source = self._source_of(record)
        header = SessionHeader(
            version=CURRENT_VERSION,
            id=record.conversation_id,
            timestamp=stamp,
            # a fork names its source and keeps its cwd, as Session.fork does
            cwd=source.cwd if source is not None else self.cwd,
            parent_session=str(source.path) if source is not None else UNSET,
        )
        try:
            if source is None:
                write_new_file(new_path, encode(header) + b"\n", self.fsync)
                written = 0
            else:
                point = carrier(source, str(record.head_id))
                assert point is not None  # _source_of found it
                labels = {target: (text, stamp) for target, text in source.labels.items()}
                branch = source.branch_path(point)
                written = write_fork(new_path, header, branch, labels, self.fsync)
        except SessionWriteError:
            raise ConversationConflict(record.conversation_id) from None  # created meanwhile
        if self._files_of(record.conversation_id) != [new_path]:
            # Another store created the conversation meanwhile, under another timestamp.
            # A store that finds only its own file has won, so one that finds two never
            # goes on: of two at once one gets in, or neither, never both.
            new_path.unlink()
            raise ConversationConflict(record.conversation_id)
        return Session.open(new_path, fsync=self.fsync), written

    def _source_of(self, record: ConversationRecord) -> Session | None:
        """For a fork that keeps entries, the session file holding its fork point."""
        if record.forked_from is None or record.head_id is None:
            return None
        for path in (self.path_for(record.forked_from), self._where.get(record.head_id)):
            session = self._open(path) if path is not None else None
            if session is not None and carrier(session, record.head_id) is not None:
                return session
        raise ConversationConflict(record.conversation_id)  # the fork point is gone
