"""Helpers for the write-side suites (test_store, test_session, test_concurrency, and
others that check files or run child processes).

Hand-written session files of each format version, a persisted session to start
from, checks that a file is well formed line by line, and small tools for real child
processes (a Python snippet run with ``sys.executable -c`` and a file barrier). The
messages in them come from builders.py; fixtures every suite shares are in
conftest.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from builders import assistant_message, user_message

from jsonl_session import Session
from jsonl_session.storage import portable

ENTRY_ID_RE = re.compile(r"^[0-9a-f]{8}$")
TIMESTAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

# Generous guards so a broken lock shows up as a failure instead of a hung run.
# They bound waiting only; no test asserts how fast anything is.
CHILD_TIMEOUT = 300.0


# --- hand-written session files -------------------------------------------------------

V1_SESSION_ID = "11111111-1111-4111-8111-111111111111"
V2_SESSION_ID = "22222222-2222-4222-8222-222222222222"
V3_SESSION_ID = "33333333-3333-4333-8333-333333333333"
V4_SESSION_ID = "44444444-4444-4444-8444-444444444444"

MALFORMED_LINE = b"this line is not json {"


def v1_bytes() -> bytes:
    """A version-1 file: no ids, a malformed middle line, a hookMessage, and a
    compaction pointing at its first kept entry by line index."""
    return b"".join(
        [
            b'{"type":"session","id":"' + V1_SESSION_ID.encode() + b'",'
            b'"timestamp":"2024-01-01T00:00:00.000Z","cwd":"/work/old"}\n',
            b'{"type":"message","timestamp":"2024-01-01T00:00:01.000Z",'
            b'"message":{"role":"user","content":"first","timestamp":1}}\n',
            MALFORMED_LINE + b"\n",
            b'{"type":"message","timestamp":"2024-01-01T00:00:02.000Z",'
            b'"message":{"role":"hookMessage","customType":"ext","content":"note",'
            b'"display":true,"timestamp":2}}\n',
            b'{"type":"compaction","timestamp":"2024-01-01T00:00:03.000Z",'
            b'"summary":"so far","firstKeptEntryIndex":1,"tokensBefore":42}\n',
        ]
    )


def v2_bytes() -> bytes:
    """A version-2 file: ids and parents, a malformed middle line, a hookMessage."""
    return b"".join(
        [
            b'{"type":"session","version":2,"id":"' + V2_SESSION_ID.encode() + b'",'
            b'"timestamp":"2024-01-01T00:00:00.000Z","cwd":"/work/old"}\n',
            b'{"type":"message","id":"aaaa0001","parentId":null,'
            b'"timestamp":"2024-01-01T00:00:01.000Z",'
            b'"message":{"role":"user","content":"first","timestamp":1}}\n',
            MALFORMED_LINE + b"\n",
            b'{"type":"message","id":"aaaa0002","parentId":"aaaa0001",'
            b'"timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"hookMessage",'
            b'"customType":"ext","content":"note","display":true,"timestamp":2}}\n',
        ]
    )


def v3_bytes(session_id: str = V3_SESSION_ID, version: int = 3) -> bytes:
    """A current file with a user message, an assistant reply and a second user message."""
    return b"".join(
        [
            b'{"type":"session","version":%d,"id":"%s",' % (version, session_id.encode()),
            b'"timestamp":"2024-01-01T00:00:00.000Z","cwd":"/work/new"}\n',
            b'{"type":"message","id":"bbbb0001","parentId":null,'
            b'"timestamp":"2024-01-01T00:00:01.000Z",'
            b'"message":{"role":"user","content":"first","timestamp":1}}\n',
            b'{"type":"message","id":"bbbb0002","parentId":"bbbb0001",'
            b'"timestamp":"2024-01-01T00:00:02.000Z","message":'
            + orjson.dumps(assistant_message("reply", 2))
            + b"}\n",
            b'{"type":"message","id":"bbbb0003","parentId":"bbbb0002",'
            b'"timestamp":"2024-01-01T00:00:03.000Z",'
            b'"message":{"role":"user","content":"second","timestamp":3}}\n',
        ]
    )


def v4_bytes() -> bytes:
    return v3_bytes(V4_SESSION_ID, version=4)


def write_file(path: Path, data: bytes, mode: int = 0o600) -> Path:
    """A file as an earlier run left it: its last change a minute ago, so a torn
    tail counts as settled (store.TORN_TAIL_QUIET_SECONDS)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.chmod(path, mode)
    return age(path)


def age(path: Path, seconds: float = 60.0) -> Path:
    """Set the file's last change ``seconds`` in the past."""
    when = time.time() - seconds
    os.utime(path, (when, when))
    return path


