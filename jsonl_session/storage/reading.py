"""Sorting the lines after a header into entries, bad lines, a torn tail and problems,
fast: many envelopes decoded in one call, a file read in chunks.

Owns the rules for one line (an entry, a bad line, a torn tail, and why) and the
bulk scan that applies them to a whole file or an appended range without building an
object per line first. A region where every line is a plain entry is decoded in one
call; any other region is read line by line by the same rules, so both give the same
result. Entries of a file read from disk keep only short lines in memory; longer ones
are read back through a lines.LineSource. The header and versions are loader.py's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec

from jsonl_session.format.entry import (
    BulkEnvelope,
    NotAnObject,
    StoredEntry,
    decode_envelope,
    envelope_decoder,
)
from jsonl_session.format.jsonio import NotJson, is_utf8
from jsonl_session.format.problems import Problem
from jsonl_session.storage.lines import LineSource, LineSpan, RawLine, line_spans

CHUNK_BYTES = 8 << 20
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
    if all(entry.id for entry in read.entries):
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
    read = scan_regions(iter([data]), base_offset, first_number)
    split_by_id(read)
    return read


def file_regions(fd: int, start: int) -> Iterator[bytes]:
    """The file from ``start`` on, in pieces that end at a newline (the last piece
    may not), so no line is split between two pieces."""
    os.lseek(fd, start, os.SEEK_SET)
    pending: list[bytes] = []
    while True:
        chunk = os.read(fd, CHUNK_BYTES)
        if not chunk:
            break
        cut = chunk.rfind(b"\n") + 1
        if cut == 0:
            pending.append(chunk)  # a line longer than a chunk
            continue
        yield b"".join([*pending, chunk[:cut]]) if pending else chunk[:cut]
        pending = [chunk[cut:]] if cut < len(chunk) else []
    if pending:
        yield b"".join(pending)


def scan_regions(
    regions: Iterator[bytes],
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
    for region in regions:
        ordinal = _scan_region(out, region, offset, ordinal, source)
        offset += len(region)
    out.size = offset
    return out


def _scan_region(
    out: ReadLines, region: bytes, base: int, ordinal: int, source: LineSource | None
) -> int:
    cut = region.rfind(b"\n") + 1
    spans = list(line_spans(region, 0, cut))
    number = out.next_number
    envelopes = _bulk_envelopes(region, cut, len(spans))
    if envelopes is None or not _add_plain(
        out, region, (base, number, ordinal), spans, envelopes, source
    ):
        whole = [RawLine(number + n, base + s, region[s:e], True) for n, s, e, _ in spans]
        check_utf8 = not is_utf8(region[:cut])
        for offset, line in enumerate(whole, start=ordinal):
            _sort(out, line, offset, check_utf8)
            _leave_to_source(out, source)
    ordinal += len(spans)
    out.next_number = out.newline_number = number + _lines_through(region, cut, spans)
    out.complete_through = out.newline_through = base + cut
    tail = region[cut:]
    if tail.strip():
        line = RawLine(out.next_number, base + cut, tail.removesuffix(b"\r"), False)
        _sort(out, line, ordinal, True)
        if out.torn is None:  # a whole entry that lacks only its newline
            out.next_number += 1
            out.complete_through = base + len(region)
        ordinal += 1
    return ordinal


def _lines_through(region: bytes, cut: int, spans: list[LineSpan]) -> int:
    """How many lines ``region[:cut]`` holds (it ends at a newline): the spans number
    every line, blank ones too, so only the blank lines after the last are counted."""
    if not spans:
        return region.count(b"\n", 0, cut)
    last_index, _, last_end, _ = spans[-1]
    newline = region.find(b"\n", last_end, cut)
    return last_index + 1 + region.count(b"\n", newline + 1, cut)


def _bulk_envelopes(region: bytes, cut: int, expected: int) -> list[BulkEnvelope] | None:
    """Envelopes of every line in one call, or None when a line needs the slow path
    (not JSON, not UTF-8, another shape): then every line is read on its own."""
    if not expected:
        return None
    whole = region if cut == len(region) else region[:cut]
    if not whole.isascii() and not is_utf8(whole):
        return None
    try:
        envelopes: list[BulkEnvelope] = envelope_decoder.decode_lines(whole)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return envelopes if len(envelopes) == expected else None


def _add_plain(
    out: ReadLines,
    region: bytes,
    start_at: tuple[int, int, int],
    spans: list[LineSpan],
    envelopes: list[BulkEnvelope],
    source: LineSource | None,
) -> bool:
    """Entries for lines whose envelopes decoded in bulk; False (adding nothing) when
    one is not a plain entry, so the region goes the slow way."""
    if any(e.type.__class__ is not str or e.type == "session" for e in envelopes):
        return False
    base, number, ordinal = start_at
    entries = out.entries
    keep_all = source is None
    for (index, start, stop, _), env in zip(spans, envelopes, strict=True):
        length = stop - start
        ident = env.id
        parent = env.parent_id
        stamp = env.timestamp
        message = env.message
        role = None if message is None else message.role
        custom = env.custom_type
        entries.append(
            StoredEntry(
                number + index,
                base + start,
                env.type,
                ident if ident.__class__ is str else "",
                parent if parent.__class__ is str else None,
                stamp if stamp.__class__ is str else "",
                role if role.__class__ is str else None,
                custom if custom.__class__ is str else None,
                None if message is None else message.timestamp,
                False,
                length,
                region[start:stop] if keep_all or length <= INLINE_BYTES else None,
                source,
            )
        )
    out.ordinals.extend(range(ordinal, ordinal + len(spans)))
    return True


def _leave_to_source(out: ReadLines, source: LineSource | None) -> None:
    """The entry just sorted keeps its bytes only if short (the file backs it)."""
    if source is None or not out.entries:
        return
    entry = out.entries[-1]
    if entry.source is None and entry.inline is not None and entry.length > INLINE_BYTES:
        entry.source = source
        entry.inline = None
