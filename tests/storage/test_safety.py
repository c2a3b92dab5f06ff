"""Data safety beside writers we do not control (pi appends without a lock), on
full disks and size limits, through links, and when the file changes under us."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import orjson
import pytest
from builders import assistant_message, user_message
from helpers_write import v3_bytes, write_file

from jsonl_session import Session, SessionTreeError, SessionWriteError

V1 = (
    b'{"type":"session","id":"v1-session","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}\n'
    b'{"type":"message","timestamp":"2024-01-01T00:00:01.000Z",'
    b'"message":{"role":"user","content":"one","timestamp":1}}\n'
)


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


class TestATornTailThatMayStillBeBeingWritten:
    def test_a_fresh_fragment_is_closed_not_cut(self, tmp_path: Path) -> None:
        # pi appends without a lock, and a reader can see part of a large write: a
        # fragment that changed just now may be a line still being written, so it
        # must stay (closed with a newline) rather than be cut.
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        with open(target, "ab") as other:
            other.write(b'{"type":"custom","id":"half')  # changed just now
        session = Session.open(target, fsync="never")
        new_id = session.append_custom("mine")
        lines = target.read_bytes().split(b"\n")
        assert b'{"type":"custom","id":"half' in lines
        assert not list(tmp_path.glob("*.torn-*"))  # nothing was removed, so no copy
        assert Session.open(target).get(new_id) is not None
        assert [p.kind for p in Session.open(target).problems] == ["invalid-json"]

    def test_a_settled_fragment_is_cut_off_after_it_is_copied(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + b'{"torn-fragment":"cu')
        Session.open(target, fsync="never").append_custom("mine")
        assert b"torn-fragment" not in target.read_bytes()
        assert (tmp_path / "s.jsonl.torn-1").read_bytes() == b'{"torn-fragment":"cu'
        assert Session.open(target).problems == []


LIMITED_APPEND = """
import resource, signal, sys
from jsonl_session import Session, SessionTreeError, SessionWriteError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
path, limit = sys.argv[1], int(sys.argv[2])
session = Session.open(path, fsync="never")
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
try:
    session.append_custom("big", "x" * 10_000)
except SessionWriteError as exc:
    print("refused:", exc)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
