"""Which agent wrote a file, and reading it as a pi session.

`detect` looks at a file's first lines: a pi header (any version), a Claude Code
transcript (lines carrying ``sessionId`` and ``uuid``, or its bookkeeping lines), a
Codex rollout (``{timestamp, type, payload}`` lines, or the bare lines of 2025).
`read_foreign` is what the loader asks for a file without a pi header (see
storage/foreign.py): the reader of the dialect found, or None. Never writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from jsonl_session.dialects.building import first_objects
from jsonl_session.dialects.claude import read_claude
from jsonl_session.dialects.claude_shapes import is_claude
from jsonl_session.dialects.codex import read_codex
from jsonl_session.dialects.codex_shapes import is_codex
from jsonl_session.storage.loader import LoadedFile

Dialect = Literal["pi", "claude", "codex"]
_PROBE_BYTES = 256 << 10


def detect(data: bytes) -> Dialect | None:
    """The agent that wrote a file starting with ``data`` (None: not one we read)."""
    objects = first_objects(data)
    if objects and objects[0].get("type") == "session":
        return "pi"
    if is_codex(objects):
        return "codex"
    if is_claude(objects):
        return "claude"
    return None


def detect_file(path: Path) -> Dialect | None:
    """`detect` on the first bytes of a file (None also when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            return detect(handle.read(_PROBE_BYTES))
    except OSError:
        return None


def read_foreign(data: bytes, path: Path | None) -> LoadedFile | None:
    """The file read by its dialect's reader; None when it is no dialect we read."""
    dialect = detect(data)
    if dialect == "claude":
        return read_claude(data, path)
    if dialect == "codex":
        return read_codex(data, path)
    return None
