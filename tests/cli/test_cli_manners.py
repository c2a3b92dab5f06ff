"""How the command line behaves as a tool among others: completion, --json everywhere,
standard input as '-', one-line usage errors, output for pipes and terminals, flags in
help, tree folding, honest messages from migrate, doctor and the commands that rewrite
a file. Through Typer's runner and as real subprocesses, on real files in tmp_path."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from builders import assistant_message as assistant
from builders import user_message as user
from helpers_cli import invoke, runner
from helpers_large import generate
from locations import FIXTURES, copy_fixture
from rich.cells import cell_len

from jsonl_session import Session
from jsonl_session.cli import app

EXEMPT_FROM_JSON = {
    "resume": "streams the reply as text",
    "mcp": "speaks JSON-RPC",
    "textconv": "prints a transcript for git",
}
WIDE_TEXT = "请帮我修复这个测试：它在并行工具调用时失败了，"  # noqa: RUF001 (two cells each)
READ_ONLY = [
    ("show",),
    ("tree",),
    ("context",),
    ("stats",),
    ("export",),
    ("textconv",),
    ("doctor",),
    ("compact", "--dry-run", "--keep-recent-tokens", "100"),
    ("migrate", "--dry-run"),
]


def command_line() -> list[str]:
    script = Path(sys.executable).with_name("jsonl-session")
    return [str(script)] if script.exists() else [sys.executable, "-m", "jsonl_session"]


def run(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command_line(), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", **env},
    )


def on_a_terminal(*args: str | Path, columns: int) -> str:
    """What a command prints on a terminal ``columns`` wide (a pseudo-terminal)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(
        [*command_line(), *map(str, args)],
        stdout=follower,
        stderr=subprocess.PIPE,
        check=False,
        env={**env, "NO_COLOR": "1", "TERM": "xterm"},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal was closed and everything read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode().replace("\r\n", "\n")


# The command line with its progress bar shown at once, which writes the rich modules
# it imported to the file named first
_PROGRESS_AT_ONCE = (
    "import atexit, sys\n"
    "from jsonl_session.cli import main, options\n"
    "options.PROGRESS_AFTER_SECONDS = 0\n"
    "out, sys.argv = sys.argv[1], ['jsonl-session', *sys.argv[2:]]\n"
    "def note():\n"
    "    with open(out, 'w') as f:\n"
    "        f.write(' '.join(sorted(m for m in sys.modules if m.startswith('rich'))))\n"
    "atexit.register(note)\n"
    "main()\n"
)


def linear_session(folder: Path, turns: int, **labels: int) -> tuple[Session, list[str]]:
    """A session of ``turns`` question-and-answer pairs in one chain; ``labels``: text
    → index of the entry to label."""
    session = Session.create(cwd="/work/project", session_dir=folder, fsync="never")
    ids: list[str] = []
    for n in range(turns):
        ids.append(session.append_message(user(f"question {n}")))
        ids.append(session.append_message(assistant(f"answer {n}")))
    for text, index in labels.items():
        session.append_label(ids[index], text)
    return session, ids


@pytest.fixture
def v1_file(tmp_path: Path) -> Path:
    return copy_fixture(tmp_path, "v1")


# The shell named, never guessed: typer guesses it (shellingham) from the processes
# above the command, which here are pytest's and at times held no shell it knew
# ("Shell  not supported."); this switch of typer's makes it take the name given.
NAMED_SHELL = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1", "SHELL": "/bin/bash"}


class TestCompletion:
    def test_the_completion_script_prints_for_bash(self) -> None:
        done = run("--show-completion", "bash", **NAMED_SHELL)
        assert done.returncode == 0, done.stderr
        assert "_JSONL_SESSION_COMPLETE=complete_bash" in done.stdout
        assert "complete -o default -F _jsonl_session_completion jsonl-session" in done.stdout

    def test_it_installs_into_the_shell_startup_file(self, tmp_path: Path) -> None:
        done = run("--install-completion", "bash", HOME=str(tmp_path), **NAMED_SHELL)
        assert done.returncode == 0, done.stderr
        script = tmp_path / ".bash_completions" / "jsonl-session.sh"
        assert "_jsonl_session_completion" in script.read_text()
        assert str(script) in (tmp_path / ".bashrc").read_text()

    def test_the_shell_gets_command_names_and_options(self) -> None:
        def complete(words: str, position: int) -> list[str]:
            done = run(
                _JSONL_SESSION_COMPLETE="complete_bash",
                COMP_WORDS=words,
                COMP_CWORD=str(position),
            )
            return done.stdout.split()

        assert complete("jsonl-session sh", 1) == ["show"]
        assert "--depth" in complete("jsonl-session tree --", 2)

    def test_help_offers_it(self) -> None:
        _, out, _ = invoke("--help")
        assert "--install-completion" in out and "--show-completion" in out


class TestJsonEverywhere:
    def test_every_command_has_json_but_those_that_stream_other_formats(self) -> None:
        missing = []
        for command in app.registered_commands:
            name = command.name or (command.callback.__name__ if command.callback else "")
            _, out, _ = invoke(name, "--help")
            if name not in EXEMPT_FROM_JSON and "--json" not in out:
                missing.append(name)
        assert missing == []

    def test_latest_prints_the_session_as_list_does(self, tmp_path: Path) -> None:
        session, _ = linear_session(tmp_path, 1)
        code, out, _ = invoke("latest", tmp_path, "--cwd", "/work/project", "--json")
        assert code == 0
        shown = json.loads(out)
        _, listed, _ = invoke("list", tmp_path, "--json")
        assert shown == json.loads(listed)[0]
        assert shown["path"] == str(session.path)

    def test_label_and_name_say_what_they_wrote(self, tmp_path: Path) -> None:
        session, ids = linear_session(tmp_path, 1)
        code, out, _ = invoke("label", session.path, ids[0][:6], "start", "--json")
        assert code == 0
        labelled = json.loads(out)
        assert labelled["entryId"] == ids[0] and labelled["label"] == "start"
        assert Session.open(session.path).get(labelled["labelEntryId"]) is not None
        code, out, _ = invoke("label", session.path, ids[0], "--json")
        assert json.loads(out)["label"] is None
        code, out, _ = invoke("name", session.path, "  demo ", "--json")
        assert code == 0
        assert json.loads(out)["name"] == "demo" == Session.open(session.path).name

    def test_branch_says_the_leaf_and_the_marker(self, tmp_path: Path) -> None:
        session, ids = linear_session(tmp_path, 2)
        code, out, _ = invoke("branch", session.path, ids[1], "--json")
        assert code == 0
        moved = json.loads(out)
        assert moved["leafId"] == ids[1] == Session.open(session.path).leaf_id
        assert moved["markerId"] is not None
        code, out, _ = invoke("branch", session.path, ids[1], "--json")
        assert json.loads(out) == {"leafId": ids[1], "markerId": None}

    def test_fork_says_where_the_new_file_is(self, tmp_path: Path) -> None:
        session, _ = linear_session(tmp_path, 1)
        target = tmp_path / "fork.jsonl"
        code, out, _ = invoke("fork", session.path, "-o", target, "--json")
        assert code == 0
        assert json.loads(out) == {"path": str(target), "to": "pi"}

    def test_export_describes_the_file_it_wrote(self, tmp_path: Path) -> None:
        target = tmp_path / "out.md"
        code, out, _ = invoke("export", FIXTURES / "linear.jsonl", "-o", target, "--json")
        assert code == 0
        assert json.loads(out) == {
            "path": str(target),
            "format": "markdown",
            "redacted": 0,
            "redactions": {},
        }
        code, out, err = invoke("export", FIXTURES / "linear.jsonl", "--json")
        assert code == 2 and out == "" and "--format json" in err


class TestStandardInput:
    @pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: " ".join(c))
    def test_a_read_only_command_reads_dash_as_the_file(self, command: tuple[str, ...]) -> None:
        fixture = FIXTURES / "tool-calls.jsonl"
        name, *options = command
        expected = invoke(name, fixture, *options)
        result = runner.invoke(app, [name, "-", *options], input=fixture.read_bytes())
        named = str(fixture)
        assert result.exit_code == expected[0] == 0, expected[2]
        assert result.stderr.replace("<stdin>", named) == expected[2]
        assert result.stdout.replace("<stdin>", named) == expected[1]

    def test_show_names_standard_input(self) -> None:
        data = (FIXTURES / "linear.jsonl").read_bytes()
        result = runner.invoke(app, ["show", "-", "--json"], input=data)
        assert result.exit_code == 0
        assert (
            json.loads(result.stdout)["leafId"] == Session.open(FIXTURES / "linear.jsonl").leaf_id
        )
        result = runner.invoke(app, ["show", "-"], input=data)
        assert "file         <stdin>" in result.stdout

    def test_a_bad_session_on_standard_input_is_one_line_naming_it(self) -> None:
        result = runner.invoke(app, ["context", "-"], input=b'{"x":1}\n')
        assert result.exit_code == 1
        assert result.stderr.startswith("error: <stdin>:1:")
        assert len(result.stderr.splitlines()) == 1

    @pytest.mark.parametrize(
        "command",
        [
            ("label", "-", "aaaaaaaa", "x"),
            ("name", "-", "x"),
            ("branch", "-", "aaaaaaaa"),
            ("edit", "-", "aaaaaaaa", "--hide"),
            ("fork", "-"),
            ("convert", "-", "--to", "claude"),
            ("compact", "-"),
            ("migrate", "-"),
            ("doctor", "-", "--repair"),
            ("resume", "-", "hello"),
        ],
        ids=lambda c: c[0] + (" " + c[-1] if c[-1].startswith("--r") else ""),
    )
    def test_a_command_that_writes_refuses_dash(self, command: tuple[str, ...]) -> None:
        result = runner.invoke(app, list(command), input=(FIXTURES / "linear.jsonl").read_bytes())
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr.startswith(f"error: {command[0]} ")
        assert "'-'" in result.stderr and len(result.stderr.splitlines()) == 1

    def test_dash_in_a_real_pipe(self) -> None:
        done = subprocess.run(
            [*command_line(), "context", "-", "--json"],
            input=(FIXTURES / "linear.jsonl").read_bytes(),
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        built = Session.open(FIXTURES / "linear.jsonl").build_context().to_dict()
        assert json.loads(done.stdout) == built


class TestUsageErrors:
    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["list", "--limit", "x"], "error: invalid value for '--limit'"),
            (["tree", "--jsn", "f"], "error: no such option: --jsn"),
            (["show"], "error: missing argument 'file'"),
            (["shw"], "error: no such command 'shw'"),
            (["context", "f", "--format", "xml"], "error: invalid value for '--format'"),
        ],
    )
    def test_a_bad_command_line_is_one_line_and_exit_2(self, args: list[str], said: str) -> None:
        code, out, err = invoke(*args)
        assert code == 2
        assert out == ""
        assert err.startswith(said)
        assert len(err.splitlines()) == 1
        assert "╭" not in err and "--help'" in err

    def test_as_a_subprocess_too(self) -> None:
        done = run("list", "--limit", "0")
        assert done.returncode == 2
        assert done.stderr.splitlines() == [
            "error: invalid value for '--limit': Input should be greater than or equal to 1 "
            "(see 'jsonl-session list --help')"
        ]

    def test_options_that_do_not_go_together_are_usage_errors_too(self, tmp_path: Path) -> None:
        session, ids = linear_session(tmp_path, 1)
        code, _, err = invoke("edit", session.path, ids[0], "--hide", "--restore")
        assert code == 2 and err.startswith("error: give exactly one of")

    def test_a_command_that_fails_exits_1(self, tmp_path: Path) -> None:
        code, _, err = invoke("show", tmp_path / "none.jsonl")
        assert code == 1 and err == f"error: {tmp_path / 'none.jsonl'}: no such file\n"

    def test_no_arguments_prints_the_help(self) -> None:
        done = run()
        assert done.returncode == 2
        assert "Usage: jsonl-session" in done.stdout and done.stderr == ""


