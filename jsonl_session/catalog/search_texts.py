"""What is searchable in a session's lines: user and assistant message text and session
names, and (searched with tools) tool output; and, for an ASCII query, whether a line's
bytes could hold it at all, so that only those lines are decoded.

Owns `SearchText` (as the search index keeps it) and reading texts from pi lines and
from another agent's file (through its dialect reader). Matching, snippets, the index
and the order of files are search.py's; text from content is messages.py's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.format.entry import NotAnObject, decode_envelope, loads_object
from jsonl_session.format.jsonio import NotJson
from jsonl_session.messages import text_parts
from jsonl_session.storage.lines import RawLine, count_newlines, first_line, split_lines

TOOL_ROLES = ("toolResult", "bashExecution")


class SearchText(msgspec.Struct, array_like=True):
    """A searchable text of one line: a user or assistant message or a name, or
    (searched with tools) a tool's output."""

    line: int
    entry_id: str | None
    timestamp: str | None
    role: str
    text: str


def foreign_texts(path: Path, tools: bool = False) -> tuple[str | None, list[SearchText]] | None:
    """The texts of another agent's file (Claude Code, Codex), from the pi entries its
    dialect reader makes, each at its source line; None for a pi file (or one no
    reader knows)."""
    with open(path, "rb") as handle:
        head = handle.read(_HEAD_BYTES)
        line = first_line(head)
        header = _json_object(line.raw) if line is not None and line.terminated else None
        if line is None or (header is not None and header.get("type") == "session"):
            return None
        data = head + handle.read()
    from jsonl_session.dialects.reading import read_foreign

    loaded = read_foreign(data, path)
    if loaded is None:
        return None
    kinds = (False, True) if tools else (False,)
    texts = [
        text
        for entry in loaded.entries
        for kind in kinds
        for text in searchable_texts(entry.raw, 0, entry.line, tools=kind)
    ]
    session_id = loaded.header.get("id")
    return (session_id if isinstance(session_id, str) else None), texts


_HEAD_BYTES = 64 << 10

_KELVIN, _I_DOT = "\u212a".encode(), "\u0130".encode()
# Escapes that decode to printable ASCII, KELVIN SIGN or I WITH DOT ABOVE (control
# characters, which JSON.stringify escapes, cannot be in a query).
_ESCAPED_PRINTABLE = re.compile(rb"\\(?:u(?:00[2-7][0-9a-fA-F]|212[aA]|0130)|/)")


def _may_hold(raw: bytes, needle: bytes) -> bool:
    """Whether a line's text could hold the lower-cased ASCII ``needle``: its bytes do
    (each of its pieces between spaces, when it has spaces: see `_pieces`), or its
    text differs from its bytes in a way that could (`_may_hide`)."""
    low = raw.lower()
    return all(piece in low for piece in _pieces(needle)) or _may_hide(raw)


def _pieces(needle: bytes) -> list[bytes]:
    """What of ``needle`` a line's bytes must hold for its text to hold it: the needle
    itself, or if it holds a space its pieces between spaces. A message's text blocks
    are searched joined by a space (as pi's listing joins them), so "token buffer"
    may be in the text of a line whose bytes hold "token" at the end of one block
    and "buffer" at the start of the next; no piece (it holds no space) spans two."""
    if b" " not in needle:
        return [needle]
    return [piece for piece in needle.split(b" ") if piece]


def _may_hide(raw: bytes) -> bool:
    """Whether the text of ``raw`` (one line or several) may hold an ASCII word its
    bytes lower-cased do not: through a \\u escape, an escaped slash, or KELVIN SIGN /
    I WITH DOT ABOVE, which lower-case to ASCII letters."""
    if b"\\" in raw and _ESCAPED_PRINTABLE.search(raw) is not None:
        return True
    return not raw.isascii() and (_KELVIN in raw or _I_DOT in raw)


def _lines_that_may_hold(
    region: bytes, needle: bytes, base_offset: int, first_number: int
) -> list[RawLine]:
    """The lines of ``region`` (as `split_lines` makes them) whose text may hold the
    ASCII ``needle`` (see `_may_hold`), looked for a window of lines at a time: where
    a window's bytes alone tell (no escape that could hide it, neither character that
    lower-cases to ASCII: nearly always), it is lower-cased once and only the lines
    around its finds are made, instead of lower-casing and searching each line."""
    found: list[RawLine] = []
    start, number, size = 0, first_number, len(region)
    pieces = _pieces(needle)
    longest = max(pieces, key=len, default=b"")
    while start < size:
        stop = region.find(b"\n", start + _WINDOW_BYTES) + 1 or size
        window = region[start:stop]  # (the region itself when it is one window)
        base = base_offset + start
        if _may_hide(window) or not longest:  # (blank: blank lines would hold it)
            lines = split_lines(window, base_offset=base, first_number=number)
            found += [line for line in lines if _may_hold(line.raw, needle)]
        else:
            lines = _lines_found(window, window.lower(), longest, base, number)
            if len(pieces) > 1:  # the lines holding its longest piece that hold them all
                lines = [line for line in lines if _may_hold(line.raw, needle)]
            found += lines
        if stop < size:  # (a file of one window, as most are, has no lines to count)
            number += count_newlines(window)
        start = stop
    return found


def _lines_found(
    window: bytes, low: bytes, needle: bytes, base_offset: int, number: int
) -> list[RawLine]:
    """The lines of ``window`` in whose lower-cased bytes (``low``) ``needle`` stands,
    each once; ``number``: the first line's. A needle holds no newline (see
    plain_query), so each find lies within one line."""
    found: list[RawLine] = []
    counted = 0  # ``number`` is the number of the line starting here
    at = low.find(needle)
    while at >= 0:
        start = window.rfind(b"\n", 0, at) + 1
        number += count_newlines(window, counted, start)
        counted = start
        end = window.find(b"\n", at)
        terminated = end >= 0
        if not terminated:
            end = len(window)
        cut = end - 1 if window[end - 1] == _CR else end
        found.append(RawLine(number, base_offset + start, window[start:cut], terminated))
        if not terminated:
            break
        at = low.find(needle, end + 1)
    return found


