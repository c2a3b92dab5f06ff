"""Lazy loading: a large version-3 file is read in chunks and keeps its long lines on
disk, read back through the held-open file. Whatever the chunk size and however the
file is damaged, that gives exactly what reading the same bytes whole gives; a line
read back after the file was rewritten is refused, never mistaken for another."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import user_message
from helpers_large import generate
from helpers_large import loaded_key as key
from helpers_write import finish, raw_entry, spawn_python
from locations import FIXTURES

from jsonl_session import Session, SessionFormatError, build_context, load_entries
from jsonl_session.format import entry as entry_module
from jsonl_session.format.entry import raw_lines
from jsonl_session.storage import loader, reading, regions
from jsonl_session.storage.loader import LoadedFile, parse_session_bytes

REWRITTEN = "open it again"


def outcome(read: Callable[[], LoadedFile]) -> tuple[Any, ...]:
    """The key of what ``read`` loads, or the error it raises."""
    try:
        return key(read())
    except SessionFormatError as exc:
        return ("error", str(exc))


def overwrite(path: Path, offset: int, data: bytes) -> None:
    """Write ``data`` over the file at ``offset``: the same inode, nothing appended."""
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


@pytest.fixture
def chunked_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every version-3 file goes the chunked way and keeps no line in memory."""
    monkeypatch.setattr(loader, "WHOLE_READ_BYTES", 0)
    monkeypatch.setattr(reading, "INLINE_BYTES", 0)


# --- the same bytes, read in chunks or whole -------------------------------------------


def _third_line_not_utf8(data: bytes) -> bytes:
    lines = data.split(b"\n")
    if len(lines) > 2 and lines[2].startswith(b"{"):
        lines[2] = b'{"note":"\xff\xfe caf\xe9",' + lines[2][1:]
    return b"\n".join(lines)


VARIANTS: dict[str, Callable[[bytes], bytes]] = {
    "as-written": lambda data: data,
    "crlf": lambda data: data.replace(b"\n", b"\r\n"),
    "bom": lambda data: b"\xef\xbb\xbf" + data,
    "blank-lines": lambda data: data.replace(b"\n", b"\n\n \t\r\n\x0b\n", 5),
    "not-utf8": _third_line_not_utf8,
    "no-final-newline": lambda data: data.rstrip(b"\n"),
    "torn-tail": lambda data: data + b'{"type":"message","id":"feedbeef","parentId":"ab',
    "crlf-no-final-newline": lambda data: data.replace(b"\n", b"\r\n").rstrip(b"\n"),
}

_LINEAR = (FIXTURES / "linear.jsonl").read_bytes().split(b"\n")
ODD_LINES: dict[str, bytes] = {
    "no-id": b'{"type":"custom","parentId":null,"timestamp":"t"}',
    "number-id": b'{"type":"custom","id":5,"parentId":null,"timestamp":"t"}',
    "escaped-id": b'{"type":"custom","id":"\\u0061bcdef01","parentId":null,"timestamp":"t"}',
    "spaced-id": b'{"type":"custom", "id" : "abcdef02","parentId":null,"timestamp":"t"}',
    "duplicate-id": _LINEAR[2],
    "second-header": _LINEAR[0],
    "null": b"null",
    "array": b"[1, 2]",
    "nul-byte": b"\x00",
    "type-not-string": b'{"type":1,"id":"abcdef03"}',
    "deep-nesting": b"[" * 5000,
    "trailing-garbage": b'{"type":"custom","id":"abcdef04","parentId":null,"timestamp":"t"} x',
    "odd-envelope": (
        b'{"type":"message","id":"abcdef05","parentId":9,"timestamp":5,'
        b'"customType":3,"message":{"role":7,"timestamp":1.5}}'
    ),
    "message-is-text": b'{"type":"message","id":"abcdef06","parentId":null,"message":"hi"}',
    "huge-integer": (
        b'{"type":"message","id":"abcdef07","parentId":null,"timestamp":"t",'
        b'"message":{"role":"user","content":"x","timestamp":123456789012345678901234567890}}'
    ),
    "lone-surrogate": b'{"type":"custom","id":"abcdef08","parentId":null,"data":"\\ud800"}',
    "overlong-utf8": b'{"type":"custom","id":"abcdef09","parentId":null,"data":"\xc0\xaf"}',
}


