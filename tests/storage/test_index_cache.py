"""With the index cache a large session reads as it does without: the same entries,
problems, leaf and context after other processes append (whole, torn and bad lines,
duplicates), with the record damaged or gone, and with the file replaced, rewritten or
cut short. ``starts`` tells a record used (reading starts where it ends) from one
refused (reading starts after the header)."""

from __future__ import annotations

import gc
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builders import user_message
from helpers_large import entry_key, generate, loaded_key
from helpers_write import finish, raw_entry, spawn_python
from locations import FIXTURES

from jsonl_session import Session, load_entries
from jsonl_session.storage import loader, regions, stamps
from jsonl_session.storage.loader import LoadedFile

TAIL_BYTES = 4096  # the cache hashes this much before the end of the part it covers


def key(f: LoadedFile) -> tuple[Any, ...]:
    return loaded_key(f), f.identity


def compare(path: Path, starts: list[int]) -> int:
    """Assert the cached read equals the uncached one (entries, problems, leaf and
    context); return the offset the cached read began decoding lines at."""
    starts.clear()
    cached = load_entries(path)
    began = starts[0]
    assert key(cached) == key(load_entries(path, cache=False))
    kept, plain = Session.open(path), Session.open(path, cache=False)
    # What a session knows on opening first (while a record's entries stay unbuilt),
    # then what needs every entry.
    assert (kept.leaf_id, kept.name, kept.labels) == (plain.leaf_id, plain.name, plain.labels)
    assert kept.revision == plain.revision
    assert kept.build_context().to_dict() == plain.build_context().to_dict()
    assert kept.problems == plain.problems
    assert [entry_key(e) for e in kept.entries] == [entry_key(e) for e in plain.entries]
    return began


def files_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def the_record(folder: Path) -> Path:
    (record,) = [f for f in files_in(folder) if f.suffix != ".seen"]
    assert record.parent == folder / "index-3" and record.suffix == ".bin"
    return record


def state(record: Path) -> tuple[bytes, int]:
    """A record's bytes and inode: a rewrite (a new file renamed in) changes the inode."""
    return record.read_bytes(), record.stat().st_ino


def header_end(path: Path) -> int:
    return path.read_bytes().index(b"\n") + 1


def covered(path: Path) -> int:
    """What a record of the file as it is covers: up to its last newline."""
    return path.read_bytes().rfind(b"\n") + 1


APPEND_CODE = """
import pathlib, sys
data = pathlib.Path(sys.argv[2]).read_bytes()
with open(sys.argv[1], "ab") as handle:
    handle.write(data)
"""


def append_in_child(path: Path, data: bytes) -> None:
    """Another process appends ``data`` (no lock, as pi does)."""
    staged = path.with_name(path.name + ".append")
    staged.write_bytes(data)
    finish(spawn_python(APPEND_CODE, path, staged))
    staged.unlink()


def message_line(entry_id: str, parent: str | None, text: str = "go on") -> bytes:
    return raw_entry(entry_id, parent, type="message", message=user_message(text))


def cut_point(path: Path) -> int:
    """The start of a line well inside the part a record covers, leaving the file
    large enough to be read in chunks (and so to use the cache)."""
    entries = load_entries(path, cache=False).entries
    cut = next(e.offset for e in entries if e.offset > loader.WHOLE_READ_BYTES + 65536)
    assert cut < covered(path) - TAIL_BYTES
    return cut


Moved = tuple[str, str, list[str]]  # an entry's id, its parent before, the old active path


