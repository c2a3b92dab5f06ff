"""Lines of new entries: checking what a caller hands to an append, and building
the line in pi's key order once the id, parent and time are known.

A builder is a function (new id, parent id, timestamp) -> bytes, so the writer can
call it under the lock, after it has picked up other writers' ids. Checking
happens before, so bad input fails before anything is locked or written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from jsonl_session.errors import EntryValidationError
from jsonl_session.format.ids import now_ms, now_timestamp
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.model import KNOWN_ROLES, encode, message_from_dict

Build = Callable[[str, str | None, str], bytes]
"""Builds an entry's line from (new id, parent id, timestamp)."""

_DERIVED_ROLES = {
    "compactionSummary": "append_compaction",
    "branchSummary": "append_branch_summary",
}


def message_line(message: dict[str, Any] | msgspec.Struct) -> tuple[Build, str]:
    """A builder for a `message` entry holding ``message`` (checked), and its role."""
    data = msgspec.to_builtins(message) if isinstance(message, msgspec.Struct) else message
    if not isinstance(data, dict) and hasattr(data, "model_dump"):
        raise EntryValidationError(
            f"a {type(data).__name__} is an SDK object, not a message in pi's shape: "
            "append a model's reply with Session.append_response (or convert it with "
            "from_anthropic / from_openai_chat / from_openai_responses)"
        )
    if not isinstance(data, dict) or not isinstance(data.get("role"), str):
        raise EntryValidationError("a message must be an object with a string 'role'")
    role = data["role"]
    if role in KNOWN_ROLES and "timestamp" not in data:
        # pi stamps every message; a caller who leaves it out means "now"
        data = {**data, "timestamp": now_ms()}
    if role in _DERIVED_ROLES:
        raise EntryValidationError(
            f"role {role!r} is derived when building context; use Session.{_DERIVED_ROLES[role]}"
        )
    if role in KNOWN_ROLES:
        try:
            message_from_dict(data)
        except msgspec.ValidationError as exc:
            raise EntryValidationError(f"{role} message: {exc}") from None

    def build(entry_id: str, parent: str | None, stamp: str) -> bytes:
        entry: dict[str, Any] = {"type": "message", "id": entry_id, "parentId": parent}
        entry["timestamp"] = stamp
        entry["message"] = data
        return dumps(entry)

    return build, role


Complete = Callable[[str, str | None, str], dict[str, Any]]
"""Fields known only when the line is written, from (new id, current leaf, timestamp)."""


def struct_line(
    kind: type[msgspec.Struct],
    attach_to: tuple[str | None] | None,
    fields: dict[str, Any],
    complete: Complete | None = None,
) -> Build:
    """A builder for an entry of a model type, after checking ``fields`` have its shape.

    ``attach_to`` (a 1-tuple) names the parent instead of the one the writer passes;
    ``complete`` gives fields that depend on the new id, the leaf or the time (a
    retain-none compaction names itself; a branch summary names the leaf it leaves).
    """
    stamp = "1970-01-01T00:00:00.000Z"
    probe_fields = {**fields, **(complete("00000000", None, stamp) if complete else {})}
    probe = kind(id="00000000", parent_id=None, timestamp=stamp, **probe_fields)
    try:
        msgspec.convert(msgspec.to_builtins(probe), type=kind)
    except (msgspec.ValidationError, TypeError) as exc:
        raise EntryValidationError(f"{kind.__name__}: {exc}") from None

    def build(entry_id: str, leaf: str | None, stamp: str) -> bytes:
        parent = leaf if attach_to is None else attach_to[0]
        known = {**fields, **(complete(entry_id, leaf, stamp) if complete else {})}
        return encode(kind(id=entry_id, parent_id=parent, timestamp=stamp, **known))

    return build


def built(build: Build, entry_id: str, parent: str | None) -> bytes:
    """Run a builder now; values JSON cannot hold are an EntryValidationError."""
    try:
        return build(entry_id, parent, now_timestamp())
    except (TypeError, ValueError) as exc:
        raise EntryValidationError(f"entry cannot be written as JSON: {exc}") from None
