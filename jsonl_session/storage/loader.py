"""Loading a session file: bytes to a checked header, entries, and problems.

Owns the read path end to end: open the file, have header.py check the header and
reading.py sort out the lines after it, migrate in memory. A large version-3 file is
read in chunks (a thread reading ahead) and its bodies stay on disk; others are read
whole. What one line is (an entry, a bad line, a torn tail) is reading.py's rule.
Nothing here writes; a read never changes the file. Tree checks (duplicates, parents,
cycles) are tree.py's.
"""

from __future__ import annotations

import importlib
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Any

import msgspec

from jsonl_session.errors import SessionFormatError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.jsonio import is_utf8
from jsonl_session.format.migrate import MigrationState, migrate
from jsonl_session.format.model import CURRENT_VERSION
from jsonl_session.format.problems import Problem
from jsonl_session.storage.cache import RECORD_ENCODING_ERRORS, CacheOption, RecordCache, cache_root
from jsonl_session.storage.foreign import reader_modules
from jsonl_session.storage.header import effective_version, read_header
from jsonl_session.storage.lines import (
    BOM,
    LineSource,
    RawLine,
    after_line,
    first_line,
    split_lines,
)
from jsonl_session.storage.portable import BINARY, NONBLOCK
from jsonl_session.storage.reading import (
    BadLine,
    ReadLines,
    read_appended,
    scan_regions,
    split_by_id,
)
from jsonl_session.storage.regions import CHUNK_BYTES, Region, file_regions, read_ahead
from jsonl_session.storage.stamps import RunningCrc, stamp
from jsonl_session.storage.table import EntryTable, TableRecord, no_source
from jsonl_session.storage.table_build import fresh_table, kept_record, table_record

__all__ = ["BadLine", "LoadedFile", "load_entries", "parse_session_bytes", "read_appended"]


@dataclass(slots=True)
class LoadedFile:
    """A session file as read: header dict (migrated), entries, and what was wrong.

    The entries are ``table``'s (those an index-cache record held; see table.py)
    followed by ``read_entries`` (those read from the file); `entries` joins them.
    """

    path: Path | None
    header: dict[str, Any]
    version_read: int
    read_entries: list[StoredEntry]
    bad_lines: list[BadLine]
    problems: list[Problem]
    migrations: list[str]
    end_offset: int  # bytes up to the last complete line
    last_line: int  # number of the last complete line (blank ones counted)
    torn_tail: RawLine | None = None
    header_damaged: bool = False
    identity: tuple[int, int] | None = None  # (device, inode) of the file read
    size: int = 0  # bytes read
    table: EntryTable | None = None
    dialect: str = "pi"  # who wrote the file: "pi", or another agent (dialects/)
    not_carried: dict[str, int] = field(default_factory=dict)  # what a dialect reader left out
    _joined: list[StoredEntry] | None = field(default=None, repr=False, compare=False)

    @property
    def entries(self) -> list[StoredEntry]:
        """Every entry, in file order (the table's are built on the first call)."""
        if self.table is None:
            return self.read_entries
        if self._joined is None:
            self._joined = [*self.table.materialise(), *self.read_entries]
        return self._joined

    @property
    def needs_rewrite(self) -> bool:
        """Whether the file must be rewritten before appending (migration changed it)."""
        return bool(self.migrations) or self.header_damaged

    @property
    def writable(self) -> bool:
        """Whether entries may be appended: a pi file of a version we know."""
        return self.dialect == "pi" and self.version_read <= CURRENT_VERSION

    @property
    def copyable(self) -> bool:
        """Whether its entries may be written into a new pi file (a fork, a copy):
        any file we read, unless its pi version is newer than ours."""
        return self.version_read <= CURRENT_VERSION


WHOLE_READ_BYTES = 1 << 20  # smaller files are read whole and kept in memory
_HEADER_PROBE_BYTES = 64 << 10


