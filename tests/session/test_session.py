"""The write side of the Session façade: appends in pi's key order, ids and times,
deferred persistence, permissions, picking up other writers' lines, torn tails,
migration rewrites, newer versions, branching, labels and names, tree queries,
forks, repair and bad input. Real files in tmp_path; other processes are in
storage/test_concurrency.py."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import assistant_message, user_message
from helpers_write import (
    ENTRY_ID_RE,
    MALFORMED_LINE,
    TIMESTAMP_RE,
    V1_SESSION_ID,
    age,
    append_raw,
    assert_well_formed,
    entry_dicts,
    file_lines,
    mode_of,
    new_session,
    parsed_lines,
    raw_entry,
    sidecars,
    v1_bytes,
    v2_bytes,
    v3_bytes,
    v4_bytes,
    write_file,
)

from jsonl_session import (
    LEAF_MARKER_TYPE,
    EntryValidationError,
    Session,
    SessionTreeError,
    SessionWriteError,
)
from jsonl_session.format.model import UserMessage
from jsonl_session.storage import output_lines, outputs, paths


def last_line(path: Path) -> bytes:
    return file_lines(path)[-1]


def line_of(session: Session, entry_id: str) -> bytes:
    """The exact line (with newline) the entry has in the session's file."""
    entry = session.get(entry_id)
    assert entry is not None
    with open(session.path, "rb") as handle:
        handle.seek(entry.offset)
        return handle.readline()


class TestAppendWritesPiKeyOrder:
    @pytest.fixture
    def started(self, tmp_path: Path) -> tuple[Session, str, str]:
        return new_session(tmp_path)

    def test_a_user_message_line_is_compact_utf8_in_pi_order(
        self, started: tuple[Session, str, str]
    ) -> None:
        session, _, parent = started
        entry_id = session.append_message(
            {"role": "user", "content": "h\u00e9 there", "timestamp": 5}
        )
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"message","id":"%s","parentId":"%s","timestamp":"%s",'
            b'"message":{"role":"user","content":"h\xc3\xa9 there","timestamp":5}}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode())
        )

    def test_a_typed_message_struct_is_written_in_the_files_shape(
        self, started: tuple[Session, str, str]
    ) -> None:
        session, _, _ = started
        entry_id = session.append_message(UserMessage(content="typed", timestamp=7))
        message = entry_dicts(session.path)[-1]["message"]
        assert message == {"role": "user", "content": "typed", "timestamp": 7}
        assert session.leaf_id == entry_id

    def test_a_custom_entry_puts_its_custom_type_before_the_id(
        self, started: tuple[Session, str, str]
    ) -> None:
        session, _, parent = started
        entry_id = session.append_custom("my-ext", {"k": [1, 2]})
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"custom","customType":"my-ext","data":{"k":[1,2]},'
            b'"id":"%s","parentId":"%s","timestamp":"%s"}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode())
        )

    def test_a_custom_entry_without_data_has_no_data_key(
        self, started: tuple[Session, str, str]
    ) -> None:
        session, _, parent = started
        entry_id = session.append_custom("bare")
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"custom","customType":"bare","id":"%s","parentId":"%s","timestamp":"%s"}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode())
        )

    def test_a_compaction_without_optional_fields(self, started: tuple[Session, str, str]) -> None:
        session, first, parent = started
        entry_id = session.append_compaction("summary text", first, 1234)
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"compaction","id":"%s","parentId":"%s","timestamp":"%s",'
            b'"summary":"summary text","firstKeptEntryId":"%s","tokensBefore":1234}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode(), first.encode())
        )

    def test_a_compaction_with_details_and_from_hook(
        self, started: tuple[Session, str, str]
    ) -> None:
        session, first, parent = started
        details = {"readFiles": ["a.py"], "modifiedFiles": []}
        entry_id = session.append_compaction("s", first, 9, details=details, from_hook=True)
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"compaction","id":"%s","parentId":"%s","timestamp":"%s",'
            b'"summary":"s","firstKeptEntryId":"%s","tokensBefore":9,'
            b'"details":{"readFiles":["a.py"],"modifiedFiles":[]},"fromHook":true}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode(), first.encode())
        )

    def test_a_model_change(self, started: tuple[Session, str, str]) -> None:
        session, _, parent = started
        entry_id = session.append_model_change("openai", "gpt-5")
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"model_change","id":"%s","parentId":"%s","timestamp":"%s",'
            b'"provider":"openai","modelId":"gpt-5"}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode())
        )

    def test_a_thinking_level_change(self, started: tuple[Session, str, str]) -> None:
        session, _, parent = started
        entry_id = session.append_thinking_level_change("high")
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"thinking_level_change","id":"%s","parentId":"%s","timestamp":"%s",'
            b'"thinkingLevel":"high"}\n' % (entry_id.encode(), parent.encode(), stamp.encode())
        )

    def test_a_branch_summary(self, started: tuple[Session, str, str]) -> None:
        session, first, parent = started
        entry_id = session.append_branch_summary(first, "what happened", {"n": 1}, False)
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"branch_summary","id":"%s","parentId":"%s","timestamp":"%s",'
            b'"fromId":"%s","summary":"what happened","details":{"n":1},"fromHook":false}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode(), first.encode())
        )

    def test_a_custom_message(self, started: tuple[Session, str, str]) -> None:
        session, _, parent = started
        entry_id = session.append_custom_message("ext", "shown text", False, {"d": 1})
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"custom_message","customType":"ext","content":"shown text",'
            b'"display":false,"details":{"d":1},"id":"%s","parentId":"%s","timestamp":"%s"}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode())
        )

    def test_a_label(self, started: tuple[Session, str, str]) -> None:
        session, first, parent = started
        entry_id = session.append_label(first, "start")
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"label","id":"%s","parentId":"%s","timestamp":"%s",'
            b'"targetId":"%s","label":"start"}\n'
            % (entry_id.encode(), parent.encode(), stamp.encode(), first.encode())
        )

    def test_a_session_info(self, started: tuple[Session, str, str]) -> None:
        session, _, parent = started
        entry_id = session.append_session_info("  Refactor  ")
        stamp = session.get(entry_id).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"session_info","id":"%s","parentId":"%s","timestamp":"%s",'
            b'"name":"Refactor"}\n' % (entry_id.encode(), parent.encode(), stamp.encode())
        )

    def test_every_append_returns_the_new_id_which_becomes_the_leaf(
        self, started: tuple[Session, str, str]
    ) -> None:
        session, first, _ = started
        appends = [
            lambda: session.append_message(user_message("again")),
            lambda: session.append_model_change("p", "m"),
            lambda: session.append_thinking_level_change("low"),
            lambda: session.append_compaction("s", first, 1),
            lambda: session.append_branch_summary(first, "b"),
            lambda: session.append_custom("c"),
            lambda: session.append_custom_message("c", "text"),
            lambda: session.append_label(first, "l"),
            lambda: session.append_session_info("n"),
        ]
        returned = []
        for append in appends:
            previous = session.leaf_id
            entry_id = append()
            assert session.leaf_id == entry_id
            assert session.get(entry_id).parent_id == previous  # type: ignore[union-attr]
            returned.append(entry_id)
        on_disk = [e["id"] for e in entry_dicts(session.path)]
        assert on_disk[-len(returned) :] == returned
        assert Session.open(session.path).leaf_id == returned[-1]


