"""What a write killed half-way leaves behind, and how the next write copes.

A rewrite (migrating an older file) killed between linking the backup and renaming
the new file in leaves the session with a second hard link, its own backup: the next
write completes the rewrite, keeping that link as the backup, and loses no byte. Any
other extra hard link is still refused. Temporary files of killed writes
(``.jsonl-session-*.tmp``) are removed by the next write in their folder once
provably abandoned (old and unlocked), never while a writer holds them, and
``doctor`` lists them until then (``doctor --repair`` removes them)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from builders import user_message
from helpers_cli import invoke
from helpers_write import (
    spawn_python,
    v2_bytes,
    v3_bytes,
    wait_for_file,
    write_file,
)

from jsonl_session import Session, SessionWriteError
from jsonl_session.storage import leftovers

posix_only = pytest.mark.skipif(os.name == "nt", reason="kill -9 and flock are POSIX's")


def old_session(folder: Path) -> Path:
    return write_file(folder / "old.jsonl", v2_bytes())


def temps(folder: Path) -> list[Path]:
    return sorted(folder.glob(".jsonl-session-*.tmp"))


@pytest.fixture
def abandoned(monkeypatch: pytest.MonkeyPatch) -> float:
    """Unlocked temporary files count as abandoned at once (the ctime of a file made
    now cannot be set back the real age; the rest of the rule is the same)."""
    monkeypatch.setattr(leftovers, "ABANDONED_AFTER_SECONDS", 0.0)
    return 0.0


# --- a rewrite killed between the backup link and the rename --------------------------------


def killed_rewrite_by_hand(path: Path) -> Path:
    """The state such a kill leaves: the session file linked as its backup."""
    backup = path.with_name(path.name + ".v2.bak-1")
    os.link(path, backup)
    return backup


def assert_recovered(path: Path, backup: Path, original: bytes) -> None:
    session = Session.open(path)
    assert session.version_read == 2
    session.append_message(user_message("after the crash"))
    assert session.backups == [backup]
    assert backup.read_bytes() == original  # the original bytes, untouched
    assert os.stat(path).st_nlink == 1 and os.stat(backup).st_nlink == 1
    again = Session.open(path)
    assert again.version_read == 3
    assert [e.id for e in again.entries][:2] == ["aaaa0001", "aaaa0002"]
    assert b"after the crash" in again.entries[-1].raw
    assert b"this line is not json {" in path.read_bytes()  # a bad line is kept too
    Session.open(path).append_message(user_message("and again"))  # no link left over


def test_a_session_linked_to_its_own_backup_is_rewritten_keeping_that_backup(
    tmp_path: Path,
) -> None:
    path = old_session(tmp_path)
    original = path.read_bytes()
    backup = killed_rewrite_by_hand(path)
    assert_recovered(path, backup, original)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl", "old.jsonl.v2.bak-1"]


@pytest.mark.parametrize(
    "other_link",
    ["elsewhere.jsonl", "old.jsonl.v2.bak-x", "old.jsonl.torn-1", "other.jsonl.v2.bak-1"],
)
def test_any_other_extra_hard_link_is_still_refused(tmp_path: Path, other_link: str) -> None:
    path = old_session(tmp_path)
    original = path.read_bytes()
    os.link(path, tmp_path / other_link)
    with pytest.raises(SessionWriteError, match="has 2 hard links"):
        Session.open(path).append_message(user_message("refused"))
    assert path.read_bytes() == original and os.stat(path).st_nlink == 2


def test_our_backup_beside_a_foreign_link_is_refused_too(tmp_path: Path) -> None:
    path = old_session(tmp_path)
    killed_rewrite_by_hand(path)
    os.link(path, tmp_path / "someone-elses.jsonl")
    with pytest.raises(SessionWriteError, match="has 3 hard links"):
        Session.open(path).append_message(user_message("refused"))


def test_a_backup_name_on_another_inode_does_not_count(tmp_path: Path) -> None:
    path = old_session(tmp_path)
    (tmp_path / "old.jsonl.v2.bak-1").write_bytes(path.read_bytes())  # a copy, not a link
    os.link(path, tmp_path / "elsewhere.jsonl")
    with pytest.raises(SessionWriteError, match="has 2 hard links"):
        Session.open(path).append_message(user_message("refused"))


KILL_AT_RENAME = """
import os, signal, sys
from jsonl_session import Session
from jsonl_session.storage import store
from builders import user_message