class TestChunkedReadEqualsWholeRead:
    @pytest.mark.usefixtures("chunked_everything")
    @pytest.mark.parametrize("variant", list(VARIANTS))
    @pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.stem)
    def test_every_fixture_reads_the_same_in_small_chunks(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture: Path, variant: str
    ) -> None:
        path = tmp_path / fixture.name
        path.write_bytes(VARIANTS[variant](fixture.read_bytes()))
        whole = outcome(lambda: parse_session_bytes(path.read_bytes(), path))
        for chunk, window in ((61, 1 << 20), (4096, 1 << 20), (4096, 1), (4096, 100)):
            monkeypatch.setattr(regions, "CHUNK_BYTES", chunk)
            monkeypatch.setattr(reading, "WINDOW_BYTES", window)  # windows within a region
            assert outcome(lambda: load_entries(path, cache=False)) == whole, (chunk, window)

    @pytest.mark.usefixtures("chunked_everything")
    @pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.jsonl")), ids=lambda p: p.stem)
    def test_a_version_3_file_really_goes_the_chunked_way(
        self, tmp_path: Path, fixture: Path
    ) -> None:
        try:
            loaded = load_entries(fixture, cache=False)
        except SessionFormatError:
            return  # no usable header: nothing to read in chunks
        on_disk = [e.inline is None and e.source is not None for e in loaded.entries]
        assert all(on_disk) if loaded.version_read >= 3 else not any(on_disk)

    @pytest.mark.usefixtures("chunked_everything")
    @pytest.mark.parametrize("line", list(ODD_LINES))
    def test_an_odd_line_reads_the_same_in_any_chunk_size(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str
    ) -> None:
        path = tmp_path / "odd.jsonl"
        path.write_bytes(b"\n".join([*_LINEAR[:3], ODD_LINES[line], *_LINEAR[3:]]))
        whole = outcome(lambda: parse_session_bytes(path.read_bytes(), path))
        for chunk in (1, 7, 61, 4096):
            monkeypatch.setattr(regions, "CHUNK_BYTES", chunk)
            assert outcome(lambda: load_entries(path, cache=False)) == whole, chunk
        monkeypatch.setattr(reading, "WINDOW_BYTES", 50)  # windows within a region
        assert outcome(lambda: load_entries(path, cache=False)) == whole


# --- a large file with the default thresholds ---------------------------------------------


