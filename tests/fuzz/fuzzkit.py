"""Damaged and hostile session files, and every public read path run over each.

`mutate` turns a real file (the bundled fixtures: pi v1-v3, damaged ones, Claude Code
and Codex transcripts) into a hostile one: bits flipped, cut at any byte, lines
swapped, doubled or dropped, invalid UTF-8, a lone surrogate, and hostile values put
anywhere in an entry (huge and non-finite numbers, wrong types, deep nesting, long
strings). `run_read_paths` then opens it and runs every read path: open with and
without the cache, the context at every entry, the tree, stats, the three provider
adapters, every export with and without redaction, textconv, listing, search, the
value check, `doctor --json` through the CLI, and the MCP server's reads (show, context,
tree). `Outcome` says what happened: every exception that is not
the project's own (with a signature: type and the innermost frame in the package),
our errors that do not name the file, any change to the folder (a read never
writes), whether the cache changed a result, and the time taken.

Used by tests/fuzz/test_read_paths.py (a short budget) and benchmarks/fuzz.py (long).
"""

from __future__ import annotations

import os
import random
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from typer.testing import CliRunner

from jsonl_session import (
    JsonlSessionError,
    Session,
    export_session,
    list_sessions,
    search_sessions,
    textconv,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
)
from jsonl_session.cli import app
from jsonl_session.integrations.history import SessionHistory

ROOT = Path(__file__).resolve().parents[2]


def base_files() -> dict[str, bytes]:
    """The bundled fixtures every mutation starts from (name: bytes)."""
    found = {}
    for path in sorted((ROOT / "fixtures").rglob("*.jsonl")):
        found[str(path.relative_to(ROOT / "fixtures"))] = path.read_bytes()
    return found


HOSTILE_VALUES: list[Any] = [
    None, True, 0, -1, 2**70, -(2**64) - 1, 10**400, 1e308, -1e308, 0.5, "", "x" * 5000,
    "\ud83d", "\x00\x1b[2J", [], {}, [1, "a"], {"a": {"b": None}}, "1e400", "NaN",
    "2024-13-45T99:99:99Z", "../../etc/passwd",
]  # fmt: skip
HOSTILE_NUMBERS = [b"1e400", b"-1e400", b"1" + b"0" * 400, b"-0", b"1e-400", b"123456789" * 30]


def mutate(data: bytes, rng: random.Random, hostile: Any = None) -> bytes:
    """One to three random damages to ``data``; ``hostile``: a value to plant (else one
    of HOSTILE_VALUES)."""
    for _ in range(rng.randint(1, 3)):
        data = rng.choice(_MUTATIONS)(data, rng, hostile)
    return data


def _flip_bits(data: bytes, rng: random.Random, _: Any) -> bytes:
    if not data:
        return data
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def _truncate(data: bytes, rng: random.Random, _: Any) -> bytes:
    return data[: rng.randint(0, len(data))]


def _shuffle_lines(data: bytes, rng: random.Random, _: Any) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    action = rng.randrange(3)
    if action == 0:
        lines[i], lines[j] = lines[j], lines[i]
    elif action == 1:
        lines.insert(j, lines[i])
    else:
        del lines[i]
    return b"\n".join(lines)


def _invalid_utf8(data: bytes, rng: random.Random, _: Any) -> bytes:
    at = rng.randint(0, len(data))
    return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f"]) + data[at:]


def _number(data: bytes, rng: random.Random, _: Any) -> bytes:
    digits = [i for i, byte in enumerate(data) if 0x30 <= byte <= 0x39]
    if not digits:
        return data
    at = rng.choice(digits)
    end = at
    while end < len(data) and data[end] in b"0123456789.eE+-":
        end += 1
    return data[:at] + rng.choice(HOSTILE_NUMBERS) + data[end:]


def _plant(data: bytes, rng: random.Random, hostile: Any) -> bytes:
    """Replace a value somewhere in one entry by a hostile one (or nest it deep)."""
    lines = data.split(b"\n")
    candidates = [i for i, line in enumerate(lines) if line.startswith(b"{")]
    if not candidates:
        return data
    index = rng.choice(candidates)
    try:
        value = orjson.loads(lines[index])
    except orjson.JSONDecodeError:
        return data
    planted = hostile if hostile is not None else rng.choice(HOSTILE_VALUES)
    if rng.random() < 0.1:
        planted = _deep(rng.choice([1_500, 20_000]))
    containers: list[Any] = [value]
    node = value
    while isinstance(node, (dict, list)) and node and rng.random() < 0.7:
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        node = node[rng.choice(keys)]
        containers.append(node)
    target = next((c for c in reversed(containers) if isinstance(c, (dict, list)) and c), None)
    if target is None:
        return data
    key = rng.choice(list(target.keys()) if isinstance(target, dict) else range(len(target)))
    target[key] = planted
    lines[index] = _encode(value)
    return b"\n".join(lines)


def _deep(depth: int) -> Any:
    value: Any = "deep"
    for _ in range(depth):
        value = {"a": value}
    return value


def _encode(value: Any) -> bytes:
    from jsonl_session.format.jsonio import dumps

    return dumps(value)