class TestOutputForPipes:
    def test_show_is_neither_wrapped_nor_padded(self, tmp_path: Path) -> None:
        deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "sessions"
        deep.mkdir(parents=True)
        session = Session.create(cwd="/w/" + "long-directory-name/" * 6, session_dir=deep)
        session.append_message(user("hello"))
        session.append_message(assistant("hi"))
        done = run("show", session.path)
        assert done.returncode == 0
        lines = done.stdout.splitlines()
        assert any(line == f"file         {session.path}" for line in lines)
        assert any(line.endswith(session.cwd) for line in lines)
        assert [line for line in lines if line != line.rstrip()] == []

    def test_stats_tables_have_no_trailing_spaces(self) -> None:
        _, out, _ = invoke("stats", FIXTURES / "tool-calls.jsonl")
        assert "by tool" in out
        assert [line for line in out.splitlines() if line != line.rstrip()] == []

    def test_list_cuts_wide_text_by_its_width_on_screen(self, tmp_path: Path) -> None:
        session = Session.create(cwd="/p", session_dir=tmp_path, fsync="never")
        session.append_message(user(WIDE_TEXT * 4))
        session.append_message(assistant("好的"))
        _, out, _ = invoke("list", tmp_path)
        title = out.splitlines()[0].split("  pi      ")[1]
        assert 63 <= cell_len(title) <= 64 and title.endswith("…")  # a wide character
        # that would straddle the edge is left out

    def test_list_fits_the_terminal(self, tmp_path: Path) -> None:
        session = Session.create(cwd="/p", session_dir=tmp_path, fsync="never")
        session.append_message(user(WIDE_TEXT * 4))
        session.append_message(assistant("好的"))
        shown = on_a_terminal("list", tmp_path, columns=60)
        first = shown.splitlines()[0]
        assert 59 <= cell_len(first) <= 60 and first.endswith("…")
        wide = on_a_terminal("list", tmp_path, columns=250).splitlines()[0]
        assert wide.endswith(WIDE_TEXT[-4:]) and cell_len(wide) < 250

    @pytest.mark.parametrize(
        "args",
        [
            ("list", FIXTURES),
            ("search", "the", FIXTURES),
            ("latest", FIXTURES, "--cwd", "/home/dev/projects/todo-api"),
            ("export", "-f", "markdown", FIXTURES / "tool-calls.jsonl"),
            ("textconv", FIXTURES / "tool-calls.jsonl"),
            ("show", "--json", FIXTURES / "tool-calls.jsonl"),
        ],
    )
    def test_commands_into_a_pipe_import_no_rich(
        self, tmp_path: Path, args: tuple[str | Path, ...]
    ) -> None:
        """What they print into a pipe is plain text: rich, 0.05 s to import and set
        up, would be most of their time on a small session."""
        modules = tmp_path / "modules"
        command = [sys.executable, "-c", _PROGRESS_AT_ONCE, str(modules), *map(str, args)]
        env = {**os.environ, "JSONL_SESSION_NO_CACHE": "1"}
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout and modules.read_text() == ""

    def test_list_shows_its_progress_on_a_terminal_only(self, tmp_path: Path) -> None:
        """The bar (here at once, not after half a second) goes to stderr on a
        terminal; into a pipe there is none, even with FORCE_COLOR, and no rich."""
        session = Session.create(cwd="/p", session_dir=tmp_path, fsync="never")
        session.append_message(user("hello"))
        command = [sys.executable, "-c", _PROGRESS_AT_ONCE, str(tmp_path / "modules")]
        env = {**os.environ, "FORCE_COLOR": "1"}
        piped = subprocess.run(
            [*command, "list", str(tmp_path)], capture_output=True, text=True, env=env
        )
        assert piped.returncode == 0, piped.stderr
        assert piped.stderr == "" and "hello" in piped.stdout
        assert (tmp_path / "modules").read_text() == ""  # no rich imported
        leader, follower = pty.openpty()
        shown = subprocess.run(
            [*command, "list", str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=follower,
            env={**env, "TERM": "xterm"},
        )
        os.close(follower)
        drawn = os.read(leader, 65536)
        os.close(leader)
        assert shown.returncode == 0 and b"reading sessions" in drawn

    @pytest.mark.parametrize(
        "args",
        [
            ("textconv",),
            ("export", "-f", "markdown"),
            ("export", "-f", "json"),
            ("show", "--json"),  # (one long write, which a pipe takes in parts)
            ("context",),  # (printed by rich, which has a way of its own)
        ],
    )
    def test_a_reader_that_stops_early_ends_the_command_quietly(
        self, tmp_path: Path, args: tuple[str, ...]
    ) -> None:
        # `textconv FILE | head`: the reader goes after a line; the command stops
        # there, says nothing, and exits as a program a SIGPIPE ended would (141)
        path = generate(tmp_path / "long.jsonl", entries=300)  # more than a pipe holds
        with subprocess.Popen(
            [*command_line(), *args, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        ) as reader:
            assert reader.stdout is not None and reader.stderr is not None
            assert reader.stdout.read(100)
            reader.stdout.close()
            said = reader.stderr.read()
            code = reader.wait(timeout=120)
        assert code == 141 and said == b""


class TestFlagsInHelp:
    def test_no_help_shows_a_flag_taking_a_value(self) -> None:
        names = [
            c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands
        ]
        for args in [[], *([name] for name in names)]:
            code, out, _ = invoke(*args, "--help")
            assert code == 0
            assert "<bool>" not in out, args
        _, out, _ = invoke("tree", "--help")
        assert "<int range>" in out  # options with values still say so


class TestTree:
    def test_a_long_linear_session_is_folded(self, tmp_path: Path) -> None:
        session, ids = linear_session(tmp_path, 500, halfway=500)
        code, out, _ = invoke("tree", session.path)
        assert code == 0
        lines = out.splitlines()
        assert len(lines) <= 10
        assert [line for line in lines if "…" in line and "entries" in line] == [
            "* … 497 entries …",
            "* … 496 entries …",
        ]
        assert any(ids[500] in line and "[halfway]" in line for line in lines)
        assert ids[0] in lines[0] and ids[-1] in lines[-1]

    def test_full_shows_every_entry(self, tmp_path: Path) -> None:
        session, _ = linear_session(tmp_path, 50)
        _, out, _ = invoke("tree", session.path, "--full")
        assert len(out.splitlines()) == 100

    def test_depth_says_what_is_deeper(self, tmp_path: Path) -> None:
        session, ids = linear_session(tmp_path, 3)
        session.branch(ids[1])
        session.append_message(user("another way"))
        session.append_message(assistant("fine"))
        _, out, _ = invoke("tree", session.path, "--depth", "1")
        assert out.splitlines()[-1] == "└─ * … 2 branches, 6 entries (--depth 1)"
        _, deeper, _ = invoke("tree", session.path, "--depth", "2")
        assert "another way" in deeper and "(--depth" not in deeper

    def test_limit_stops_and_says_how_much_is_left(self, tmp_path: Path) -> None:
        session, _ = linear_session(tmp_path, 50)
        _, out, _ = invoke("tree", session.path, "--full", "--limit", "10")
        lines = out.splitlines()
        assert len(lines) == 11
        assert lines[-1] == "… 90 more entries (--limit 10)"

    def test_wide_text_is_cut_by_its_width_on_screen(self, tmp_path: Path) -> None:
        session = Session.create(cwd="/p", session_dir=tmp_path, fsync="never")
        first = session.append_message(user(WIDE_TEXT * 3))
        session.flush()
        _, out, _ = invoke("tree", session.path)
        summary = out.splitlines()[0].partition(f"{first} ")[2]
        assert summary.startswith("user: ") and summary.endswith("…")
        assert 59 <= cell_len(summary) <= 60

    def test_json_lists_every_node_whatever_the_view(self, tmp_path: Path) -> None:
        session, ids = linear_session(tmp_path, 500)
        _, out, _ = invoke("tree", session.path, "--json", "--limit", "3", "--depth", "1")
        assert [node["id"] for node in json.loads(out)["nodes"]] == ids


class TestMigrateAndDoctor:
    def test_migrate_says_the_version_it_read(self, v1_file: Path) -> None:
        code, out, _ = invoke("migrate", v1_file)
        assert code == 0
        backup = Session.open(v1_file).backups or [v1_file.with_name("v1.jsonl.v1.bak-1")]
        assert out.strip() == f"{v1_file}: migrated v1 → v3; original kept as {backup[0]}"

    def test_migrate_json(self, v1_file: Path, tmp_path: Path) -> None:
        current = copy_fixture(tmp_path, "linear")
        code, out, _ = invoke("migrate", v1_file, current, tmp_path / "none.jsonl", "--json")
        assert code == 1  # the missing file
        migrated, kept, missing = json.loads(out)
        assert (migrated["action"], migrated["versionBefore"]) == ("migrated", 1)
        assert Path(migrated["backup"]).read_bytes() == (FIXTURES / "v1.jsonl").read_bytes()
        assert (kept["action"], kept["versionBefore"], kept["backup"]) == ("current", 3, None)
        assert missing["action"] == "error" and "no such file" in missing["error"]

    def test_doctor_repair_exits_1_while_problems_remain(self, tmp_path: Path) -> None:
        damaged = copy_fixture(tmp_path, "damaged-bad-middle-line")
        code, out, _ = invoke("doctor", damaged, "--repair")
        assert code == 1
        assert "after repair: 1 problem remains" in out


class TestRewritesAreSaid:
    @pytest.mark.parametrize(
        "command",
        [
            ("label", "9678ac8f", "start"),
            ("name", "eslint"),
            ("branch", "9678ac8f"),
            ("edit", "9678ac8f", "--hide"),
            ("compact", "--summarizer", "offline", "--keep-recent-tokens", "10"),
        ],
        ids=lambda c: c[0],
    )
    def test_a_write_to_an_old_file_says_it_rewrote_it(
        self, v1_file: Path, command: tuple[str, ...]
    ) -> None:
        name, *rest = command
        code, _, err = invoke(name, v1_file, *rest)
        assert code == 0, err
        backup = v1_file.with_name("v1.jsonl.v1.bak-1")
        assert backup.read_bytes() == (FIXTURES / "v1.jsonl").read_bytes()
        assert (
            f"note: {v1_file} was version 1: rewritten as version 3 before writing; "
            f"the original is kept as {backup}"
        ) in err

    def test_a_write_to_a_current_file_says_nothing_more(self, tmp_path: Path) -> None:
        session, ids = linear_session(tmp_path, 1)
        code, _, err = invoke("label", session.path, ids[0], "x")
        assert (code, err) == (0, "")

    def test_a_torn_last_line_moved_aside_is_said(self, tmp_path: Path) -> None:
        torn = copy_fixture(tmp_path, "damaged-torn-tail")
        os.utime(torn, (1_700_000_000, 1_700_000_000))  # written long ago: torn for good
        code, _, err = invoke("name", torn, "sealed")
        assert code == 0
        assert f"note: {torn}: its torn last line was moved to" in err


class TestSearch:
    def test_hits_in_a_v1_file_give_ids_other_commands_take(self, v1_file: Path) -> None:
        code, out, _ = invoke("search", "strict", v1_file.parent, "--json")
        assert code == 0
        hits = json.loads(out)
        assert hits and all(hit["entryId"] for hit in hits)
        code, out, _ = invoke("context", v1_file, "--leaf", hits[0]["entryId"], "--json")
        assert code == 0 and "strict" in json.dumps(json.loads(out)["messages"][-1])

    def test_tools_searches_tool_output(self, tmp_path: Path) -> None:
        copy_fixture(tmp_path, "tool-calls")
        _, out, _ = invoke("search", "vitest", tmp_path, "--json")
        assert json.loads(out) == []
        _, out, _ = invoke("search", "vitest", tmp_path, "--tools", "--json")
        hits = json.loads(out)
        assert hits and {hit["role"] for hit in hits} == {"toolResult"}

    def test_limit_keeps_the_first_and_says_there_are_more(self, tmp_path: Path) -> None:
        session, _ = linear_session(tmp_path, 5)
        code, out, err = invoke("search", "question", tmp_path, "--limit", "2", "--json")
        assert code == 0
        assert [hit["snippet"] for hit in json.loads(out)] == ["question 0", "question 1"]
        assert err == "more matches than --limit 2; showing the first 2\n"
        _, _, err = invoke("search", "question", tmp_path, "--limit", "5")
        assert err == ""
        assert session.path.exists()


def test_the_fixture_copies_are_what_the_tests_expect() -> None:
    # the ids above are those reading v1.jsonl gives its entries
    session = Session.open(FIXTURES / "v1.jsonl")
    assert session.entries[0].id == "9678ac8f"
