"""What one line of a session file means: its envelope, and the StoredEntry that keeps
a line's exact bytes (or where to read them) beside it.

Owns the small *envelope* of each entry (type, id, parentId, timestamp, message role,
customType) decoded without decoding message bodies, and StoredEntry, the record every
layer passes around; bodies are decoded on request (as dicts, or as model.py's typed
view). An entry whose line was not kept in memory reads it through an `EntrySource`
(storage/lines.py's LineSource is the real one); this module does no I/O itself.
Finding lines in bytes is storage/lines.py's; JSON text rules are jsonio.py's;
versions are migrate.py's; the tree is tree.py's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol

import msgspec
import orjson

from jsonl_session.errors import SessionFormatError
from jsonl_session.format.jsonio import NotJson, decode_any, dumps, is_utf8
from jsonl_session.format.model import (
    LEAF_MARKER_TYPE,
    SessionEntry,
    UnknownEntry,
    entry_from_dict,
)


class EntrySource(Protocol):
    """Where an entry not kept in memory reads its line from: a file held open."""

    @property
    def path(self) -> Path | None: ...

    def read(self, offset: int, length: int, *, after: bool = True) -> bytes:
        """``length`` bytes at ``offset`` and, with ``after``, the one byte after them
        (if any)."""
        ...


class _MessageEnvelope(msgspec.Struct, gc=False):
    role: Any = None
    timestamp: Any = None


class BulkEnvelope(msgspec.Struct, rename="camel", gc=False):
    """The envelope as msgspec decodes it (see Envelope for the checked form)."""

    type: Any = None
    id: Any = None
    parent_id: Any = msgspec.UNSET
    timestamp: Any = None
    custom_type: Any = None
    message: _MessageEnvelope | None = None


envelope_decoder = msgspec.json.Decoder(BulkEnvelope)


class _PlainMessage(msgspec.Struct, gc=False):
    role: str | None = None
    timestamp: Any = None


class PlainEnvelope(msgspec.Struct, rename="camel", gc=False):
    """The envelope of a plain entry, typed as StoredEntry keeps it, so many lines
    decode in one call straight into what an entry needs. A line with another shape
    (an id that is not a string, no type...) fails the decode; the caller then reads
    its lines one by one with `decode_envelope`, which tells what is wrong."""

    type: str
    id: str = ""
    parent_id: str | None = None
    timestamp: str = ""
    custom_type: str | None = None
    message: _PlainMessage | None = None


plain_decoder = msgspec.json.Decoder(PlainEnvelope)


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
        env = envelope_decoder.decode(raw)
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


class StoredEntry(msgspec.Struct, gc=False, array_like=True):
    """An entry as loaded: its envelope, where its line lives, and its exact bytes.

    Short lines keep their bytes in memory (``inline``); longer ones of a large file
    are read back from ``source`` when asked for, so opening a session holds the
    envelopes, not the bodies. ``raw`` is the JSON text of the line as it is (or will
    be) on disk; when a migration changed the entry, ``raw`` is the migrated text and
    ``migrated`` is set. Bodies are decoded on request by `data()` and `typed()`,
    fresh each time, so callers may change what they get without changing the session.
    """

    line: int
    offset: int
    type: str
    id: str
    parent_id: str | None
    timestamp: str
    role: str | None = None
    custom_type: str | None = None
    message_timestamp: Any = None
    migrated: bool = False
    length: int = 0
    inline: bytes | None = None
    source: EntrySource | None = None

    @classmethod
    def from_envelope(cls, env: Envelope, line: int, offset: int, raw: bytes) -> StoredEntry:
        return cls(
            line=line,
            offset=offset,
            type=env.type or "",
            id=_text(env.id) or "",
            parent_id=_text(env.parent_id),
            timestamp=_text(env.timestamp) or "",
            role=_text(env.role),
            custom_type=_text(env.custom_type),
            message_timestamp=env.message_timestamp,
            length=len(raw),
            inline=raw,
        )

    @property
    def raw(self) -> bytes:
        if self.inline is not None:
            return self.inline
        source = self.source
        if source is None:
            raise SessionFormatError(None, self.line, "entry has neither bytes nor a file")
        if self.length < _BLOCK_BYTES:
            return self.checked(source.read(self.offset, self.length), 0)
        # read apart from the byte after it: cutting a huge line out of a read that
        # holds one byte more would copy it all again
        body = source.read(self.offset, self.length, after=False)
        return self._verified(body, source.read(self.offset + self.length, 0))

    def checked(self, block: bytes, at: int) -> bytes:
        """This entry's line, cut from ``block`` (read from its source) at ``at``,
        after checking it is still this entry's line."""
        end = at + self.length
        return self._verified(block[at:end], block[end : end + 1])

    def _verified(self, body: bytes, after: bytes) -> bytes:
        """``body``, read as this entry's line with ``after`` the byte after it, once
        checked to be this entry's line still."""
        if len(body) != self.length or after not in (b"", b"\n", b"\r"):
            self._changed()
        written_plainly = not self.id or b'"id":' + _quoted(self.id) in body
        if not written_plainly and _text(_envelope_id(body)) != self.id:
            self._changed()
        return body

    def set_raw(self, value: bytes) -> None:
        """Hold ``value`` as this entry's line (a migration rewrote it)."""
        self.inline = value
        self.length = len(value)

    def _changed(self) -> NoReturn:
        path = self.source.path if self.source is not None else None
        raise SessionFormatError(
            path,
            self.line,
            f"entry {self.id} is no longer where it was when the file was read "
            "(the file was rewritten since); open it again",
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


_BLOCK_BYTES = 4 << 20  # one read covers at most this much
_GAP_BYTES = 64 << 10  # entries this close share a read


def raw_lines(entries: Sequence[StoredEntry]) -> list[bytes]:
    """The lines of many entries, as `StoredEntry.raw` gives them one by one, but read
    from disk in blocks: entries near each other in the file cost one read."""
    out: list[bytes] = []
    for run, block, start in line_blocks(entries):
        if block is None:
            out.extend(entry.raw for entry in run)
            continue
        for entry in run:
            on_disk = entry.inline is None
            out.append(entry.checked(block, entry.offset - start) if on_disk else entry.raw)
    return out


LINES_AT_ONCE = 1024  # entries whose lines `entry_lines` reads from disk at once


def entry_lines(entries: Sequence[StoredEntry]) -> Iterator[tuple[StoredEntry, bytes]]:
    """Each of ``entries`` with its line (as `raw_lines` reads them), `LINES_AT_ONCE`
    entries' lines read at a time: a large session is never held whole."""
    for start in range(0, len(entries), LINES_AT_ONCE):
        batch = entries[start : start + LINES_AT_ONCE]
        yield from zip(batch, raw_lines(batch), strict=True)


def line_blocks(
    entries: Sequence[StoredEntry],
) -> Iterator[tuple[Sequence[StoredEntry], bytes | None, int]]:
    """The entries in order, in runs read at once: (run, block, the block's offset in
    the file). A run's entries not in memory (``inline`` None) have their lines in the
    block, unchecked (see `StoredEntry.checked`); with block None, the run is one
    entry whose `raw` gives its line (one in memory, or one too long to share a
    read). For a reader that decodes lines in place."""
    index = 0
    count = len(entries)
    while index < count:
        first = entries[index]
        source = first.source
        if first.inline is not None or source is None or first.length >= _BLOCK_BYTES:
            yield entries[index : index + 1], None, 0
            index += 1
            continue
        stop = index + 1
        end = first.offset + first.length + 1
        while stop < count:
            entry = entries[stop]
            if entry.inline is None and (
                entry.source is not source
                or not end <= entry.offset < end + _GAP_BYTES
                or entry.offset + entry.length - first.offset > _BLOCK_BYTES
            ):
                break
            if entry.inline is None:
                end = entry.offset + entry.length + 1
            stop += 1
        yield entries[index:stop], source.read(first.offset, end - first.offset), first.offset
        index = stop


def _quoted(text: str) -> bytes:
    """`dumps` of a string: orjson's (a string holds no float for dumps to look
    for), `dumps` for a lone surrogate, which orjson refuses."""
    try:
        return orjson.dumps(text)
    except TypeError:
        return dumps(text)


def _envelope_id(raw: bytes) -> Any:
    try:
        return decode_envelope(raw).id
    except (NotJson, NotAnObject):
        return None
