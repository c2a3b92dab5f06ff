"""The command line: every command through Typer's runner, and the entry points as
real subprocesses. Files are real, in tmp_path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import assistant_message as assistant
from builders import user_message as user
from helpers_cli import invoke
from locations import FIXTURES

from jsonl_session import Session
from jsonl_session.cli import app


@pytest.fixture
def branched(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A session with two branches from the first answer, a label and a name."""
    s = Session.create(cwd="/work/project", session_dir=tmp_path, fsync="never")
    ids = {"u1": s.append_message(user("first question"))}
    ids["a1"] = s.append_message(assistant("first answer"))
    ids["u2"] = s.append_message(user("follow-up on branch one"))
    ids["a2"] = s.append_message(assistant("answer on branch one"))
    s.branch(ids["a1"])
    ids["u3"] = s.append_message(user("follow-up on branch two"))
    ids["label"] = s.append_label(ids["u1"], "start here")
    s.append_session_info("demo session")
    return s.path, ids


class TestHelp:
    def test_every_command_has_help_text(self) -> None:
        for command in app.registered_commands:
            assert command.callback is not None
            assert (command.callback.__doc__ or "").strip(), command.callback.__name__
            code, out, _ = invoke(command.name or command.callback.__name__, "--help")
            assert code == 0
            assert "Usage" in out

    def test_python_dash_m_runs_the_cli(self) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "jsonl_session", "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0
        for name in ("show", "tree", "context", "fork", "doctor"):
            assert name in done.stdout


