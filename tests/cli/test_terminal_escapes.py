"""Terminal control sequences in a session file never reach the terminal.

Every text field of one session carries a hostile set: a screen clear, an OSC title,
an OSC 8 hyperlink, a lone CSI (U+009B), BEL, a carriage return, a right-to-left
override and rich markup. Every command prints it escaped (``\\x1b``, ``\\u202e``),
through a pipe and on a terminal; ``--json`` writes the code points JSON does not
escape itself as ``\\u`` escapes, so the JSON still decodes to the exact text."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from builders import assistant_calling, text_block, tool_call, tool_result, user_message
from helpers_cli import invoke
from helpers_large import generate
from helpers_write import append_raw
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jsonl_session import Session, textconv, textconv_chunks, textconv_encoded
from jsonl_session.cli.terminal_text import json_visible, visible, visible_utf8
from jsonl_session.views import pieces as handing

HOSTILE = (
    "\x1b[2J\x1b]0;owned\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x9b31m\r\u202e[red]x[/red]"
)
# what must never appear raw: ESC, BEL, CR, CSI as one code point, the override
RAW = ("\x1b", "\x07", "\r", "\x9b", "\u202e")
# sequences that would act on a terminal even where rich's own colours use ESC
CONTROLS = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F)]] + [
    "\u2066",
    "\u2069",
    "\ud800",
]
SOME = [*CONTROLS, "\u00e9", "\u2019", "\u00b0", "\u0410", "\u4e2d", "\U0001f600"]
ACTING = ("\x1b[2J", "\x1b]0;", "\x1b]8;", "\x07", "\x9b", "\u202e", "\r")


@pytest.fixture
def hostile_session(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    session = Session.create(cwd=f"/work/{HOSTILE}", session_dir=folder)
    first = session.append_message(user_message(f"please {HOSTILE} fix it"))
    call = tool_call("call_1", f"bash{HOSTILE}", command=f"echo {HOSTILE}")
    session.append_message(assistant_calling(call, thinking=f"thinking {HOSTILE}"))
    output = [text_block(f"output {HOSTILE}")]
    session.append_message(tool_result("call_1", "bash", output, timestamp=1_700_000_000_900))
    session.append_label(first, f"label {HOSTILE}")
    session.append_session_info(f"name {HOSTILE}")
    session.append_custom_message(f"kind{HOSTILE}", f"custom {HOSTILE}", display=True)
    # beside it, a copy ending in an entry whose parent is missing: doctor names both ids
    damaged = tmp_path / "damaged" / "damaged.jsonl"
    damaged.parent.mkdir()
    damaged.write_bytes(session.path.read_bytes())
    orphan = {"type": "custom", "id": f"id{HOSTILE}", "parentId": f"gone{HOSTILE}"}
    append_raw(damaged, orjson.dumps({**orphan, "timestamp": "2024-01-01T00:00:00Z"}) + b"\n")
    return session.path


def damaged_copy(path: Path) -> str:
    return str(path.parent.parent / "damaged" / "damaged.jsonl")


def commands(path: Path) -> list[list[str]]:
    folder = str(path.parent)
    return [
        ["list", folder],
        ["search", "fix", folder],
        ["show", str(path)],
        ["tree", str(path)],
        ["context", str(path)],
        ["stats", str(path)],
        ["textconv", str(path)],
        ["export", str(path), "--format", "markdown"],
        ["export", str(path), "--format", "html"],
        ["doctor", damaged_copy(path)],
    ]


def json_commands(path: Path) -> list[list[str]]:
    folder = str(path.parent)
    return [
        ["list", folder, "--json"],
        ["search", "fix", folder, "--json"],
        ["show", str(path), "--json"],
        ["tree", str(path), "--json"],
        ["context", str(path), "--json"],
        ["stats", str(path), "--json"],
        ["doctor", damaged_copy(path), "--json"],
        ["export", str(path), "--format", "json"],
    ]


def strings(value: object) -> list[str]:
    """Every string in a decoded JSON value, keys included."""
    found, pending = [], [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            pending.extend([*item.keys(), *item.values()])
        elif isinstance(item, list):
            pending.extend(item)
    return found


class TestThroughAPipe:
    def test_every_command_shows_control_characters_escaped(self, hostile_session: Path) -> None:
        for arguments in commands(hostile_session):
            code, out, err = invoke(*arguments)
            assert code in (0, 1), (arguments, err)
            for raw in RAW:
                assert raw not in out + err, (arguments, raw)
            assert "\\x1b" in out, arguments

    def test_every_json_output_escapes_them_and_still_decodes_to_the_exact_text(
        self, hostile_session: Path
    ) -> None:
        for arguments in json_commands(hostile_session):
            code, out, err = invoke(*arguments)
            assert code in (0, 1), (arguments, err)
            for raw in ("\x7f", "\x9b", "\u202e"):
                assert raw not in out, (arguments, raw)
            assert "\\u009b" in out, arguments
            decoded = strings(json.loads(out))
            # escaped, not dropped: the text decodes back (a search shows a snippet of it)
            assert any("\x9b31m" in text for text in decoded), arguments

    def test_a_file_written_with_o_keeps_the_text_exactly(
        self, hostile_session: Path, tmp_path: Path
    ) -> None:
        target = tmp_path / "out.md"
        code, _, err = invoke("export", hostile_session, "-o", target)
        assert code == 0, err
        assert f"output {HOSTILE}" in target.read_bytes().decode()


@pytest.mark.skipif(os.name == "nt", reason="pseudo-terminals are POSIX's")
def test_on_a_terminal_no_sequence_from_the_file_acts(hostile_session: Path) -> None:
    for arguments in (["show", str(hostile_session)], ["tree", str(hostile_session)]):
        controller, terminal = pty.openpty()
        child = subprocess.Popen(
            [sys.executable, "-m", "jsonl_session", *arguments],
            stdin=subprocess.DEVNULL,
            stdout=terminal,
            stderr=terminal,
            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"},
        )
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            shown += chunk
        os.close(controller)
        assert child.wait(timeout=60) == 0
        text = shown.decode("utf-8", "replace").replace("\r\n", "\n")
        for acting in ACTING:
            assert acting not in text, (arguments, acting)
        assert "\\x1b]0;owned" in text


class TestTheEscapes:
    def test_newlines_tabs_and_ordinary_text_are_left_alone(self) -> None:
        assert visible("a\tb\nc é 中") == "a\tb\nc é 中"

    def test_each_control_is_shown_by_its_code(self) -> None:
        assert visible("\x1b\x00\x7f\x9b\u202e\u2066") == "\\x1b\\x00\\x7f\\x9b\\u202e\\u2066"

    def test_json_keeps_meaning_with_u_escapes(self) -> None:
        data = json.dumps({"t": "a\x7f\x9b\u202eb"}, ensure_ascii=False).encode()
        escaped = json_visible(data)
        assert escaped == b'{"t": "a\\u007f\\u009b\\u202eb"}'
        assert json.loads(escaped) == json.loads(data)

    @settings(max_examples=2000, deadline=None)
    @given(
        text=st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(CONTROLS)))
    )
    @example(text="\u2019\u2014\u00b0 \u0410\u202a\u202f\u2065\u2066\u2069\u206a\u0080\u009f\u00a0")
    @example(text="\ud800 half an emoji, \x1b[2J")
    def test_the_bytes_of_a_text_are_escaped_as_the_text_is(self, text: str) -> None:
        # (the command writes a lone surrogate as a backslash escape)
        data = text.encode("utf-8", "backslashreplace")
        assert visible_utf8(data) == visible(text).encode("utf-8", "backslashreplace")


class TestTextconvAsBytes:
    def test_the_command_writes_the_transcript_as_the_text_stream_would(
        self, hostile_session: Path, tmp_path: Path
    ) -> None:
        # stdout is a pipe (the bytes path); the text stream's path is the library's
        # textconv through `visible`, with a lone surrogate written escaped
        append_raw(
            hostile_session,
            b'{"type":"custom","id":"ab12cd34","parentId":null,'
            b'"timestamp":"2026-01-01T00:00:00.000Z","customType":"x\\ud800",'
            b'"data":"\\u0085\\u2067 and \\u00e9"}\n',
        )
        done = subprocess.run(
            [sys.executable, "-m", "jsonl_session", "textconv", str(hostile_session)],
            capture_output=True,
            env={**os.environ, "JSONL_SESSION_CACHE_DIR": str(tmp_path / "cache")},
        )
        assert done.returncode == 0, done.stderr
        expected = visible(textconv(hostile_session, cache=False))
        assert done.stdout == expected.encode("utf-8", "backslashreplace")
        assert b"\\ud800" in done.stdout and b"\\x85\\u2067" in done.stdout

    def test_the_pieces_as_bytes_are_the_pieces_as_text(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "gen.jsonl", 300, 5)
        text = "".join(textconv_chunks(path, cache=False))
        joined = b"".join(textconv_encoded(path, cache=False))
        assert joined == text.encode("utf-8", "backslashreplace")
        assert max(map(len, textconv_encoded(path, cache=False))) < 2 * handing.JOINED_BYTES