path = os.path.realpath(sys.argv[1])
real_replace = os.replace

def replace_then_die(source, target, *args, **kwargs):
    if os.fspath(target) == path:  # the backup is linked; the new file not yet in
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(source, target, *args, **kwargs)

store.os.replace = replace_then_die
Session.open(sys.argv[1]).append_message(user_message("never written"))
"""


def kill_during_rewrite(path: Path) -> None:
    """A real process migrating ``path``, killed (SIGKILL) between the two steps."""
    tests = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), *sys.path])}
    child = subprocess.run(
        [sys.executable, "-W", "error", "-c", KILL_AT_RENAME, str(path)],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()


@posix_only
def test_a_process_killed_between_backup_link_and_rename_leaves_a_file_the_next_write_recovers(
    tmp_path: Path,
) -> None:
    path = old_session(tmp_path)
    original = path.read_bytes()
    kill_during_rewrite(path)
    backup = tmp_path / "old.jsonl.v2.bak-1"
    assert path.read_bytes() == original and os.stat(path).st_nlink == 2
    assert os.path.samefile(path, backup)
    assert len(temps(tmp_path)) == 1  # the new file it never renamed in
    assert Session.open(path).entries[0].id == "aaaa0001"  # loads as before
    assert_recovered(path, backup, original)


# --- temporary files of killed writes ---------------------------------------------------------


@posix_only
def test_the_temporary_file_of_a_killed_rewrite_is_removed_by_a_later_write_once_abandoned(
    tmp_path: Path, abandoned: float
) -> None:
    path = old_session(tmp_path)
    kill_during_rewrite(path)
    (left,) = temps(tmp_path)
    assert leftovers.abandoned_temps(tmp_path) == [left]
    Session.open(path).append_message(user_message("after the crash"))  # a rewrite here
    assert temps(tmp_path) == []
    assert b"after the crash" in Session.open(path).entries[-1].raw


def test_a_recent_temporary_file_is_left_alone(tmp_path: Path) -> None:
    path = old_session(tmp_path)
    young = tmp_path / ".jsonl-session-abc123.tmp"
    young.write_bytes(b"a write in progress")
    Session.open(path).append_message(user_message("a rewrite beside it"))
    assert young.read_bytes() == b"a write in progress"
    assert leftovers.abandoned_temps(tmp_path) == []


HOLD_TEMP_LOCK = """
import os, sys, time
from jsonl_session.storage import portable
fd = os.open(sys.argv[1], os.O_RDWR)
assert portable.try_lock(fd)
open(sys.argv[2], "w").close()
time.sleep(300)
"""


@posix_only
def test_a_temporary_file_a_live_writer_holds_is_never_removed_however_old(
    tmp_path: Path, abandoned: float
) -> None:
    held = tmp_path / ".jsonl-session-live01.tmp"
    held.write_bytes(b"a writer paused for hours")
    child = spawn_python(HOLD_TEMP_LOCK, held, tmp_path / "locked")
    try:
        wait_for_file(tmp_path / "locked", child)
        assert leftovers.abandoned_temps(tmp_path) == []
        assert leftovers.remove_abandoned_temps(tmp_path) == []
        Session.open(old_session(tmp_path)).append_message(user_message("a rewrite beside it"))
        assert held.read_bytes() == b"a writer paused for hours"
    finally:
        child.kill()
        child.communicate()
    assert leftovers.abandoned_temps(tmp_path) == [held]  # its writer is gone now


def test_only_our_own_names_are_ever_removed(tmp_path: Path, abandoned: float) -> None:
    names = [".jsonl-session-x.tmp.keep", "jsonl-session-x.tmp", ".tmp-x", "notes.tmp"]
    for name in names:
        (tmp_path / name).write_text("the user's")
    (tmp_path / ".jsonl-session-dir1.tmp").mkdir()
    os.symlink(tmp_path / "notes.tmp", tmp_path / ".jsonl-session-link1.tmp")
    assert leftovers.remove_abandoned_temps(tmp_path) == []
    assert all((tmp_path / name).read_text() == "the user's" for name in names)


def test_doctor_lists_abandoned_temporary_files_and_repair_removes_them(
    tmp_path: Path, abandoned: float
) -> None:
    path = write_file(tmp_path / "current.jsonl", v3_bytes())  # nothing else to repair
    left = tmp_path / ".jsonl-session-k1ll3d.tmp"
    left.write_bytes(b"{}" * 100)
    code, out, _ = invoke("doctor", path, "--json")
    assert code == 1
    (report,) = json.loads(out)
    kinds = {p["kind"]: p["message"] for p in report["problems"]}
    assert str(left) in kinds["leftover-temp"] and "--repair" in kinds["leftover-temp"]
    code, out, _ = invoke("doctor", path, "--repair")
    assert f"removed {left}" in out
    assert "after repair: no problems remain" in out
    assert not left.exists() and path.read_bytes() == v3_bytes()


# --- found by review: leftovers that blocked a repair, and doctor's error paths ----------


def test_a_temporary_name_left_linked_to_a_new_session_does_not_block_a_rewrite(
    tmp_path: Path,
) -> None:
    # A create (or fork) killed between linking its file in and removing the temporary
    # name leaves the session with a second link under our temporary name.
    path = write_file(tmp_path / "old.jsonl", v2_bytes())
    left = tmp_path / ".jsonl-session-k1ll3d.tmp"
    os.link(path, left)
    session = Session.open(path)
    session.append_message(user_message("after the crash"))  # migrates: a rewrite
    assert not left.exists()
    assert os.stat(path).st_nlink == 1
    assert Session.open(path).version_read == 3
    assert session.backups and session.backups[0].read_bytes() == v2_bytes()


def test_doctor_repair_clears_such_a_name_and_repairs(tmp_path: Path) -> None:
    path = write_file(tmp_path / "old.jsonl", v2_bytes())
    os.link(path, tmp_path / ".jsonl-session-k1ll3d.tmp")
    code, out, _ = invoke("doctor", path, "--repair")
    assert "has 2 hard links" not in out
    assert f"wrote {path}.v2.bak-1" in out
    assert code == 1  # the file's bad line remains, on purpose
    assert temps(tmp_path) == []
    assert Session.open(path).version_read == 3


def test_doctor_lists_and_removes_leftovers_beside_a_file_it_cannot_read(
    tmp_path: Path, abandoned: float
) -> None:
    path = write_file(tmp_path / "empty.jsonl", b"")
    left = tmp_path / ".jsonl-session-k1ll3d.tmp"
    left.write_bytes(b"{}")
    code, out, _ = invoke("doctor", path, "--json")
    (report,) = json.loads(out)
    assert code == 1
    assert [p["kind"] for p in report["problems"]] == ["format", "leftover-temp"]
    code, out, _ = invoke("doctor", path, "--repair")
    assert f"removed {left}" in out and "wrote removed" not in out
    assert not left.exists()


def test_doctor_removes_leftovers_when_the_repair_itself_is_refused(
    tmp_path: Path, abandoned: float
) -> None:
    path = write_file(tmp_path / "old.jsonl", v2_bytes())
    os.link(path, tmp_path / "someone-elses-link.jsonl")  # a rewrite must refuse this
    left = tmp_path / ".jsonl-session-k1ll3d.tmp"
    left.write_bytes(b"{}")
    code, out, _ = invoke("doctor", path, "--repair")
    assert code == 1
    assert "has 2 hard links" in out
    assert not left.exists()
