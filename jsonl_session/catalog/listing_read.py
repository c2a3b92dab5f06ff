"""Describing one session file from its bytes, by pi's listing rules (see
listing.py): a pi file read whole, or a large one (`LARGE_BYTES`) a chunk at a time,
so that describing it holds a chunk or one line, never the file; only the bytes
after its facts-index row when it has one; another agent's file by its dialect
reader. The facts read are put in the index (storage/facts_index.py) for its
`save`, as the records `_record_encoder` writes. Which files are listed, in what
order, and on how many cores is listing.py's; what the rules take from lines,
listing_facts.py's.
"""

from __future__ import annotations

import io
import os
import zlib
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.catalog.listing_facts import (
    Facts,
    HeaderFacts,
    ListingRecord,
    from_ms,
    header_facts,
    kept_moment,
    line_facts,
)
from jsonl_session.catalog.session_info import SessionInfo
from jsonl_session.format.entry import NotAnObject, loads_object
from jsonl_session.format.jsonio import NotJson
from jsonl_session.storage.cache import RECORD_ENCODING_ERRORS
from jsonl_session.storage.facts_index import FactsIndex, now_ns
from jsonl_session.storage.lines import (
    BOM,
    BOM_PROBLEM,
    WholeLines,
    after_line,
    first_line,
    whole_first_line,
)
from jsonl_session.storage.portable import BINARY
from jsonl_session.storage.stamps import Stamp, kept_crc, stamp, still_valid, summed

NO_MESSAGES = "(no messages)"

# 3 was one record file per session; 4 kept the header's time as its text
RECORD_KIND, RECORD_VERSION = "listing", 5
_record_encoder = msgspec.msgpack.Encoder()
record_decoder = msgspec.msgpack.Decoder(ListingRecord)


def read_and_describe(file_path: str, key: str, index: FactsIndex | None) -> SessionInfo:
    """The file described from its bytes (those after its row's, when it has one),
    its facts put in ``index`` for `FactsIndex.save`."""
    row = index.get(key) if index is not None else None
    record = _decoded(row.record) if row is not None else None
    try:
        # (not open(): a file object and its buffer cost a fifth of a small file's reading)
        fd = os.open(file_path, os.O_RDONLY | BINARY)
        try:
            taken, before = now_ns(), os.fstat(fd)  # both before reading (stamp(), QUIET_NS)
            found = row is not None and record is not None and still_valid(row.stamp, fd)
            if not found or row is None or record is None:
                kept = (index, key, fd, taken)
                if before.st_size >= LARGE_BYTES:
                    large = _describe_large(file_path, before, kept)
                    if large is not None:
                        return large
                return _describe_and_keep(file_path, _read_from(fd, 0), before, kept)
            # what was appended since the row's bytes, a chunk at a time
            facts, cut, crc, tail = _facts_after(fd, row.stamp.covered, row.stamp.crc, record.facts)
            if index is not None:  # stamped anew: once quiet, a stat will do
                _keep(index, key, stamp(fd, cut, crc, before), taken, record.header, facts)
        finally:
            os.close(fd)
    except OSError as exc:
        return _broken(file_path, None, exc.strerror or str(exc))
    return info_of(file_path, record.header, facts.then(line_facts(tail)), before.st_mtime)


LARGE_BYTES = 64 << 20
"""A pi file this long is described a chunk at a time (`READ_BYTES`), never read
whole: a listing's memory is a chunk's, or one line's, whatever the sessions' sizes."""
READ_BYTES = 16 << 20


def _describe_large(
    path: str, before: os.stat_result, kept: tuple[FactsIndex | None, str, int, int]
) -> SessionInfo | None:
    """`_describe_and_keep` of a large file, read a chunk at a time; None when its
    first chunk holds no whole pi header line (it is then read whole, the usual way:
    another agent's file, a damaged one)."""
    index, key, fd, taken = kept
    found = whole_first_line(fd, READ_BYTES)
    if found is None:
        return None
    header_line, start, crc = found
    try:
        header = loads_object(header_line.raw)
    except (NotJson, NotAnObject):
        return None
    if header.get("type") != "session":
        return None
    facts, cut, crc, tail = _facts_after(fd, start, crc, Facts())
    head = header_facts(header)
    if index is not None:
        _keep(index, key, stamp(fd, cut, kept_crc(crc, cut), before), taken, head, facts)
    return info_of(path, head, facts.then(line_facts(tail)), before.st_mtime)


def _facts_after(fd: int, start: int, crc: int, facts: Facts) -> tuple[Facts, int, int, bytes]:
    """``facts`` folded with the listing facts of ``fd``'s whole lines from ``start``
    to its end as it is now, read `READ_BYTES` at a time (storage/lines.WholeLines):
    (the facts, the offset after the last newline, the CRC-32 of the bytes before it,
    continuing ``crc``, that of [0, start), and the bytes after it)."""
    lines = WholeLines(fd, start, READ_BYTES)
    cut = start
    for data, begin, end in lines:
        facts = facts.then(line_facts(data, begin, end))
        crc = zlib.crc32(memoryview(data)[begin:end], crc)
        cut += end - begin
    return facts, cut, crc, lines.tail


