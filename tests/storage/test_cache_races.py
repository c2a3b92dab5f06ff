"""A file rewritten in place (same inode, as pi's writeFileSync does) by another
process while a read is under way: the records the read keeps must not claim the new
bytes were checked, so the next read through the cache answers as an uncached one.
The other process is a real one; the read is paused at the worst moment by wrapping
the step after which the file changes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jsonl_session import Session, list_sessions, search_sessions
from jsonl_session.catalog import listing_read, search_read
from jsonl_session.storage import loader

REWRITE_IN_PLACE = (
    "import sys; f = open(sys.argv[1], 'r+b'); f.seek(int(sys.argv[2])); "
    "f.write(bytes.fromhex(sys.argv[3])); f.close()"
)


def rewrite_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Another process replaces ``old`` with ``new`` (same length) in place."""
    assert len(old) == len(new)
    at = path.read_bytes().index(old)
    subprocess.run(
        [sys.executable, "-c", REWRITE_IN_PLACE, str(path), str(at), new.hex()], check=True
    )


def small_session(path: Path, text: str) -> Path:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T00:00:00Z"}
    entry = {
        "type": "message",
        "id": "a0000001",
        "parentId": None,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1},
    }
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    return path


def pausing(module: Any, name: str, monkeypatch: pytest.MonkeyPatch, then: Any) -> None:
    real = getattr(module, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        then()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)


def test_a_listing_kept_while_the_file_changed_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = small_session(tmp_path / "a.jsonl", "apple pie")
    cache = tmp_path / "cache"
    with monkeypatch.context() as patch:
        pausing(
            listing_read, "stamp", patch, lambda: rewrite_in_place(path, b"apple pie", b"zebra tax")
        )
        list(list_sessions(tmp_path, cache=cache))
    for _ in range(2):
        [cached] = list_sessions(tmp_path, cache=cache)
        [plain] = list_sessions(tmp_path, cache=False)
        assert cached.first_message == plain.first_message == "zebra tax"


def test_a_search_record_kept_while_the_file_changed_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = small_session(tmp_path / "a.jsonl", "apple pie")
    cache = tmp_path / "cache"
    with monkeypatch.context() as patch:
        pausing(
            search_read, "stamp", patch, lambda: rewrite_in_place(path, b"apple pie", b"zebra tax")
        )
        list(search_sessions("apple", [path], cache=cache))
    for word in ("apple", "zebra"):
        cached = list(search_sessions(word, [path], cache=cache))
        plain = list(search_sessions(word, [path], cache=False))
        assert len(cached) == len(plain) == (word == "zebra")


def big_session(path: Path, entries: int = 700) -> Path:
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T00:00:00Z"}]
    parent = None
    for n in range(entries):
        text = "x" * 2_200 if n % 3 else f"short {n}"
        lines.append(
            {
                "type": "message",
                "id": f"e{n:07d}",
                "parentId": parent,
                "timestamp": "2025-01-01T00:00:00.000Z",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": 1,
                },
            }
        )
        parent = f"e{n:07d}"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    assert path.stat().st_size > loader.WHOLE_READ_BYTES
    return path


def test_an_index_record_checked_before_the_file_changed_is_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = big_session(tmp_path / "big.jsonl")
    cache = tmp_path / "cache"
    Session.open(path, cache=cache)  # the record
    with path.open("ab") as file:  # another writer appends a line (the record stays)
        file.write(
            b'{"type":"message","id":"e0000700","parentId":"e0000699","timestamp":'
            b'"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"more",'
            b'"timestamp":1}}\n'
        )
    old = b'"id":"e0000350","parentId":"e0000349"'
    new = b'"id":"e0000350","parentId":"e0000100"'
    with monkeypatch.context() as patch:
        # the record was checked; then, before the read ends, the middle changes
        pausing(loader, "scan_regions", patch, lambda: rewrite_in_place(path, old, new))
        Session.open(path, cache=cache)
    for _ in range(2):
        cached = Session.open(path, cache=cache).get("e0000350")
        plain = Session.open(path, cache=False).get("e0000350")
        assert cached is not None and plain is not None
        assert cached.parent_id == plain.parent_id == "e0000100"
