"""Turning another agent's transcript into what the loader returns for a pi file.

A dialect reader (claude.py, codex.py) walks the source's lines and hands each thing
it understood here as a pi entry (a dict in pi's shapes with ``type``, ``id``,
``parentId`` and ``timestamp``), noting the source line it came from; what it did not
understand becomes a problem naming the line. `ForeignTranscript.loaded` then makes
the LoadedFile: a synthetic version-3 header, the entries as StoredEntry records
holding their pi JSON in memory, and the problems. The source file is only read.
Detecting which agent wrote a file is reading.py's; the formats' rules are the
readers'.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.format.entry import StoredEntry, decode_envelope
from jsonl_session.format.jsonio import NotJson, decode_any, dumps, kept
from jsonl_session.format.model import CURRENT_VERSION
from jsonl_session.format.problems import Problem, ProblemKind
from jsonl_session.storage.lines import line_spans
from jsonl_session.storage.loader import LoadedFile


@dataclass(frozen=True, slots=True)
class SourceLine:
    """One non-blank line of the source: its number (from 1), where its bytes start
    and end, and its value (None when it is not valid JSON; see also `kept`)."""

    number: int
    offset: int
    end: int
    value: Any
    terminated: bool

    def kept(self) -> SourceLine:
        """This line without its value, for a reader that goes over its lines twice:
        the decoded values of a large transcript take several times its bytes, so
        they are made again (`value_at`), not held."""
        return SourceLine(self.number, self.offset, self.end, None, self.terminated)


def source_lines(data: bytes, decode: Callable[[bytes], Any] | None = None) -> Iterator[SourceLine]:
    """Every non-blank line, decoded as JSON.parse would (None when it fails), or by
    ``decode`` (a reader's first look, `first_look`), one at a time: a reader holds
    what it needs of each, never every value at once."""
    read = decode or _value
    for index, start, end, terminated in line_spans(data):
        yield SourceLine(index + 1, start, end, read(data[start:end]), terminated)


def first_look(kind: type[msgspec.Struct]) -> Callable[[bytes], Any]:
    """A decoder for `source_lines` that reads only the fields of ``kind`` (a struct
    whose every field defaults to msgspec.UNSET): the dict of those a line holds, each
    as JSON.parse reads it, the rest of the line skipped, not built. A line it cannot
    read so (not JSON, not an object, a lone surrogate or bytes that are not UTF-8
    anywhere it looks, nesting too deep) is decoded whole, as `source_lines` does."""
    decoder = msgspec.json.Decoder(kind)
    names = kind.__struct_fields__

    def look(raw: bytes) -> Any:
        try:
            found = decoder.decode(raw)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            return _value(raw)  # (msgspec.ValidationError is a DecodeError)
        return {
            name: value for name in names if (value := getattr(found, name)) is not msgspec.UNSET
        }

    return look


def value_at(data: bytes, line: SourceLine) -> Any:
    """The value of ``line`` (one of ``data``'s), decoded anew."""
    return _value(data[line.offset : line.end])


def _value(raw: bytes) -> Any:
    try:
        return decode_any(raw)
    except NotJson:
        return None


NO_LINE = SourceLine(0, 0, 0, None, True)
"""Where an entry a reader adds of its own comes from (a title, a leaf marker)."""


def pi_usage(fresh: int, output: int, read: int, written: int, total: int) -> dict[str, Any]:
    """A usage in pi's shape; the cost is not known (another agent's file records
    tokens, not prices)."""
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {
        "input": fresh,
        "output": output,
        "cacheRead": read,
        "cacheWrite": written,
        "totalTokens": total,
        "cost": cost,
    }


def first_objects(data: bytes, count: int = 8) -> list[dict[str, Any]]:
    """The first ``count`` lines that are JSON objects (for recognising a dialect)."""
    found: list[dict[str, Any]] = []
    for index, start, end, _ in line_spans(data):
        if len(found) >= count or index > 4 * count:
            break
        try:
            value = decode_any(data[start:end])
        except NotJson:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


@dataclass(slots=True)
class ForeignTranscript:
    """What a reader found in one source file, in pi's terms."""

    dialect: str
    path: Path | None
    size: int
    entries: list[StoredEntry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    last_line: int = 0
    left_out: Counter[str] = field(default_factory=Counter)

    def leave_out(self, what: str) -> None:
        """Count a line the pi session does not hold (a snapshot, a progress line)."""
        self.left_out[what] += 1

    def add(self, line: SourceLine, entry: dict[str, Any]) -> str:
        """Keep ``entry`` (pi's shape: ``type``, ``id``, ``parentId``, ``timestamp``
        first) as coming from ``line``; returns its id."""
        raw = kept(dumps(entry))
        stored = StoredEntry.from_envelope(decode_envelope(raw), line.number, line.offset, raw)
        self.entries.append(stored)
        self.ids.add(stored.id)
        return stored.id

    def replace(self, index: int, entry: dict[str, Any]) -> None:
        """Change the entry kept at ``index`` (a later line completed it)."""
        old = self.entries[index]
        raw = kept(dumps(entry))
        self.entries[index] = StoredEntry.from_envelope(
            decode_envelope(raw), old.line, old.offset, raw
        )

    def problem(
        self, line: SourceLine | None, message: str, kind: ProblemKind = "not-an-entry"
    ) -> None:
        self.problems.append(Problem(kind, message, line.number if line is not None else None))

    def not_an_object(self, line: SourceLine) -> None:
        """Report a line that is no JSON object (a torn one when it is the unfinished
        last line)."""
        if line.terminated:
            self.problem(line, "not a JSON object; skipped", "invalid-json")
        else:
            self.problem(line, "the last line is incomplete; skipped", "torn-tail")

    def loaded(self, header: dict[str, Any], data: bytes) -> LoadedFile:
        """The LoadedFile for these entries under ``header`` (made a version-3 pi
        header: ``type`` and ``version`` first)."""
        pi_header = {"type": "session", "version": CURRENT_VERSION, **header}
        complete = data.rfind(b"\n") + 1
        return LoadedFile(
            path=self.path,
            header=pi_header,
            version_read=CURRENT_VERSION,
            read_entries=self.entries,
            bad_lines=[],
            problems=sorted(self.problems, key=lambda p: p.line or 0),
            migrations=[],
            end_offset=complete,
            last_line=self.last_line,
            size=self.size,
            dialect=self.dialect,
            not_carried=dict(self.left_out),
        )
