"""Several real processes writing one session file: the lock, catching up, torn
tails and migrations under contention. Children are ``sys.executable -c`` snippets
(helpers_write.spawn_python) that meet at a file barrier so they start together.
Nothing here asserts how long anything takes; timeouts only stop a hung run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
from helpers_write import (
    BARRIER_CODE,
    MALFORMED_LINE,
    V1_SESSION_ID,
    assert_well_formed,
    file_lines,
    finish,
    new_session,
    release_barrier,
    sidecars,
    spawn_python,
    try_lock,
    v1_bytes,
    v2_bytes,
    v3_bytes,
    wait_for_file,
    write_file,
)

from jsonl_session import Session
from jsonl_session.storage import store

APPENDER = (
    BARRIER_CODE
    + """
from jsonl_session import Session
path, count, folder, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
session = Session.open(path, fsync="never")
barrier(folder, tag)
for n in range(count):
    session.append_custom("concurrency", {"writer": tag, "n": n})
print(session.leaf_id)
"""
)

LOCK_HOLDER = """
import pathlib, sys, time
from jsonl_session.storage import store
path, folder = sys.argv[1], pathlib.Path(sys.argv[2])
with store.locked(pathlib.Path(path), "never"):
    (folder / "locked").touch()
    deadline = time.monotonic() + 300
    while not (folder / "release").exists():
        if time.monotonic() > deadline:
            sys.exit("never released")
        time.sleep(0.001)
"""

ONE_APPEND = """
import pathlib, sys
from jsonl_session import Session
path, folder = sys.argv[1], pathlib.Path(sys.argv[2])
session = Session.open(path, fsync="never")
(folder / "opened").touch()
print(session.append_custom("from-child", {"pid": 1}))
"""


def run_appenders(path: Path, barrier: Path, count: int, tags: list[str]) -> dict[str, str]:
    """Start one appender per tag, release them together, return each one's final leaf."""
    barrier.mkdir()
    children = {tag: spawn_python(APPENDER, path, count, barrier, tag) for tag in tags}
    try:
        release_barrier(barrier, children)
    finally:
        leaves = {tag: finish(child).strip() for tag, child in children.items()}
    return leaves


def check_chains(entries: list[dict[str, Any]], tags: list[str], count: int, start: str) -> None:
    """Each writer's entries are all there, in its order, each the child of its previous."""
    for tag in tags:
        mine = [e for e in entries if e.get("customType") == "concurrency"]
        mine = [e for e in mine if e["data"]["writer"] == tag]
        assert [e["data"]["n"] for e in mine] == list(range(count))
        parents = [e["parentId"] for e in mine]
        assert parents == [start] + [e["id"] for e in mine[:-1]]


class TestTwoProcessesAppending:
    def test_two_processes_appending_1000_entries_each_lose_nothing(self, tmp_path: Path) -> None:
        session, _, start = new_session(tmp_path / "sessions")
        before = session.path.read_bytes()
        tags = ["left", "right"]
        leaves = run_appenders(session.path, tmp_path / "barrier", 1000, tags)

        assert session.path.read_bytes().startswith(before)
        entries = assert_well_formed(session.path)  # whole JSON lines, unique ids, parents
        new = entries[2:]
        assert len(new) == 2000
        assert all(e["type"] == "custom" and e["customType"] == "concurrency" for e in new)
        check_chains(entries, tags, 1000, start)
        for tag, leaf in leaves.items():
            assert leaf == [e for e in new if e["data"]["writer"] == tag][-1]["id"]
        writers = {e["data"]["writer"] for e in new}
        assert writers == set(tags)
        reopened = Session.open(session.path)
        assert reopened.problems == []
        assert len(reopened.entries) == 2002
        assert sidecars(session.path.parent, "torn") == []

    def test_an_entry_another_process_appended_is_picked_up_before_appending(
        self, tmp_path: Path
    ) -> None:
        session, _, leaf = new_session(tmp_path)
        child = spawn_python(ONE_APPEND, session.path, tmp_path)
        child_id = finish(child).strip()
        mine = session.append_custom("from-parent")
        assert mine != child_id
        assert session.get(child_id) is not None
        assert session.get(mine).parent_id == leaf  # type: ignore[union-attr]
        entries = assert_well_formed(session.path)
        assert [e["id"] for e in entries[-2:]] == [child_id, mine]


