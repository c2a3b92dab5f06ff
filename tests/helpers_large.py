"""Helpers for tests of large files: realistic sessions from benchmarks/generate.py,
and keys that compare everything a reader learns from a loaded file."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from locations import ROOT

from jsonl_session.format.entry import StoredEntry
from jsonl_session.storage.loader import LoadedFile


def generate(path: Path, entries: int = 700, seed: int = 7) -> Path:
    """A realistic pi session of ``entries`` entries (700 make about 1.5 MB), from
    benchmarks/generate.py, loaded under a name of its own (fixtures/ has a
    generate.py too)."""
    name = "benchmarks_generate"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "generate.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    write: Callable[..., object] = sys.modules[name].write_session
    write(path, entries, seed)
    return path


def entry_key(entry: StoredEntry) -> tuple[Any, ...]:
    """Everything an entry holds: where it is, its envelope, its bytes and body."""
    return (
        entry.line,
        entry.offset,
        entry.type,
        entry.id,
        entry.parent_id,
        entry.timestamp,
        entry.role,
        entry.custom_type,
        entry.message_timestamp,
        entry.migrated,
        entry.length,
        entry.raw,
        entry.data(),
    )


def loaded_key(loaded: LoadedFile) -> tuple[Any, ...]:
    """Everything a reader can learn from a loaded file (how it was read aside)."""
    return (
        [entry_key(e) for e in loaded.entries],
        loaded.bad_lines,
        loaded.problems,
        loaded.end_offset,
        loaded.last_line,
        loaded.torn_tail,
        loaded.size,
        loaded.header,
        loaded.version_read,
        loaded.migrations,
        loaded.header_damaged,
    )
