"""Lines of a session file: splitting bytes into lines, decoding envelopes, and the
StoredEntry that keeps a line's exact bytes beside its envelope.

Owns the line level: where each line starts, what its exact bytes are, which lines
are blank, which is unterminated, and the small *envelope* of each entry (type, id,
parentId, timestamp, message role, customType) decoded without decoding message
bodies; bodies are decoded on request (as dicts, or as model.py's typed view).
JSON text rules are jsonio.py's; versions are migrate.py's; the tree is tree.py's;
disk writes are store.py's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from jsonl_session.jsonio import decode_any, dumps, is_utf8
from jsonl_session.model import LEAF_MARKER_TYPE, SessionEntry, UnknownEntry, entry_from_dict

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class RawLine:
    """One non-blank line: 1-based number, byte offset of its start, bytes without EOL."""

    number: int
    offset: int
    raw: bytes
    terminated: bool


def split_lines(data: bytes, *, base_offset: int = 0, first_number: int = 1) -> list[RawLine]:
    """Split bytes into non-blank lines, tolerating a BOM, CRLF and blank lines.

    Only the final segment can be unterminated; it is returned with
    ``terminated=False`` so the caller can decide whether it is torn.
    """
    lines: list[RawLine] = []
    pos = 0
    if base_offset == 0 and data.startswith(BOM):
        pos = len(BOM)
    number = first_number
    size = len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        terminated = end != -1
        if not terminated:
            end = size
        raw = data[pos:end]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if raw.strip():
            lines.append(RawLine(number, base_offset + pos, raw, terminated))
        number += 1
        pos = end + 1
    return lines


def consumed_length(data: bytes) -> int:
    """Bytes up to and including the last newline: the part later appends build on."""
    return data.rfind(b"\n") + 1


class _MessageEnvelope(msgspec.Struct):
    role: Any = None
    timestamp: Any = None


class _Envelope(msgspec.Struct, rename="camel"):
    type: Any = None
    id: Any = None
    parent_id: Any = msgspec.UNSET
    timestamp: Any = None
    custom_type: Any = None
    message: _MessageEnvelope | None = None


_envelope_decoder = msgspec.json.Decoder(_Envelope)


@dataclass(slots=True)
class Envelope:
    """What the tree and listings need from a line, without its body."""

    type: str | None
    id: Any
    parent_id: Any  # msgspec.UNSET when the key is absent (version 1 files)
    timestamp: Any
    custom_type: Any
    role: Any
    message_timestamp: Any
    invalid_utf8: bool = False  # bytes that are not UTF-8 were read as U+FFFD, as Node does


class NotAnObject(ValueError):
    """The line is valid JSON but not an object with a string ``type``."""


def decode_envelope(raw: bytes) -> Envelope:
    """Decode the envelope of one line; raise NotJson or NotAnObject."""
    try:
        env = _envelope_decoder.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        # Another shape (null, 42, a message that is a string), bytes msgspec
        # refuses, or invalid JSON: decode_any tells which.
        envelope = _envelope_from_object(decode_any(raw))
        envelope.invalid_utf8 = not is_utf8(raw)
        return envelope
    if not isinstance(env.type, str):
        raise NotAnObject("object has no string 'type'")
    msg = env.message
    return Envelope(
        env.type,
        env.id,
        env.parent_id,
        env.timestamp,
        env.custom_type,
        None if msg is None else msg.role,
        None if msg is None else msg.timestamp,
    )


def _envelope_from_object(value: Any) -> Envelope:
    if not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        raise NotAnObject(f"a JSON {kind}, not an entry object")
    if not isinstance(value.get("type"), str):
        raise NotAnObject("object has no string 'type'")
    message = value.get("message")
    role = message.get("role") if isinstance(message, dict) else None
    msg_ts = message.get("timestamp") if isinstance(message, dict) else None
    return Envelope(
        value["type"],
        value.get("id"),
        value.get("parentId", msgspec.UNSET),
        value.get("timestamp"),
        value.get("customType"),
        role,
        msg_ts,
    )


def loads_object(raw: bytes) -> dict[str, Any]:
    """Decode a line known to hold an object."""
    value = decode_any(raw)
    if not isinstance(value, dict):
        raise NotAnObject("not an object")
    return value


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(slots=True)
class StoredEntry:
    """An entry as loaded: its envelope, its exact bytes and where they live.

    ``raw`` is the JSON text of the line as it is (or will be) on disk; when a
    migration changed the entry, ``raw`` is the migrated text and ``migrated`` is
    set. Bodies are decoded on request by `data()` and `typed()`, fresh each time,
    so callers may change what they get without changing the session.
    """

    line: int
    offset: int
    raw: bytes
    type: str
    id: str
    parent_id: str | None
    timestamp: str
    role: str | None = None
    custom_type: str | None = None
    message_timestamp: Any = None
    migrated: bool = field(default=False)

    @classmethod
    def from_envelope(cls, env: Envelope, line: int, offset: int, raw: bytes) -> StoredEntry:
        return cls(
            line=line,
            offset=offset,
            raw=raw,
            type=env.type or "",
            id=_text(env.id) or "",
            parent_id=_text(env.parent_id),
            timestamp=_text(env.timestamp) or "",
            role=_text(env.role),
            custom_type=_text(env.custom_type),
            message_timestamp=env.message_timestamp,
        )

    def data(self) -> dict[str, Any]:
        """The entry as a plain dict in the file's own shape (unknown fields kept)."""
        return loads_object(self.raw)

    def typed(self) -> SessionEntry | UnknownEntry:
        """The typed view (model.SessionEntry or model.UnknownEntry)."""
        return entry_from_dict(self.data())

    @property
    def is_leaf_marker(self) -> bool:
        return self.type == "custom" and self.custom_type == LEAF_MARKER_TYPE


def file_bytes(header: dict[str, Any] | bytes, lines: Iterable[bytes]) -> bytes:
    """A whole file: the header line, then each line, every one ending in a newline."""
    head = header if isinstance(header, bytes) else dumps(header)
    return b"".join([head, b"\n", *(line + b"\n" for line in lines)])