class TestShow:
    def test_json_has_header_entries_leaf_name_labels_problems(
        self, branched: tuple[Path, dict[str, str]]
    ) -> None:
        path, ids = branched
        code, out, _ = invoke("show", path, "--json")
        assert code == 0
        shown = json.loads(out)
        keys = ["agent", "header", "entries", "leafId", "name", "labels", "systemPrompt", "tools"]
        assert list(shown) == [*keys, "problems", "notCarried"]
        assert (shown["agent"], shown["notCarried"]) == ("pi", {})
        assert (shown["systemPrompt"], shown["tools"]) == ("", [])  # no system messages
        assert shown["header"]["version"] == 3
        assert shown["leafId"] == Session.open(path).leaf_id
        assert shown["name"] == "demo session"
        assert shown["labels"] == {ids["u1"]: "start here"}
        assert shown["problems"] == []
        lines = path.read_bytes().splitlines()[1:]
        assert shown["entries"] == [json.loads(line) for line in lines]

    def test_people_see_counts_leaf_and_name(self, branched: tuple[Path, dict[str, str]]) -> None:
        path, _ = branched
        code, out, _ = invoke("show", path)
        assert code == 0
        assert "message 5" in out
        assert "user 3" in out and "assistant 2" in out
        assert "demo session" in out

    def test_a_file_without_header_is_one_clear_line_and_exit_1(self, tmp_path: Path) -> None:
        bad = tmp_path / "bad.jsonl"
        bad.write_bytes(b'{"type":"message","id":"aaaaaaaa","parentId":null}\n')
        code, out, err = invoke("show", bad)
        assert code == 1
        assert out == ""
        assert str(bad) in err and ":1:" in err and "header" in err
        assert "Traceback" not in err
        assert len(err.strip().splitlines()) == 1

    def test_problems_are_listed_with_line_numbers(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        path.write_bytes(
            b'{"type":"session","version":3,"id":"x","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/"}\n'
            b"null\n"
            b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
            b'"message":{"role":"user","content":"hi","timestamp":1}}\n'
            b'{"type":"message","id":"bbbb'
        )
        code, out, _ = invoke("show", path)
        assert code == 0
        assert "line 2" in out and "line 4" in out


class TestTree:
    def test_active_path_is_marked_and_markers_are_folded(
        self, branched: tuple[Path, dict[str, str]]
    ) -> None:
        path, ids = branched
        code, out, _ = invoke("tree", path)
        assert code == 0
        assert "jsonl-session/leaf" not in out
        assert "[start here]" in out

        def marked(entry_id: str) -> bool:
            line = next(line for line in out.splitlines() if entry_id in line)
            return line.partition(entry_id)[0].rstrip().endswith("*")

        assert marked(ids["u1"]) and marked(ids["a1"]) and marked(ids["u3"])
        assert not marked(ids["u2"]) and not marked(ids["a2"])

    def test_json_lists_every_shown_node_once(self, branched: tuple[Path, dict[str, str]]) -> None:
        path, ids = branched
        code, out, _ = invoke("tree", path, "--json")
        assert code == 0
        data = json.loads(out)
        shown = {node["id"] for node in data["nodes"]}
        assert {ids["u1"], ids["a1"], ids["u2"], ids["a2"], ids["u3"]} <= shown
        assert ids["label"] not in shown
        a1 = next(n for n in data["nodes"] if n["id"] == ids["a1"])
        assert a1["children"] == [ids["u2"], ids["u3"]]


class TestContext:
    def test_json_is_exactly_the_library_context(
        self, branched: tuple[Path, dict[str, str]]
    ) -> None:
        path, _ = branched
        code, out, _ = invoke("context", path, "--json")
        assert code == 0
        assert json.loads(out) == Session.open(path).build_context().to_dict()
        assert [m["content"] for m in json.loads(out)["messages"]][-1] == "follow-up on branch two"

    def test_leaf_accepts_an_id_prefix(self, branched: tuple[Path, dict[str, str]]) -> None:
        path, ids = branched
        code, out, _ = invoke("context", path, "--leaf", ids["a2"][:6], "--json")
        assert code == 0
        messages = json.loads(out)["messages"]
        assert len(messages) == 4
        assert json.loads(out)["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}

    def test_an_unknown_leaf_is_an_error_naming_it(
        self, branched: tuple[Path, dict[str, str]]
    ) -> None:
        path, _ = branched
        code, _, err = invoke("context", path, "--leaf", "zzzzzzzz")
        assert code == 1
        assert "zzzzzzzz" in err

    def test_a_parent_cycle_is_an_error_not_a_hang(self, tmp_path: Path) -> None:
        path = tmp_path / "cycle.jsonl"
        path.write_bytes(
            b'{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
            b'{"type":"message","id":"aaaaaaaa","parentId":"bbbbbbbb","timestamp":"2026-01-01T00:00:00.000Z",'
            b'"message":{"role":"user","content":"a","timestamp":1}}\n'
            b'{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2026-01-01T00:00:00.000Z",'
            b'"message":{"role":"user","content":"b","timestamp":2}}\n'
        )
        before = path.read_bytes()
        code, _, err = invoke("context", path)
        assert code == 1
        assert "cycle" in err and "aaaaaaaa" in err and "bbbbbbbb" in err
        assert path.read_bytes() == before

    def test_people_see_roles_and_text(self, branched: tuple[Path, dict[str, str]]) -> None:
        path, _ = branched
        code, out, _ = invoke("context", path)
        assert code == 0
        assert "follow-up on branch two" in out
        assert "branch one" not in out


class TestWritingCommands:
    def test_fork_writes_the_path_to_a_new_file(
        self, branched: tuple[Path, dict[str, str]], tmp_path: Path
    ) -> None:
        path, ids = branched
        target = tmp_path / "fork" / "f.jsonl"
        code, out, _ = invoke("fork", path, "--at", ids["a2"], "-o", target)
        assert code == 0
        assert str(target) in out
        forked = Session.open(target)
        assert [e.id for e in forked.branch_path()][:4] == [
            ids["u1"],
            ids["a1"],
            ids["u2"],
            ids["a2"],
        ]
        assert forked.header.parent_session == str(path)
        assert forked.labels == {ids["u1"]: "start here"}

    def test_branch_moves_the_leaf_persistently(
        self, branched: tuple[Path, dict[str, str]]
    ) -> None:
        path, ids = branched
        code, out, _ = invoke("branch", path, ids["a2"])
        assert code == 0
        assert Session.open(path).leaf_id == ids["a2"]
        size = path.stat().st_size
        code, out, _ = invoke("branch", path, ids["a2"])
        assert code == 0 and "nothing written" in out
        assert path.stat().st_size == size

    def test_label_sets_and_clears(self, branched: tuple[Path, dict[str, str]]) -> None:
        path, ids = branched
        assert invoke("label", path, ids["a1"], "answer")[0] == 0
        assert Session.open(path).labels[ids["a1"]] == "answer"
        assert invoke("label", path, ids["a1"])[0] == 0
        assert ids["a1"] not in Session.open(path).labels

    def test_name_names_the_session(self, branched: tuple[Path, dict[str, str]]) -> None:
        path, _ = branched
        assert invoke("name", path, "  renamed  ")[0] == 0
        assert Session.open(path).name == "renamed"

    def test_label_of_an_unknown_entry_is_refused_and_writes_nothing(
        self, branched: tuple[Path, dict[str, str]]
    ) -> None:
        path, _ = branched
        before = path.read_bytes()
        code, _, err = invoke("label", path, "ffffffff", "x")
        assert code == 1 and "ffffffff" in err
        assert path.read_bytes() == before


V1_FILE = (
    b'{"type":"session","id":"v1-session","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}\n'
    b'{"type":"message","timestamp":"2024-01-01T00:00:01.000Z",'
    b'"message":{"role":"user","content":"one","timestamp":1}}\n'
    b'{"type":"message","timestamp":"2024-01-01T00:00:02.000Z",'
    b'"message":{"role":"user","content":"two","timestamp":2}}\n'
)


class TestMaintenance:
    def test_migrate_dry_run_writes_nothing(self, tmp_path: Path) -> None:
        path = tmp_path / "old.jsonl"
        path.write_bytes(V1_FILE)
        code, out, _ = invoke("migrate", path, "--dry-run")
        assert code == 0 and "would migrate v1" in out
        assert path.read_bytes() == V1_FILE
        assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]

    def test_migrate_rewrites_with_a_backup(self, tmp_path: Path) -> None:
        path = tmp_path / "old.jsonl"
        path.write_bytes(V1_FILE)
        code, _out, _ = invoke("migrate", path)
        assert code == 0
        backups = [p for p in tmp_path.iterdir() if p.name != "old.jsonl"]
        assert len(backups) == 1 and backups[0].read_bytes() == V1_FILE
        assert json.loads(path.read_bytes().splitlines()[0])["version"] == 3
        assert invoke("migrate", path)[1].strip().endswith("already version 3")

    def test_doctor_lists_problems_and_changes_nothing(self, tmp_path: Path) -> None:
        path = tmp_path / "torn.jsonl"
        content = (
            b'{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
            b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
            b'"message":{"role":"user","content":"a","timestamp":1}}\n'
            b'{"type":"mess'
        )
        path.write_bytes(content)
        code, out, _ = invoke("doctor", path, "--json")
        assert code == 1
        (report,) = json.loads(out)
        assert report["problems"][0]["kind"] == "torn-tail"
        assert report["problems"][0]["line"] == 3
        assert path.read_bytes() == content

    def test_doctor_repair_seals_the_torn_tail_into_a_sidecar(self, tmp_path: Path) -> None:
        path = tmp_path / "torn.jsonl"
        good = (
            b'{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
            b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
            b'"message":{"role":"user","content":"a","timestamp":1}}\n'
        )
        path.write_bytes(good + b'{"type":"mess')
        code, out, _ = invoke("doctor", path, "--repair")
        assert code == 0  # problems were found, and none remain
        assert "after repair: no problems remain" in out
        assert path.read_bytes() == good
        assert (tmp_path / "torn.jsonl.torn-1").read_bytes() == b'{"type":"mess'
        assert invoke("doctor", path)[0] == 0

    def test_doctor_reports_an_unreadable_file_and_goes_on(self, tmp_path: Path) -> None:
        empty = tmp_path / "empty.jsonl"
        empty.write_bytes(b"")
        fine = tmp_path / "fine.jsonl"
        fine.write_bytes(
            b'{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}\n'
        )
        code, out, _ = invoke("doctor", empty, fine, "--json")
        assert code == 1
        reports = json.loads(out)
        assert "empty" in reports[0]["problems"][0]["message"]
        assert reports[1]["problems"] == []
        assert empty.read_bytes() == b""


def test_the_console_script_runs_in_a_subprocess(
    branched: tuple[Path, dict[str, str]],
) -> None:
    path, _ = branched
    script = Path(sys.executable).with_name("jsonl-session")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "jsonl_session"]
    done = subprocess.run(
        [*command, "context", str(path), "--json"],
        capture_output=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0
    assert json.loads(done.stdout) == Session.open(path).build_context().to_dict()


class TestTextThatLooksLikeMarkup:
    """Paths, ids and text from files are printed as they are, never as rich markup."""

    def test_a_path_with_brackets_is_printed_literally(self, tmp_path: Path) -> None:
        folder = tmp_path / "[red]x[bold]"
        folder.mkdir()
        s = Session.create(cwd="/p", session_dir=folder, fsync="never")
        first = s.append_message(user("[/bold] not markup [link=x]"))
        s.append_message(assistant("ok"))
        for command in (["show"], ["tree"], ["context"], ["label", first, "[/x]"]):
            code, out, err = invoke(command[0], s.path, *command[1:])
            assert code == 0, err
            assert "Traceback" not in out + err
        assert "[red]x[bold]" in "".join(invoke("show", s.path)[1].split())  # folded to fit
        assert "[/bold] not markup" in invoke("context", s.path)[1]
        assert "[/x]" in invoke("tree", s.path)[1]

    def test_an_error_message_with_brackets_is_printed_literally(self, tmp_path: Path) -> None:
        code, _, err = invoke("show", tmp_path / "[/nope].jsonl")
        assert code == 1
        assert "[/nope].jsonl: no such file" in err


class TestFilesThatAreNotSessionFiles:
    def test_a_fifo_is_refused_without_waiting(self, tmp_path: Path) -> None:
        fifo = tmp_path / "s.jsonl"
        os.mkfifo(fifo)
        code, _, err = invoke("show", fifo)
        assert code == 1 and "not a regular file" in err

    def test_an_empty_id_is_not_taken_to_mean_the_leaf(
        self, branched: tuple[Path, dict[str, str]]
    ) -> None:
        path, _ = branched
        assert invoke("fork", path, "--at", "")[0] == 1
        assert invoke("context", path, "--leaf", "")[0] == 1


class TestContextFormats:
    @pytest.mark.parametrize("output_format", ["anthropic", "openai-chat", "openai-responses"])
    def test_a_provider_format_prints_the_adapters_request_and_repairs(
        self, output_format: str
    ) -> None:
        from jsonl_session.providers.anthropic import to_anthropic
        from jsonl_session.providers.openai import to_openai_chat, to_openai_responses

        fixture = FIXTURES / "bash-execution.jsonl"
        code, out, _ = invoke(
            "context", fixture, "--format", output_format, "--system", "S", "--json"
        )
        assert code == 0
        built = Session.open(fixture).build_context()
        adapter = {
            "anthropic": lambda: to_anthropic(built, system="S"),
            "openai-chat": lambda: to_openai_chat(built, system="S"),
            "openai-responses": lambda: to_openai_responses(built, instructions="S"),
        }[output_format]
        expected = adapter()
        assert json.loads(out) == {
            "request": expected.kwargs,
            "repairs": [r.to_dict() for r in expected.repairs],
        }
        assert json.loads(out)["repairs"][0]["kind"] == "excluded-command-dropped"

    def test_people_see_the_request_and_repairs_on_stderr(self) -> None:
        fixture = FIXTURES / "bash-execution.jsonl"
        code, out, err = invoke("context", fixture, "--format", "anthropic")
        assert code == 0
        assert json.loads(out)["messages"][0]["role"] == "user"
        assert "excluded-command-dropped" in err
