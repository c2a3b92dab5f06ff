"""textconv: the plain-text transcript git diffs through. Stable, one block per line of
the file, only the end changes on append, damaged files still readable; and a real
``git diff`` in a temporary repository with our command as the textconv."""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import assistant_message, assistant_with, user_message
from helpers_cli import runner
from hypothesis import given, settings
from hypothesis import strategies as st
from locations import FIXTURES, ROOT, copy_fixture

from jsonl_session import Session
from jsonl_session.cli import app
from jsonl_session.views import textconv_blocks
from jsonl_session.views.textconv import textconv

DAMAGED = sorted(p.stem for p in FIXTURES.glob("damaged-*.jsonl"))


class TestTranscript:
    def test_each_entry_is_a_block_with_its_id_type_parent_and_text(self, tmp_path: Path) -> None:
        text = textconv(copy_fixture(tmp_path, "tool-calls"))
        assert text.startswith(
            "session 01973605-fabf-7fa7-a60a-ab641bbf3f13 (format version 3)\n"
            "created 2025-06-03T13:40:51.031Z\ncwd /home/dev/projects/todo-api\n\n"
        )
        assert (
            "[81cd0e7c] user · 2025-06-03T13:41:25.852Z · parent 1d2d2f88\n"
            "  The test `todos.test.ts > completes a todo` fails. Fix it.\n"
        ) in text
        assert '  -> read {"path": "test/todos.test.ts"} (toolu_01GGrQZ9tvRTPmFBHOr2Bgxd)' in text
        assert "[c2025a91] model_change · 2025-06-03T13:40:51.057Z · parent none" in text
        assert '"type":"message"' not in text

    def test_a_branch_is_marked_where_the_parent_is_not_the_entry_above(
        self, tmp_path: Path
    ) -> None:
        text = textconv(copy_fixture(tmp_path, "branching"))
        assert ">> branch from 1bea2219\n[7e693f8c] user" in text
        assert ">> branch from 003822dc\n[c102d351] user" in text
        assert text.count(">> branch from") == 5  # three leaf markers, two later branches

    def test_appending_entries_changes_only_the_end(self, tmp_path: Path) -> None:
        path = copy_fixture(tmp_path, "branching")
        before = textconv(path)
        session = Session.open(path)
        first = session.append_message(user_message("Add rate limiting too."))
        session.append_message(assistant_message("Added a token bucket per IP."))
        session.append_label(first, "rate limit")
        session.branch("1bea2219")
        session.append_message(user_message("Or keep it without a limit?"))
        after = textconv(path)
        assert after.startswith(before)
        added = after[len(before) :]
        assert "  Add rate limiting too.\n" in added and "  Or keep it without a limit?" in added
        assert f"label on {first}: rate limit" in added

    def test_the_same_file_gives_the_same_text_wherever_it_is(self, tmp_path: Path) -> None:
        one = copy_fixture(tmp_path, "compaction-one")
        (tmp_path / "elsewhere").mkdir()
        two = copy_fixture(tmp_path / "elsewhere", "compaction-one")
        assert textconv(one) == textconv(two) == textconv(one)
        assert str(tmp_path) not in textconv(one)

    def test_long_lines_are_not_wrapped_and_control_characters_are_escaped(
        self, tmp_path: Path
    ) -> None:
        session = Session.create(cwd="/w", session_dir=tmp_path, fsync="never")
        long_text = "word " * 2000
        session.append_message(user_message(long_text + "\x1b[31mred\x1b[0m\rback"))
        session.flush()
        lines = textconv(session.path).splitlines()
        (line,) = [li for li in lines if li.startswith("  word word")]
        assert line == "  " + long_text + "\\x1b[31mred\\x1b[0m\\x0dback"

    @pytest.mark.parametrize("name", DAMAGED)
    def test_damaged_files_still_give_output_and_exit_0(self, tmp_path: Path, name: str) -> None:
        path = copy_fixture(tmp_path, name)
        result = runner.invoke(app, ["textconv", str(path)])
        assert result.exit_code == 0, result.stderr
        assert result.stdout.strip()
        assert str(tmp_path) not in result.stdout

    def test_damaged_lines_are_shown_as_such_in_place(self, tmp_path: Path) -> None:
        text = textconv(copy_fixture(tmp_path, "damaged-bad-middle-line"))
        assert "\n\n!! line 6: damaged (invalid-json)\n  {" in text
        torn = textconv(copy_fixture(tmp_path, "damaged-torn-tail"))
        assert "!! line 9: damaged (torn-tail)" in torn
        nulls = textconv(copy_fixture(tmp_path, "damaged-null-line"))
        assert "!! line 6: damaged (not-an-entry)\n  null\n" in nulls

    def test_a_file_that_is_no_session_still_shows_its_lines(self, tmp_path: Path) -> None:
        text = textconv(copy_fixture(tmp_path, "damaged-no-header"))
        assert text.startswith("not readable as a session (line 1): no session header")
        assert "\n\nline 4:\n  {" in text
        assert textconv(copy_fixture(tmp_path, "damaged-empty")).startswith(
            "not readable as a session (line 1): file is empty"
        )

    def test_a_missing_file_is_an_error(self, tmp_path: Path) -> None:
        result = runner.invoke(app, ["textconv", str(tmp_path / "nope.jsonl")])
        assert result.exit_code == 1 and "no such file" in result.stderr


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    done = subprocess.run(
        ["git", "--no-pager", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
class TestGitDiff:
    @pytest.fixture
    def repo(self, tmp_path: Path) -> Path:
        repo = tmp_path / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
        git(repo, "config", "user.name", "Test")
        git(repo, "config", "user.email", "test@example.com")
        command = f"{shlex.quote(sys.executable)} -m jsonl_session textconv"
        git(repo, "config", "diff.jsonl-session.textconv", command)
        (repo / ".gitattributes").write_text("*.jsonl diff=jsonl-session\n")
        shutil.copyfile(FIXTURES / "branching.jsonl", repo / "session.jsonl")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "a session")
        return repo

    def test_git_diff_shows_new_messages_as_added_text_not_json(self, repo: Path) -> None:
        session = Session.open(repo / "session.jsonl")
        session.append_message(user_message("Please add rate limiting as well."))
        session.append_message(assistant_message("Rate limiting added: 100 requests a minute."))
        diff = git(repo, "diff")
        added = [line[1:] for line in diff.splitlines() if line.startswith("+")]
        removed = [line for line in diff.splitlines() if line.startswith("-")]
        assert "  Please add rate limiting as well." in added
        assert "  Rate limiting added: 100 requests a minute." in added
        assert removed == ["--- a/session.jsonl"]
        assert not any('"type"' in line or '{"' in line for line in added)

    def test_git_diff_shows_a_new_branch_and_a_damaged_line(self, repo: Path) -> None:
        session = Session.open(repo / "session.jsonl")
        session.branch("0afda538")
        session.append_message(user_message("Start over with GraphQL."))
        with open(repo / "session.jsonl", "ab") as handle:
            handle.write(b'{"type":"message","id":"broken\n')
        diff = git(repo, "diff")
        assert "+>> branch from 0afda538" in diff
        assert "+  Start over with GraphQL." in diff
        assert "+!! line 17: damaged (invalid-json)" in diff


@given(
    text=st.text(alphabet="ab\n\x01\u00e9\U0001f600", max_size=80),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=5),
    stretch=st.integers(min_value=1, max_value=12),
)
@settings(max_examples=400, deadline=None)
def test_a_long_text_indented_a_stretch_at_a_time_is_indented_as_a_whole(
    text: str, cuts: list[int], stretch: int
) -> None:
    bounds = sorted({0, len(text), *(min(cut, len(text)) for cut in cuts)})
    pieces = [text[start:end] for start, end in itertools.pairwise(bounds)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(textconv_blocks, "_STRETCH", stretch)
        assert "".join(textconv_blocks._indented(pieces)) == textconv_blocks.indent(text)


@given(text=st.text(alphabet="ab \n\r\t\x00\x1f\x7f\x85\u2028\u00e9\U0001f600", max_size=60))
@settings(max_examples=500, deadline=None)
def test_a_text_is_indented_line_by_line(text: str) -> None:
    # each line split at a newline only (not at the other breaks str.splitlines
    # knows): two spaces before it unless it is empty; its controls are the
    # transcript's to escape, with everything else
    expected = "\n".join("  " + line if line else "" for line in text.split("\n"))
    assert textconv_blocks.indent(text) == expected


def _escaped_c0(text: str) -> str:
    return "".join(
        f"\\x{ord(c):02x}" if (ord(c) < 32 and c not in "\t\n") or c == "\x7f" else c for c in text
    )


class TestControlCharacters:
    """Every C0 control but newline and tab, and DEL, is written as an escape wherever
    it stands, titles included; ``visible`` escapes C1 and the bidirectional controls
    too, as a terminal must be shown them."""

    @pytest.fixture
    def hostile(self, tmp_path: Path) -> Path:
        session = Session.create(cwd="/work/\x1b[2Jcwd", session_dir=tmp_path)
        session.append_message(user_message("ring \x07 and \x1b]0;title\x07 \x9b \u202e\r"))
        session.append_model_change("prov\x1b", "model\x7f\x85")
        session.append_custom_message("kind\x1b[31m", "custom \x1b text", display=True)
        return session.path

    def test_no_control_reaches_the_transcript_raw(self, hostile: Path) -> None:
        text = textconv(hostile, cache=False)
        assert not any((ord(c) < 32 and c not in "\t\n") or c == "\x7f" for c in text)
        assert "\\x1b[2Jcwd" in text  # the header's cwd
        assert "kind\\x1b[31m" in text  # a title
        assert "ring \\x07 and \\x1b]0;title\\x07 \x9b \u202e\\x0d" in text
        assert textconv(hostile, cache=False) == _escaped_c0(text)  # escaping twice: once

    def test_visible_escapes_c1_and_bidirectional_controls_too(self, hostile: Path) -> None:
        from jsonl_session import textconv_chunks, textconv_encoded
        from jsonl_session.views.visible import visible

        text = textconv(hostile, cache=False)
        shown = "".join(textconv_chunks(hostile, cache=False, visible=True))
        assert shown == visible(text)
        assert "\\x9b \\u202e" in shown and "\x9b" not in shown and "\x85" not in shown
        assert b"".join(textconv_encoded(hostile, cache=False, visible=True)) == shown.encode()

    def test_a_file_that_is_no_session_has_its_lines_escaped_too(self, tmp_path: Path) -> None:
        path = tmp_path / "odd.jsonl"
        path.write_bytes(b'{"type":"message"}\n\x1b[2J not json\n')
        text = textconv(path, cache=False)
        assert "\x1b" not in text and "\\x1b[2J not json" in text


def test_a_long_output_thinking_and_error_read_as_when_indented_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session.create(cwd="/w", session_dir=tmp_path, fsync="never")
    long = "a line of output\x07 \U0001f600\n" * 300
    session.append_message(user_message(long))
    # long, short, long: each its own line of the block
    blocks = [{"type": "text", "text": text} for text in (long, "short", long.rstrip("\n"))]
    session.append_message({"role": "user", "content": [*blocks, *blocks], "timestamp": 2})
    think = {"type": "thinking", "thinking": long}
    session.append_message(assistant_with(think, {"type": "text", "text": "done"}))
    for error in (False, True):
        content = [{"type": "text", "text": long}]
        result = {"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": content}
        session.append_message({**result, "isError": error, "timestamp": 3})
    whole = textconv(session.path, cache=False)
    monkeypatch.setattr(textconv_blocks, "_STRETCH", 500)
    assert textconv(session.path, cache=False) == whole
    assert "  (error) a line of output\\x07" in whole