def reparent_in_the_middle(path: Path, *, in_place: bool) -> Moved:
    """Give an entry in the middle another parent id, far from the bytes the cache
    hashes: in place, or by deleting the file and writing it again."""
    plain = Session.open(path, cache=False)
    old_path = [e.id for e in plain.branch_path()]
    moved = plain.entries[len(plain.entries) // 2]
    assert moved.id in old_path and moved.parent_id is not None
    assert TAIL_BYTES < moved.offset < covered(path) - TAIL_BYTES - moved.length
    new_parent = plain.entries[len(plain.entries) // 4].id
    line = moved.raw.replace(moved.parent_id.encode(), new_parent.encode(), 1)
    facts = (moved.id, moved.parent_id, old_path)
    if in_place:
        overwrite(path, moved.offset, line)
        return facts
    data = bytearray(path.read_bytes())
    data[moved.offset : moved.offset + moved.length] = line
    del plain, moved
    gc.collect()  # close every descriptor still holding the old inode
    path.unlink()
    path.write_bytes(data)
    return facts


def overwrite(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


@pytest.fixture
def big(tmp_path: Path) -> Path:
    return generate(tmp_path / "big.jsonl")


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where each chunked read began decoding lines (after the header, or where a
    record it used ends)."""
    seen: list[int] = []
    real = regions.file_regions

    def spy(fd: int, start: int) -> Any:
        seen.append(start)
        return real(fd, start)

    monkeypatch.setattr(loader, "file_regions", spy)
    return seen


# --- where records go -----------------------------------------------------------------


class TestWhereRecordsGo:
    def test_a_fork_of_a_session_opened_without_the_cache_writes_no_record(
        self, big: Path, own_cache_folder: Path
    ) -> None:
        forked = Session.open(big, cache=False).fork()
        assert len(forked.entries) > 100 and files_in(own_cache_folder) == []
        Session.open(big).fork(cache=False)
        assert len(files_in(own_cache_folder)) == 1  # the source's record only

    def test_the_first_open_writes_one_record_and_the_next_uses_it(
        self, big: Path, own_cache_folder: Path, starts: list[int]
    ) -> None:
        assert files_in(own_cache_folder) == []
        Session.open(big)
        before = state(the_record(own_cache_folder))
        assert compare(big, starts) == big.stat().st_size
        assert state(the_record(own_cache_folder)) == before

    @pytest.mark.parametrize(
        "case",
        [(False, "", 0), (None, "1", 0), (None, "yes", 0), (None, "0", 1), (True, "0", 1)],
        ids=["cache=False", "NO_CACHE=1", "NO_CACHE=yes", "NO_CACHE=0", "cache=True"],
    )
    def test_cache_false_and_jsonl_session_no_cache_turn_it_off(
        self, big: Path, own_cache_folder: Path, monkeypatch: pytest.MonkeyPatch, case: Any
    ) -> None:
        option, no_cache, kept = case  # the cache argument, $JSONL_SESSION_NO_CACHE, records
        monkeypatch.setenv("JSONL_SESSION_NO_CACHE", no_cache)
        load_entries(big, cache=option)
        Session.open(big, cache=option)
        assert len(files_in(own_cache_folder)) == kept

    @pytest.mark.parametrize("as_text", [False, True])
    def test_a_folder_given_gets_the_record(
        self, big: Path, tmp_path: Path, own_cache_folder: Path, as_text: bool
    ) -> None:
        folder = tmp_path / "c"
        Session.open(big, cache=str(folder) if as_text else folder)
        the_record(folder)
        assert files_in(own_cache_folder) == []

    def test_small_and_old_version_files_write_no_record(
        self, big: Path, tmp_path: Path, own_cache_folder: Path
    ) -> None:
        small = tmp_path / "linear.jsonl"
        shutil.copyfile(FIXTURES / "linear.jsonl", small)
        old = tmp_path / "old.jsonl"
        old.write_bytes(big.read_bytes().replace(b'"version":3', b'"version":2', 1))
        for path in (small, old):
            assert key(load_entries(path)) == key(load_entries(path, cache=False))
        assert files_in(own_cache_folder) == []

    def test_records_of_an_older_layout_are_removed_when_one_is_written(
        self, big: Path, own_cache_folder: Path
    ) -> None:
        old = own_cache_folder / "index-1"
        old.mkdir(parents=True)
        (old / "0123.bin").write_bytes(b"a record of the first layout")
        Session.open(big)
        assert not old.exists()
        the_record(own_cache_folder)

    def test_a_path_through_a_symlink_shares_the_record(
        self, big: Path, tmp_path: Path, own_cache_folder: Path, starts: list[int]
    ) -> None:
        link = tmp_path / "link.jsonl"
        link.symlink_to(big)
        Session.open(big)
        assert compare(link, starts) == big.stat().st_size
        the_record(own_cache_folder)


# --- another process appends --------------------------------------------------------------


class TestAppendsByAnotherProcess:
    @pytest.fixture(autouse=True)
    def record_every_append(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Bring the record up to date after any append, not only after 64 KiB."""
        monkeypatch.setattr(loader, "REFRESH_BYTES", 1)

    def test_each_append_reads_as_without_cache_and_whole_lines_extend_the_record(
        self, big: Path, own_cache_folder: Path, starts: list[int]
    ) -> None:
        Session.open(big)
        leaf = Session.open(big, cache=False).leaf_id
        several = [message_line("a0000002", "a0000001"), message_line("a0000003", "a0000002")]
        long_line = message_line("a0000004", "a0000003", "x " * 400)
        steps = [
            ("one whole line", message_line("a0000001", leaf) + b"\n", True),
            ("several lines", b"\n".join(several) + b"\n", True),
            ("a torn line", long_line[:300], False),
            ("the rest of it", long_line[300:] + b"\n", True),
            ("an entry lacking its newline", message_line("a0000005", "a0000004"), False),
            ("its newline and more", b"\n" + message_line("a0000006", "a0000005") + b"\n", True),
        ]
        for name, data, extends in steps:
            before = state(the_record(own_cache_folder))
            resume_at = covered(big)
            append_in_child(big, data)
            assert compare(big, starts) == resume_at, name
            assert (state(the_record(own_cache_folder)) != before) == extends, name
        assert Session.open(big).leaf_id == "a0000006"

    @pytest.mark.parametrize(
        "bad",
        [
            ("invalid-json", lambda s: b"{not json"),
            ("not-an-entry", lambda s: b"null"),
            ("invalid-entry", lambda s: b'{"type":"custom","parentId":null}'),
            ("invalid-utf8", lambda s: b'{"type":"custom","id":"b0000009","x":"\xff"}'),
            ("extra-header", lambda s: b'{"type":"session","version":3,"id":"s"}'),
            ("duplicate-id", lambda s: message_line(s.entries[5].id, s.entries[2].id)),
        ],
        ids=lambda bad: str(bad[0]),
    )
    def test_a_bad_line_appended_is_reported_and_then_kept_in_the_record(
        self, big: Path, own_cache_folder: Path, starts: list[int], bad: Any
    ) -> None:
        kind, line = bad
        Session.open(big)
        plain = Session.open(big, cache=False)
        after = message_line("b0000001", plain.leaf_id)
        for data in (line(plain), after):  # the second read finds the bad line in the record
            before, resume_at = state(the_record(own_cache_folder)), covered(big)
            append_in_child(big, data + b"\n")
            assert compare(big, starts) == resume_at
            assert kind in [p.kind for p in Session.open(big).problems]
            assert state(the_record(own_cache_folder)) != before


class TestWhenTheRecordIsBroughtUpToDate:
    def test_small_appends_leave_the_record_until_64_kib_have_gathered(
        self, big: Path, own_cache_folder: Path, starts: list[int]
    ) -> None:
        Session.open(big)
        first_end = covered(big)
        parent = Session.open(big, cache=False).leaf_id
        written = 0
        number = 0
        while written < loader.REFRESH_BYTES:
            before = state(the_record(own_cache_folder))
            number += 1
            data = message_line(f"c{number:07d}", parent, "y " * 2000) + b"\n"
            parent = f"c{number:07d}"
            append_in_child(big, data)
            written += len(data)
            # Each read decodes everything after the record, which stays as it was
            # until the lines after it reach REFRESH_BYTES.
            assert compare(big, starts) == first_end
            rewritten = state(the_record(own_cache_folder)) != before
            assert rewritten == (written >= loader.REFRESH_BYTES)
        assert compare(big, starts) == covered(big)
        assert number > 2


# --- the record damaged or gone ---------------------------------------------------------------


def _envelope_with(data: bytes, field: int, value: object) -> bytes:
    """The record with one field of its envelope [format, path, stamp, checksum, record]
    changed."""
    envelope = msgspec.msgpack.decode(data)
    envelope[field] = value
    return msgspec.msgpack.encode(envelope)


def _not_utf8_in_path(data: bytes) -> bytes:
    at = data.index(msgspec.msgpack.decode(data)[1].encode()) + 1  # "/\xffmp/..."
    return data[:at] + b"\xff" + data[at + 1 :]


def _inline_line_changed(data: bytes) -> bytes:
    """One byte changed inside the first line the record keeps in memory."""
    table = msgspec.msgpack.decode(msgspec.msgpack.decode(data)[4])[3]
    entries = msgspec.msgpack.decode(table[2][0])  # the first block of entries
    inline: bytes = next(e[11] for e in entries if e[11] is not None)
    assert data.count(inline) == 1 and b'"timestamp":"2' in inline
    return data.replace(inline, inline.replace(b'"timestamp":"2', b'"timestamp":"3', 1))


def _edit(change: Callable[[bytes], bytes]) -> Callable[[Path, bytes], object]:
    return lambda record, theirs: record.write_bytes(change(record.read_bytes()))


DAMAGE: dict[str, Callable[[Path, bytes], object]] = {
    "cut to half": _edit(lambda data: data[: len(data) // 2]),
    "random bytes": _edit(lambda data: random.Random(3).randbytes(len(data))),
    "empty": _edit(lambda data: b""),
    "another session's record": lambda record, theirs: record.write_bytes(theirs),
    "another path inside": _edit(lambda data: _envelope_with(data, 1, "/elsewhere.jsonl")),
    "another format": _edit(lambda data: _envelope_with(data, 0, 99)),
    "the cache folder deleted": lambda record, theirs: shutil.rmtree(record.parent.parent),
    "a path that is not utf-8": _edit(_not_utf8_in_path),
    "a byte changed in an entry": _edit(_inline_line_changed),
}


class TestDamagedRecord:
    @pytest.mark.parametrize("damage", list(DAMAGE))
    def test_a_damaged_record_is_not_used_and_is_written_again(
        self, big: Path, tmp_path: Path, own_cache_folder: Path, starts: list[int], damage: str
    ) -> None:
        Session.open(generate(tmp_path / "other.jsonl", seed=8), cache=tmp_path / "theirs")
        Session.open(big)
        record = the_record(own_cache_folder)
        good = record.read_bytes()
        DAMAGE[damage](record, the_record(tmp_path / "theirs").read_bytes())
        assert compare(big, starts) == header_end(big)
        assert record.read_bytes() == good

    @pytest.mark.parametrize("blocked", ["the record", "the cache folder"])
    def test_something_else_in_the_way_is_left_alone(
        self, big: Path, own_cache_folder: Path, starts: list[int], blocked: str
    ) -> None:
        Session.open(big)
        record = the_record(own_cache_folder)
        if blocked == "the record":
            record.unlink()
            record.mkdir()  # a folder where the record goes
        else:
            shutil.rmtree(own_cache_folder)
            own_cache_folder.write_bytes(b"a file where the cache folder goes")
        assert compare(big, starts) == header_end(big)
        assert record.is_dir() if blocked == "the record" else own_cache_folder.is_file()

    def test_an_unwritable_cache_folder_still_reads_correctly(
        self, big: Path, own_cache_folder: Path, starts: list[int]
    ) -> None:
        Session.open(big)
        records = own_cache_folder / "index-3"
        the_record(own_cache_folder).unlink()
        records.chmod(0o500)
        try:
            if os.access(records, os.W_OK):
                pytest.skip("permissions do not hold back this user (root?)")
            assert compare(big, starts) == header_end(big)
            assert files_in(own_cache_folder) == []
        finally:
            records.chmod(0o700)


# --- the session file changed other than by appending -----------------------------------------


class TestStamps:
    """What a stamp holds, by the size of the part it covers (storage/stamps.py)."""

    @staticmethod
    def stamped(path: Path) -> stamps.Stamp:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            return stamps.stamp(handle.fileno(), info.st_size, None, info)

    @staticmethod
    def valid(path: Path, mark: stamps.Stamp, *, times_kept: bool) -> bool:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            # times_kept: as if the change had left the size and times as the last
            # check saw them (a clock tick too coarse, or times set back)
            seen = stamps.Seen(0, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            return stamps.still_valid(mark, handle.fileno(), seen if times_kept else None)

    def test_a_small_file_is_checked_by_its_crc_alone_even_with_its_times_kept(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "small.jsonl"
        data = bytes(range(256)) * 80  # 20 KiB: a middle byte is in neither hashed end
        path.write_bytes(data)
        mark = self.stamped(path)
        assert (mark.head, mark.tail) == (b"", b"")
        assert self.valid(path, mark, times_kept=True)
        middle = len(data) // 2
        path.write_bytes(data[:middle] + b"!" + data[middle + 1 :])
        assert not self.valid(path, mark, times_kept=True)
        assert not self.valid(path, mark, times_kept=False)

    def test_a_large_file_keeps_hashes_of_its_ends_and_reads_its_crc_when_times_change(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "large.jsonl"
        data = random.Random(5).randbytes(2 * stamps.WHOLE_CHECK_BYTES)
        path.write_bytes(data)
        mark = self.stamped(path)
        assert mark.head and mark.tail and mark.head != mark.tail
        assert self.valid(path, mark, times_kept=False)
        middle = len(data) // 2
        path.write_bytes(data[:middle] + b"!" + data[middle + 1 :])
        assert not self.valid(path, mark, times_kept=False)
        path.write_bytes(b"!" + data[1:])
        assert not self.valid(path, mark, times_kept=True)


class TestSessionFileChanged:
    def test_a_file_renamed_over_it_is_read_afresh(
        self, big: Path, tmp_path: Path, own_cache_folder: Path, starts: list[int]
    ) -> None:
        Session.open(big)
        before = state(the_record(own_cache_folder))
        os.replace(generate(tmp_path / "other.jsonl", entries=800, seed=8), big)
        assert compare(big, starts) == header_end(big)
        assert state(the_record(own_cache_folder)) != before

    def test_a_same_size_change_near_the_covered_end_is_noticed(
        self, big: Path, own_cache_folder: Path, starts: list[int]
    ) -> None:
        Session.open(big)
        before = state(the_record(own_cache_folder))
        last = Session.open(big, cache=False).entries[-1]
        assert last.offset >= covered(big) - TAIL_BYTES
        overwrite(big, last.offset, last.raw.replace(last.id.encode(), b"0badf00d", 1))
        assert compare(big, starts) == header_end(big)
        assert Session.open(big).leaf_id == "0badf00d"
        assert state(the_record(own_cache_folder)) != before

    @pytest.mark.parametrize("in_place", [True, False], ids=["in place", "on a reused inode"])
    def test_a_same_size_change_in_the_middle_is_noticed_by_the_new_mtime(
        self, big: Path, starts: list[int], in_place: bool
    ) -> None:
        """A rewrite that keeps the size, the head and the 4 KiB before the covered end
        (pi never rewrites a version-3 file) is caught by the file's new mtime, in
        place or as a new file the filesystem gave the old inode number. (Within one
        tick of the filesystem's clock it would not be: that is the cache's limit.)"""
        Session.open(big)
        inode, stamped = big.stat().st_ino, big.stat().st_mtime_ns
        reparent_in_the_middle(big, in_place=in_place)
        if big.stat().st_ino != inode:
            pytest.skip("this filesystem gave the new file a new inode")
        if big.stat().st_mtime_ns == stamped:  # rewritten within one clock tick
            os.utime(big, ns=(stamped, stamped + 1_000_000))
        assert compare(big, starts) == header_end(big)

    def test_a_same_size_change_after_a_small_append_is_noticed_by_the_new_mtime(
        self, big: Path, own_cache_folder: Path, starts: list[int]
    ) -> None:
        """The record is left as it is after a small append; the size and mtime read
        then are kept beside it, so a rewrite keeping that size is still caught."""
        Session.open(big)
        before = state(the_record(own_cache_folder))
        leaf, resume_at = Session.open(big, cache=False).leaf_id, covered(big)
        append_in_child(big, message_line("d0000001", leaf) + b"\n")
        assert compare(big, starts) == resume_at
        assert state(the_record(own_cache_folder)) == before
        assert [f.suffix for f in files_in(own_cache_folder)] == [".bin", ".seen"]
        stamped = big.stat().st_mtime_ns
        _, _, old_path = reparent_in_the_middle(big, in_place=True)
        if big.stat().st_mtime_ns == stamped:  # rewritten within one clock tick
            os.utime(big, ns=(stamped, stamped + 1_000_000))
        assert compare(big, starts) == header_end(big)
        assert [e.id for e in Session.open(big).branch_path()] != old_path

    @pytest.mark.parametrize("reopened", [True, False], ids=["reopened when short", "not"])
    def test_a_file_cut_short_then_grown_again_reads_as_without_cache(
        self, big: Path, tmp_path: Path, starts: list[int], reopened: bool
    ) -> None:
        Session.open(big)
        size, cut = big.stat().st_size, cut_point(big)
        os.truncate(big, cut)
        if reopened:  # shorter than the record covers: read afresh, a new record
            assert compare(big, starts) == header_end(big)
        other = generate(tmp_path / "other.jsonl", entries=800, seed=8)
        append_in_child(big, other.read_bytes()[header_end(other) :])
        assert big.stat().st_size > size
        # The new record covers the cut file, so the rest is an append; the old one
        # covers more than the cut and its last 4 KiB now differ.
        assert compare(big, starts) == (cut if reopened else header_end(big))