class TestIdsAndTimestamps:
    def test_entry_ids_are_8_lowercase_hex_and_unique(self, tmp_path: Path) -> None:
        session, first, second = new_session(tmp_path)
        ids = [first, second] + [session.append_custom("c", i) for i in range(300)]
        assert all(ENTRY_ID_RE.match(i) for i in ids)
        assert len(set(ids)) == len(ids)
        assert [e["id"] for e in entry_dicts(session.path)] == ids

    def test_the_session_id_is_a_uuid_v7_stamped_with_the_time_of_creation(
        self, tmp_path: Path
    ) -> None:
        before = time.time_ns() // 1_000_000
        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        after = time.time_ns() // 1_000_000
        value = uuid.UUID(session.id)
        assert str(value) == session.id
        assert value.version == 7
        assert value.int >> 62 & 0b11 == 0b10  # RFC 9562 variant
        assert before <= value.int >> 80 <= after

    def test_session_ids_differ(self, tmp_path: Path) -> None:
        ids = {Session.create(cwd=tmp_path, session_dir=tmp_path).id for _ in range(50)}
        assert len(ids) == 50

    def test_header_and_entry_timestamps_are_utc_with_milliseconds(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        session.append_custom("c")
        lines = parsed_lines(session.path)
        for line in lines:
            assert TIMESTAMP_RE.match(line["timestamp"]), line["timestamp"]

    def test_the_file_is_named_after_the_header_timestamp_and_id(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        header = parsed_lines(session.path)[0]
        stamp = header["timestamp"].replace(":", "-").replace(".", "-")
        assert session.path == tmp_path / f"{stamp}_{header['id']}.jsonl"


class TestDeferredPersistence:
    def test_nothing_is_written_before_the_first_user_or_assistant_message(
        self, tmp_path: Path
    ) -> None:
        # pi 1.5 writes the file at the first user message (0.73: the first reply)
        session = Session.create(cwd=tmp_path, session_dir=tmp_path / "sessions")
        first = session.append_system_message(sections={"preamble": "You code."})
        session.append_model_change("anthropic", "claude")
        assert not session.path.exists()
        assert not session.is_persisted
        assert session.leaf_id is not None
        assert session.get(first) is not None
        session.append_message(user_message("one"))
        assert session.is_persisted
        written = [e["type"] for e in parsed_lines(session.path)[1:]]
        assert written == ["message", "model_change", "message"]

    def test_the_first_assistant_message_writes_everything_in_order(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        ids = [
            session.append_message(user_message("one")),
            session.append_thinking_level_change("medium"),
            session.append_message(assistant_message("answer")),
        ]
        assert session.is_persisted
        header_line = file_lines(session.path)[0]
        assert (
            header_line
            == b'{"type":"session","version":3,"id":"%s","timestamp":"%s","cwd":"%s"}\n'
            % (
                session.id.encode(),
                session.header.timestamp.encode(),
                str(tmp_path).encode(),
            )
        )
        lines = parsed_lines(session.path)
        assert lines[0] == {
            "type": "session",
            "version": 3,
            "id": session.id,
            "timestamp": lines[0]["timestamp"],
            "cwd": str(tmp_path),
        }
        assert [e["id"] for e in lines[1:]] == ids
        assert [e["parentId"] for e in lines[1:]] == [None, ids[0], ids[1]]

    def test_appends_after_the_first_write_go_straight_to_disk(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        entry_id = session.append_message(user_message("next"))
        assert entry_dicts(session.path)[-1]["id"] == entry_id
        reopened = Session.open(session.path)
        assert reopened.leaf_id == entry_id

    def test_flush_writes_early_and_later_user_messages_are_written_at_once(
        self, tmp_path: Path
    ) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        first = session.append_message(user_message("one"))
        session.flush()
        assert [e["id"] for e in entry_dicts(session.path)] == [first]
        second = session.append_message(user_message("two"))
        assert [e["id"] for e in entry_dicts(session.path)] == [first, second]

    def test_flush_of_an_empty_session_writes_only_the_header(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path)
        session.flush()
        assert len(parsed_lines(session.path)) == 1
        session.flush()  # already on disk: nothing happens
        assert len(parsed_lines(session.path)) == 1

    def test_an_explicit_path_and_parent_session_are_used(self, tmp_path: Path) -> None:
        target = tmp_path / "chosen.jsonl"
        session = Session.create(cwd="/some/cwd", path=target, parent_session="/p.jsonl")
        session.flush()
        assert session.path == target
        header = parsed_lines(target)[0]
        assert header["cwd"] == "/some/cwd"
        assert header["parentSession"] == "/p.jsonl"

    def test_without_a_session_dir_the_file_goes_under_the_root_for_its_cwd(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JSONL_SESSION_DIR", str(tmp_path / "root"))
        session = Session.create(cwd="/home/ana/proj")
        session.flush()
        assert session.path.parent == tmp_path / "root" / "--home-ana-proj--"


class TestPermissions:
    @pytest.mark.usefixtures("open_umask")
    def test_a_fresh_nested_session_dir_is_0700_and_the_file_0600(self, tmp_path: Path) -> None:
        folder = tmp_path / "a" / "b" / "c"
        session, _, _ = new_session(folder)
        assert mode_of(session.path) == 0o600
        for created in (tmp_path / "a", tmp_path / "a" / "b", folder):
            assert mode_of(created) == 0o700

    @pytest.mark.usefixtures("open_umask")
    def test_sidecars_and_forks_are_0600_too(self, tmp_path: Path) -> None:
        session, first, _ = new_session(tmp_path / "s")
        append_raw(session.path, b'{"torn')
        age(session.path)
        session.append_custom("after-tear")
        fork = session.fork(first)
        copy = Session.fork_from(session.path, tmp_path, tmp_path / "other")
        assert mode_of(session.path.with_name(session.path.name + ".torn-1")) == 0o600
        assert mode_of(fork.path) == 0o600
        assert mode_of(copy.path) == 0o600
        assert mode_of(tmp_path / "other") == 0o700


class TestFsyncPolicy:
    @pytest.mark.parametrize("policy", ["always", "never"])
    def test_both_policies_are_accepted_and_write_the_same_shape(
        self, tmp_path: Path, policy: str
    ) -> None:
        session, _, _ = new_session(tmp_path, fsync=policy)
        session.append_custom("c")
        reopened = Session.open(session.path, fsync=policy)  # type: ignore[arg-type]
        reopened.append_custom("d")
        entries = assert_well_formed(session.path)
        assert [e["type"] for e in entries] == ["message", "message", "custom", "custom"]


class TestOtherWritersAreCaughtUp:
    def test_a_second_session_object_picks_up_the_first_ones_entry(self, tmp_path: Path) -> None:
        origin, _, leaf = new_session(tmp_path)
        one = Session.open(origin.path, fsync="never")
        two = Session.open(origin.path, fsync="never")
        from_one = one.append_custom("one")
        from_two = two.append_custom("two")
        assert from_two != from_one
        assert two.get(from_one) is not None
        assert two.get(from_two).parent_id == leaf  # type: ignore[union-attr]
        entries = assert_well_formed(origin.path)
        assert [e["id"] for e in entries[-2:]] == [from_one, from_two]

    def test_labels_and_names_written_by_another_object_are_seen(self, tmp_path: Path) -> None:
        origin, first, _ = new_session(tmp_path)
        other = Session.open(origin.path, fsync="never")
        other.append_label(first, "from-other")
        other.append_session_info("other's name")
        origin.append_custom("mine")
        assert origin.labels == {first: "from-other"}
        assert origin.name == "other's name"

    def test_many_alternating_appends_lose_nothing(self, tmp_path: Path) -> None:
        origin, _, _ = new_session(tmp_path)
        a = Session.open(origin.path, fsync="never")
        b = Session.open(origin.path, fsync="never")
        written = []
        for i in range(50):
            written.append(a.append_custom("a", i))
            written.append(b.append_custom("b", i))
        entries = assert_well_formed(origin.path)
        assert [e["id"] for e in entries[2:]] == written
        assert set(written) <= {e.id for e in a.entries} | set(written[-1:])
        assert {e.id for e in b.entries} >= set(written)


class TestTornTail:
    FRAGMENT = b'{"type":"message","id":"dddd0001","parentId":"bbbb0003","message":{"rol'

    def test_an_append_seals_the_fragment_and_attaches_to_the_callers_leaf(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + self.FRAGMENT)
        session = Session.open(target, fsync="never")
        assert session.leaf_id == "bbbb0003"
        entry_id = session.append_custom("after-crash")
        sidecar = tmp_path / "s.jsonl.torn-1"
        assert sidecar.read_bytes() == self.FRAGMENT
        assert session.sealed_tails == [sidecar]
        entries = assert_well_formed(target)
        assert [e["id"] for e in entries] == ["bbbb0001", "bbbb0002", "bbbb0003", entry_id]
        assert entries[-1]["parentId"] == "bbbb0003"
        assert target.read_bytes().startswith(v3_bytes())
        assert Session.open(target).problems == []

    def test_a_tear_made_after_the_session_read_the_file_is_sealed_too(
        self, tmp_path: Path
    ) -> None:
        session, _, leaf = new_session(tmp_path)
        before = session.path.read_bytes()
        append_raw(session.path, b'{"type":"custom","id":"ee')
        age(session.path)  # the crash was a while ago
        entry_id = session.append_custom("next")
        assert session.path.with_name(session.path.name + ".torn-1").read_bytes() == (
            b'{"type":"custom","id":"ee'
        )
        assert session.path.read_bytes().startswith(before)
        entries = assert_well_formed(session.path)
        assert entries[-1]["id"] == entry_id
        assert entries[-1]["parentId"] == leaf

    def test_a_fragment_that_splits_a_utf8_character_is_kept_byte_for_byte(
        self, tmp_path: Path
    ) -> None:
        fragment = b'{"type":"message","message":{"content":"caf\xc3'
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + fragment)
        Session.open(target, fsync="never").append_custom("x")
        assert (tmp_path / "s.jsonl.torn-1").read_bytes() == fragment

    def test_a_second_crash_gets_a_second_sidecar(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + b'{"one')
        session = Session.open(target, fsync="never")
        session.append_custom("x")
        append_raw(target, b'{"two')
        age(target)
        session.append_custom("y")
        assert (tmp_path / "s.jsonl.torn-1").read_bytes() == b'{"one'
        assert (tmp_path / "s.jsonl.torn-2").read_bytes() == b'{"two'
        assert len(assert_well_formed(target)) == 5

    def test_a_whole_last_entry_without_newline_is_kept_and_continued(self, tmp_path: Path) -> None:
        whole = raw_entry("cccc0001", "bbbb0003", customType="pi-wrote-this")
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + whole)
        session = Session.open(target, fsync="never")
        assert session.leaf_id == "cccc0001"
        entry_id = session.append_custom("next")
        assert target.read_bytes().startswith(v3_bytes() + whole + b"\n")
        entries = assert_well_formed(target)
        assert [e["id"] for e in entries[-2:]] == ["cccc0001", entry_id]
        assert entries[-1]["parentId"] == "cccc0001"
        assert sidecars(tmp_path, "torn") == []

    def test_a_header_without_newline_gets_one_before_the_first_entry(self, tmp_path: Path) -> None:
        header = v3_bytes().split(b"\n", 1)[0]
        target = write_file(tmp_path / "s.jsonl", header)
        session = Session.open(target, fsync="never")
        entry_id = session.append_custom("first")
        lines = parsed_lines(target)
        assert orjson.dumps(lines[0]) == header
        assert lines[1]["id"] == entry_id
        assert lines[1]["parentId"] is None


class TestMigrationRewrite:
    def test_reading_an_old_file_never_writes(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "old.jsonl", v1_bytes())
        session = Session.open(target)
        assert session.version_read == 1
        session.build_context()
        assert target.read_bytes() == v1_bytes()
        assert sorted(tmp_path.iterdir()) == [target]

    @pytest.mark.parametrize(("version", "content"), [(1, v1_bytes()), (2, v2_bytes())])
    def test_an_append_first_rewrites_the_file_as_v3_keeping_a_backup(
        self, tmp_path: Path, version: int, content: bytes
    ) -> None:
        target = write_file(tmp_path / "old.jsonl", content)
        session = Session.open(target, fsync="never")
        leaf = session.leaf_id
        entry_id = session.append_custom("new")
        backup = tmp_path / f"old.jsonl.v{version}.bak-1"
        assert session.backups == [backup]
        assert backup.read_bytes() == content
        lines = parsed_lines_allowing(target, MALFORMED_LINE)
        assert lines[0]["version"] == 3
        assert lines[-1]["id"] == entry_id
        assert lines[-1]["parentId"] == leaf
        assert MALFORMED_LINE + b"\n" in file_lines(target)
        assert file_lines(target).index(MALFORMED_LINE + b"\n") == 2
        reopened = Session.open(target)
        assert reopened.version_read == 3
        assert reopened.migrations == []
        assert [e.id for e in reopened.entries] == [e.id for e in session.entries]

    def test_the_v1_rewrite_gives_ids_parents_and_renames_the_old_role(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "old.jsonl", v1_bytes())
        Session.open(target, fsync="never").append_custom("new")
        entries = [orjson.loads(line) for line in file_lines(target)[1:] if line[:1] == b"{"]
        user, hook, compaction, new = entries
        assert user["parentId"] is None
        assert hook["parentId"] == user["id"]
        assert hook["message"]["role"] == "custom"
        assert compaction["parentId"] == hook["id"]
        assert compaction["firstKeptEntryId"] == user["id"]
        assert "firstKeptEntryIndex" not in compaction
        assert new["parentId"] == compaction["id"]
        assert all(ENTRY_ID_RE.match(e["id"]) for e in entries)

    def test_only_the_first_append_rewrites(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "old.jsonl", v2_bytes())
        session = Session.open(target, fsync="never")
        session.append_custom("one")
        inode = os.stat(target).st_ino
        session.append_custom("two")
        Session.open(target, fsync="never").append_custom("three")
        assert os.stat(target).st_ino == inode
        assert sidecars(tmp_path, "bak") == [tmp_path / "old.jsonl.v2.bak-1"]

    def test_the_rewritten_file_keeps_0600_and_leaves_no_temporary_file(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "old.jsonl", v2_bytes())
        Session.open(target, fsync="never").append_custom("new")
        assert mode_of(target) == 0o600
        assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl", "old.jsonl.v2.bak-1"]

    def test_lines_another_writer_added_before_our_first_append_are_migrated_and_kept(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "old.jsonl", v2_bytes())
        session = Session.open(target, fsync="never")
        other_bad = b"another broken line"
        other_hook = raw_entry(
            "aaaa0003",
            "aaaa0002",
            type="message",
            message={
                "role": "hookMessage",
                "customType": "ext",
                "content": "late",
                "display": True,
                "timestamp": 3,
            },
        )
        append_raw(target, other_bad + b"\n" + other_hook + b"\n")
        session.append_custom("new")
        lines = file_lines(target)
        assert other_bad + b"\n" in lines, "a line another writer added was dropped"
        late = [orjson.loads(x) for x in lines if b'"aaaa0003"' in x]
        assert len(late) == 1
        assert late[0]["message"]["role"] == "custom", "a v2 role left unmigrated in a v3 file"

    def test_migrate_rewrites_explicitly_and_returns_the_backup(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "old.jsonl", v1_bytes())
        session = Session.open(target, fsync="never")
        backup = session.migrate()
        assert backup == tmp_path / "old.jsonl.v1.bak-1"
        assert backup.read_bytes() == v1_bytes()
        assert parsed_lines_allowing(target, MALFORMED_LINE)[0]["version"] == 3
        assert MALFORMED_LINE + b"\n" in file_lines(target)
        assert len(file_lines(target)) == len(file_lines(backup))
        assert session.migrate() is None
        assert sidecars(tmp_path, "bak") == [backup]

    def test_migrate_keeps_a_torn_tail_as_it_is(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "old.jsonl", v2_bytes() + b'{"tor')
        backup = Session.open(target, fsync="never").migrate()
        assert backup is not None
        assert backup.read_bytes() == v2_bytes() + b'{"tor'
        assert target.read_bytes().endswith(b'\n{"tor')
        assert sidecars(tmp_path, "torn") == []

    def test_a_v3_file_is_not_rewritten(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        inode = os.stat(target).st_ino
        session = Session.open(target, fsync="never")
        assert session.migrate() is None
        session.append_custom("new")
        assert os.stat(target).st_ino == inode
        assert target.read_bytes().startswith(v3_bytes())
        assert session.backups == []
        assert sidecars(tmp_path, "bak") == []

    def test_a_branched_from_header_is_rewritten_as_parent_session(self, tmp_path: Path) -> None:
        content = v1_bytes().replace(
            b'"cwd":"/work/old"}', b'"cwd":"/work/old","branchedFrom":"/src.jsonl"}', 1
        )
        target = write_file(tmp_path / "old.jsonl", content)
        Session.open(target, fsync="never").append_custom("new")
        header = orjson.loads(file_lines(target)[0])
        assert header["parentSession"] == "/src.jsonl"
        assert header["id"] == V1_SESSION_ID


def parsed_lines_allowing(path: Path, allowed: bytes) -> list[dict[str, object]]:
    """Like parsed_lines, but skip one known non-JSON line."""
    out = []
    for line in file_lines(path):
        assert line.endswith(b"\n")
        if line[:-1] == allowed:
            continue
        out.append(orjson.loads(line))
    return out


class TestNewerVersionRefused:
    @pytest.fixture
    def newer(self, tmp_path: Path) -> tuple[Session, Path]:
        target = write_file(tmp_path / "new.jsonl", v4_bytes())
        return Session.open(target, fsync="never"), target

    def test_it_is_read_best_effort(self, newer: tuple[Session, Path]) -> None:
        session, _ = newer
        assert session.version_read == 4
        assert session.leaf_id == "bbbb0003"

    @pytest.mark.parametrize(
        "append",
        [
            lambda s: s.append_message(user_message()),
            lambda s: s.append_model_change("p", "m"),
            lambda s: s.append_thinking_level_change("high"),
            lambda s: s.append_compaction("s", "bbbb0001", 1),
            lambda s: s.append_branch_summary("bbbb0001", "s"),
            lambda s: s.append_custom("c"),
            lambda s: s.append_custom_message("c", "text"),
            lambda s: s.append_label("bbbb0001", "l"),
            lambda s: s.append_session_info("n"),
            lambda s: s.branch("bbbb0001"),
            lambda s: s.branch_with_summary("bbbb0001", "s"),
            lambda s: s.migrate(),
            lambda s: s.repair(),
        ],
        ids=[
            "message",
            "model_change",
            "thinking_level_change",
            "compaction",
            "branch_summary",
            "custom",
            "custom_message",
            "label",
            "session_info",
            "branch",
            "branch_with_summary",
            "migrate",
            "repair",
        ],
    )
    def test_every_write_raises_and_the_file_is_unchanged(
        self, newer: tuple[Session, Path], append: object
    ) -> None:
        session, target = newer
        with pytest.raises(SessionWriteError, match="version 4"):
            append(session)  # type: ignore[operator]
        assert target.read_bytes() == v4_bytes()
        assert sorted(target.parent.iterdir()) == [target]

    def test_a_file_replaced_by_a_newer_writer_after_we_read_it_is_refused(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        session = Session.open(target, fsync="never")
        upgraded = write_file(tmp_path / "upgrade.tmp", v4_bytes())
        os.replace(upgraded, target)
        with pytest.raises(SessionWriteError):
            session.append_custom("c")
        assert target.read_bytes() == v4_bytes()


class TestBranching:
    def test_branch_appends_a_leaf_marker_under_the_target(self, tmp_path: Path) -> None:
        session, first, _ = new_session(tmp_path)
        marker = session.branch(first)
        assert marker is not None
        stamp = session.get(marker).timestamp  # type: ignore[union-attr]
        assert last_line(session.path) == (
            b'{"type":"custom","customType":"%s","id":"%s","parentId":"%s","timestamp":"%s"}\n'
            % (LEAF_MARKER_TYPE.encode(), marker.encode(), first.encode(), stamp.encode())
        )
        assert session.leaf_id == first

    def test_the_move_survives_reopening(self, tmp_path: Path) -> None:
        session, first, _ = new_session(tmp_path)
        session.branch(first)
        reopened = Session.open(session.path, fsync="never")
        assert reopened.leaf_id == first
        entry_id = reopened.append_message(user_message("edited"))
        assert reopened.get(entry_id).parent_id == first  # type: ignore[union-attr]
        assert [e.id for e in reopened.branch_path()] == [first, entry_id]

    def test_the_context_after_reopening_is_the_context_at_the_target(self, tmp_path: Path) -> None:
        session, first, _ = new_session(tmp_path)
        session.branch(first)
        expected = session.build_context(first)
        reopened = Session.open(session.path)
        assert reopened.build_context().messages == expected.messages

    def test_branching_to_the_current_file_leaf_writes_nothing(self, tmp_path: Path) -> None:
        session, first, second = new_session(tmp_path)
        before = session.path.read_bytes()
        assert session.branch(second) is None
        assert session.path.read_bytes() == before
        session.branch(first)
        after_marker = session.path.read_bytes()
        assert session.branch(first) is None
        assert session.path.read_bytes() == after_marker

    def test_a_branch_is_persisted_even_when_another_writer_moved_the_file_leaf(
        self, tmp_path: Path
    ) -> None:
        origin, _, leaf = new_session(tmp_path)
        stale = Session.open(origin.path, fsync="never")
        other = origin.append_custom("from-another-writer")
        marker = stale.branch(leaf)
        reopened = Session.open(origin.path)
        assert reopened.leaf_id == leaf, (
            f"branch({leaf}) returned {marker!r} and wrote nothing, "
            f"so after reopening the leaf is the other writer's entry {other}"
        )

    def test_branching_to_an_unknown_id_raises_and_writes_nothing(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        before = session.path.read_bytes()
        with pytest.raises(SessionTreeError):
            session.branch("ffffffff")
        assert session.path.read_bytes() == before

    def test_reset_leaf_makes_the_next_entry_a_new_root(self, tmp_path: Path) -> None:
        session, first, _ = new_session(tmp_path)
        session.reset_leaf()
        assert session.leaf_id is None
        root = session.append_message(user_message("fresh start"))
        assert entry_dicts(session.path)[-1]["parentId"] is None
        assert [e.id for e in session.roots()] == [first, root]
        assert Session.open(session.path).leaf_id == root

    def test_branch_with_summary_writes_the_summary_under_the_target(self, tmp_path: Path) -> None:
        session, first, left = new_session(tmp_path)
        entry_id = session.branch_with_summary(first, "abandoned path")
        written = entry_dicts(session.path)[-1]
        assert written["id"] == entry_id
        assert written["parentId"] == first
        assert written["fromId"] == left  # the leaf that was left, as pi 1.5 writes it
        assert Session.open(session.path).leaf_id == entry_id


class TestLabelsAndName:
    def test_set_and_clear_a_label(self, tmp_path: Path) -> None:
        session, first, second = new_session(tmp_path)
        session.append_label(first, "start")
        session.append_label(second, "answer")
        assert session.labels == {first: "start", second: "answer"}
        clear_id = session.append_label(first)
        cleared = entry_dicts(session.path)[-1]
        assert cleared["id"] == clear_id
        assert "label" not in cleared
        assert session.labels == {second: "answer"}
        assert Session.open(session.path).labels == {second: "answer"}

    def test_an_empty_label_clears_too(self, tmp_path: Path) -> None:
        session, first, _ = new_session(tmp_path)
        session.append_label(first, "x")
        session.append_label(first, "")
        assert "label" not in entry_dicts(session.path)[-1]
        assert session.labels == {}

    def test_the_latest_session_info_names_the_session_trimmed(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        assert session.name is None
        session.append_session_info("  First  ")
        session.append_session_info("Second\n")
        assert session.name == "Second"
        assert entry_dicts(session.path)[-1]["name"] == "Second"
        assert Session.open(session.path).name == "Second"

    def test_an_empty_name_clears_it(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        session.append_session_info("Named")
        session.append_session_info("   ")
        assert entry_dicts(session.path)[-1]["name"] == ""
        assert session.name is None
        assert Session.open(session.path).name is None


class TestTreeQueries:
    @pytest.fixture
    def tree(self, tmp_path: Path) -> tuple[Session, dict[str, str]]:
        session, u1, a1 = new_session(tmp_path)
        u2 = session.append_message(user_message("path one"))
        session.branch(a1)
        u3 = session.append_message(user_message("path two"))
        a3 = session.append_message(assistant_message("reply two"))
        return session, {"u1": u1, "a1": a1, "u2": u2, "u3": u3, "a3": a3}

    def test_get_returns_stored_entries(self, tree: tuple[Session, dict[str, str]]) -> None:
        session, ids = tree
        entry = session.get(ids["u2"])
        assert entry is not None
        assert entry.type == "message"
        assert entry.parent_id == ids["a1"]
        assert entry.data()["message"]["content"] == "path one"
        assert session.get("ffffffff") is None

    def test_children_are_listed_in_file_order(self, tree: tuple[Session, dict[str, str]]) -> None:
        session, ids = tree
        kids = session.children(ids["a1"])  # the leaf marker of branch() is left out
        assert [e.id for e in kids] == [ids["u2"], ids["u3"]]
        assert [e.id for e in session.children(None)] == [ids["u1"]]
        assert [e.id for e in Session.open(session.path).children(ids["a1"])] == [
            ids["u2"],
            ids["u3"],
        ]

    def test_an_entry_appended_under_a_leaf_marker_is_a_child_of_its_entry(
        self, tree: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = tree
        marker = session.branch(ids["u1"])
        assert marker is not None
        # pi takes the marker (the last entry) for the leaf and appends under it
        later = session.append_custom_message("note", "after the marker")
        with open(session.path, "rb+") as handle:
            lines = handle.read().splitlines(keepends=True)
            last = orjson.loads(lines[-1])
            last["parentId"] = marker
            handle.seek(0)
            handle.truncate()
            handle.writelines([*lines[:-1], orjson.dumps(last) + b"\n"])
        reopened = Session.open(session.path)
        assert [e.id for e in reopened.children(ids["u1"])] == [ids["a1"], later]
        assert reopened.get(marker) is not None  # still an entry, for get()

    def test_branch_path_runs_from_the_root(self, tree: tuple[Session, dict[str, str]]) -> None:
        session, ids = tree
        expected = [ids["u1"], ids["a1"], ids["u3"], ids["a3"]]
        assert [e.id for e in session.branch_path()] == expected
        assert [e.id for e in session.branch_path(ids["u2"])] == [ids["u1"], ids["a1"], ids["u2"]]

    def test_roots(self, tree: tuple[Session, dict[str, str]]) -> None:
        session, ids = tree
        assert [e.id for e in session.roots()] == [ids["u1"]]

    def test_the_reopened_session_agrees(self, tree: tuple[Session, dict[str, str]]) -> None:
        session, ids = tree
        reopened = Session.open(session.path)
        assert reopened.leaf_id == ids["a3"]
        assert [e.id for e in reopened.entries] == [e.id for e in session.entries]


class TestFork:
    @pytest.fixture
    def source(self, tmp_path: Path) -> tuple[Session, dict[str, str]]:
        """u1 <- a1 <- label(u1) <- u2 <- label(a1) <- a2, a label on a2, a marker under
        a1 with a pi-written child, and a label on an entry off every forked path."""
        session, u1, a1 = new_session(tmp_path / "src")
        session.append_label(u1, "start")
        u2 = session.append_message(user_message("second"))
        session.append_label(a1, "answer")
        a2 = session.append_message(assistant_message("second answer"))
        session.append_label(a2, "late")
        marker = session.branch(a1)
        assert marker is not None
        pi_child = "cafe0001"
        append_raw(
            session.path,
            raw_entry(pi_child, marker, type="message", message=user_message("via marker")) + b"\n",
        )
        session = Session.open(session.path, fsync="never")
        return session, {"u1": u1, "a1": a1, "u2": u2, "a2": a2, "marker": marker, "pi": pi_child}

    def test_the_fork_holds_the_root_to_entry_path_with_its_labels(
        self, source: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = source
        fork = session.fork(ids["u2"])
        entries = assert_well_formed(fork.path)
        kinds = [(e["type"], e.get("targetId")) for e in entries]
        assert kinds == [
            ("message", None),
            ("message", None),
            ("message", None),
            ("label", ids["u1"]),
            ("label", ids["a1"]),
        ]
        assert [e["id"] for e in entries[:3]] == [ids["u1"], ids["a1"], ids["u2"]]
        assert entries[0]["parentId"] is None
        assert entries[2]["parentId"] == ids["a1"]
        assert fork.labels == {ids["u1"]: "start", ids["a1"]: "answer"}
        assert fork.leaf_id is not None

    def test_the_header_names_the_source_as_parent_session(
        self, source: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = source
        fork = session.fork(ids["u2"])
        header = parsed_lines(fork.path)[0]
        assert header["parentSession"] == str(session.path)
        assert header["version"] == 3
        assert header["id"] != session.id
        assert header["cwd"] == session.cwd
        assert fork.path.parent == session.path.parent
        assert fork.path != session.path

    def test_markers_and_label_lines_of_the_source_are_not_copied(
        self, source: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = source
        fork = session.fork(ids["pi"])
        source_lines = set(file_lines(session.path))
        for entry in parsed_lines(fork.path)[1:]:
            assert entry.get("customType") != LEAF_MARKER_TYPE
            if entry["type"] == "label":
                assert orjson.dumps(entry) + b"\n" not in source_lines
        entries = assert_well_formed(fork.path)
        assert [e["id"] for e in entries if e["type"] == "message"] == [
            ids["u1"],
            ids["a1"],
            ids["pi"],
        ]
        assert entries[2]["parentId"] == ids["a1"]
        assert fork.labels == {ids["u1"]: "start", ids["a1"]: "answer"}

    def test_unchanged_entries_keep_their_exact_bytes(
        self, source: tuple[Session, dict[str, str]]
    ) -> None:
        session, ids = source
        fork = session.fork(ids["a1"])
        for entry_id in (ids["u1"], ids["a1"]):
            assert line_of(fork, entry_id) == line_of(session, entry_id)

    def test_the_default_is_the_leaf_and_an_explicit_path_is_honoured(
        self, source: tuple[Session, dict[str, str]], tmp_path: Path
    ) -> None:
        session, ids = source
        fork = session.fork(path=tmp_path / "forks" / "mine.jsonl")
        assert fork.path == tmp_path / "forks" / "mine.jsonl"
        messages = [e.id for e in fork.entries if e.type == "message"]
        assert messages == [ids["u1"], ids["a1"], ids["pi"]]

    def test_the_source_is_not_touched(self, source: tuple[Session, dict[str, str]]) -> None:
        session, ids = source
        before = session.path.read_bytes()
        session.fork(ids["u2"])
        assert session.path.read_bytes() == before

    def test_the_fork_is_written_in_blocks_as_its_lines_are_made_and_is_the_same(
        self,
        source: tuple[Session, dict[str, str]],
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        calls_to: Callable[[object, str], list[tuple[Any, ...]]],
    ) -> None:
        session, ids = source
        whole = session.fork(ids["pi"], tmp_path / "whole.jsonl")
        writes = calls_to(outputs.OutputWriter, "write")
        monkeypatch.setattr(output_lines, "LINES_BYTES", 100)  # a block a line or two
        small = session.fork(ids["pi"], tmp_path / "small.jsonl")
        # (the labels' ids are new each time: all else is the same)
        unlabelled = [
            (
                e.type,
                e.id if e.type != "label" else None,
                e.parent_id if e.type != "label" else None,
            )
            for e in whole.entries
        ]
        assert unlabelled == [
            (
                e.type,
                e.id if e.type != "label" else None,
                e.parent_id if e.type != "label" else None,
            )
            for e in small.entries
        ]
        messages = [line_of(whole, e.id) for e in whole.entries if e.type == "message"]
        assert messages == [line_of(small, e.id) for e in small.entries if e.type == "message"]
        assert len(writes) >= len(small.entries)

    def test_forking_an_unknown_entry_raises(self, source: tuple[Session, dict[str, str]]) -> None:
        session, _ = source
        files = sorted(session.path.parent.iterdir())
        with pytest.raises(SessionTreeError):
            session.fork("ffffffff")
        assert sorted(session.path.parent.iterdir()) == files


class TestForkFrom:
    def test_a_v1_source_is_migrated_into_a_v3_copy_for_another_cwd(self, tmp_path: Path) -> None:
        source = write_file(tmp_path / "src" / "old.jsonl", v1_bytes())
        expected = Session.open(source)
        copy = Session.fork_from(source, tmp_path / "elsewhere", tmp_path / "dest")
        header = parsed_lines_allowing(copy.path, MALFORMED_LINE)[0]
        assert header["version"] == 3
        assert header["cwd"] == str(tmp_path / "elsewhere")
        assert header["parentSession"] == str(source)
        assert header["id"] != V1_SESSION_ID
        assert copy.path.parent == tmp_path / "dest"
        reopened = Session.open(copy.path)
        assert reopened.version_read == 3
        assert reopened.migrations == []
        assert [e.id for e in reopened.entries] == [e.id for e in expected.entries]
        assert [e.raw for e in reopened.entries] == [e.raw for e in expected.entries]
        assert reopened.leaf_id == expected.leaf_id
        roles = [e.role for e in reopened.entries if e.type == "message"]
        assert roles == ["user", "custom"]
        assert source.read_bytes() == v1_bytes()

    def test_a_v3_source_is_copied_whole(self, tmp_path: Path) -> None:
        session, first, _ = new_session(tmp_path / "src")
        session.branch(first)
        session.append_label(first, "kept")
        copy = Session.fork_from(session.path, "/target/cwd", tmp_path / "dest")
        assert file_lines(copy.path)[1:] == file_lines(session.path)[1:]
        assert copy.labels == {first: "kept"}

    def test_without_a_session_dir_the_copy_goes_under_the_root_for_the_target_cwd(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JSONL_SESSION_DIR", str(tmp_path / "root"))
        session, _, _ = new_session(tmp_path / "src")
        copy = Session.fork_from(session.path, "/home/ana/other")
        assert copy.path.parent == paths.session_dir_for("/home/ana/other")
        assert copy.path.parent == tmp_path / "root" / "--home-ana-other--"


class TestRepair:
    def test_a_torn_old_file_is_sealed_and_migrated_with_backups(self, tmp_path: Path) -> None:
        fragment = b'{"type":"message","id":"aaaa0003","par'
        target = write_file(tmp_path / "old.jsonl", v2_bytes() + fragment)
        session = Session.open(target, fsync="never")
        made = session.repair()
        sidecar = tmp_path / "old.jsonl.torn-1"
        backup = tmp_path / "old.jsonl.v2.bak-1"
        assert made == [sidecar, backup]
        assert sidecar.read_bytes() == fragment
        assert backup.read_bytes() == v2_bytes()  # the sealed file; the fragment is beside it
        lines = parsed_lines_allowing(target, MALFORMED_LINE)
        assert lines[0]["version"] == 3
        assert [e["id"] for e in lines[1:]] == ["aaaa0001", "aaaa0002"]
        assert Session.open(target).problems[0].line == 3  # the malformed line stays

    def test_a_torn_current_file_is_only_sealed(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + b'{"to')
        made = Session.open(target, fsync="never").repair()
        assert made == [tmp_path / "s.jsonl.torn-1"]
        assert target.read_bytes() == v3_bytes()

    def test_a_healthy_file_is_left_alone(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        inode = os.stat(target).st_ino
        assert Session.open(target, fsync="never").repair() == []
        assert target.read_bytes() == v3_bytes()
        assert os.stat(target).st_ino == inode
        assert sorted(tmp_path.iterdir()) == [target]

    def test_nothing_else_is_changed(self, tmp_path: Path) -> None:
        damaged = (
            v3_bytes()
            + raw_entry("bbbb0002", "bbbb0001", customType="duplicate id")
            + b"\n"
            + raw_entry("cccc0001", "99999999", customType="dangling parent")
            + b"\n"
            + MALFORMED_LINE
            + b"\n"
        )
        target = write_file(tmp_path / "s.jsonl", damaged + b'{"to')
        before = [p.kind for p in Session.open(target).problems]
        made = Session.open(target, fsync="never").repair()
        assert made == [tmp_path / "s.jsonl.torn-1"]
        assert target.read_bytes() == damaged
        after = [p.kind for p in Session.open(target).problems]
        assert "torn-tail" in before
        assert after == [kind for kind in before if kind != "torn-tail"]
        assert {"duplicate-id", "missing-parent", "invalid-json"} <= set(after)


class TestBadInput:
    @pytest.mark.parametrize(
        "message",
        [
            {"content": "no role", "timestamp": 1},
            {"role": "user", "content": 42, "timestamp": 1},
            {"role": 7, "content": "role is not a string", "timestamp": 1},
            {"role": "user", "content": "a timestamp that is no number", "timestamp": "noon"},
            {"role": "compactionSummary", "summary": "derived", "timestamp": 1},
        ],
    )
    def test_a_malformed_message_raises_and_writes_nothing(
        self, tmp_path: Path, message: dict[str, object]
    ) -> None:
        session, _, leaf = new_session(tmp_path)
        before = session.path.read_bytes()
        with pytest.raises(EntryValidationError):
            session.append_message(message)
        assert session.path.read_bytes() == before
        assert session.leaf_id == leaf

    def test_a_message_without_a_timestamp_is_stamped_with_the_time_it_is_appended(
        self, tmp_path: Path
    ) -> None:
        session, _, _ = new_session(tmp_path)
        before = int(time.time() * 1000)
        entry_id = session.append_message({"role": "user", "content": "when?"})
        stamped = session.get(entry_id).data()["message"]  # type: ignore[union-attr]
        assert list(stamped) == ["role", "content", "timestamp"]
        assert before <= stamped["timestamp"] <= int(time.time() * 1000)

    def test_a_malformed_message_before_the_first_write_creates_no_file(
        self, tmp_path: Path
    ) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path / "s")
        with pytest.raises(EntryValidationError):
            session.append_message({"role": "assistant", "content": 1})
        assert not session.path.exists()
        assert session.entries == []

    def test_a_label_for_an_unknown_id_raises_and_writes_nothing(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        before = session.path.read_bytes()
        with pytest.raises(SessionTreeError):
            session.append_label("ffffffff", "nope")
        with pytest.raises(SessionTreeError):
            session.append_compaction("s", "ffffffff", 1)
        assert session.path.read_bytes() == before
