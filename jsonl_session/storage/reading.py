"""Sorting the lines after a header into entries, bad lines, a torn tail and problems,
fast: many envelopes decoded in one call, a file read in chunks.

Owns the rules for one line (an entry, a bad line, a torn tail, and why) and the
bulk scan that applies them to a whole file or an appended range without building an
object per line first. A region where every line is a plain entry is decoded in one
call; any other region is read line by line by the same rules, so both give the same
result. Entries of a file read from disk keep only short lines in memory; longer ones
are read back through a lines.LineSource. The header and versions are loader.py's;
reading a file in regions, regions.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter

import msgspec

from jsonl_session.format.entry import (
    NotAnObject,
    PlainEnvelope,
    StoredEntry,
    decode_envelope,
    plain_decoder,
)
from jsonl_session.format.jsonio import NotJson, is_utf8
from jsonl_session.format.problems import Problem
from jsonl_session.storage.lines import LineSource, LineSpan, RawLine, count_newlines, line_spans
from jsonl_session.storage.regions import Region

_ID = attrgetter("id")
WINDOW_BYTES = 1 << 20
"""Lines are sorted out a window of about this many bytes at a time (ending at a
newline), within a region read at once: about a core's L2 cache, so the passes over
a window (the UTF-8 check, the envelopes, the loop over its lines) find it there.
Windows of 8 MiB made a first open of an 18 MB session a fifth slower."""
INLINE_BYTES = 256  # lines up to this long stay in memory even when a file backs them


@dataclass(slots=True)
class BadLine:
    """A non-blank line that carries no entry; kept so rewrites keep it too."""

    line: int
    offset: int
    raw: bytes


@dataclass(slots=True)
class ReadLines:
    """Lines after the header, sorted out: entries, bad lines, problems, a torn tail.

    ``ordinals`` gives, for each entry, its position among the file's non-blank
    lines (header = 0), for version-1 references by index. ``next_number`` is the
    number the next line would have; ``complete_through`` the offset just past the
    last line that is whole (ends in a newline, or is a valid entry at the very end).
    """

    entries: list[StoredEntry] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    ordinals: list[int] = field(default_factory=list)
    torn: RawLine | None = None
    next_number: int = 1
    complete_through: int = 0
    size: int = 0
    newline_through: int = 0  # offset just past the last newline
    newline_number: int = 1  # the number of the line after that newline


def read_line(
    line: RawLine, *, check_utf8: bool = True
) -> tuple[StoredEntry | BadLine, Problem | None]:
    """One line after the header: an entry or a bad line, and its problem if any.

    Only an unterminated line that is not valid JSON is a torn tail. An entry can
    come with a problem too (bytes that are not UTF-8, read as U+FFFD like pi does).
    ``check_utf8=False`` skips that check when the caller knows the bytes are UTF-8.
    """
    try:
        env = decode_envelope(line.raw)
    except NotJson as exc:
        bad = BadLine(line.number, line.offset, line.raw)
        if not line.terminated:
            message = (
                f"last line is incomplete ({len(line.raw)} bytes, no newline); "
                "skipped, and set aside before the next append"
            )
            return bad, Problem("torn-tail", message, line.number)
        start = fused_entry_start(line.raw)
        if start is not None:
            message = (
                f"not valid JSON: a torn fragment ({start} bytes) with a whole entry after it "
                "(a write cut short, then another writer's line); skipped, as pi skips it; "
                "doctor --repair moves the fragment to a sidecar and keeps the entry"
            )
            return bad, Problem("fused-line", message, line.number)
        return bad, Problem("invalid-json", f"not valid JSON ({exc})", line.number)
    except NotAnObject as exc:
        bad = BadLine(line.number, line.offset, line.raw)
        return bad, Problem("not-an-entry", f"{exc}; skipped", line.number)
    if env.type == "session":
        bad = BadLine(line.number, line.offset, line.raw)
        return bad, Problem("extra-header", "a second session header; ignored", line.number)
    entry = StoredEntry.from_envelope(env, line.number, line.offset, line.raw)
    if env.invalid_utf8 or (check_utf8 and not is_utf8(line.raw)):
        return entry, Problem(
            "invalid-utf8", "bytes that are not UTF-8 were read as U+FFFD", line.number, entry.id
        )
    return entry, None


_ENTRY_START = b'{"type":"'
_MOST_TRIES = 64  # a hostile line full of the pattern costs 64 decodes, not a square


def fused_entry_start(raw: bytes) -> int | None:
    """Where a whole entry starts inside a line that is not JSON, or None.

    A writer killed partway through a line leaves a fragment; a writer that takes no
    lock (pi) then appends its whole line right after it. Every writer of the format
    begins a line with ``{"type":"``, so the entry is the first suffix starting so that
    decodes as an entry object; a block nested inside a line cannot end the line."""
    start = raw.find(_ENTRY_START, 1)
    for _ in range(_MOST_TRIES):
        if start < 0:
            return None
        try:
            env = decode_envelope(raw[start:])
        except (NotJson, NotAnObject):
            start = raw.find(_ENTRY_START, start + 1)
            continue
        return start if env.type != "session" and isinstance(env.id, str) else None
    return None


def _sort(out: ReadLines, line: RawLine, ordinal: int, check_utf8: bool) -> None:
    read, problem = read_line(line, check_utf8=check_utf8)
    if problem is not None:
        out.problems.append(problem)
    if isinstance(read, StoredEntry):
        out.entries.append(read)
        out.ordinals.append(ordinal)
    elif problem is not None and problem.kind == "torn-tail":
        out.torn = line
    else:
        out.bad.append(read)


def split_by_id(read: ReadLines) -> None:
    """Move entries without a string id to the bad lines, with a problem each."""
    if "" not in map(_ID, read.entries):
        return
    valid: list[StoredEntry] = []
    for entry in read.entries:
        if entry.id:
            valid.append(entry)
            continue
        read.bad.append(BadLine(entry.line, entry.offset, entry.raw))
        message = f"{entry.type} entry has no string 'id'; skipped"
        read.problems.append(Problem("invalid-entry", message, entry.line))
    read.entries = valid


def read_appended(data: bytes, base_offset: int, first_number: int) -> ReadLines:
    """Complete lines another writer appended to a version-3 file, sorted out the
    same way as a whole file (entries without an id become bad lines)."""
    read = scan_regions(iter([(data, len(data))]), base_offset, first_number)
    split_by_id(read)
    return read


def scan_regions(
    regions: Iterator[Region],
    base_offset: int,
    first_number: int,
    *,
    source: LineSource | None = None,
    first_ordinal: int = 1,
) -> ReadLines:
    """Sort out every line of consecutive regions (each ending at a newline, but the
    last) starting at ``base_offset`` with line number ``first_number``. With a
    ``source``, entries longer than INLINE_BYTES are left to be read back from it."""
    out = ReadLines(
        next_number=first_number,
        complete_through=base_offset,
        newline_through=base_offset,
        newline_number=first_number,
    )
    offset = base_offset
    ordinal = first_ordinal
    for data, stop in regions:
        start = 0
        while start < stop:  # a window at a time (see WINDOW_BYTES)
            end = data.find(b"\n", start + WINDOW_BYTES, stop) + 1 or stop
            ordinal = _scan_region(out, data, start, end, offset, ordinal, source)
            start = end
        offset += stop
    out.size = offset
    return out


def _scan_region(
    out: ReadLines,
    data: bytes,
    begin: int,
    stop: int,
    base: int,
    ordinal: int,
    source: LineSource | None,
) -> int:
    """Sort out the lines of ``data[begin:stop]`` (``data`` lies at ``base`` in the
    file); the next ordinal."""
    cut = data.rfind(b"\n", begin, stop) + 1
    number = out.next_number
    before = len(out.entries)
    plain = cut > begin
    lines = _add_plain(out, data, begin, cut, (base, number, ordinal), source) if plain else None
    if lines is None:
        cut = max(cut, begin)
        spans = list(line_spans(data, begin, cut))
        check_utf8 = not is_utf8(memoryview(data)[begin:cut])
        for index, start, end, _ in spans:
            line = RawLine(number + index, base + start, data[start:end], True)
            _sort(out, line, ordinal, check_utf8)
            _leave_to_source(out, source)
            ordinal += 1
        lines = _lines_through(data, begin, cut, spans)
    else:
        ordinal += len(out.entries) - before
    out.next_number = out.newline_number = number + lines
    out.complete_through = out.newline_through = base + cut
    tail = data[cut:stop]
    if tail.strip():
        line = RawLine(out.next_number, base + cut, tail.removesuffix(b"\r"), False)
        _sort(out, line, ordinal, True)
        if out.torn is None:  # a whole entry that lacks only its newline
            out.next_number += 1
            out.complete_through = base + stop
        ordinal += 1
    return ordinal


def _lines_through(data: bytes, begin: int, cut: int, spans: list[LineSpan]) -> int:
    """How many lines ``data[begin:cut]`` holds (it ends at a newline): the spans
    number every line, blank ones too, so only the blank lines after the last are
    counted."""
    if not spans:
        return count_newlines(data, begin, cut)
    last_index, _, last_end, _ = spans[-1]
    newline = data.find(b"\n", last_end, cut)
    return last_index + 1 + count_newlines(data, newline + 1, cut)


_OPEN_BRACE = ord("{")
_CLOSE_BRACE = ord("}")
_CR = ord("\r")


def _add_plain(
    out: ReadLines,
    data: bytes,
    begin: int,
    cut: int,
    start_at: tuple[int, int, int],
    source: LineSource | None,
) -> int | None:
    """Entries for the lines of ``data[begin:cut]`` (it ends at a newline) when every
    non-blank one is a plain entry, with their envelopes decoded in one call: how
    many lines there were (blank ones counted). None, adding nothing, when a line
    needs the slow path (not JSON, not UTF-8, another shape, a second header).

    One loop finds each line and builds its entry, the way `line_spans` finds lines
    (blank ones skipped, a CR before the newline not part of the line). The envelopes
    are values separated by any whitespace, so each line must start with ``{`` and
    end with ``}``: then none goes on to the next line (in JSON a ``}`` is never
    followed by a ``{`` inside one value, and a string holds no newline), and as many
    values as lines means one a line. Else a line holding two entries and an entry
    written over two lines would pair envelopes with the wrong lines."""
    whole = memoryview(data)[begin:cut]
    if not is_utf8(whole):
        return None
    try:
        envelopes: list[PlainEnvelope] = plain_decoder.decode_lines(whole)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None  # msgspec.ValidationError is a DecodeError
    base, number, ordinal = start_at
    entries = out.entries
    before = len(entries)
    append = entries.append
    find = data.find
    keep_all = source is None
    words: dict[str, str] = {}  # each type and role as one object (see below)
    previous_id = None
    pos = begin
    for env in envelopes:
        end = find(b"\n", pos, cut)
        if end < 0:  # more envelopes than lines: a line held two
            del entries[before:]
            return None
        stop = end
        if data[pos] != _OPEN_BRACE or data[end - 1] != _CLOSE_BRACE:  # rare
            while True:  # blank lines are skipped, a CR before the newline is no part
                stop = end - 1 if end > pos and data[end - 1] == _CR else end
                text = data[pos:stop].strip()
                if text:
                    break
                number += 1
                pos = end + 1
                end = find(b"\n", pos, cut)
                if end < 0:
                    del entries[before:]
                    return None
            if text[0] != _OPEN_BRACE or text[-1] != _CLOSE_BRACE:  # see the docstring
                del entries[before:]
                return None
        kind = env.type
        if kind == "session":
            del entries[before:]
            return None
        length = stop - pos
        message = env.message
        role = None if message is None else message.role
        # msgspec gives each entry strings of its own; the same type and role, and a
        # parent's id, as one object each: a third less memory for a whole session
        if role is not None:
            role = words.setdefault(role, role)
        parent_id = env.parent_id
        if parent_id == previous_id:
            parent_id = previous_id
        previous_id = env.id
        append(
            StoredEntry(
                number,
                base + pos,
                words.setdefault(kind, kind),
                previous_id,
                parent_id,
                env.timestamp,
                role,
                env.custom_type,
                None if message is None else message.timestamp,
                False,
                length,
                data[pos:stop] if keep_all or length <= INLINE_BYTES else None,
                source,
            )
        )
        number += 1
        pos = end + 1
    if data[pos:cut].strip():  # more lines than envelopes
        del entries[before:]
        return None
    number += count_newlines(data, pos, cut)
    out.ordinals.extend(range(ordinal, ordinal + len(entries) - before))
    return number - start_at[1]


def _leave_to_source(out: ReadLines, source: LineSource | None) -> None:
    """The entry just sorted keeps its bytes only if short (the file backs it)."""
    if source is None or not out.entries:
        return
    entry = out.entries[-1]
    if entry.source is None and entry.inline is not None and entry.length > INLINE_BYTES:
        entry.source = source
        entry.inline = None
