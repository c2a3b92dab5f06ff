"""Version migration: an ordered registry of small named steps over raw dicts.

Version 1 has no ids (one chain in file order; compaction points at its first kept
entry by line index), version 2 adds ids and parents, version 3 renames the
``hookMessage`` role to ``custom``. Migration runs in memory on every read; it never
touches the file. Rewriting the file is store.py's job, asked for by the session.

Ids given to version-1 entries are derived from the session id and the line number,
so every read of the same file gives the same ids (pi draws random ones, which is
harmless for pi because it rewrites the file at once; we do not write on read).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.jsonio import dumps, kept
from jsonl_session.format.model import CURRENT_VERSION
from jsonl_session.format.problems import Problem


@dataclass(slots=True)
class MigrationState:
    """What the steps work on: the header dict and the entries in file order.

    ``ordinals`` maps an entry's position among the file's non-blank lines
    (header = 0) to its index in ``entries``, for version-1 references by index.
    """

    header: dict[str, Any]
    entries: list[StoredEntry]
    ordinals: dict[int, int]
    problems: list[Problem] = field(default_factory=list)
    _edited: dict[int, dict[str, Any]] = field(default_factory=dict)

    def edit(self, index: int) -> dict[str, Any]:
        """The dict of entry ``index`` for changing; it is re-encoded afterwards."""
        data = self._edited.get(index)
        if data is None:
            data = self.entries[index].data()
            self._edited[index] = data
        return data

    def entry_at_ordinal(self, ordinal: int) -> int | None:
        return self.ordinals.get(ordinal)


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    applies_below: int  # runs when the file's version is lower than this
    run: Callable[[MigrationState], None]


def _derived_id(session_id: str, line: int, taken: set[str]) -> str:
    salt = 0
    while True:
        seed = f"{session_id}\0{line}\0{salt}".encode("utf-8", "surrogatepass")  # a lone half too
        digest = hashlib.sha256(seed).hexdigest()[:8]
        if digest not in taken:
            return digest
        salt += 1


def _v1_ids_and_parents(state: MigrationState) -> None:
    session_id = str(state.header.get("id", ""))
    taken = {e.id for e in state.entries if e.id}
    previous: str | None = None
    for index, entry in enumerate(state.entries):
        data = state.edit(index)
        if not entry.id:
            entry.id = _derived_id(session_id, entry.line, taken)
            taken.add(entry.id)
            data["id"] = entry.id
        if "parentId" not in data:
            data["parentId"] = previous
        parent = data["parentId"]
        entry.parent_id = parent if isinstance(parent, str) else None
        previous = entry.id


def _v1_index_references(state: MigrationState) -> None:
    for index, entry in enumerate(state.entries):
        if entry.type == "compaction":
            key_from, key_to = "firstKeptEntryIndex", "firstKeptEntryId"
        elif entry.type == "label":
            key_from = key_to = "targetId"
        else:
            continue
        data = state.edit(index)
        position = data.get(key_from)
        if not isinstance(position, int) or isinstance(position, bool):
            continue
        del data[key_from]
        target = state.entry_at_ordinal(position)
        if target is None:
            state.problems.append(
                Problem(
                    "missing-target",
                    f"{key_from} {position} does not point at an entry line",
                    entry.line,
                    entry.id,
                )
            )
            continue
        data[key_to] = state.entries[target].id


def _header_branched_from(state: MigrationState) -> None:
    header = state.header
    if "branchedFrom" not in header:
        return
    value = header["branchedFrom"]
    renamed = {("parentSession" if k == "branchedFrom" else k): v for k, v in header.items()}
    if "parentSession" in header:  # both present: the newer name wins
        renamed["parentSession"] = header["parentSession"]
    else:
        renamed["parentSession"] = value
    header.clear()
    header.update(renamed)


def _v2_hook_message_role(state: MigrationState) -> None:
    for index, entry in enumerate(state.entries):
        if entry.type == "message" and entry.role == "hookMessage":
            state.edit(index)["message"]["role"] = "custom"
            entry.role = "custom"


STEPS: tuple[Step, ...] = (
    Step("v1: give entries ids and a parent chain in file order", 2, _v1_ids_and_parents),
    Step("v1: turn line indexes into entry ids", 2, _v1_index_references),
    Step("header: read branchedFrom as parentSession", CURRENT_VERSION, _header_branched_from),
    Step("v2: role hookMessage becomes custom", 3, _v2_hook_message_role),
)


def migrate(state: MigrationState, version: int) -> list[str]:
    """Run every step the version needs, in order; return the names of the steps run.

    Entries the steps changed get new ``raw`` text and ``migrated=True``; all
    others keep their exact bytes.
    """
    applied: list[str] = []
    for step in STEPS:
        if version < step.applies_below:
            step.run(state)
            applied.append(step.name)
    if version < CURRENT_VERSION:
        _set_header_version(state.header)
    for index, data in state._edited.items():
        entry = state.entries[index]
        new_raw = dumps(data)
        if new_raw != entry.raw:
            entry.set_raw(kept(new_raw))
            entry.migrated = True
    return applied


def _set_header_version(header: dict[str, Any]) -> None:
    items = [(k, v) for k, v in header.items() if k != "version"]
    header.clear()
    for key, value in items:
        header[key] = value
        if key == "type":
            header["version"] = CURRENT_VERSION
    if "version" not in header:
        header["version"] = CURRENT_VERSION
