"""Hostile input and careless places (issue 16), through the command line and the
library: every file the project creates is owner-only, also under umask 0; no write
follows a symbolic link planted where it writes (outputs, sidecars, backups, cache
records and folders); ids, timestamps and cwds from a file never make a path
outside the folder meant for them; an output past a file size limit leaves nothing.
The writer itself is tested in tests/storage/test_output_files.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import user_message
from helpers_cli import invoke
from helpers_write import age, append_raw, mode_of, new_session, v1_bytes, write_file
from locations import FIXTURES, copy_fixture

from jsonl_session import Session

CHILD_TIMEOUT = 120.0  # only stops a hung child; nothing asserts how long anything takes
CLAUDE_SESSION = (
    FIXTURES
    / "claude/projects/-home-dev-projects-todo-api/fa14ecce-c838-5e43-b75e-f4d1c554fdcb.jsonl"
)


@pytest.fixture
def agent_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Where pi, Claude Code, Codex and we keep sessions, all under tmp_path/homes."""
    homes = tmp_path / "homes"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(homes / "pi"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(homes / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(homes / "codex"))
    monkeypatch.setenv("JSONL_SESSION_DIR", str(homes / "ours"))
    return {
        "pi": homes / "pi" / "sessions",
        "claude": homes / "claude" / "projects",
        "codex": homes / "codex" / "sessions",
        "ours": homes / "ours",
    }


def pi_file(path: Path, **header: Any) -> Path:
    """A small pi session whose header says what ``header`` gives."""
    fields: dict[str, Any] = {"type": "session", "version": 3, "id": "plain-id"}
    fields |= {"timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work"} | header
    message: dict[str, Any] = {"type": "message", "id": "aaaaaaaa", "parentId": None}
    message |= {"timestamp": "2026-01-01T00:00:01.000Z", "message": user_message("hi")}
    path.write_bytes(orjson.dumps(fields) + b"\n" + orjson.dumps(message) + b"\n")
    return path


def claude_file(folder: Path, cwd: str) -> Path:
    """The Claude Code fixture with every line's cwd set to ``cwd``."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [orjson.loads(line) for line in CLAUDE_SESSION.read_bytes().splitlines()]
    for line in lines:
        if "cwd" in line:
            line["cwd"] = cwd
    target = folder / CLAUDE_SESSION.name
    target.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return target


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_symlink() or p.is_file()}


# --- owner-only -----------------------------------------------------------------------------


@pytest.mark.usefixtures("open_umask")
class TestOwnerOnlyUnderUmask0:
    def test_sessions_sidecars_backups_and_their_new_folders(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path / "a" / "b")
        append_raw(session.path, b'{"torn')
        age(session.path)
        session.append_custom("after the tear")
        old = write_file(tmp_path / "old.jsonl", v1_bytes())
        Session.open(old, fsync="never").append_message(user_message())  # migrates first
        made = [session.path, session.path.with_name(session.path.name + ".torn-1")]
        made += [old, tmp_path / "old.jsonl.v1.bak-1"]
        assert {str(p): mode_of(p) for p in made} == {str(p): 0o600 for p in made}
        for folder in (tmp_path / "a", tmp_path / "a" / "b"):
            assert mode_of(folder) == 0o700

    def test_cache_records_and_cache_folders(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path / "s")
        session.append_message(user_message("x" * (1 << 20)))  # big enough to be cached
        root = tmp_path / "cache" / "deep"
        Session.open(session.path, cache=root)
        records = files_under(tmp_path / "cache")
        assert records, "the session was expected to get an index record"
        assert {mode_of(p) for p in records} == {0o600}
        folders = [p for p in (tmp_path / "cache").rglob("*") if p.is_dir()]
        assert {mode_of(p) for p in [tmp_path / "cache", *folders]} == {0o700}

    @pytest.mark.usefixtures("agent_homes")
    def test_exports_conversions_and_forks_from_the_command_line(self, tmp_path: Path) -> None:
        source = copy_fixture(tmp_path, "linear")
        outputs = tmp_path / "out"
        outputs.mkdir()
        for fmt in ("markdown", "html", "json"):
            assert invoke("export", source, "-f", fmt, "-o", outputs / f"e.{fmt}")[0] == 0
        for agent in ("pi", "claude", "codex"):
            assert invoke("convert", source, "--to", agent, "-o", outputs / f"c.{agent}")[0] == 0
            assert invoke("convert", source, "--to", agent)[0] == 0  # in the agent's folder
        assert invoke("fork", source, "-o", outputs / "f.jsonl")[0] == 0
        assert invoke("fork", source)[0] == 0  # beside the source
        made = files_under(tmp_path) - {source}
        assert len(made) == 3 + 3 + 3 + 2
        assert {str(p): mode_of(p) for p in made} == {str(p): 0o600 for p in made}
        new_folders = {p for p in (tmp_path / "homes").rglob("*") if p.is_dir()}
        assert {str(p): mode_of(p) for p in new_folders} == {str(p): 0o700 for p in new_folders}


# --- planted links --------------------------------------------------------------------------


class TestPlantedLinks:
    def test_a_link_at_the_next_torn_sidecar_name_is_passed_over(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path / "s")
        victim = write_file(tmp_path / "victim", b"precious")
        session.path.with_name(session.path.name + ".torn-1").symlink_to(victim)
        append_raw(session.path, b'{"torn')
        age(session.path)
        session.append_custom("after the tear")
        assert victim.read_bytes() == b"precious"
        assert session.path.with_name(session.path.name + ".torn-2").read_bytes() == b'{"torn'

    def test_a_link_at_the_next_backup_name_is_passed_over(self, tmp_path: Path) -> None:
        old = write_file(tmp_path / "old.jsonl", v1_bytes())
        victim = write_file(tmp_path / "victim", b"precious")
        (tmp_path / "old.jsonl.v1.bak-1").symlink_to(victim)
        Session.open(old, fsync="never").append_message(user_message())
        assert victim.read_bytes() == b"precious"
        assert (tmp_path / "old.jsonl.v1.bak-2").read_bytes() == v1_bytes()

    def test_a_link_at_a_cache_record_is_replaced_not_followed(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path / "s")
        session.append_message(user_message("x" * (1 << 20)))
        root = tmp_path / "cache"
        Session.open(session.path, cache=root)
        victim = write_file(tmp_path / "victim", b"precious")
        records = sorted(root.rglob("*.bin"))
        assert records
        for record in records:
            record.unlink()
            record.symlink_to(victim)
        Session.open(session.path, cache=root)  # finds no record: writes it again
        assert victim.read_bytes() == b"precious"
        assert not any(record.is_symlink() for record in records)

    def test_a_link_at_a_cache_folder_is_never_written_through(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path / "s")
        session.append_message(user_message("x" * (1 << 20)))
        root = tmp_path / "cache"
        Session.open(session.path, cache=root)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        for folder in [p for p in root.iterdir() if p.is_dir()]:
            shutil.rmtree(folder)
            folder.symlink_to(elsewhere, target_is_directory=True)
        reopened = Session.open(session.path, cache=root)
        assert os.listdir(elsewhere) == []
        assert len(reopened.entries) == len(session.entries)

    def test_export_force_replaces_a_link_at_the_output_and_leaves_its_target_alone(
        self, tmp_path: Path
    ) -> None:
        source = copy_fixture(tmp_path, "linear")
        victim = write_file(tmp_path / "victim", b"precious")
        output = tmp_path / "page.html"
        output.symlink_to(victim)
        code, _, err = invoke("export", source, "-f", "html", "-o", output, "--force")
        assert code == 0, err
        assert not output.is_symlink() and output.read_text().startswith("<!DOCTYPE html>")
        assert victim.read_bytes() == b"precious"

    @pytest.mark.parametrize("command", ["export", "convert", "fork"])
    @pytest.mark.parametrize("dangling", [False, True])
    def test_a_link_at_the_output_is_refused_without_force(
        self, tmp_path: Path, command: str, dangling: bool
    ) -> None:
        source = copy_fixture(tmp_path, "linear")
        victim = tmp_path / "victim"
        if not dangling:
            write_file(victim, b"precious")
        output = tmp_path / "out"
        output.symlink_to(victim)
        extra = ["--to", "pi"] if command == "convert" else []
        code, _, err = invoke(command, source, *extra, "-o", output)
        assert code == 1 and "already exists" in err
        assert output.is_symlink()
        assert victim.read_bytes() == b"precious" if not dangling else not victim.exists()

    @pytest.mark.parametrize("command", ["export", "convert", "fork"])
    def test_an_existing_output_is_refused_before_the_session_is_read(
        self, tmp_path: Path, command: str
    ) -> None:
        # a file no command could read as a session: the refusal comes first, so the
        # error is the output's, and nothing was read (as it was, whole, before)
        source = write_file(tmp_path / "not-a-session.jsonl", b"this is not JSON\n")
        output = write_file(tmp_path / "out", b"precious")
        extra = ["--to", "pi"] if command == "convert" else []
        code, _, err = invoke(command, source, *extra, "-o", output)
        assert code == 1 and "out: already exists" in err and "header line" not in err
        assert output.read_bytes() == b"precious"

    def test_an_export_into_a_missing_folder_is_refused_before_the_session_is_read(
        self, tmp_path: Path
    ) -> None:
        source = write_file(tmp_path / "not-a-session.jsonl", b"this is not JSON\n")
        code, _, err = invoke("export", source, "-o", tmp_path / "missing" / "out.md")
        assert code == 1 and "no folder" in err and "header line" not in err


# --- names from a file ----------------------------------------------------------------------

HOSTILE_IDS = ["../../escaped", "/escaped-absolute", "nul\0inside", "x" * 300]


class TestNamesFromAFile:
    @pytest.mark.parametrize("session_id", HOSTILE_IDS)
    def test_a_hostile_session_id_never_names_a_pi_file_outside_pis_folder(
        self, tmp_path: Path, agent_homes: dict[str, Path], session_id: str
    ) -> None:
        session_id = session_id.replace("/escaped", str(tmp_path / "escaped"), 1)
        source = pi_file(tmp_path / "s.jsonl", id=session_id)
        code, _, err = invoke("convert", source, "--to", "pi")
        assert code == 1 and "refusing to write there" in err
        assert files_under(tmp_path) == {source}

    @pytest.mark.parametrize("agent", ["claude", "codex"])
    @pytest.mark.parametrize("session_id", HOSTILE_IDS)
    def test_claude_and_codex_names_come_from_a_uuid_of_the_id(
        self, tmp_path: Path, agent_homes: dict[str, Path], agent: str, session_id: str
    ) -> None:
        source = pi_file(tmp_path / "s.jsonl", id=session_id)
        code, out, err = invoke("convert", source, "--to", agent)
        assert code == 0, err
        (made,) = files_under(tmp_path) - {source}
        assert agent_homes[agent] in made.parents and out.strip() == str(made)

    @pytest.mark.parametrize("stamp", ["/tmp/../../escaped", "../../x", "9999-99-99"])
    def test_a_hostile_timestamp_is_refused_for_pi_and_replaced_by_now_for_codex(
        self, tmp_path: Path, agent_homes: dict[str, Path], stamp: str
    ) -> None:
        source = pi_file(tmp_path / "s.jsonl", timestamp=stamp)
        code, _, err = invoke("convert", source, "--to", "pi")
        safe = "/" not in stamp
        assert code == (0 if safe else 1), err
        assert invoke("convert", source, "--to", "codex")[0] == 0
        made = files_under(tmp_path) - {source}
        assert all(
            agent_homes["codex"] in p.parents or agent_homes["pi"] in p.parents for p in made
        )
        assert len(made) == (2 if safe else 1)

    @pytest.mark.parametrize("cwd", ["..", "../../..", "/a/../../b", "\\..\\..", "C:\\..\\x"])
    def test_a_cwd_of_dot_dots_stays_one_folder_in_each_agents_place(
        self, tmp_path: Path, agent_homes: dict[str, Path], cwd: str
    ) -> None:
        source = pi_file(tmp_path / "s.jsonl", cwd=cwd)
        for agent in ("pi", "claude"):
            code, out, err = invoke("convert", source, "--to", agent)
            assert code == 0, err
            made = Path(out.strip())
            assert made.parent.parent == agent_homes[agent] and made.exists()
        code, out, err = invoke("fork", claude_file(tmp_path / "claude-src", cwd))
        assert code == 0, err
        assert Path(out.strip().splitlines()[0]).parent.parent == agent_homes["ours"]

    @pytest.mark.parametrize("cwd", ["/nul\0inside", "/" + "d" * 300])
    def test_an_impossible_cwd_is_our_error_and_writes_nothing(
        self, tmp_path: Path, agent_homes: dict[str, Path], cwd: str
    ) -> None:
        source = pi_file(tmp_path / "s.jsonl", cwd=cwd)
        claude = claude_file(tmp_path / "claude-src", cwd)
        before = files_under(tmp_path)
        commands: list[list[str | Path]] = [["convert", source, "--to", "pi"], ["fork", claude]]
        for args in commands:
            code, _, err = invoke(*args)
            assert code == 1 and err.startswith("error: "), err
            assert "Traceback" not in err and ("refusing to write" in err or "cannot write" in err)
        assert files_under(tmp_path) == before


# --- a file size limit, in a real process ------------------------------------------------------

LIMITED_CLI = """
import resource, runpy, signal, sys
limit = int(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # Python's default: a write past it raises EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["jsonl-session", *sys.argv[2:]]
runpy.run_module("jsonl_session", run_name="__main__", alter_sys=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
@pytest.mark.parametrize("command", ["export", "convert", "fork"])
def test_an_output_past_a_file_size_limit_is_our_error_and_leaves_nothing(
    tmp_path: Path, command: str
) -> None:
    session, _, _ = new_session(tmp_path / "s")
    session.append_message(user_message("y" * 200_000))
    output = tmp_path / "s" / "out"
    extra = {"export": ["-f", "html"], "convert": ["--to", "claude"], "fork": []}[command]
    before = files_under(tmp_path)
    arguments = [command, str(session.path), *extra, "-o", str(output)]
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", LIMITED_CLI, "50000", *arguments],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        env={**os.environ, "JSONL_SESSION_NO_CACHE": "1"},
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"error: cannot write {output}: File too large"), done.stderr
    assert "nothing was written" in done.stderr
    assert files_under(tmp_path) == before


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_standard_input_that_cannot_be_copied_is_our_error_and_leaves_no_copy(
    tmp_path: Path,
) -> None:
    session, _, _ = new_session(tmp_path / "s")
    session.append_message(user_message("y" * 200_000))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", LIMITED_CLI, "50000", "show", "-"],
        input=session.path.read_bytes(),
        capture_output=True,
        timeout=CHILD_TIMEOUT,
        env={**os.environ, "JSONL_SESSION_NO_CACHE": "1", "TMPDIR": str(temporary)},
        check=False,
    )
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert stderr.startswith(f"error: cannot copy standard input to {temporary}/"), stderr
    assert "File too large" in stderr
    assert os.listdir(temporary) == []
