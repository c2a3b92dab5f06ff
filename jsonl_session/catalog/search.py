"""Full-text search over sessions: user and assistant message text and session names.

Substring search, case-insensitive (str.lower on both sides). A line is decoded
only when its bytes could hold the query (for an ASCII query, its lower-cased bytes
must contain it), so a search costs little more than reading the files. Which files
to search is listing.py's job; this module reads them and builds results with
snippets. Text from content is messages.py's; keeping texts between runs is
storage/cache.py's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.errors import JsonlSessionError
from jsonl_session.format.entry import NotAnObject, decode_envelope, loads_object
from jsonl_session.format.jsonio import NotJson
from jsonl_session.messages import text_parts
from jsonl_session.storage.cache import CacheOption, RecordCache, cache_root, stamp
from jsonl_session.storage.lines import after_line, first_line, split_lines

SNIPPET_CHARS = 60


@dataclass(frozen=True, slots=True)
class SearchHit:
    path: Path
    session_id: str | None
    entry_id: str | None  # None when the session's name matched
    line: int
    timestamp: str | None
    role: str  # "user", "assistant" or "name"
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "sessionId": self.session_id,
            "entryId": self.entry_id,
            "line": self.line,
            "timestamp": self.timestamp,
            "role": self.role,
            "snippet": self.snippet,
        }


class _Text(msgspec.Struct, array_like=True):
    """A searchable text of one line: a user or assistant message, or a name."""

    line: int
    entry_id: str | None
    timestamp: str | None
    role: str
    text: str


class _SearchRecord(msgspec.Struct, array_like=True):
    session_id: str | None
    texts: list[_Text]
    next_number: int


def search_sessions(
    query: str, files: Iterable[Path], *, cache: CacheOption = None
) -> Iterator[SearchHit]:
    """Hits for ``query`` in each file, in file order. With a cache (storage/cache.py), a
    file's texts are kept there, so searching it again reads only what was appended."""
    if not query.strip():
        raise JsonlSessionError("the search query is empty")
    root = cache_root(cache)
    records = RecordCache(root, "search", _SearchRecord) if root is not None else None
    for path in files:
        try:
            foreign = _foreign_texts(path)
            if foreign is not None:  # another agent's file: searched as read, never cached
                yield from _hits(query, path, *foreign)
            elif records is None:
                yield from search_bytes(query, path, path.read_bytes())
            else:
                session_id, texts = _cached_texts(path, records)
                yield from _hits(query, path, session_id, texts)
        except OSError:
            continue  # listed with its problem by `list`; nothing to search


def search_bytes(query: str, path: Path, data: bytes) -> Iterator[SearchHit]:
    """Hits in a file's bytes; only lines whose bytes could hold the query are decoded."""
    needle = query.lower()
    ascii_needle = needle.encode() if needle.isascii() and _plain(needle) else None
    header = first_line(data)
    if header is None:
        return
    session_id = _session_id(header.raw)
    start = after_line(data, header)
    texts = _texts(data[start:], start, header.number + 1, ascii_needle)
    yield from _hits(query, path, session_id, texts)


def _foreign_texts(path: Path) -> tuple[str | None, list[_Text]] | None:
    """The texts of another agent's file (Claude Code, Codex), from the pi entries its
    dialect reader makes, each at its source line; None for a pi file (or one no
    reader knows)."""
    with open(path, "rb") as handle:
        head = handle.read(_HEAD_BYTES)
        line = first_line(head)
        header = _object(line.raw) if line is not None and line.terminated else None
        if line is None or (header is not None and header.get("type") == "session"):
            return None
        data = head + handle.read()
    from jsonl_session.dialects.reading import read_foreign

    loaded = read_foreign(data, path)
    if loaded is None:
        return None
    texts = [text for entry in loaded.entries for text in _texts(entry.raw, 0, entry.line)]
    session_id = loaded.header.get("id")
    return (session_id if isinstance(session_id, str) else None), texts


_HEAD_BYTES = 64 << 10