def _lone_surrogate(data: bytes, rng: random.Random, _: Any) -> bytes:
    quotes = [i for i, byte in enumerate(data) if byte == 0x22]
    if not quotes:
        return data
    at = rng.choice(quotes) + 1
    return data[:at] + b"\\ud83d" + data[at:]


_MUTATIONS = [
    _flip_bits,
    _truncate,
    _shuffle_lines,
    _invalid_utf8,
    _number,
    _plant,
    _plant,
    _plant,
    _lone_surrogate,
]


@dataclass
class Outcome:
    """What running every read path over one input gave."""

    unexpected: list[str] = field(default_factory=list)  # signatures
    unnamed: list[str] = field(default_factory=list)  # our errors not naming the file
    wrote: bool = False
    cache_disagreed: bool = False
    seconds: float = 0.0


def run_read_paths(data: bytes, folder: Path, cache: Path) -> Outcome:
    """Write ``data`` as ``folder/s.jsonl`` and run every read path over it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "s.jsonl"
    path.write_bytes(data)
    before = _snapshot(folder)
    outcome = Outcome()
    started = time.perf_counter()
    results: dict[str, Any] = {}
    for name, step in _steps(path, cache, results):
        try:
            step()
        except JsonlSessionError as exc:
            if str(path) not in str(exc) and name not in _MAY_NOT_NAME:
                outcome.unnamed.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
        except Exception as exc:
            outcome.unexpected.append(_signature(name, exc))
    outcome.seconds = time.perf_counter() - started
    outcome.wrote = _snapshot(folder) != before
    plain, cached = results.get("plain"), results.get("cached")
    outcome.cache_disagreed = plain is not None and cached is not None and plain != cached
    return outcome


# steps that take a session object, not the file: their errors name no file
_MAY_NOT_NAME = {
    "anthropic",
    "openai-chat",
    "openai-responses",
    "context",
    "stats",
    "export",
    "check-values",
}


class _CliFailed(Exception):
    """The CLI ended other than by exit 0 or 1 (an exception it did not report)."""


def _doctor(path: Path) -> None:
    result = CliRunner().invoke(app, ["--no-cache", "doctor", "--json", str(path)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    if result.exit_code not in (0, 1):
        raise _CliFailed(f"doctor exited {result.exit_code}: {result.output[-200:]}")


def _mcp_reads(path: Path) -> None:
    history = SessionHistory([path.parent], cwd=str(path.parent), cache=False)
    history.show_session(str(path))
    history.read_context(str(path))
    history.read_tree(str(path))


def _steps(path: Path, cache: Path, results: dict[str, Any]) -> list[tuple[str, Any]]:
    state: dict[str, Session] = {}

    def open_plain() -> None:
        state["plain"] = Session.open(path, cache=False)
        results["plain"] = _facts(state["plain"])

    def open_cached() -> None:
        for _ in range(2):  # the first writes the record, the second reads it
            session = Session.open(path, cache=cache)
        results["cached"] = _facts(session)

    def contexts() -> None:
        session = state["plain"]
        for entry in session.entries:
            session.build_context(entry.id)

    def adapters(adapter: Any) -> Any:
        return lambda: adapter(state["plain"].build_context())

    def stats() -> None:
        session = state["plain"]
        session.token_breakdown()
        session.tree()

    def exports() -> None:
        for fmt in ("markdown", "html", "json"):
            for redact in (False, True):
                export_session(state["plain"], fmt, redact=redact)

    def need_session(step: Any) -> Any:
        def run() -> None:
            if "plain" in state:
                step()

        return run

    return [
        ("open", open_plain),
        ("open-cached", open_cached),
        ("context", need_session(contexts)),
        ("anthropic", need_session(adapters(to_anthropic))),
        ("openai-chat", need_session(adapters(to_openai_chat))),
        ("openai-responses", need_session(adapters(to_openai_responses))),
        ("stats", need_session(stats)),
        ("export", need_session(exports)),
        ("textconv", lambda: textconv(path, cache=False)),
        ("list", lambda: list(list_sessions(path.parent, cache=False))),
        ("search", lambda: list(search_sessions("the", [path], cache=False, tools=True))),
        ("check-values", need_session(lambda: state["plain"].check_values())),
        ("doctor", lambda: _doctor(path)),
        ("mcp", lambda: _mcp_reads(path)),
    ]


def _facts(session: Session) -> Any:
    """What a read must give whether or not the cache served it."""
    context = session.build_context()
    return (
        [(e.id, e.parent_id, e.type) for e in session.entries],
        session.leaf_id,
        _encode(context.messages),
        sorted((p.kind, p.line) for p in session.problems),
    )


def _snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under ``folder``: size, mtime and bytes."""
    found = {}
    for base, _, names in os.walk(folder):
        for name in names:
            path = Path(base) / name
            info = path.stat()
            found[str(path)] = (info.st_size, info.st_mtime_ns, path.read_bytes())
    return found


def _signature(step: str, exc: BaseException) -> str:
    """The exception's type and the innermost frame of the package it came from."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "jsonl_session" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{step}: {type(exc).__name__} at {where}: {str(exc)[:80]}"
