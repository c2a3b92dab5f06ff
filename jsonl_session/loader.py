"""Loading a session file: bytes to a checked header, entries, and problems.

Owns the read path end to end (split lines, check the header, decode envelopes,
migrate in memory) and the rules for damaged input: a torn last line, a bad line
in the middle, a line that is JSON but not an entry. Nothing here writes; a read
never changes the file. Tree checks (duplicates, parents, cycles) are tree.py's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Any

from jsonl_session.errors import SessionFormatError
from jsonl_session.jsonio import NotJson, decode_any, is_utf8
from jsonl_session.jsonl import (
    NotAnObject,
    RawLine,
    StoredEntry,
    consumed_length,
    decode_envelope,
    split_lines,
)
from jsonl_session.migrate import MigrationState, migrate
from jsonl_session.model import CURRENT_VERSION
from jsonl_session.problems import Problem


@dataclass(slots=True)
class BadLine:
    """A non-blank line that carries no entry; kept so rewrites keep it too."""

    line: int
    offset: int
    raw: bytes


@dataclass(slots=True)
class LoadedFile:
    """A session file as read: header dict (migrated), entries, and what was wrong."""

    path: Path | None
    header: dict[str, Any]
    version_read: int
    entries: list[StoredEntry]
    bad_lines: list[BadLine]
    problems: list[Problem]
    migrations: list[str]
    end_offset: int  # bytes up to the last complete line
    last_line: int  # number of the last complete line (blank ones counted)
    torn_tail: RawLine | None = None
    header_damaged: bool = False
    identity: tuple[int, int] | None = None  # (device, inode) of the file read
    size: int = 0  # bytes read

    @property
    def needs_rewrite(self) -> bool:
        """Whether the file must be rewritten before appending (migration changed it)."""
        return bool(self.migrations) or self.header_damaged

    @property
    def writable(self) -> bool:
        return self.version_read <= CURRENT_VERSION


def load_entries(path: Path | str) -> LoadedFile:
    """Read and check a session file; raise SessionFormatError if it has no usable header."""
    file_path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (regular files ignore it).
        fd = os.open(file_path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            stat = os.fstat(fd)
            if S_ISDIR(stat.st_mode):
                raise IsADirectoryError
            if not S_ISREG(stat.st_mode):
                raise SessionFormatError(file_path, None, "not a regular file")
            data = handle.read()
    except FileNotFoundError:
        raise SessionFormatError(file_path, None, "no such file") from None
    except IsADirectoryError:
        raise SessionFormatError(file_path, None, "is a directory, not a session file") from None
    except PermissionError:
        raise SessionFormatError(file_path, None, "permission denied") from None
    except OSError as exc:  # a socket (ENXIO), an I/O error...
        raise SessionFormatError(file_path, None, exc.strerror or str(exc)) from None
    loaded = parse_session_bytes(data, file_path)
    loaded.identity = (stat.st_dev, stat.st_ino)
    return loaded


def parse_session_bytes(data: bytes, path: Path | None = None) -> LoadedFile:
    lines = split_lines(data)
    if not lines:
        raise SessionFormatError(path, 1, "file is empty; a session file starts with a header line")
    header, header_line = _read_header(lines, path)
    version_field = header.get("version")
    problems: list[Problem] = []
    all_utf8 = is_utf8(data)  # one pass over the buffer instead of one per line
    if not all_utf8 and not is_utf8(header_line.raw):
        message = "bytes that are not UTF-8 were read as U+FFFD"
        problems.append(Problem("invalid-utf8", message, header_line.number))
    read = classify_lines(lines[1:], check_utf8=not all_utf8)
    problems.extend(read.problems)
    entries = read.entries
    version, header_damaged = _effective_version(version_field, entries, header_line, problems)
    ordinals = {ordinal: index for index, ordinal in enumerate(read.ordinals)}
    state = MigrationState(header=header, entries=entries, ordinals=ordinals)
    applied = migrate(state, version) if version < CURRENT_VERSION else []
    problems.extend(state.problems)
    valid, without_ids = _split_by_id(entries)
    problems.extend(without_ids.problems)
    torn = read.torn
    last = lines[-1]
    complete_through = len(data) if not last.terminated and torn is None else consumed_length(data)
    return LoadedFile(
        path=path,
        header=header,
        version_read=version,
        entries=valid,
        bad_lines=read.bad + without_ids.bad,
        problems=sorted(problems, key=lambda p: p.line or 0),
        migrations=applied,
        end_offset=complete_through,
        last_line=last.number
        - 1
        + data.count(b"\n", last.offset)
        + (not last.terminated and torn is None),
        torn_tail=torn,
        header_damaged=header_damaged,
        size=len(data),
    )


@dataclass(slots=True)
class ReadLines:
    """Lines after the header, sorted out: entries, bad lines, problems, a torn tail.

    ``ordinals`` gives, for each entry, its position among the file's non-blank
    lines (header = 0), for version-1 references by index.
    """

    entries: list[StoredEntry] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    ordinals: list[int] = field(default_factory=list)
    torn: RawLine | None = None


def classify_lines(
    lines: list[RawLine], *, check_utf8: bool = True, first_ordinal: int = 1
) -> ReadLines:
    out = ReadLines()
    for ordinal, line in enumerate(lines, start=first_ordinal):
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
    return out


def read_appended(data: bytes, base_offset: int, first_number: int) -> ReadLines:
    """Complete lines another writer appended to a version-3 file, sorted out the
    same way as a whole file (entries without an id become bad lines)."""
    read = classify_lines(split_lines(data, base_offset=base_offset, first_number=first_number))
    valid, without_ids = _split_by_id(read.entries)
    read.entries = valid
    read.bad.extend(without_ids.bad)
    read.problems.extend(without_ids.problems)
    return read


def _split_by_id(entries: list[StoredEntry]) -> tuple[list[StoredEntry], ReadLines]:
    without = ReadLines()
    valid: list[StoredEntry] = []
    for entry in entries:
        if entry.id:
            valid.append(entry)
            continue
        without.bad.append(BadLine(entry.line, entry.offset, entry.raw))
        message = f"{entry.type} entry has no string 'id'; skipped"
        without.problems.append(Problem("invalid-entry", message, entry.line))
    return valid, without


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


def _read_header(lines: list[RawLine], path: Path | None) -> tuple[dict[str, Any], RawLine]:
    first = lines[0]
    try:
        header = decode_any(first.raw)
    except NotJson:
        raise SessionFormatError(
            path,
            first.number,
            'the header line is not valid JSON; a session file starts with {"type":"session",...}',
        ) from None
    if not isinstance(header, dict) or header.get("type") != "session":
        later = _find_later_header(lines)
        found = _describe(header)
        if later is not None:
            raise SessionFormatError(
                path,
                first.number,
                f"line 1 is {found}; the session header is on line {later}, "
                "but it must be the first line",
            )
        raise SessionFormatError(path, first.number, f"no session header: line 1 is {found}")
    if not isinstance(header.get("id"), str):
        raise SessionFormatError(path, first.number, "the session header has no string 'id'")
    version = header.get("version")
    if isinstance(version, float) and version.is_integer():
        header["version"] = version = int(version)  # JSON.parse reads 3.0 as 3
    if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
        raise SessionFormatError(
            path, first.number, f"the header's version must be an integer, not {version!r}"
        )
    for key in ("cwd", "timestamp", "parentSession", "branchedFrom"):
        if key in header and not isinstance(header[key], str):
            raise SessionFormatError(
                path,
                first.number,
                f"the header's {key!r} must be a string, not {_describe(header[key])}",
            )
    return header, first


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("type")
        return f"an entry of type {kind!r}" if isinstance(kind, str) else "an object with no type"
    if value is None:
        return "null"
    names = {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}
    return f"a JSON {names.get(type(value), type(value).__name__)} ({value!r:.40})"


def _find_later_header(lines: list[RawLine]) -> int | None:
    for line in lines[1:]:
        if b'"session"' not in line.raw:
            continue
        try:
            value = decode_any(line.raw)
        except NotJson:
            continue
        if isinstance(value, dict) and value.get("type") == "session":
            return line.number
    return None


def _effective_version(
    version_field: Any, entries: list[StoredEntry], header_line: RawLine, problems: list[Problem]
) -> tuple[int, bool]:
    """The version to migrate from, and whether the header is damaged.

    A header without ``version`` means version 1, unless the entries already carry
    ids and parents: then the header lost its version and the tree is kept.
    """
    if isinstance(version_field, int):
        if version_field > CURRENT_VERSION:
            problems.append(
                Problem(
                    "newer-version",
                    f"format version {version_field} is newer than {CURRENT_VERSION}; "
                    "read best-effort, writing refused",
                    header_line.number,
                )
            )
        return version_field, False
    has_tree = any(e.id and e.parent_id is not None for e in entries) or any(
        e.id and _has_parent_key(e) for e in entries[:1]
    )
    if has_tree:
        problems.append(
            Problem(
                "header-without-version",
                "the header has no version but the entries carry ids and parents; "
                "read as version 2, tree kept",
                header_line.number,
            )
        )
        return 2, True
    return 1, False


def _has_parent_key(entry: StoredEntry) -> bool:
    return b'"parentId"' in entry.raw
