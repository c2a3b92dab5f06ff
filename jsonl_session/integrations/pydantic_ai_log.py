"""How one session file holds one pydantic-ai conversation: its log, head and record.

Owns the layout of the file (the pi messages themselves are pydantic_ai_messages.py's;
finding files, creating them and forking are pydantic_ai_store.py's):

- a `ConversationEntry` is a run of pi entries: its message's pi messages, the last of
  which carries the entry's id and the message's serialization in ``pydanticAi``
  (``{"entry", "message"}``; the ones before it say ``{"continues": true}``). A message
  pi cannot show at all is one ``custom`` entry of type ``jsonl-session/pydantic-ai-message``
  holding the same. The entry's id is pydantic-ai's (minted before the store sees it);
  the pi entry carrying it is its *carrier*, and the next run hangs from it;
- an entry's ``parent_id`` is the nearest conversation entry above its carrier in the
  ``parentId`` chain, so the chain mirrors the log (quiet entries between, like the
  record or a label, are passed over);
- a pi message without our payload (pi or another tool continued the session) is a
  conversation entry of its own whose id is its pi entry id, read back by `from_pi`;
- the head is the last conversation entry on the session leaf's path; a save or a
  branch that continues elsewhere moves the leaf by appending its record entry as a
  child of the new head (`Session.branch(..., marker=False)` first), which pi takes
  as its leaf too, being the file's last entry;
- each save first appends the record entry (``custom``, ``jsonl-session/pydantic-ai-record``:
  usage, deferred tool requests, scope, fork origin, branches left, time, revision
  token, and how many entries the save writes after it), with ``expect_revision`` set
  to the entry count the caller checked: that append is the save's claim on the file,
  so of two writers that read the same file one gets in, the other a conflict. The
  revision read back is the token while the file holds exactly that save after it,
  else the token with the session's `revision` (its entry count): anything written
  since, by pi or a failed save, makes a loaded conversation stale.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jsonl_session.extras import needs_extra

with needs_extra("pydantic-ai", "the pydantic-ai session store"):
    import pydantic
    from pydantic_ai.conversation_store import (
        ConversationConflict,
        ConversationEntry,
        ConversationRecord,
    )
    from pydantic_ai.messages import ModelRequest
    from pydantic_ai.tools import DeferredToolRequests
    from pydantic_ai.usage import RunUsage

from jsonl_session.errors import SessionWriteError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.integrations.pydantic_ai_messages import (
    INSTRUCTIONS_SECTION,
    PAYLOAD_KEY,
    dump_message,
    from_pi,
    load_message,
    to_pi,
)
from jsonl_session.session import Session

RECORD_TYPE = "jsonl-session/pydantic-ai-record"
MESSAGE_TYPE = "jsonl-session/pydantic-ai-message"

_SHOWN_ROLES = ("user", "assistant", "toolResult", "system")  # pi roles read back as messages
_QUIET_TYPES = ("custom", "label", "session_info")  # entries that change no model context
_USAGE: pydantic.TypeAdapter[RunUsage] = pydantic.TypeAdapter(RunUsage)
_DEFERRED: pydantic.TypeAdapter[DeferredToolRequests] = pydantic.TypeAdapter(DeferredToolRequests)


@dataclass(frozen=True)
class Node:
    """A conversation entry found in a file: its id, its carrier, and its serialized
    message (None: a pi message this store did not write)."""

    id: str
    entry: StoredEntry
    stored: Any


# --- reading ---------------------------------------------------------------------------


def node(entry: StoredEntry) -> Node | None:
    """The conversation entry ``entry`` carries, if it carries one."""
    payload = _payload(entry)
    if payload is not None:
        entry_id = payload.get("entry")
        # the pi messages before the last of a run only continue it
        return Node(entry_id, entry, payload.get("message")) if isinstance(entry_id, str) else None
    if entry.type == "message" and entry.role in _SHOWN_ROLES:
        return Node(entry.id, entry, None)
    return None


def nodes(path: Sequence[StoredEntry]) -> list[Node]:
    return [found for found in map(node, path) if found is not None]


def carrier(session: Session, entry_id: str) -> str | None:
    """The id of the pi entry carrying the conversation entry ``entry_id``, if any."""
    entry = session.get(entry_id)
    if entry is not None and (found := node(entry)) is not None and found.id == entry_id:
        return entry.id
    needle = entry_id.encode()  # a look at the bytes first: parsing every line is slow
    for entry in reversed(session.entries):
        if needle in entry.raw and (found := node(entry)) is not None and found.id == entry_id:
            return entry.id
    return None


def history(session: Session, carrier_id: str, limit: int | None) -> list[ConversationEntry]:
    """The log up to the entry ``carrier_id`` carries, or its last ``limit`` entries."""
    found = nodes(session.branch_path(carrier_id))
    start = 0 if limit is None else max(len(found) - limit, 0)
    entries: list[ConversationEntry] = []
    for index in range(start, len(found)):
        here = found[index]
        if here.stored is not None:
            message = load_message(here.stored)
        else:
            read = from_pi(here.entry.data()["message"])
            assert read is not None  # node() only takes roles from_pi reads
            message = read
        parent = found[index - 1].id if index else None
        entries.append(ConversationEntry(id=here.id, parent_id=parent, message=message))
    return entries


def has_record(session: Session) -> bool:
    """Whether this store has saved the conversation (a plain pi session has not)."""
    return _last_record(session) is not None


def record_of(session: Session) -> ConversationRecord:
    """The conversation's record as the file holds it now; a session this store never
    saved gets the default one, with a revision that changes as the file grows."""
    found = nodes(session.branch_path())
    head = found[-1].id if found else None
    latest = _last_record(session)
    if latest is None:
        modified = datetime.fromtimestamp(os.stat(session.path).st_mtime, UTC)
        revision = f"pi@{session.revision}"
        return ConversationRecord(
            conversation_id=session.id, head_id=head, revision=revision, updated_at=modified
        )
    index, data = latest
    after = session.entries[index + 1 :]
    clean = len(after) == data.get("follows") and all(_payload(e) is not None for e in after)
    token = str(data.get("revision"))
    deferred = data.get("deferredToolRequests")
    return ConversationRecord(
        conversation_id=session.id,
        head_id=head,
        usage=_USAGE.validate_python(data.get("usage") or {}),
        deferred_tool_requests=None if deferred is None else _DEFERRED.validate_python(deferred),
        scope=data.get("scope"),
        forked_from=data.get("forkedFrom"),
        forked_at=data.get("forkedAt"),
        branches=list(data.get("branches") or []),
        revision=token if clean else f"{token}@{session.revision}",
        updated_at=datetime.fromisoformat(str(data.get("updatedAt"))),
    )


# --- writing ---------------------------------------------------------------------------


def append_save(
    session: Session,
    record: ConversationRecord,
    new_entries: Sequence[ConversationEntry],
    *,
    checked: int,
) -> None:
    """Claim the file with the record entry, then write the new entries after it.

    ``checked``: the session's revision when the caller compared the record's revision.
    Raises ConversationConflict when another program wrote since, or the entry the
    new ones continue from is not in the file."""
    attach = new_entries[0].parent_id if new_entries else record.head_id
    target = carrier(session, attach) if attach is not None else None
    if attach is not None and target is None:
        raise ConversationConflict(record.conversation_id)  # its history was rewritten
    # Everything is mapped before anything is written: a message that cannot be
    # serialized fails the save with the file untouched.
    system = session.system_message(target) if target is not None else None
    instructions = ((system or {}).get("sections") or {}).get(INSTRUCTIONS_SECTION)
    runs: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
    for entry in new_entries:
        payload = {"entry": entry.id, "message": dump_message(entry.message)}
        runs.append((to_pi(entry.message, instructions), payload))
        if isinstance(entry.message, ModelRequest):
            instructions = entry.message.instructions
    _move_leaf(session, target)
    data = _record_data(record, follows=sum(max(len(shown), 1) for shown, _ in runs))
    try:
        session.append_custom(RECORD_TYPE, data, expect_revision=checked)
    except SessionWriteError:
        if session.revision != checked:  # another program wrote since the check
            raise ConversationConflict(record.conversation_id) from None
        raise
    for shown, payload in runs:
        if not shown:
            session.append_custom(MESSAGE_TYPE, payload)
        for message in shown[:-1]:
            session.append_message({**message, PAYLOAD_KEY: {"continues": True}})
        if shown:
            session.append_message({**shown[-1], PAYLOAD_KEY: payload})


def _move_leaf(session: Session, target: str | None) -> None:
    """Make ``target`` where the next entry attaches, in memory: the record entry
    appended there next is the file's last entry, so it moves pi's leaf (no marker,
    so the claim is the save's first write). Left alone when the leaf already hangs
    from ``target`` by quiet entries only (the last save's record, say)."""
    here = session.leaf_id
    while here is not None and here != target:
        entry = session.get(here)
        if entry is None or entry.type not in _QUIET_TYPES:
            break
        here = entry.parent_id
    if here == target:
        return
    if target is None:
        session.reset_leaf()  # the record entry starts a new root
    else:
        session.branch(target, marker=False)


# --- the entries this store writes -----------------------------------------------------


def _payload(entry: StoredEntry) -> dict[str, Any] | None:
    """What this store wrote into an entry for a message, or None (not one of ours)."""
    if entry.type == "custom":
        data = entry.data().get("data") if entry.custom_type == MESSAGE_TYPE else None
        return data if isinstance(data, dict) else None
    if entry.type != "message" or PAYLOAD_KEY.encode() not in entry.raw:
        return None
    message = entry.data().get("message")
    payload = message.get(PAYLOAD_KEY) if isinstance(message, dict) else None
    return payload if isinstance(payload, dict) else None


def _last_record(session: Session) -> tuple[int, dict[str, Any]] | None:
    """The position and data of the conversation's latest record entry (a fork's file
    also holds copies of its source's, which name the source)."""
    entries = session.entries
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if entry.type == "custom" and entry.custom_type == RECORD_TYPE:
            data = entry.data().get("data")
            if isinstance(data, dict) and data.get("conversationId") == session.id:
                return index, data
    return None


def _record_data(record: ConversationRecord, *, follows: int) -> dict[str, Any]:
    deferred = record.deferred_tool_requests
    return {
        "conversationId": record.conversation_id,
        "revision": record.revision,
        "follows": follows,
        "usage": _USAGE.dump_python(record.usage, mode="json"),
        "deferredToolRequests": None
        if deferred is None
        else _DEFERRED.dump_python(deferred, mode="json"),
        "scope": record.scope,
        "forkedFrom": record.forked_from,
        "forkedAt": record.forked_at,
        "branches": list(record.branches),
        "updatedAt": record.updated_at.isoformat(),
        "formatVersion": record.format_version,
    }
