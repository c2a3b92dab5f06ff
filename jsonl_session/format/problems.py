"""Problems found while reading a session file, reported rather than raised.

A problem never stops a read: the reader skips what it cannot use for meaning,
leaves the bytes where they are, and records a `Problem` with the line number.
Fatal conditions (no header) are `SessionFormatError` instead, in errors.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ProblemKind = Literal[
    "torn-tail",
    "invalid-json",
    "fused-line",
    "not-an-entry",
    "invalid-entry",
    "invalid-utf8",
    "extra-header",
    "header-without-version",
    "newer-version",
    "duplicate-id",
    "missing-parent",
    "cycle",
    "missing-target",
    "invalid-value",
]


@dataclass(frozen=True, slots=True)
class Problem:
    kind: ProblemKind
    message: str
    line: int | None = None
    entry_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "message": self.message}
        if self.line is not None:
            out["line"] = self.line
        if self.entry_id is not None:
            out["entryId"] = self.entry_id
        return out

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.message}"