def load_entries(path: Path | str, *, cache: CacheOption = None) -> LoadedFile:
    """Read and check a session file; raise SessionFormatError if it has no usable header.

    A large version-3 file is read in chunks, and its entries keep only short lines in
    memory; the rest are read back by offset when a body is needed (see
    lines.LineSource). What was found is kept in the index cache (see cache.py;
    ``cache=False`` bypasses it), so the next read of the file decodes only what was
    appended since. Anything else is read whole.
    """
    file_path = Path(path)
    try:
        # NONBLOCK: opening a FIFO must not wait for a writer (regular files ignore it).
        fd = os.open(file_path, os.O_RDONLY | NONBLOCK | BINARY)
    except FileNotFoundError:
        raise SessionFormatError(file_path, None, "no such file") from None
    except IsADirectoryError:
        raise SessionFormatError(file_path, None, "is a directory, not a session file") from None
    except PermissionError:
        raise SessionFormatError(file_path, None, "permission denied") from None
    except OSError as exc:  # a socket (ENXIO), an I/O error...
        raise SessionFormatError(file_path, None, exc.strerror or str(exc)) from None
    # The source owns the descriptor from here on: entries left on disk read through
    # it, and it is closed once nothing refers to it (at once, for a file read whole).
    source = LineSource(file_path, fd)
    try:
        stat = os.fstat(fd)
        if S_ISDIR(stat.st_mode):
            raise SessionFormatError(file_path, None, "is a directory, not a session file")
        if not S_ISREG(stat.st_mode):
            raise SessionFormatError(file_path, None, "not a regular file")
        loaded = None
        if stat.st_size > WHOLE_READ_BYTES:
            loaded = _load_in_chunks(source, file_path, cache_root(cache))
        if loaded is None:
            loaded = parse_session_bytes(_read_all(fd), file_path)
    except OSError as exc:
        raise SessionFormatError(file_path, None, exc.strerror or str(exc)) from None
    loaded.identity = (stat.st_dev, stat.st_ino)
    return loaded


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, CHUNK_BYTES):
        chunks.append(chunk)
    return b"".join(chunks)


class IndexRecord(msgspec.Struct, array_like=True):
    """What the index cache keeps of a large file: its header line and its lines
    sorted out, up to the last newline of the part it covers."""

    header: bytes
    header_number: int
    header_offset: int
    table: TableRecord
    bad: list[BadLine]
    problems: list[Problem]
    next_number: int


_RECORD_VERSION = 3  # 1 kept the entries as one list; 2 read past a byte order mark
REFRESH_BYTES = 64 << 10  # a record is brought up to date once this much was appended


def _load_in_chunks(source: LineSource, path: Path, cache: Path | None) -> LoadedFile | None:
    """A version-3 (or newer) file read in chunks, bodies left on disk; None for any
    other file (an older version, a damaged header), which is read whole instead.
    With a ``cache`` folder, a cached record of the file's start is used if it still
    holds, and the record is brought up to date when much was appended since."""
    fd = source.fd
    before = os.fstat(fd)  # a change made while reading then shows as one next time
    records = None
    if cache is not None:
        records = RecordCache(cache, "index", IndexRecord, no_source, version=_RECORD_VERSION)
    found = records.load(path, fd) if records is not None else None
    table = None
    if found is not None:
        mark, record = found
        header_line = RawLine(record.header_number, record.header_offset, record.header, True)
        header, _ = read_header([header_line], path)
        table = EntryTable(record.table, source)
        crc = RunningCrc(mark.covered, mark.crc)
        regions = _regions(crc.over(file_regions(fd, mark.covered)), before.st_size - mark.covered)
        read = scan_regions(regions, mark.covered, record.next_number, source=source)
        read.bad[:0] = record.bad
        read.problems[:0] = record.problems
    else:
        start = os.read(fd, _HEADER_PROBE_BYTES)
        line = first_line(start)
        if line is None or not line.terminated:
            return None
        try:
            header, header_line = read_header([line], path)
        except SessionFormatError:
            return None  # read whole, for the full story of what is wrong
        version = header.get("version")
        if not isinstance(version, int) or version < CURRENT_VERSION:
            return None
        after = after_line(start, header_line)
        crc = RunningCrc(after, zlib.crc32(start[:after]))
        regions = file_regions(fd, after)
        if records is not None:  # the CRC is for the record: no cache, no CRC
            regions = crc.over(regions)
        regions = _regions(regions, before.st_size - after)
        read = scan_regions(regions, after, header_line.number + 1, source=source)
    loaded = _assemble(header, header_line, read, path, table)
    fresh = None
    if found is None:  # the tree and the record share the columns of what was read
        fresh = _fresh_table(loaded, read, source)
    grown = read.newline_through - (found[0].covered if found is not None else 0)
    # Else the record stays as it is; `load` kept the times its check saw.
    if records is not None and grown > 0 and (found is None or grown >= REFRESH_BYTES):
        covered = read.newline_through
        try:
            record = _record(header_line, read, table, fresh)
        except RECORD_ENCODING_ERRORS as exc:  # a lone surrogate, an int beyond 64 bits
            records.not_kept(path, f"a value it cannot hold ({exc})")
        else:
            records.save(path, stamp(fd, covered, crc.at(covered), before), record)
    return loaded


