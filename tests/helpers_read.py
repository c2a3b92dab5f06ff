"""Helpers for the read-side suites (reader, migrate, tree, context, listing).

Headers, entries and whole session files as pi writes them, built as real bytes
(nothing is mocked); snapshots that prove a read wrote nothing; a time limit so a
broken read fails instead of hanging. The messages inside entries come from
builders.py (``read_user``, ``read_assistant``, dated from its BASE_MS, which `ts`
counts from too); fixtures every suite shares are in conftest.py.
"""

from __future__ import annotations

import calendar
import json
import os
import signal
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from builders import BASE_MS, read_assistant, read_user

SESSION_ID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
LEAF_MARKER = "jsonl-session/leaf"
OLD_MTIME_NS = 1_000_000_000_000_000_000  # 2001-09-09, far from "now"


# --- JSON text as pi writes it ---------------------------------------------------


def dumps(value: Any) -> bytes:
    """Compact JSON like JSON.stringify: no spaces, non-ASCII kept as UTF-8."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def iso(ms: int) -> str:
    """Milliseconds since the epoch as toISOString() writes them."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def iso_to_ms(text: str) -> int:
    """The inverse of `iso` for its exact format (independent of the library)."""
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    return calendar.timegm(moment.timetuple()) * 1000 + moment.microsecond // 1000


def ts(seconds: float = 0) -> str:
    """An ISO timestamp ``seconds`` after BASE_MS."""
    return iso(BASE_MS + int(seconds * 1000))


# --- header and entries --------------------------------------------------------------


def header(version: int | None = 3, session_id: str = SESSION_ID, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "session"}
    if version is not None:
        out["version"] = version
    out.update({"id": session_id, "timestamp": ts(0), "cwd": "/work/project"})
    out.update(extra)
    return out


def entry(
    kind: str, entry_id: str, parent: str | None, timestamp: str | None = None, **fields: Any
) -> dict[str, Any]:
    """An entry dict with pi's key order: type, id, parentId, timestamp, fields."""
    out: dict[str, Any] = {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        "timestamp": timestamp if timestamp is not None else ts(1),
    }
    out.update(fields)
    return out


def message(entry_id: str, parent: str | None, msg: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return entry("message", entry_id, parent, message=msg, **kw)


def marker(entry_id: str, parent: str | None) -> dict[str, Any]:
    """Our leaf marker: a custom entry of type jsonl-session/leaf."""
    return entry("custom", entry_id, parent, customType=LEAF_MARKER)


# --- files ---------------------------------------------------------------------------


Line = dict[str, Any] | bytes


def file_bytes(
    lines: Iterable[Line], *, eol: bytes = b"\n", final_eol: bool = True, bom: bool = False
) -> bytes:
    """The bytes of a file whose lines are dicts (dumped compact) or raw bytes."""
    parts = [line if isinstance(line, bytes) else dumps(line) for line in lines]
    data = eol.join(parts)
    if final_eol and parts:
        data += eol
    return (b"\xef\xbb\xbf" if bom else b"") + data


def write_session(path: Path, lines: Iterable[Line], **options: Any) -> Path:
    """Write a session file (see `file_bytes`) and age its mtime so writes show."""
    path.write_bytes(file_bytes(lines, **options))
    os.utime(path, ns=(OLD_MTIME_NS, OLD_MTIME_NS))
    return path


@dataclass(frozen=True)
class Snapshot:
    """A file's bytes and mtime plus its folder's listing, to prove nothing was written."""

    path: Path
    data: bytes
    mtime_ns: int
    size: int
    listing: tuple[str, ...]

    def assert_unchanged(self) -> None:
        stat = self.path.stat()
        assert self.path.read_bytes() == self.data, "the file's bytes changed"
        assert stat.st_mtime_ns == self.mtime_ns, "the file's mtime changed"
        assert stat.st_size == self.size
        assert _listing(self.path.parent) == self.listing, "files appeared or vanished"


def _listing(folder: Path) -> tuple[str, ...]:
    return tuple(sorted(p.name for p in folder.iterdir()))


def snapshot(path: Path) -> Snapshot:
    stat = path.stat()
    return Snapshot(path, path.read_bytes(), stat.st_mtime_ns, stat.st_size, _listing(path.parent))


# --- never hanging ----------------------------------------------------------------------


class Hang(Exception):
    """Raised when a block runs longer than its time limit."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail with Hang instead of looping forever (main thread, Unix timers)."""

    def on_alarm(signum: int, frame: object) -> None:
        raise Hang(f"did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- a small, typical session ----------------------------------------------------------


def linear_session(path: Path, count: int = 4) -> list[dict[str, Any]]:
    """Write a v3 file with ``count`` alternating user/assistant messages in one chain."""
    entries: list[dict[str, Any]] = []
    parent: str | None = None
    for i in range(count):
        entry_id = f"{i + 1:08x}"
        msg = (
            read_user(f"u{i}", BASE_MS + i)
            if i % 2 == 0
            else read_assistant(f"a{i}", ms=BASE_MS + i)
        )
        entries.append(message(entry_id, parent, msg, timestamp=ts(i + 1)))
        parent = entry_id
    write_session(path, [header(), *entries])
    return entries
