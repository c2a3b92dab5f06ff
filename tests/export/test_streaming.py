"""Exports and transcripts written as they are made: `export_chunks` and
`textconv_chunks` give pieces no larger than one entry's, joined they are exactly the
whole export, and the command writes them (to a file or stdout) without holding the
session's text."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from helpers_cli import invoke
from hypothesis import given, settings
from hypothesis import strategies as st
from locations import FIXTURES

from jsonl_session import (
    Session,
    export_chunks,
    export_session,
    textconv,
    textconv_chunks,
    write_export,
)
from jsonl_session.export import markdown
from jsonl_session.views import pieces as handing

FORMATS = ("markdown", "html", "json")
ENTRY_TEXT = 3_000  # characters of each message of the long session


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 turns of about 3 KB each (a tool call and its output among them), with
    a secret in one message. The output read is text: code would be highlighted,
    which costs seconds a page (up to markup.py's budget) and is not what is tested."""
    folder = tmp_path_factory.mktemp("long")
    session = Session.create(cwd="/w", session_dir=folder, fsync="never")
    for n in range(300):
        text = f"question {n} " + "words " * (ENTRY_TEXT // 6)
        if n == 150:
            text += " token ghp_" + "a1B2c3D4e5" * 4
        session.append_message({"role": "user", "content": text, "timestamp": n})
        call = {
            "type": "toolCall",
            "id": f"c{n}",
            "name": "read",
            "arguments": {"path": "notes.txt"},
        }
        session.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "answer " * 400}, call],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "m",
                "usage": {"input": 10, "output": 5, "totalTokens": 15},
                "stopReason": "toolUse",
                "timestamp": n,
            }
        )
        session.append_message(
            {
                "role": "toolResult",
                "toolCallId": f"c{n}",
                "toolName": "read",
                "content": [{"type": "text", "text": "x = 1\n" * 300}],
                "isError": False,
                "timestamp": n,
            }
        )
    return session.path


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("redact", [False, True])
def test_the_pieces_joined_are_the_whole_export(long_session: Path, fmt: str, redact: bool) -> None:
    session = Session.open(long_session)
    chunks = export_chunks(session, fmt, redact=redact, all_branches=True)  # type: ignore[arg-type]
    pieces = list(chunks)
    whole = export_session(session, fmt, redact=redact, all_branches=True)  # type: ignore[arg-type]
    assert "".join(pieces) == whole.text
    assert chunks.redactions == whole.redactions
    assert chunks.redactions == ({"github-token": 1} if redact else {})


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_piece_holds_more_than_a_few_entries(long_session: Path, fmt: str) -> None:
    session = Session.open(long_session)
    pieces = list(export_chunks(session, fmt))  # type: ignore[arg-type]
    whole = sum(len(piece) for piece in pieces)
    # the page's stylesheet and head come first, JSON's tree of ids (a few dozen
    # bytes an entry, as the session holds them open) last; the rest are one entry each
    assert len(pieces) > 300
    assert max(len(piece) for piece in pieces[2:-1]) < whole / 50


def test_the_transcript_comes_one_line_at_a_time(long_session: Path) -> None:
    pieces = list(textconv_chunks(long_session, cache=False))
    assert "".join(pieces) == textconv(long_session, cache=False)
    assert len(pieces) > 900
    assert max(len(piece) for piece in pieces) < 2 * 4 * ENTRY_TEXT


def test_write_export_takes_the_pieces(long_session: Path, tmp_path: Path) -> None:
    session = Session.open(long_session)
    target = write_export(export_chunks(session, "html"), tmp_path / "page.html")
    assert target.read_text() == export_session(session, "html").text


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_command_writes_the_same_to_stdout_and_to_a_file(
    long_session: Path, tmp_path: Path, fmt: str
) -> None:
    code, shown, _ = invoke("export", "-f", fmt, long_session)
    assert code == 0
    code, _, said = invoke("export", "-f", fmt, "--redact", "-o", tmp_path / "out", long_session)
    assert code == 0
    assert "redacted 1 secret (github-token 1)" in said
    written = (tmp_path / "out").read_text()
    assert written == export_session(Session.open(long_session), fmt, redact=True).text  # type: ignore[arg-type]
    assert shown == export_session(Session.open(long_session), fmt).text  # type: ignore[arg-type]
    if fmt == "json":
        assert len(json.loads(written)["entries"]) == 900


def test_textconv_command_prints_the_transcript() -> None:
    path = FIXTURES / "branching.jsonl"
    code, shown, _ = invoke("textconv", path)
    assert code == 0
    assert shown == textconv(path)


def _one_huge_output(folder: Path, output: str) -> Session:
    session = Session.create(cwd="/w", session_dir=folder, fsync="never")
    session.append_message({"role": "user", "content": "show the log", "timestamp": 1})
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat log"}}
    reply = {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 2}
    session.append_message({**reply, "provider": "p", "model": "m", "api": "a"})
    content = [{"type": "text", "text": output}]
    result = {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": content}
    session.append_message({**result, "isError": False, "timestamp": 3})
    return Session.open(session.path)


@pytest.mark.parametrize("ending", ["", "\n"])
def test_a_huge_text_is_a_markdown_piece_of_its_own_not_copied_into_a_join(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    output = "line of the log ``\n" * 400 + "the end \U0001f600" + ending
    session = _one_huge_output(tmp_path, output)
    whole = export_session(session, "markdown").text
    monkeypatch.setattr(handing, "JOINED_CHARS", 1000)
    pieces = list(export_chunks(session, "markdown", workers=1))
    assert output in pieces  # alone, as the view holds it
    assert "".join(pieces) == whole
    assert whole.endswith("**Output**\n\n```\n" + output.removesuffix("\n") + "\n```\n")


def test_a_worker_encodes_a_huge_text_apart_and_keeps_a_lone_surrogate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(handing, "JOINED_CHARS", 8)
    texts = ["a", "b", "a huge \U0001f600 text", "c", "a huge one, lone \udc80 in it", "d"]
    data, plain = handing.utf8_of(texts)
    assert data.decode("utf-8", "surrogatepass") == "".join(texts)
    assert not plain
    assert handing.utf8_of(texts[:4]) == ("".join(texts[:4]).encode(), True)
    assert handing.joined(texts) == ["ab", texts[2], "c", texts[4], "d"]
    assert handing.joined([]) == [""]


@given(
    text=st.text(alphabet="`a\n", max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=5),
)
@settings(max_examples=400, deadline=None)
def test_a_fence_over_pieces_is_the_fence_over_their_join(text: str, cuts: list[int]) -> None:
    bounds = sorted({0, len(text), *(min(cut, len(text)) for cut in cuts)})
    pieces = [text[start:end] for start, end in itertools.pairwise(bounds)]
    for cut in cuts[: len(cuts) // 2]:  # empty pieces too (a redactor's may be)
        pieces.insert(cut % (len(pieces) + 1), "")
    runs = [len(run) for run in re.findall("`+", text)]
    assert markdown._longest_backtick_run(pieces) == max([2, *runs])
    for ends in (False, True):
        fenced = markdown._fence(pieces, "sh", newline_ends=ends)
        assert "".join(fenced) == "".join(markdown._fence(text, "sh", newline_ends=ends))