def _fresh_table(loaded: LoadedFile, read: ReadLines, source: LineSource) -> EntryTable:
    """A table of the entries read up to the last newline. A clean one stands in for
    them in ``loaded``, as a cached record's table does, so the tree needs no index
    of its own."""
    kept = _entries_kept(read)
    table = fresh_table(read.entries[:kept], source)
    if table.clean:
        loaded.table = table
        loaded.read_entries = read.entries[kept:]
    return table


def _entries_kept(read: ReadLines) -> int:
    """How many entries lie before the last newline (a last line without one may still
    grow, so a record leaves it to be read again next time)."""
    last = read.newline_number
    entries = read.entries
    kept = len(entries)
    while kept and entries[kept - 1].line >= last:  # in file order: only the end can be
        kept -= 1
    return kept


def _regions(regions: Iterator[Region], size: int) -> Iterator[Region]:
    """Regions read ahead by a thread when there are more than one (see read_ahead)."""
    return read_ahead(regions) if size > CHUNK_BYTES else regions


def _record(
    header_line: RawLine, read: ReadLines, table: EntryTable | None, fresh: EntryTable | None
) -> IndexRecord:
    """The record of ``table`` and ``read`` up to the last newline, or of ``fresh``
    (those entries, their record made already)."""
    last = read.newline_number
    if fresh is not None:
        held = kept_record(fresh)
    else:
        entries = read.entries
        kept = _entries_kept(read)
        held = table_record(entries[:kept] if kept < len(entries) else entries, table)
    return IndexRecord(
        header=header_line.raw,
        header_number=header_line.number,
        header_offset=header_line.offset,
        table=held,
        bad=[b for b in read.bad if b.line < last],
        problems=[p for p in read.problems if p.line is not None and p.line < last],
        next_number=last,
    )


def parse_session_bytes(data: bytes, path: Path | None = None) -> LoadedFile:
    header_line = first_line(data)
    if header_line is None:
        raise SessionFormatError(path, 1, "file is empty; a session file starts with a header line")
    try:
        header, _ = read_header([header_line], path)
    except SessionFormatError:
        if not header_line.raw.startswith(BOM):
            foreign = read_foreign(data, path)
            if foreign is not None:
                return foreign
        read_header(split_lines(data), path)  # the same error, told with the whole file
        raise
    after = after_line(data, header_line)
    rest = data[after:]
    read = scan_regions(iter([(rest, len(rest))]), after, header_line.number + 1)
    return _assemble(header, header_line, read, path)


def _assemble(
    header: dict[str, Any],
    header_line: RawLine,
    read: ReadLines,
    path: Path | None,
    table: EntryTable | None = None,
) -> LoadedFile:
    problems: list[Problem] = []
    if not is_utf8(header_line.raw):
        message = "bytes that are not UTF-8 were read as U+FFFD"
        problems.append(Problem("invalid-utf8", message, header_line.number))
    problems.extend(read.problems)
    entries = read.entries
    version, header_damaged = effective_version(
        header.get("version"), entries, header_line, problems
    )
    applied: list[str] = []
    if version < CURRENT_VERSION:
        ordinals = {ordinal: index for index, ordinal in enumerate(read.ordinals)}
        state = MigrationState(header=header, entries=entries, ordinals=ordinals)
        applied = migrate(state, version)
        problems.extend(state.problems)
    before = len(read.problems)
    split_by_id(read)  # after migrating: version 1 entries get their ids there
    problems.extend(read.problems[before:])
    if not header_line.terminated:
        end_offset, last_line = read.size, header_line.number
    else:
        end_offset, last_line = read.complete_through, read.next_number - 1
    return LoadedFile(
        path=path,
        header=header,
        version_read=version,
        read_entries=read.entries,
        bad_lines=sorted(read.bad, key=lambda bad: bad.line),
        problems=sorted(problems, key=lambda p: p.line or 0),
        migrations=applied,
        end_offset=end_offset,
        last_line=last_line,
        torn_tail=read.torn,
        header_damaged=header_damaged,
        size=read.size,
        table=table,
    )


def read_foreign(data: bytes, path: Path | None) -> LoadedFile | None:
    """Another agent's file, read by the first registered dialect reader that knows
    it (storage/foreign.py); None when none does."""
    for name in reader_modules():
        loaded: LoadedFile | None = importlib.import_module(name).read_foreign(data, path)
        if loaded is not None:
            return loaded
    return None
