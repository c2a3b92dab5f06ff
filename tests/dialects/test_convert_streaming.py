"""A conversion written as it is made: the lines of another agent's file come one
entry at a time and go to the new file in blocks, so a large session is never held
whole as text (the figures at 500 MB are benchmarks/scale.py's); and the lines a
session keeps in memory (a transcript read as pi entries, entries appended) take
about their own length, not the buffer an encoder grew for them."""

from __future__ import annotations

import json
import os
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from locations import FIXTURES

from jsonl_session import Session, SessionWriteError, convert
from jsonl_session.dialects import to_claude
from jsonl_session.format.jsonio import kept, loads_js_general
from jsonl_session.storage import output_lines, outputs

CallsTo = Callable[[object, str], list[tuple[Any, ...]]]  # conftest.py's calls_to
TURNS = 120
TEXT = 3_000  # characters of each message


@pytest.fixture(scope="module")
def long_pi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pi session of TURNS user and assistant messages of about TEXT characters."""
    folder = tmp_path_factory.mktemp("long")
    session = Session.create(cwd="/w", session_dir=folder, fsync="never")
    for n in range(TURNS):
        session.append_message({"role": "user", "content": f"ask {n} " + "w" * TEXT})
        session.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"say {n} " + "v" * TEXT}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "m",
                "usage": {"input": 1, "output": 1, "totalTokens": 2},
                "stopReason": "stop",
            }
        )
    return session.path


@pytest.fixture(scope="module")
def long_claude(long_pi: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("claude") / "t.jsonl"
    return convert(Session.open(long_pi, cache=False), "claude", out).path


class TestWrittenAsMade:
    @pytest.mark.parametrize("to", ["claude", "pi", "codex"])
    def test_the_file_goes_out_in_blocks_and_is_the_same_whatever_their_size(
        self,
        long_pi: Path,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        calls_to: CallsTo,
        to: str,
    ) -> None:
        whole = convert(Session.open(long_pi, cache=False), to, tmp_path / "whole.jsonl").path
        seen = calls_to(outputs.OutputWriter, "write")  # (writer, data) of each write
        monkeypatch.setattr(output_lines, "LINES_BYTES", 8_192)
        small = convert(Session.open(long_pi, cache=False), to, tmp_path / "small.jsonl")
        assert small.path.read_bytes() == whole.read_bytes()
        longest = max(map(len, whole.read_bytes().splitlines()))
        writes = [len(data) for _, data in seen]
        assert len(writes) > 10 and max(writes) < 8_192 + longest + 2

    def test_a_line_longer_than_a_block_is_written_as_it_is(
        self, long_pi: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(output_lines, "LINES_BYTES", 1_000)  # every line is longer
        done = convert(Session.open(long_pi, cache=False), "pi", tmp_path / "copy.jsonl")
        source = long_pi.read_bytes().splitlines()
        copied = done.path.read_bytes().splitlines()
        assert copied[1:] == source[1:] and done.entries == len(source) - 1

    def test_claude_lines_are_made_as_they_are_taken(
        self, long_pi: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        decoded: list[bytes] = []
        real_loads = to_claude.loads_js
        monkeypatch.setattr(
            to_claude, "loads_js", lambda raw: decoded.append(raw) or real_loads(raw)
        )
        session = Session.open(long_pi, cache=False)
        lines, _, _ = to_claude.claude_file(session)
        assert decoded == []  # nothing made before it is asked for
        next(iter(lines))
        assert len(decoded) == 1
        assert sum(1 for _ in lines) == len(session.entries) - 1
        assert len(decoded) == len(session.entries)

    def test_an_existing_target_is_refused_before_any_line_is_made(
        self, long_pi: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        taken = tmp_path / "taken.jsonl"
        taken.write_bytes(b"mine")
        made: list[bytes] = []
        real_loads = to_claude.loads_js
        monkeypatch.setattr(to_claude, "loads_js", lambda raw: made.append(raw) or real_loads(raw))
        with pytest.raises(Exception, match="already exists"):
            convert(Session.open(long_pi, cache=False), "claude", taken)
        assert made == [] and taken.read_bytes() == b"mine"


def held_by(make: object) -> int:
    """Bytes Python still holds for what ``make()`` returns, while it is held."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept_alive = make()  # type: ignore[operator]
        held = tracemalloc.get_traced_memory()[0] - before
        del kept_alive
        return held
    finally:
        tracemalloc.stop()