def raw_entry(entry_id: str, parent_id: str | None, **fields: Any) -> bytes:
    """One entry line (without newline) as another writer (pi) would write it."""
    data: dict[str, Any] = {
        "type": fields.pop("type", "custom"),
        "id": entry_id,
        "parentId": parent_id,
        "timestamp": "2024-06-01T00:00:00.000Z",
    }
    data.update(fields)
    return orjson.dumps(data)


def append_raw(path: Path, data: bytes) -> None:
    """Append bytes as a foreign writer would (no lock, no checks)."""
    with open(path, "ab") as handle:
        handle.write(data)


def new_session(folder: Path, **options: Any) -> tuple[Session, str, str]:
    """A persisted session in ``folder``: a user message and an assistant reply."""
    options.setdefault("fsync", "never")
    session = Session.create(cwd=folder, session_dir=folder, **options)
    user_id = session.append_message(user_message())
    assistant_id = session.append_message(assistant_message())
    assert session.path.exists()
    return session, user_id, assistant_id


# --- checking files ---------------------------------------------------------------------


def file_lines(path: Path) -> list[bytes]:
    """The lines of a file, each still ending in its newline (the last may not)."""
    return path.read_bytes().splitlines(keepends=True)


def parsed_lines(path: Path) -> list[dict[str, Any]]:
    """Every line as a JSON object; fails if any line is not complete JSON + ``\\n``."""
    out: list[dict[str, Any]] = []
    for number, line in enumerate(file_lines(path), start=1):
        assert line.endswith(b"\n"), f"line {number} has no newline: {line[:80]!r}"
        value = orjson.loads(line)
        assert isinstance(value, dict), f"line {number} is not an object"
        out.append(value)
    return out


def entry_dicts(path: Path) -> list[dict[str, Any]]:
    """The entries of a well-formed file (every line but the header)."""
    lines = parsed_lines(path)
    assert lines and lines[0]["type"] == "session"
    return lines[1:]


def assert_well_formed(path: Path) -> list[dict[str, Any]]:
    """Every line is complete JSON; ids are unique; every parentId is in the file."""
    entries = entry_dicts(path)
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)), "duplicate ids"
    known = set(ids)
    for entry in entries:
        assert entry["parentId"] is None or entry["parentId"] in known, entry
    return entries


def sidecars(folder: Path, kind: str) -> list[Path]:
    return sorted(p for p in folder.iterdir() if f".{kind}-" in p.name)


def mode_of(path: Path) -> int:
    return os.stat(path).st_mode & 0o777


# --- child processes ------------------------------------------------------------------------


def spawn_python(code: str, *args: str | Path) -> subprocess.Popen[bytes]:
    """Start ``sys.executable -W error -c code args...`` (the same interpreter and venv)."""
    return subprocess.Popen(
        [sys.executable, "-W", "error", "-c", code, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def finish(child: subprocess.Popen[bytes]) -> str:
    """Wait for a child, fail with its stderr if it failed, return its stdout."""
    try:
        out, err = child.communicate(timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        raise AssertionError(f"child process hung; stderr:\n{err.decode()}") from None
    assert child.returncode == 0, f"child failed ({child.returncode}):\n{err.decode()}"
    return out.decode()


def wait_for_file(path: Path, child: subprocess.Popen[bytes] | None = None) -> None:
    """Poll until ``path`` exists (a child's signal); fail early if the child died."""
    deadline = time.monotonic() + CHILD_TIMEOUT
    while not path.exists():
        if child is not None and child.poll() is not None:
            finish(child)
            raise AssertionError(f"child exited before creating {path.name}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {path}")
        time.sleep(0.002)


# Child side of the barrier: signal ready, then wait for the go file.
BARRIER_CODE = """
import pathlib, sys, time
def barrier(folder, tag):
    folder = pathlib.Path(folder)
    (folder / f"ready-{tag}").touch()
    deadline = time.monotonic() + 300
    while not (folder / "go").exists():
        if time.monotonic() > deadline:
            sys.exit("barrier: no go signal")
        time.sleep(0.0005)
"""


def release_barrier(folder: Path, children: dict[str, subprocess.Popen[bytes]]) -> None:
    """Wait until every child is at the barrier, then let them all go at once."""
    for tag, child in children.items():
        wait_for_file(folder / f"ready-{tag}", child)
    (folder / "go").touch()


def try_lock(path: Path) -> bool:
    """Whether a second, independent open of ``path`` can take the exclusive lock now."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return portable.try_lock(fd)  # the lock store.py takes, the same way
    finally:
        os.close(fd)