def _cached_texts(
    path: Path, records: RecordCache[_SearchRecord]
) -> tuple[str | None, list[_Text]]:
    with open(path, "rb") as handle:
        fd = handle.fileno()
        found = records.load(path, fd)
        if found is None:
            data = handle.read()
            header = first_line(data)
            if header is None:
                return None, []
            session_id = _session_id(header.raw)
            start = after_line(data, header)
            cut = max(start, data.rfind(b"\n") + 1)
            kept = _texts(data[start:cut], start, header.number + 1)
            next_number = header.number + 1 + data.count(b"\n", start, cut)
            record = _SearchRecord(session_id, kept, next_number)
            if header.terminated:  # a header without its newline may still grow
                records.save(path, stamp(fd, cut), record)
        else:
            mark, record = found
            handle.seek(mark.covered)
            data = handle.read()
            cut = data.rfind(b"\n") + 1
            if cut:
                added = _texts(data[:cut], mark.covered, record.next_number)
                next_number = record.next_number + data.count(b"\n", 0, cut)
                record = _SearchRecord(record.session_id, record.texts + added, next_number)
                records.save(path, stamp(fd, mark.covered + cut), record)
    tail = _texts(data[cut:], -1, record.next_number)
    return record.session_id, record.texts + tail


_KELVIN, _I_DOT = "\u212a".encode(), "\u0130".encode()
# Escapes that decode to printable ASCII, KELVIN SIGN or I WITH DOT ABOVE (control
# characters, which JSON.stringify escapes, cannot be in a query).
_ESCAPED_PRINTABLE = re.compile(rb"\\(?:u(?:00[2-7][0-9a-fA-F]|212[aA]|0130)|/)")


def _may_hold(raw: bytes, needle: bytes) -> bool:
    """Whether a line's text could hold the lower-cased ASCII ``needle``: its bytes do,
    or its text differs from its bytes in a way that could (a \\u escape, an escaped
    slash, or KELVIN SIGN / I WITH DOT ABOVE, which lower-case to ASCII letters)."""
    if needle in raw.lower():
        return True
    if b"\\" in raw and _ESCAPED_PRINTABLE.search(raw) is not None:
        return True
    return not raw.isascii() and (_KELVIN in raw or _I_DOT in raw)


def _session_id(raw: bytes) -> str | None:
    header = _object(raw)
    value = header.get("id") if header is not None else None
    return value if isinstance(value, str) else None


def _texts(
    region: bytes, base_offset: int, first_number: int, needle: bytes | None = None
) -> list[_Text]:
    """The searchable texts of the lines in ``region``; with an ASCII ``needle``,
    only of lines whose text may hold it (see _may_hold)."""
    out: list[_Text] = []
    for line in split_lines(region, base_offset=base_offset, first_number=first_number):
        if needle is not None and not _may_hold(line.raw, needle):
            continue
        try:
            envelope = decode_envelope(line.raw)
        except (NotJson, NotAnObject):
            continue
        if envelope.type == "session_info":
            name = loads_object(line.raw).get("name")
            if isinstance(name, str):
                out.append(_Text(line.number, None, _str(envelope.timestamp), "name", name))
        elif envelope.type == "message" and envelope.role in ("user", "assistant"):
            joined = _joined(loads_object(line.raw))
            if joined is not None:
                entry_id = _str(envelope.id)
                stamp_ = _str(envelope.timestamp)
                out.append(_Text(line.number, entry_id, stamp_, str(envelope.role), joined))
    return out


def _hits(
    query: str, path: Path, session_id: str | None, texts: list[_Text]
) -> Iterator[SearchHit]:
    needle = query.lower()
    for text in texts:
        at = text.text.lower().find(needle)
        if at >= 0:
            snippet = _snippet(text.text, at, len(query))
            yield SearchHit(
                path, session_id, text.entry_id, text.line, text.timestamp, text.role, snippet
            )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _plain(needle: str) -> bool:
    # Characters JSON writes escaped cannot be found in the raw bytes as they are.
    return not any(c in needle for c in '"\\') and all(c >= " " for c in needle)


def _object(raw: bytes) -> dict[str, Any] | None:
    try:
        return loads_object(raw)
    except (NotJson, NotAnObject):
        return None


def _joined(entry: dict[str, Any]) -> str | None:
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    # Text blocks joined by spaces, as pi's listing joins them.
    texts = text_parts(message.get("content"))
    return " ".join(texts) if texts else None


def _snippet(text: str, at: int, length: int) -> str:
    start = max(0, at - SNIPPET_CHARS)
    end = min(len(text), at + length + SNIPPET_CHARS)
    middle = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + middle + ("…" if end < len(text) else "")