def _read_from(fd: int, offset: int) -> bytes:
    """``fd``'s bytes from ``offset`` to its end as it is now (a whole file is read with
    no seek, which a pipe refuses; readall sizes one buffer, past 2 GiB too)."""
    if offset:
        os.lseek(fd, offset, os.SEEK_SET)
    return io.FileIO(fd, closefd=False).readall()


def _decoded(record: bytes) -> ListingRecord | None:
    try:
        decoded: ListingRecord = record_decoder.decode(record)
    except (msgspec.MsgspecError, TypeError, ValueError):
        return None  # a damaged row: the file is read
    return decoded


def _keep(
    index: FactsIndex, key: str, mark: Stamp, taken: int, head: HeaderFacts, facts: Facts
) -> None:
    try:
        record = _record_encoder.encode(ListingRecord(head, facts))
    except RECORD_ENCODING_ERRORS:  # a lone surrogate in a name: that file is read each time
        return
    index.put(key, mark, taken, record)


def _describe_and_keep(
    path: str,
    data: bytes,
    before: os.stat_result,
    kept: tuple[FactsIndex | None, str, int, int],
) -> SessionInfo:
    """Describe a file read whole, and keep its facts in ``kept``: (the index, the
    file's key there, its descriptor, when its stat ``before`` was taken)."""
    index, key, fd, taken = kept
    mtime = before.st_mtime
    header_line = first_line(data)
    header: dict[str, Any] | None = None
    try:
        header = loads_object(header_line.raw) if header_line is not None else None
    except (NotJson, NotAnObject):
        header = None
    if header_line is None or header is None or header.get("type") != "session":
        foreign = _foreign_info(path, data, mtime) if header_line is not None else None
        if foreign is not None:
            return foreign
        problem = "file is empty" if header_line is None else "line 1 is not a session header"
        if header_line is not None and header_line.raw.startswith(BOM):
            problem = BOM_PROBLEM
        return _broken(path, mtime, problem)
    head = header_facts(header)
    start = after_line(data, header_line)
    cut = max(start, data.rfind(b"\n") + 1)
    facts = line_facts(data, start, cut)
    # A header without its newline may still grow: nothing is kept until it ends.
    if index is not None and cut and header_line.terminated:
        crc = summed(data, cut)
        _keep(index, key, stamp(fd, cut, crc, before, data), taken, head, facts)
    return info_of(path, head, facts.then(line_facts(data, cut)), mtime)


def _foreign_info(path: str, data: bytes, mtime: float) -> SessionInfo | None:
    """Another agent's file described by the same rules, from the pi entries its
    dialect reader makes of it (None when no reader knows it). Not kept in the cache:
    its lines cannot be folded one run at a time as pi's can."""
    if data.startswith(BOM):
        return None
    from jsonl_session.dialects.reading import read_foreign

    loaded = read_foreign(data, Path(path))
    if loaded is None:
        return None
    head = header_facts(loaded.header)
    lines = b"\n".join(entry.raw for entry in loaded.entries) + b"\n"
    info = info_of(path, head, line_facts(lines), mtime)
    return msgspec.structs.replace(info, agent=loaded.dialect)


def info_of(path: str, head: HeaderFacts, facts: Facts, mtime: float) -> SessionInfo:
    created = head.created_ms
    # _held's first test inline: it holds for the times of nearly every session
    if created is not None and not (0 <= created < _SURELY_HELD_MS or _held(created)):
        created = None
    modified = facts.latest
    if modified is None or not modified > 0 or not (modified < _SURELY_HELD_MS or _held(modified)):
        modified = created if created is not None else _file_time_ms(mtime)
    return SessionInfo(
        path,
        head.id,
        head.cwd,
        facts.name,
        head.parent_session,
        created,
        modified,
        facts.count,
        facts.first_message or NO_MESSAGES,
    )


_SURELY_HELD_MS = 32_503_680_000_000
"""Milliseconds from 0 up to this (the year 3000) make a datetime on every platform:
the times of sessions, checked with two comparisons, not by making one."""


def _held(ms: float) -> bool:
    """Whether ``ms`` makes a datetime (kept_moment's test: times a row kept)."""
    return 0 <= ms < _SURELY_HELD_MS or kept_moment(ms) is not None


def _file_time_ms(mtime: float) -> float:
    """A file's mtime in milliseconds when a listing shows it (from_ms's test), else
    the epoch's."""
    ms = mtime * 1000
    return ms if from_ms(ms) is not None else 0.0


def _broken(path: str, mtime: float | None, problem: str) -> SessionInfo:
    moment = _file_time_ms(mtime if mtime is not None else 0)
    return SessionInfo(path, None, "", None, None, None, moment, 0, NO_MESSAGES, problem)
