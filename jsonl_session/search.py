"""Full-text search over sessions: user and assistant message text and session names.

Substring search, case-insensitive (str.lower on both sides). A line is decoded
only when its bytes could hold the query (for an ASCII query, its lower-cased bytes
must contain it), so a search costs little more than reading the files. Which files to search is
listing.py's job; this module reads them and builds results with snippets.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonl_session.describe import text_parts
from jsonl_session.errors import JsonlSessionError
from jsonl_session.jsonio import NotJson
from jsonl_session.jsonl import NotAnObject, decode_envelope, loads_object, split_lines

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


def search_sessions(query: str, files: Iterable[Path]) -> Iterator[SearchHit]:
    """Hits for ``query`` in each file, in file order."""
    if not query.strip():
        raise JsonlSessionError("the search query is empty")
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue  # listed with its problem by `list`; nothing to search
        yield from search_bytes(query, path, data)


def search_bytes(query: str, path: Path, data: bytes) -> Iterator[SearchHit]:
    needle = query.lower()
    ascii_needle = needle.encode() if needle.isascii() and _plain(needle) else None
    lines = split_lines(data)
    session_id: str | None = None
    for index, line in enumerate(lines):
        if index == 0:
            header = _object(line.raw)
            value = header.get("id") if header is not None else None
            session_id = value if isinstance(value, str) else None
            continue
        if ascii_needle is not None and ascii_needle not in line.raw.lower():
            continue
        try:
            envelope = decode_envelope(line.raw)
        except (NotJson, NotAnObject):
            continue
        if envelope.type == "session_info":
            texts = [(loads_object(line.raw).get("name"), "name")]
        elif envelope.type == "message" and envelope.role in ("user", "assistant"):
            texts = [(text, str(envelope.role)) for text in _texts(loads_object(line.raw))]
        else:
            continue
        for text, role in texts:
            if not isinstance(text, str):
                continue
            at = text.lower().find(needle)
            if at < 0:
                continue
            entry_id = envelope.id if isinstance(envelope.id, str) and role != "name" else None
            timestamp = envelope.timestamp if isinstance(envelope.timestamp, str) else None
            yield SearchHit(
                path,
                session_id,
                entry_id,
                line.number,
                timestamp,
                role,
                _snippet(text, at, len(query)),
            )
            break  # one hit per entry


def _plain(needle: str) -> bool:
    # Characters JSON writes escaped cannot be found in the raw bytes as they are.
    return not any(c in needle for c in '"\\') and all(c >= " " for c in needle)


def _object(raw: bytes) -> dict[str, Any] | None:
    try:
        return loads_object(raw)
    except (NotJson, NotAnObject):
        return None


def _texts(entry: dict[str, Any]) -> list[str]:
    message = entry.get("message")
    if not isinstance(message, dict):
        return []
    # Text blocks joined by spaces, as pi's listing joins them.
    texts = text_parts(message.get("content"))
    return [" ".join(texts)] if texts else []


def _snippet(text: str, at: int, length: int) -> str:
    start = max(0, at - SNIPPET_CHARS)
    end = min(len(text), at + length + SNIPPET_CHARS)
    middle = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + middle + ("…" if end < len(text) else "")