class TestTheLockAcrossProcesses:
    def test_a_lock_held_by_another_process_is_exclusive(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        holder = spawn_python(LOCK_HOLDER, target, tmp_path)
        try:
            wait_for_file(tmp_path / "locked", holder)
            assert not try_lock(target)
        finally:
            (tmp_path / "release").touch()
            finish(holder)
        assert try_lock(target)

    def test_an_append_waits_for_the_lock_then_lands_whole(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path / "s")
        before = session.path.read_bytes()
        with store.locked(session.path, "never"):
            child = spawn_python(ONE_APPEND, session.path, tmp_path)
            try:
                wait_for_file(tmp_path / "opened", child)
                time.sleep(0.3)  # give the child every chance to write if it could
                assert child.poll() is None, "the child finished while the lock was held"
                assert session.path.read_bytes() == before
            except BaseException:
                child.kill()
                finish(child)
                raise
        child_id = finish(child).strip()
        entries = assert_well_formed(session.path)
        assert entries[-1]["id"] == child_id

    def test_a_writer_waiting_through_a_rewrite_appends_to_the_new_file(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "old.jsonl", v2_bytes())
        migrated = v2_bytes().replace(b'"version":2', b'"version":3', 1)
        migrated = migrated.replace(b'"hookMessage"', b'"custom"')
        with store.locked(target, "never") as handle:
            child = spawn_python(ONE_APPEND, target, tmp_path)
            wait_for_file(tmp_path / "opened", child)
            time.sleep(0.3)  # let the child block on the old file's lock
            backup = handle.replace_contents(migrated, "v2.bak")
        child_id = finish(child).strip()
        assert backup.read_bytes() == v2_bytes()
        assert sidecars(tmp_path, "bak") == [backup]
        lines = file_lines(target)
        assert b"".join(lines).startswith(migrated)
        assert orjson.loads(lines[-1])["id"] == child_id
        assert orjson.loads(lines[-1])["parentId"] == "aaaa0002"


class TestContendedRepairs:
    def test_a_torn_tail_is_sealed_once_when_two_processes_append(self, tmp_path: Path) -> None:
        fragment = b'{"type":"message","id":"dddd0001","parentId":"bbbb0003","mess'
        target = write_file(tmp_path / "s" / "s.jsonl", v3_bytes() + fragment)
        tags = ["a", "b"]
        run_appenders(target, tmp_path / "barrier", 200, tags)
        assert sidecars(target.parent, "torn") == [target.with_name("s.jsonl.torn-1")]
        assert target.with_name("s.jsonl.torn-1").read_bytes() == fragment
        assert target.read_bytes().startswith(v3_bytes())
        entries = assert_well_formed(target)
        assert len(entries) == 3 + 400
        check_chains(entries, tags, 200, "bbbb0003")

    def test_a_v1_file_is_migrated_once_when_two_processes_append(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s" / "old.jsonl", v1_bytes())
        read_before = Session.open(target)
        start = read_before.leaf_id
        assert start is not None
        tags = ["a", "b"]
        run_appenders(target, tmp_path / "barrier", 200, tags)
        backups = sidecars(target.parent, "bak")
        assert backups == [target.with_name("old.jsonl.v1.bak-1")]
        assert backups[0].read_bytes() == v1_bytes()
        lines = file_lines(target)
        assert lines.count(MALFORMED_LINE + b"\n") == 1
        header = orjson.loads(lines[0])
        assert header["version"] == 3
        assert header["id"] == V1_SESSION_ID
        good = [line for line in lines if line != MALFORMED_LINE + b"\n"]
        rewritten = target.with_name("check.jsonl")
        rewritten.write_bytes(b"".join(good))
        entries = assert_well_formed(rewritten)
        assert len(entries) == 3 + 400
        check_chains(entries, tags, 200, start)
        assert entries[:3] == [orjson.loads(e.raw) for e in read_before.entries]