_WINDOW_BYTES = 1 << 20  # lower-cased at a time: a huge file is not copied whole
_CR = ord("\r")


def session_id_of(raw: bytes) -> str | None:
    header = _json_object(raw)
    value = header.get("id") if header is not None else None
    return value if isinstance(value, str) else None


def searchable_texts(
    region: bytes,
    base_offset: int,
    first_number: int,
    needle: bytes | None = None,
    *,
    tools: bool = False,
) -> list[SearchText]:
    """The searchable texts of the lines in ``region``: messages and names, or with
    ``tools`` the tool output; with an ASCII ``needle``, only of lines whose text may
    hold it (see _may_hold)."""
    out: list[SearchText] = []
    if needle is None:
        lines = split_lines(region, base_offset=base_offset, first_number=first_number)
    else:
        lines = _lines_that_may_hold(region, needle, base_offset, first_number)
    for line in lines:
        if not tools:
            found = _message_text(line.raw, line.number)
            if isinstance(found, SearchText):
                out.append(found)
                continue
            if found is None:
                continue
        try:
            envelope = decode_envelope(line.raw)
        except (NotJson, NotAnObject):
            continue
        if tools:
            if envelope.type == "message" and envelope.role in TOOL_ROLES:
                joined = _tool_text(loads_object(line.raw))
                if joined:
                    stamp_ = _text_or_none(envelope.timestamp)
                    role = str(envelope.role)
                    out.append(
                        SearchText(line.number, _text_or_none(envelope.id), stamp_, role, joined)
                    )
        elif envelope.type == "session_info":
            name = loads_object(line.raw).get("name")
            if isinstance(name, str):
                out.append(
                    SearchText(line.number, None, _text_or_none(envelope.timestamp), "name", name)
                )
        elif envelope.type == "message" and envelope.role in ("user", "assistant"):
            joined = _joined(loads_object(line.raw))
            if joined is not None:
                entry_id = _text_or_none(envelope.id)
                stamp_ = _text_or_none(envelope.timestamp)
                out.append(SearchText(line.number, entry_id, stamp_, str(envelope.role), joined))
    return out


class _TextBlock(msgspec.Struct, gc=False):
    type: Any = None
    text: Any = None


class _SearchedMessage(msgspec.Struct, gc=False):
    role: Any = None
    content: msgspec.Raw = msgspec.Raw(b"null")  # decoded only for a user or assistant


class _SearchedLine(msgspec.Struct, gc=False):
    """What a search reads of a message line: the envelope and the content, whose
    bytes msgspec skips (tool output, thinking, arguments) until they are wanted."""

    type: Any = None
    id: Any = None
    timestamp: Any = None
    message: _SearchedMessage | None = None


_line_decoder = msgspec.json.Decoder(_SearchedLine)
_content_decoder = msgspec.json.Decoder(str | list[_TextBlock] | None)
_REFUSED = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


class _Whole:
    """What `_message_text` returns for a line to be read whole, the way of any line."""


_WHOLE = _Whole()


def _message_text(raw: bytes, number: int) -> SearchText | _Whole | None:
    """The searchable text of a line that is a user's or an assistant's message, or
    None for a line with none, read without decoding what search does not read (on a
    first search, which keeps every text, decoding whole lines took most of it). A
    line msgspec refuses (bytes not UTF-8 where it reads, a lone surrogate, another
    shape: a message or a block that is not an object, content of another type) and
    a name are _WHOLE: read whole, as `decode_envelope` and `loads_object` read it,
    which reads whatever msgspec reads the same (orjson first, else msgspec)."""
    try:
        line = _line_decoder.decode(raw)
    except _REFUSED:
        return _WHOLE
    kind = line.type
    message = line.message
    if kind.__class__ is not str or kind == "session_info":
        return _WHOLE
    if kind != "message" or message is None or message.role not in ("user", "assistant"):
        return None
    try:
        content = _content_decoder.decode(message.content)
    except _REFUSED:
        return _WHOLE
    if content.__class__ is str:
        texts = [content]
    elif content is None:
        return None
    else:
        texts = [b.text for b in content if b.type == "text" and b.text.__class__ is str]
    if not texts:
        return None
    entry_id, stamp = _text_or_none(line.id), _text_or_none(line.timestamp)
    # text blocks joined by spaces, as pi's listing joins them (as `_joined`)
    return SearchText(number, entry_id, stamp, str(message.role), " ".join(texts))


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def plain_query(needle: str) -> bool:
    # Characters JSON writes escaped cannot be found in the raw bytes as they are.
    return not any(c in needle for c in '"\\') and all(c >= " " for c in needle)


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        return loads_object(raw)
    except (NotJson, NotAnObject):
        return None


def _tool_text(entry: dict[str, Any]) -> str | None:
    """A tool's output as one text: a toolResult's text blocks, or a bashExecution's
    command and output."""
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    if message.get("role") == "bashExecution":
        parts = [message.get("command"), message.get("output")]
        return "\n".join(part for part in parts if isinstance(part, str)) or None
    texts = text_parts(message.get("content"))
    return "\n".join(texts) if texts else None


def _joined(entry: dict[str, Any]) -> str | None:
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    # Text blocks joined by spaces, as pi's listing joins them.
    texts = text_parts(message.get("content"))
    return " ".join(texts) if texts else None
