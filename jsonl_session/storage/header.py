"""The header line of a pi session file: whether it is one, and which version to read
the entries as.

Owns the header's checks (the first non-blank line, a JSON object of type "session"
with a string id, an integer version, string cwd/timestamp/parents) and the error told
when it fails, naming a header found later in the file; and the version a file is
migrated from when its header has none; and a quick look at a file's first line
(`pi_file_size`) for a caller deciding, before the file is read, whether to start
workers for it. Reading the lines is loader.py's and reading.py's; migrating is
format/migrate.py's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from jsonl_session.errors import SessionFormatError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.jsonio import NotJson, decode_any
from jsonl_session.format.model import CURRENT_VERSION
from jsonl_session.format.problems import Problem
from jsonl_session.format.walk import as_text
from jsonl_session.storage.lines import BOM, BOM_PROBLEM, RawLine

__all__ = ["effective_version", "pi_file_size", "read_header"]


def read_header(lines: list[RawLine], path: Path | None) -> tuple[dict[str, Any], RawLine]:
    """The header dict of ``lines[0]`` (the later lines only name a misplaced header);
    raise SessionFormatError saying what is wrong."""
    first = lines[0]
    if first.raw.startswith(BOM):
        raise SessionFormatError(path, first.number, BOM_PROBLEM)
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
            path,
            first.number,
            f"the header's version must be an integer, not {as_text(version, 40)}",
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


def effective_version(
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


def pi_file_size(path: Path | str) -> int:
    """The size of the file at ``path`` when its first line looks like a pi session's
    header, else 0 (another agent's transcript, or a file that cannot be read: reading
    it says why). A look at its first 4 KiB, not the header's checks."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(_HEAD_BYTES).split(b"\n", 1)[0]
    except OSError:
        return 0
    return size if _PI_HEADER.search(head) else 0


_HEAD_BYTES = 4096
_PI_HEADER = re.compile(rb'^\s*\{.*"type"\s*:\s*"session"')
