"""store.py on its own: paths, permissions, new files, sidecars (new_files.py's),
locks, sealing torn tails, whole-line appends and atomic rewrites. Real files in
tmp_path; the cross-process side of locking is in test_concurrency.py."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import orjson
import pytest
from helpers_write import age, file_lines, mode_of, sidecars, try_lock, v3_bytes, write_file
from locations import FIXTURES

from jsonl_session import Session, SessionWriteError
from jsonl_session.storage import new_files, paths, store


class TestPaths:
    def test_a_cwd_is_encoded_as_pi_names_its_folder(self) -> None:
        assert paths.encode_cwd("/home/ana/project") == "--home-ana-project--"

    def test_backslashes_and_colons_become_dashes_too(self) -> None:
        assert paths.encode_cwd("C:\\Users\\ana\\src") == "--C--Users-ana-src--"

    def test_the_session_root_comes_from_the_environment_when_set(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JSONL_SESSION_DIR", str(tmp_path / "root"))
        assert paths.session_root() == tmp_path / "root"
        assert paths.session_dir_for("/a/b") == tmp_path / "root" / "--a-b--"

    def test_a_given_root_wins_over_the_environment(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JSONL_SESSION_DIR", str(tmp_path / "env"))
        assert paths.session_dir_for("/a", tmp_path / "given") == tmp_path / "given" / "--a--"


class TestPermissions:
    @pytest.mark.usefixtures("open_umask")
    def test_missing_folders_are_created_0700(self, tmp_path: Path) -> None:
        deep = tmp_path / "a" / "b" / "c"
        paths.ensure_dir(deep)
        for folder in (tmp_path / "a", tmp_path / "a" / "b", deep):
            assert folder.is_dir()
            assert mode_of(folder) == 0o700

    @pytest.mark.usefixtures("open_umask")
    def test_existing_folders_keep_their_mode(self, tmp_path: Path) -> None:
        existing = tmp_path / "shared"
        existing.mkdir(mode=0o755)
        paths.ensure_dir(existing / "mine")
        assert mode_of(existing) == 0o755
        assert mode_of(existing / "mine") == 0o700

    @pytest.mark.usefixtures("open_umask")
    def test_a_new_file_is_created_0600_in_new_0700_folders(self, tmp_path: Path) -> None:
        target = tmp_path / "x" / "y" / "s.jsonl"
        store.write_new_file(target, b"data\n", "never")
        assert target.read_bytes() == b"data\n"
        assert mode_of(target) == 0o600
        assert mode_of(tmp_path / "x") == 0o700
        assert mode_of(tmp_path / "x" / "y") == 0o700


class TestWriteNewFile:
    @pytest.mark.parametrize("policy", ["always", "never"])
    def test_both_fsync_policies_write_the_exact_bytes(self, tmp_path: Path, policy: str) -> None:
        target = tmp_path / "s.jsonl"
        store.write_new_file(target, b'{"a":1}\n{"b":2}\n', policy)  # type: ignore[arg-type]
        assert target.read_bytes() == b'{"a":1}\n{"b":2}\n'

    def test_an_existing_file_is_never_overwritten(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", b"precious\n")
        with pytest.raises(SessionWriteError, match="already exists"):
            store.write_new_file(target, b"new\n", "never")
        assert target.read_bytes() == b"precious\n"


class TestSidecarNames:
    def test_the_first_free_number_is_used(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", b"x\n")
        assert new_files.create_sidecar(target, "torn", b"a") == tmp_path / "s.jsonl.torn-1"
        write_file(tmp_path / "s.jsonl.torn-2", b"")
        assert new_files.create_sidecar(target, "torn", b"b") == tmp_path / "s.jsonl.torn-3"
        assert new_files.create_sidecar(target, "v1.bak", b"c") == tmp_path / "s.jsonl.v1.bak-1"
        assert (tmp_path / "s.jsonl.torn-1").read_bytes() == b"a"

    def test_a_link_at_a_sidecar_name_is_skipped_not_followed(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", b"x\n")
        elsewhere = tmp_path / "elsewhere"
        (tmp_path / "s.jsonl.torn-1").symlink_to(elsewhere)  # dangling
        assert new_files.create_sidecar(target, "torn", b"a") == tmp_path / "s.jsonl.torn-2"
        assert not elsewhere.exists()


class TestLocking:
    def test_the_lock_is_exclusive_while_held_and_free_after(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        assert try_lock(target)
        with store.locked(target, "never"):
            assert not try_lock(target)
        assert try_lock(target)

    def test_a_missing_file_cannot_be_locked(self, tmp_path: Path) -> None:
        with (
            pytest.raises(SessionWriteError, match="no longer exists"),
            store.locked(tmp_path / "gone.jsonl"),
        ):
            pass

    def test_a_folder_cannot_be_locked(self, tmp_path: Path) -> None:
        with pytest.raises(SessionWriteError, match="directory"), store.locked(tmp_path):
            pass

    def test_the_descriptor_appends_at_the_end(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", b"one\n")
        with store.locked(target, "never") as handle:
            os.lseek(handle.fd, 0, os.SEEK_SET)
            assert handle.append(b"two\n") == 4
        assert target.read_bytes() == b"one\ntwo\n"


class TestAppend:
    @pytest.mark.parametrize("policy", ["always", "never"])
    def test_whole_lines_land_in_one_piece_and_the_start_offset_is_returned(
        self, tmp_path: Path, policy: str
    ) -> None:
        original = v3_bytes()
        target = write_file(tmp_path / "s.jsonl", original)
        data = b'{"type":"custom","n":1}\n{"type":"custom","n":2}\n'
        with store.locked(target, policy) as handle:  # type: ignore[arg-type]
            assert handle.append(data) == len(original)
        assert target.read_bytes() == original + data

    def test_data_that_does_not_end_a_line_is_refused_and_nothing_is_written(
        self, tmp_path: Path
    ) -> None:
        original = v3_bytes()
        target = write_file(tmp_path / "s.jsonl", original)
        with store.locked(target, "never") as handle, pytest.raises(SessionWriteError):
            handle.append(b'{"type":"custom"}')
        assert target.read_bytes() == original


class TestSealTail:
    def test_a_file_ending_in_a_newline_is_left_alone(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        with store.locked(target, "never") as handle:
            result = handle.seal_tail()
        assert result.sidecar is None
        assert not result.closed
        assert target.read_bytes() == v3_bytes()
        assert sidecars(tmp_path, "torn") == []

    def test_a_torn_line_moves_to_a_sidecar_with_exactly_its_bytes(self, tmp_path: Path) -> None:
        fragment = b'{"type":"message","id":"cccc0001","message":{"content":"caf\xc3'
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + fragment)
        with store.locked(target, "never") as handle:
            result = handle.seal_tail()
        assert result.sidecar == tmp_path / "s.jsonl.torn-1"
        assert result.fragment == fragment
        assert result.sidecar.read_bytes() == fragment
        assert mode_of(result.sidecar) == 0o600
        assert target.read_bytes() == v3_bytes()

    def test_a_torn_line_longer_than_the_tail_probe_is_moved_whole(self, tmp_path: Path) -> None:
        fragment = b'{"type":"custom","data":"' + b"x" * (200 * 1024)
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + fragment)
        with store.locked(target, "never") as handle:
            result = handle.seal_tail()
        assert result.sidecar is not None
        assert result.sidecar.read_bytes() == fragment
        assert target.read_bytes() == v3_bytes()

    def test_a_last_line_that_is_whole_json_is_kept_and_only_needs_a_newline(
        self, tmp_path: Path
    ) -> None:
        whole = b'{"type":"custom","customType":"x","id":"cccc0001","parentId":"bbbb0003"}'
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + whole)
        with store.locked(target, "never") as handle:
            result = handle.seal_tail()
        assert result.closed
        assert result.sidecar is None
        assert target.read_bytes() == v3_bytes() + whole + b"\n"
        assert sidecars(tmp_path, "torn") == []

    def test_a_line_another_program_is_writing_gets_its_own_newline_not_ours(
        self, tmp_path: Path
    ) -> None:
        """pi writes a line in one write(); a reader can see it part done. Sealing
        then waits for its newline instead of adding one after it (a blank line)."""
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        line = b'{"type":"custom","customType":"x","id":"cccc0001","parentId":"bbbb0003"}'
        with open(target, "ab") as other:
            other.write(line[:20])  # (the part seen while its write goes on)
        finishing = threading.Timer(0.01, lambda: _append(target, line[20:] + b"\n"))
        finishing.start()
        with store.locked(target, "never") as handle:
            result = handle.seal_tail()
        finishing.join()
        assert not result.closed and result.sidecar is None
        assert target.read_bytes() == v3_bytes() + line + b"\n"

    def test_a_line_ended_by_its_writer_while_we_wait_is_read_again_before_we_append(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The file changed under the lock: the session reads it again, so what it
        appends next is numbered as the file numbers it (it counted the other
        program's newline as a blank line)."""
        target = tmp_path / "s.jsonl"
        target.write_bytes((FIXTURES / "linear.jsonl").read_bytes().rstrip(b"\n"))
        session = Session.open(target, cache=False, fsync="never")
        sleep = store.time.sleep

        def other_program_ends_its_line(seconds: float) -> None:
            if not target.read_bytes().endswith(b"\n"):
                _append(target, b"\n")
            sleep(seconds)

        monkeypatch.setattr(store.time, "sleep", other_program_ends_its_line)
        entry_id = session.append_message({"role": "user", "content": "hi", "timestamp": 1})
        again = Session.open(target, cache=False)
        assert session.get(entry_id).line == again.get(entry_id).line  # type: ignore[union-attr]
        assert b"\n\n" not in target.read_bytes()

    def test_a_recent_line_that_never_ends_is_closed_after_a_while(self, tmp_path: Path) -> None:
        target = tmp_path / "s.jsonl"
        target.write_bytes(v3_bytes() + b'{"type":"custom","id":"cccc00')  # changed now
        with store.locked(target, "never") as handle:
            result = handle.seal_tail()
        assert result.closed and result.sidecar is None  # (kept: it may still end)
        assert target.read_bytes().endswith(b'"cccc00\n')

    def test_each_tear_gets_its_own_sidecar(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + b'{"first')
        with store.locked(target, "never") as handle:
            handle.seal_tail()
        with open(target, "ab") as raw:
            raw.write(b'{"second')
        age(target)
        with store.locked(target, "never") as handle:
            second = handle.seal_tail()
        assert second.sidecar == tmp_path / "s.jsonl.torn-2"
        assert (tmp_path / "s.jsonl.torn-1").read_bytes() == b'{"first'
        assert (tmp_path / "s.jsonl.torn-2").read_bytes() == b'{"second'
        assert target.read_bytes() == v3_bytes()