class TestLargeFile:
    def test_long_lines_stay_on_disk_and_read_back_exactly(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        data = path.read_bytes()
        assert len(data) > loader.WHOLE_READ_BYTES
        loaded = load_entries(path, cache=False)
        on_disk = [e for e in loaded.entries if e.inline is None]
        assert len(on_disk) > len(loaded.entries) * 0.9
        assert all(e.length > reading.INLINE_BYTES for e in on_disk)
        assert all(e.length <= reading.INLINE_BYTES for e in loaded.entries if e.inline)
        for e in loaded.entries:
            assert e.raw == data[e.offset : e.offset + e.length]

    def test_it_loads_as_a_whole_read_of_the_same_bytes(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        whole = parse_session_bytes(path.read_bytes(), path)
        assert key(load_entries(path, cache=False)) == key(whole)

    def test_its_context_is_the_one_built_from_a_whole_read(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        whole = parse_session_bytes(path.read_bytes(), path)
        context = Session.open(path, cache=False).build_context().to_dict()
        assert context == build_context(whole.entries).to_dict()
        assert len(context["messages"]) > 10

    def test_raw_lines_gives_what_raw_gives_in_any_order(self, tmp_path: Path) -> None:
        entries = load_entries(generate(tmp_path / "big.jsonl"), cache=False).entries
        middle = len(entries) // 2
        selections = {
            "all": entries,
            "every 7th": entries[::7],
            "reversed": entries[::-1],
            "repeated": [entries[3], entries[3], entries[0], entries[middle], entries[4]],
            "far apart": [entries[0], entries[-1], entries[middle]],
        }
        for name, chosen in selections.items():
            assert raw_lines(chosen) == [e.raw for e in chosen], name

    def test_lines_longer_than_a_chunk_read_the_same(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = generate(tmp_path / "big.jsonl")
        monkeypatch.setattr(regions, "CHUNK_BYTES", 4096)
        whole = parse_session_bytes(path.read_bytes(), path)
        assert max(e.length for e in whole.entries) > 4096
        assert key(load_entries(path, cache=False)) == key(whole)

    def test_a_damaged_large_file_reads_as_a_whole_read(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = generate(tmp_path / "big.jsonl")
        lines = path.read_bytes().split(b"\n")
        lines[100] = lines[100][: len(lines[100]) // 2]  # cut off: invalid JSON
        lines[200] = b'{"note":"\xff",' + lines[200][1:]  # not UTF-8
        lines[300:300] = [b"", b"   ", b"null", lines[0], lines[5]]  # blank, bad, dup
        path.write_bytes(b"\r\n".join(lines) + b'{"type":"mess')
        whole = parse_session_bytes(path.read_bytes(), path)
        kinds = {p.kind for p in whole.problems}
        assert {"invalid-json", "invalid-utf8", "not-an-entry", "extra-header"} <= kinds
        assert whole.torn_tail is not None
        assert key(load_entries(path, cache=False)) == key(whole)
        monkeypatch.setattr(reading, "WINDOW_BYTES", 3000)  # a bad line in many a window
        assert key(load_entries(path, cache=False)) == key(whole)
        session = Session.open(path, cache=False)
        assert session.build_context().to_dict() == build_context(whole.entries).to_dict()


class TestLinesTooLongToShareARead:
    """A line longer than a shared read is read alone, without the byte after it
    (cut out of a read one byte longer, a huge line would be copied again)."""

    @pytest.fixture
    def opened(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Any]]:
        monkeypatch.setattr(entry_module, "_BLOCK_BYTES", 3000)
        path = generate(tmp_path / "big.jsonl")
        entries = load_entries(path, cache=False).entries
        assert sum(e.inline is None and e.length >= 3000 for e in entries) > 10
        return path, entries

    def test_they_read_back_exactly_alone_and_among_others(
        self, opened: tuple[Path, list[Any]]
    ) -> None:
        path, entries = opened
        data = path.read_bytes()
        assert [e.raw for e in entries] == [data[e.offset : e.offset + e.length] for e in entries]
        assert raw_lines(entries) == [e.raw for e in entries]
        assert raw_lines(entries[::-1]) == [e.raw for e in entries[::-1]]

    def test_one_whose_line_end_was_overwritten_is_refused(
        self, opened: tuple[Path, list[Any]]
    ) -> None:
        path, entries = opened
        target = next(e for e in entries if e.inline is None and e.length >= 3000)
        overwrite(path, target.offset + target.length, b" ")
        with pytest.raises(SessionFormatError, match=REWRITTEN):
            target.data()
        with pytest.raises(SessionFormatError, match=REWRITTEN):
            raw_lines([target])

    def test_one_whose_id_was_rewritten_is_refused(self, opened: tuple[Path, list[Any]]) -> None:
        path, entries = opened
        target = next(e for e in entries if e.inline is None and e.length >= 3000)
        overwrite(path, target.offset, target.raw.replace(target.id.encode(), b"0badf00d", 1))
        with pytest.raises(SessionFormatError, match=REWRITTEN):
            target.data()


# --- the file changes after it was opened --------------------------------------------------

APPEND_CODE = """
import sys
with open(sys.argv[1], "ab") as handle:
    handle.write(bytes.fromhex(sys.argv[2]))
"""


class TestFileChangedAfterOpening:
    def test_an_entry_whose_id_was_rewritten_in_place_is_refused(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        loaded = load_entries(path, cache=False)
        target = next(e for e in loaded.entries[300:] if e.inline is None)
        untouched = loaded.entries[10]
        before = untouched.data()
        changed = target.raw.replace(target.id.encode(), b"0badf00d", 1)
        overwrite(path, target.offset, changed)
        with pytest.raises(SessionFormatError, match=REWRITTEN) as caught:
            target.data()
        assert target.id in str(caught.value)
        with pytest.raises(SessionFormatError, match=REWRITTEN):
            raw_lines(loaded.entries[290:310])
        assert untouched.data() == before  # lines that did not change still read

    def test_another_session_written_over_it_is_refused(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        session = Session.open(path, cache=False)
        size = path.stat().st_size
        other = generate(tmp_path / "other.jsonl", entries=900, seed=8).read_bytes()
        assert len(other) > size
        overwrite(path, 0, other[:size])
        on_disk = [e for e in session.entries if e.inline is None]
        for entry in on_disk:
            with pytest.raises(SessionFormatError, match=REWRITTEN):
                entry.data()
        with pytest.raises(SessionFormatError, match=REWRITTEN):
            session.build_context()

    def test_a_file_cut_short_after_opening_is_refused_past_the_cut(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        loaded = load_entries(path, cache=False)
        first, last = loaded.entries[0], loaded.entries[-1]
        before = first.data()
        os.truncate(path, last.offset + last.length // 2)
        with pytest.raises(SessionFormatError, match=REWRITTEN):
            last.data()
        assert first.data() == before

    def test_a_file_replaced_by_a_rename_still_reads_as_opened(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        old = path.read_bytes()
        session = Session.open(path, cache=False)
        context = session.build_context().to_dict()
        os.replace(generate(tmp_path / "other.jsonl", seed=8), path)
        assert session.build_context().to_dict() == context
        assert raw_lines(session.entries) == [
            old[e.offset : e.offset + e.length] for e in session.entries
        ]
        assert Session.open(path, cache=False).build_context().to_dict() != context

    def test_a_file_deleted_after_opening_still_reads_as_opened(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        session = Session.open(path, cache=False)
        whole = parse_session_bytes(path.read_bytes(), path)
        path.unlink()
        assert session.build_context().to_dict() == build_context(whole.entries).to_dict()

    def test_lines_another_process_appends_do_not_disturb_an_open_session(
        self, tmp_path: Path
    ) -> None:
        path = generate(tmp_path / "big.jsonl")
        session = Session.open(path, cache=False)
        context = session.build_context().to_dict()
        line = raw_entry("0a0a0a0a", session.leaf_id, type="message", message=user_message())
        finish(spawn_python(APPEND_CODE, path, (line + b"\n" + b'{"torn').hex()))
        assert session.build_context().to_dict() == context
        reopened = Session.open(path, cache=False)
        assert reopened.leaf_id == "0a0a0a0a"
        assert reopened.build_context().to_dict()["messages"][:-1] == context["messages"]
        assert orjson.loads(line)["message"] == reopened.build_context().messages[-1]