session.append_custom("after", "fits now")
"""


class TestWritesThatCannotComplete:
    def test_a_short_write_leaves_no_partial_line(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        before = target.read_bytes()
        done = run_python(LIMITED_APPEND, str(target), str(len(before) + 100))
        assert done.returncode == 0, done.stderr
        assert "refused:" in done.stdout and "nothing was added" in done.stdout
        data = target.read_bytes()
        assert data.startswith(before)
        added = data[len(before) :].split(b"\n")
        assert added[-1] == b""
        assert [orjson.loads(line)["customType"] for line in added[:-1]] == ["after"]

    def test_a_failed_first_write_leaves_no_file_and_can_be_retried(self, tmp_path: Path) -> None:
        target = tmp_path / "sessions" / "new.jsonl"
        code = """
        import resource, signal, sys
        from jsonl_session import Session, SessionWriteError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        session = Session.create(cwd="/p", path=sys.argv[1], fsync="never")
        session.append_model_change("anthropic", "claude")
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, resource.RLIM_INFINITY))
        try:  # the first user message writes the file (pi 1.5): too big for the limit
            session.append_message({"role": "user", "content": "q" * 1000, "timestamp": 1})
        except (SessionWriteError, OSError) as exc:
            print("refused:", type(exc).__name__)
        import os
        print("exists:", os.path.exists(sys.argv[1]), "entries:", len(session.entries))
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
        session.append_message({"role": "user", "content": "q", "timestamp": 1})
        session.append_message(MESSAGE)
        """.replace("MESSAGE", repr(assistant_message("a" * 1000)))
        done = run_python(code, str(target))
        assert done.returncode == 0, done.stderr
        assert "refused:" in done.stdout
        assert "exists: False entries: 1" in done.stdout
        roles = [e.role for e in Session.open(target).entries]
        assert roles == [None, "user", "assistant"]
        assert [p.name for p in target.parent.iterdir()] == ["new.jsonl"]


class TestFilesThatChangeUnderUs:
    def test_a_file_replaced_by_another_session_is_not_written_to(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        session = Session.open(target, fsync="never")
        other = v3_bytes().replace(b'"id":"', b'"id":"other-', 1)
        replacement = write_file(tmp_path / "other.jsonl", other)
        os.replace(replacement, target)
        with pytest.raises(SessionWriteError, match="now holds session"):
            session.append_custom("x")
        assert target.read_bytes() == other

    def test_migrating_through_a_symlink_rewrites_the_real_file_and_keeps_the_link(
        self, tmp_path: Path
    ) -> None:
        real = write_file(tmp_path / "real" / "s.jsonl", V1)
        link = tmp_path / "link.jsonl"
        link.symlink_to(real)
        session = Session.open(link, fsync="never")
        session.append_message(user_message("two"))
        assert link.is_symlink()
        assert b'"version":3' in real.read_bytes().split(b"\n")[0]
        assert (tmp_path / "real" / "s.jsonl.v1.bak-1").read_bytes() == V1
        assert Session.open(real).entries[-1].data()["message"]["content"] == "two"

    def test_a_hard_linked_file_is_not_split_by_a_rewrite(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", V1)
        os.link(target, tmp_path / "other-name.jsonl")
        with pytest.raises(SessionWriteError, match="hard links"):
            Session.open(target, fsync="never").append_message(user_message("two"))
        assert target.read_bytes() == V1


class TestOddTails:
    def test_a_last_line_of_blanks_is_closed_without_a_sidecar(self, tmp_path: Path) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + b"   ")
        Session.open(target, fsync="never").append_custom("x")
        assert not list(tmp_path.glob("*.torn-*"))
        assert Session.open(target).problems == []

    def test_repair_cuts_a_torn_tail_even_when_the_clock_says_it_is_from_the_future(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes() + b'{"torn-fragment')
        future = time.time() + 3600
        os.utime(target, (future, future))
        made = Session.open(target, fsync="never").repair()
        assert [p.name for p in made] == ["s.jsonl.torn-1"]
        assert target.read_bytes() == v3_bytes()


def test_a_socket_is_refused_with_a_format_error(tmp_path: Path) -> None:
    import socket

    from jsonl_session import SessionFormatError

    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "s.jsonl"))
        with pytest.raises(SessionFormatError, match=r"s\.jsonl"):
            Session.open(tmp_path / "s.jsonl")
    finally:
        server.close()


OURS = b'{"type":"custom","id":"ours0001","parentId":null}'


class TestWritersWithoutALockDuringOurWrites:
    def test_lines_added_to_the_old_file_during_a_rewrite_are_carried_over(
        self, tmp_path: Path
    ) -> None:
        from jsonl_session.storage import store

        target = write_file(tmp_path / "s.jsonl", V1)
        late = (
            b'{"type":"custom","customType":"pi","id":"latelate","parentId":null,"timestamp":"t"}\n'
        )
        with store.locked(target, "never") as handle:
            with open(target, "ab") as other:  # lands after the content was built
                other.write(late)
            backup = handle.replace_contents(b"new\n", "v1.bak", built_from=len(V1))
        assert target.read_bytes() == b"new\n" + late
        assert backup.read_bytes() == V1 + late

    def test_a_line_appended_between_our_read_and_our_write_is_taken_in_in_order(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "s.jsonl", v3_bytes())
        session = Session.open(target, fsync="never")
        pi_line = (
            b'{"type":"custom","customType":"pi","id":"pi000001","parentId":null,"timestamp":"t"}\n'
        )
        writer = session._file
        with writer.writing() as handle:
            with open(target, "ab") as other:
                other.write(pi_line)
            line, offset = writer.append(
                handle, b'{"type":"custom","id":"ours0001","parentId":null}'
            )
        data = target.read_bytes()
        assert data.split(b"\n")[line - 1] == b'{"type":"custom","id":"ours0001","parentId":null}'
        assert data[offset:].startswith(b'{"type":"custom","id":"ours0001"')
        assert session.get("pi000001") is not None

    def test_ids_that_vanished_when_another_program_rewrote_the_file_are_not_written(
        self, tmp_path: Path
    ) -> None:
        target = write_file(tmp_path / "s.jsonl", V1)
        session = Session.open(target, fsync="never")
        (only,) = [e.id for e in session.entries]
        # pi migrates a v1 file in place with random ids when it opens it.
        rewritten = V1.replace(b'"cwd":"/p"}', b'"cwd":"/p","version":3}', 1).replace(
            b'"timestamp":1}}', b'"timestamp":1},"id":"0123abcd","parentId":null}'
        )
        replacement = write_file(tmp_path / "pi.jsonl", rewritten)
        os.replace(replacement, target)
        with pytest.raises(SessionTreeError, match=only):
            session.branch(only)
        with pytest.raises(SessionTreeError, match=only):
            session.append_custom("attached to a vanished leaf")
        assert target.read_bytes() == rewritten