class TestReplaceContents:
    def test_the_file_gets_the_new_bytes_and_the_original_is_kept_as_a_backup(
        self, tmp_path: Path
    ) -> None:
        original = v3_bytes()
        target = write_file(tmp_path / "s.jsonl", original)
        replacement = original.replace(b'"cwd":"/work/new"', b'"cwd":"/moved"')
        with store.locked(target, "never") as handle:
            backup = handle.replace_contents(replacement, "v2.bak")
        assert backup == tmp_path / "s.jsonl.v2.bak-1"
        assert backup.read_bytes() == original
        assert target.read_bytes() == replacement

    def test_no_temporary_file_is_left_behind_and_the_mode_is_kept(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        with store.locked(target, "never") as handle:
            handle.replace_contents(b"new\n", "v1.bak")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl", "s.jsonl.v1.bak-1"]
        assert mode_of(target) == 0o600

    def test_a_second_rewrite_keeps_the_first_backup(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", b"zero\n")
        with store.locked(target, "never") as handle:
            first = handle.replace_contents(b"one\n", "v1.bak")
        with store.locked(target, "never") as handle:
            second = handle.replace_contents(b"two\n", "v1.bak")
        assert first.read_bytes() == b"zero\n"
        assert second == tmp_path / "s.jsonl.v1.bak-2"
        assert second.read_bytes() == b"one\n"
        assert target.read_bytes() == b"two\n"

    def test_after_a_rewrite_appends_go_to_the_new_file_which_stays_locked(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "s.jsonl", b"old\n")
        with store.locked(target, "never") as handle:
            backup = handle.replace_contents(b"new\n", "v1.bak")
            assert not try_lock(target)
            handle.append(b"more\n")
        assert target.read_bytes() == b"new\nmore\n"
        assert backup.read_bytes() == b"old\n"
        assert try_lock(target)

    def test_every_line_written_through_the_store_is_whole_json(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + b'{"torn')
        with store.locked(target, "never") as handle:
            handle.seal_tail()
            handle.append(orjson.dumps({"type": "custom", "n": 1}) + b"\n")
        for line in file_lines(target):
            assert line.endswith(b"\n")
            orjson.loads(line)


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as other:
        other.write(data)
