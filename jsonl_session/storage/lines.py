"""Lines of a session file's bytes, and the open file entries read their bytes from.

Owns the line level: where each line starts, what its exact bytes are, which lines
are blank, which one is unterminated (`line_spans` is the one place lines are found),
the whole-file form written back (`file_bytes`), and `LineSource`, the held-open file
a StoredEntry reads a body from by offset. What a line means (envelopes, StoredEntry)
is format/entry.py's; JSON text rules are format/jsonio.py's; writes are store.py's.
"""

from __future__ import annotations

import os
import weakref
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonl_session.errors import SessionFormatError
from jsonl_session.format.jsonio import dumps
from jsonl_session.storage.portable import pread

BOM = b"\xef\xbb\xbf"
BOM_PROBLEM = (
    "line 1 starts with a UTF-8 byte order mark (EF BB BF), so it is not a session "
    "header (pi does not read such a file either); remove those three bytes to use it"
)


@dataclass(frozen=True, slots=True)
class RawLine:
    """One non-blank line: 1-based number, byte offset of its start, bytes without EOL."""

    number: int
    offset: int
    raw: bytes
    terminated: bool


LineSpan = tuple[int, int, int, bool]
_BLANK_START = frozenset(b" \t\r\n\x0b\x0c")


def line_spans(data: bytes, start: int = 0, stop: int | None = None) -> Iterator[LineSpan]:
    """Where each non-blank line of ``data[start:stop]`` lies: (index among all lines
    there, blank ones counted; start; end without the line's CR LF or LF; whether a
    newline ends it). The one place lines are found; everything else builds on it."""
    end_of_data = len(data) if stop is None else stop
    find = data.find
    pos = start
    index = 0
    while pos < end_of_data:
        end = find(b"\n", pos, end_of_data)
        terminated = end != -1
        if not terminated:
            end = end_of_data
        cut = end - 1 if end > pos and data[end - 1] == 13 else end
        if cut > pos and (data[pos] not in _BLANK_START or data[pos:cut].strip()):
            yield index, pos, cut, terminated
        index += 1
        pos = end + 1


def split_lines(data: bytes, *, base_offset: int = 0, first_number: int = 1) -> list[RawLine]:
    """Split bytes into non-blank lines, tolerating CRLF and blank lines.

    Only the final segment can be unterminated; it is returned with
    ``terminated=False`` so the caller can decide whether it is torn.
    """
    return [
        RawLine(first_number + index, base_offset + start, data[start:end], terminated)
        for index, start, end, terminated in line_spans(data)
    ]


def first_line(data: bytes) -> RawLine | None:
    """The first non-blank line: where a header must be. A byte order mark stays in
    it (pi 1.5 refuses such a file; the loader says why)."""
    for index, start, end, terminated in line_spans(data):
        return RawLine(index + 1, start, data[start:end], terminated)
    return None


def after_line(data: bytes, line: RawLine) -> int:
    """The offset just past ``line``'s newline (the end of ``data`` if it has none)."""
    return data.index(b"\n", line.offset) + 1 if line.terminated else len(data)


def iter_lines(data: bytes) -> Iterator[bytes]:
    """The non-blank lines of ``data`` (without line ends), one at a time."""
    for _, start, end, _ in line_spans(data):
        yield data[start:end]


def count_newlines(data: bytes, start: int = 0, stop: int | None = None) -> int:
    """``data.count(b"\\n", start, stop)`` (``start`` and ``stop`` within ``data``, not
    negative), about four times as fast: bytes.count looks at one byte at a time, while
    replace finds each newline with memchr. A long range is counted in pieces, so no
    copy of it is made whole."""
    end = len(data) if stop is None else stop
    if start == 0 and end == len(data) and end <= _COUNT_PIECE:
        return end - len(data.replace(b"\n", b""))  # (the bytes themselves: no copy)
    total = 0
    for at in range(start, end, _COUNT_PIECE):
        piece = data[at : min(at + _COUNT_PIECE, end)]
        total += len(piece) - len(piece.replace(b"\n", b""))
    return total


_COUNT_PIECE = 1 << 16


def consumed_length(data: bytes) -> int:
    """Bytes up to and including the last newline: the part later appends build on."""
    return data.rfind(b"\n") + 1


class LineSource:
    """The file a session was read from, held open so the bytes of entries not kept
    in memory can be read back by offset without rereading the file.

    Holding the descriptor (not the path) means a file replaced by a rename still
    reads as it was when indexed; an entry checks what it reads (see StoredEntry.raw).
    """

    __slots__ = ("__weakref__", "_close", "fd", "path")

    def __init__(self, path: Path | None, fd: int) -> None:
        self.path = path
        self.fd = fd
        self._close = weakref.finalize(self, os.close, fd)  # once nothing refers to it

    def read(self, offset: int, length: int, *, after: bool = True) -> bytes:
        """``length`` bytes at ``offset`` and, with ``after``, the one byte after them
        (if any)."""
        try:
            return pread(self.fd, length + 1 if after else length, offset)
        except OSError as exc:
            raise SessionFormatError(
                self.path, None, f"cannot read: {exc.strerror or exc}"
            ) from None


def file_bytes(header: dict[str, Any] | bytes, lines: Iterable[bytes]) -> bytes:
    """A whole file: the header line, then each line, every one ending in a newline."""
    head = header if isinstance(header, bytes) else dumps(header)
    return b"".join([head, b"\n", *(line + b"\n" for line in lines)])


def whole_first_line(fd: int, size: int) -> tuple[RawLine, int, int] | None:
    """For a reader of a large file a chunk at a time: the first line of the open file
    ``fd`` (where a header must be) when its first ``size`` bytes hold it whole, where
    the lines after it start, and the CRC-32 of the bytes before them; None when they
    do not (the file is then read another way)."""
    first = pread(fd, size, 0)
    line = first_line(first)
    if line is None or not line.terminated:
        return None
    start = after_line(first, line)
    return line, start, zlib.crc32(memoryview(first)[:start])


class WholeLines:
    """The whole lines of the open file ``fd`` from ``start`` to its end as it is
    now, read ``size`` bytes at a time, so that a large file is never held whole:
    iterating gives ``(data, begin, end)``, ``data[begin:end]`` being whole lines as
    they lie in a chunk (a line that crosses chunks is joined into bytes of its own);
    afterwards ``tail`` holds the bytes after the last newline (an unfinished line)."""

    def __init__(self, fd: int, start: int, size: int) -> None:
        self.fd, self.start, self.size = fd, start, size
        self.tail = b""

    def __iter__(self) -> Iterator[tuple[bytes, int, int]]:
        parts: list[bytes] = []  # the start of a line that crosses chunks
        position = self.start
        while chunk := pread(self.fd, self.size, position):
            position += len(chunk)
            begin = 0
            if parts:
                begin = chunk.find(b"\n") + 1
                if not begin:  # (a line longer than a chunk)
                    parts.append(chunk)
                    continue
                line = b"".join([*parts, chunk[:begin]])
                parts = []
                yield line, 0, len(line)
            end = chunk.rfind(b"\n") + 1
            if end > begin:
                yield chunk, begin, end
            else:
                end = begin
            if end < len(chunk):
                parts.append(chunk[end:])
        self.tail = b"".join(parts)