class TestLinesHeldAtTheirSize:
    def test_kept_takes_the_length_of_the_line_not_the_encoders_buffer(self) -> None:
        line = orjson.dumps({"text": "x" * 3_000})
        assert held_by(lambda: kept(orjson.dumps({"text": "x" * 3_000}))) < len(line) + 200
        assert kept(line) == line

    def test_a_transcript_read_as_pi_entries_holds_about_its_lines(self, long_claude: Path) -> None:
        lines = sum(len(line) for line in long_claude.read_bytes().splitlines())
        # (each entry's line, its record and its few texts; orjson's buffers were 8x)
        assert held_by(lambda: Session.open(long_claude, cache=False)) < 2 * lines

    def test_appended_entries_hold_about_their_lines(self, tmp_path: Path) -> None:
        def appended() -> Session:
            session = Session.create(cwd="/w", session_dir=tmp_path, fsync="never")
            for n in range(100):
                session.append_message({"role": "user", "content": f"{n} " + "w" * TEXT})
            return session

        assert held_by(appended) < 2 * 100 * TEXT


class TestWhatAWriteLeaves:
    def test_a_conversion_failing_midway_leaves_no_file_and_no_folder_it_made(
        self, long_pi: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        calls = 0
        real_loads = to_claude.loads_js

        def failing(raw: bytes) -> object:
            nonlocal calls
            calls += 1
            if calls == 100:
                raise OSError(5, "the disk went away")
            return real_loads(raw)

        monkeypatch.setattr(to_claude, "loads_js", failing)
        monkeypatch.setattr(output_lines, "LINES_BYTES", 4_096)  # lines written before it fails
        target = tmp_path / "made" / "deeper" / "t.jsonl"
        with pytest.raises(OSError, match="went away"):
            convert(Session.open(long_pi, cache=False), "claude", target)
        assert sorted(os.listdir(tmp_path)) == []

    def test_a_folder_that_was_there_stays(self, tmp_path: Path) -> None:
        (tmp_path / "there").mkdir()

        def failing() -> Iterator[bytes]:
            yield b"{}"
            raise ValueError("no more")

        with pytest.raises(ValueError, match="no more"):
            output_lines.write_lines(tmp_path / "there" / "new" / "f", failing(), make_folders=True)
        assert os.listdir(tmp_path) == ["there"] and os.listdir(tmp_path / "there") == []

    def test_a_folder_named_through_dot_dot_that_was_there_stays(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # new/../there names a folder that exists once new does: only new is ours
        monkeypatch.chdir(tmp_path)
        (tmp_path / "there").mkdir()

        def failing() -> Iterator[bytes]:
            yield b"{}"
            raise ValueError("no more")

        with pytest.raises(ValueError, match="no more"):
            output_lines.write_lines(Path("new/../there/f"), failing(), make_folders=True)
        assert sorted(os.listdir(tmp_path)) == ["there"]

    def test_folders_made_before_one_cannot_be_are_removed(self, tmp_path: Path) -> None:
        target = tmp_path / "made" / ("x" * 300) / "f.jsonl"  # a name too long
        with pytest.raises(SessionWriteError, match="nothing was written"):
            output_lines.write_lines(target, iter([b"{}"]), make_folders=True)
        assert os.listdir(tmp_path) == []

    def test_a_redacted_conversion_to_pi_keeps_its_headers_as_they_are(
        self, tmp_path: Path
    ) -> None:
        # the header is structure, as a fork's: a sub-agent's parentSession still names
        # the converted file when its path looks like a secret
        main = next(
            (FIXTURES / "claude" / "projects" / "-home-dev-projects-todo-api").glob("*.jsonl")
        )
        target = tmp_path / "AKIAIOSFODNN7EXAMPLE" / "out.jsonl"
        done = convert(main, "pi", target, cache=False, redact=True)
        assert done.sub_sessions
        for sub in done.sub_sessions:
            header = orjson.loads(sub.read_bytes().split(b"\n", 1)[0])
            assert header["parentSession"] == str(target)


def test_the_claude_fixture_converts_to_pi_as_before(tmp_path: Path) -> None:
    main = next((FIXTURES / "claude" / "projects" / "-home-dev-projects-todo-api").glob("*.jsonl"))
    done = convert(main, "pi", tmp_path / "pi.jsonl", cache=False)
    session = Session.open(done.path, cache=False)
    original = Session.open(main, cache=False)
    assert [e.raw for e in session.entries][1:] == [e.raw for e in original.entries]
    assert done.entries == len(original.entries) + 1  # the source record first


class TestWrittenByOrjsonAlone:
    """to_claude reads each entry with loads_js and writes its lines with orjson alone;
    what orjson refuses is made again the general way: the same lines either way."""

    LINES = (
        b'{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}',
        b'{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",'
        b'"message":{"role":"user","content":"v 1.0 and 2.50","timestamp":1.0}}',
        b'{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z",'
        b'"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"t",'
        b'"arguments":{"big":123456789012345678901234,"f":3.0,"e":1e+20,"x":[1.0,-0.0]}}],'
        b'"usage":{"input":1.0,"output":2}}}',
        b'{"type":"message","id":"a3","parentId":"a2","timestamp":"2025-01-01T00:00:03.000Z",'
        b'"message":{"role":"toolResult","toolCallId":"c1","toolName":"t",'
        b'"content":[{"type":"text","text":"half \\ud83d of a pair"}],"isError":false}}',
        b'{"type":"message","id":"a4","parentId":"a3","timestamp":"2025-01-01T00:00:04.000Z",'
        b'"message":{"role":"assistant","content":[{"type":"text","text":"n 7.0"}],'
        b'"usage":{"input":5,"output":1e+16}}}',
        b'{"type":"message","id":"a5","parentId":"a4","timestamp":"2025-01-01T00:00:05.000Z",'
        b'"message":{"role":"user","content":[{"type":"text","text":2.0}]}}',
        b'{"type":"compaction","id":"a6","parentId":"a5","timestamp":"2025-01-01T00:00:06.000Z",'
        b'"summary":"so far","firstKeptEntryId":"a5","tokensBefore":50000.0}',
        b'{"type":"compaction","id":"a7","parentId":"a6","timestamp":"2025-01-01T00:00:07.000Z",'
        b'"summary":"half \\udc00 a pair","firstKeptEntryId":"a7","tokensBefore":50000.0}',
    )

    def test_the_lines_are_the_general_ways(self, tmp_path: Path) -> None:
        path = tmp_path / "odd.jsonl"
        path.write_bytes(b"\n".join(self.LINES) + b"\n")
        session = Session.open(path, cache=False)
        lines, _, _ = to_claude.claude_file(session)
        made = list(lines)
        general = to_claude._Writer(session)
        general.fast = False
        expected: list[bytes] = []
        for entry in session.entries:
            data = loads_js_general(entry.raw)
            general.entry(entry.id, entry.parent_id, entry.timestamp, entry.type, data)
            expected += general.take()
        assert made == expected and len(made) == 9
        assert b"123456789012345678901234" not in made[1]  # read as JavaScript reads it
        assert b'"f":3,' in made[1] and b"\\ud83d" in made[2]

    def test_a_whole_float_is_the_integer_pi_reads_on_either_path(self, tmp_path: Path) -> None:
        # a text that is a number and a compaction's tokensBefore written as 50000.0 (by
        # no JavaScript writer): pi reads both as integers; the second compaction's lone
        # surrogate sends it down the general path, which must read them alike
        path = tmp_path / "floats.jsonl"
        path.write_bytes(b"\n".join(self.LINES) + b"\n")
        session = Session.open(path, cache=False)
        lines = [json.loads(line) for line in to_claude.claude_file(session)[0]]
        text = lines[4]["message"]["content"][0]["text"]
        first, second = (line for line in lines if line.get("subtype") == "compact_boundary")
        assert text == "2"
        assert first["compactMetadata"]["preTokens"] == 50000
        assert second["compactMetadata"]["preTokens"] == 50000

    def test_a_usage_too_large_for_a_number_is_no_count(self, tmp_path: Path) -> None:
        path = tmp_path / "inf.jsonl"
        lines = [
            self.LINES[0],
            b'{"type":"message","id":"b1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",'
            b'"message":{"role":"assistant","content":[{"type":"text","text":"hi"}],'
            b'"usage":{"input":1e400,"output":3}}}',
        ]
        path.write_bytes(b"\n".join(lines) + b"\n")
        (line,) = to_claude.claude_file(Session.open(path, cache=False))[0]
        usage = orjson.loads(line)["message"]["usage"]
        assert usage["input_tokens"] == 0 and usage["output_tokens"] == 3

    @given(st.text(max_size=60))
    def test_uuid5_is_the_standard_librarys(self, name: str) -> None:
        namespace = uuid.UUID("12345678-1234-5678-1234-567812345678")
        try:
            expected = str(uuid.uuid5(namespace, name))
        except UnicodeEncodeError:  # a lone surrogate: both refuse it
            with pytest.raises(UnicodeEncodeError):
                to_claude.uuid5(namespace.bytes, name)
            return
        assert to_claude.uuid5(namespace.bytes, name) == expected
