"""`stats`' stored figures kept in the cache (breakdown_cache.py): a record stands
for the measure only for the file exactly as it was measured, and then gives the same
figures, in the same order, for any leaf."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers_large import generate
from locations import FIXTURES

from jsonl_session import Session, SessionTreeError
from jsonl_session import breakdown_cache as cache_module
from jsonl_session.breakdown import Stored
from jsonl_session.storage import stamps


def figures(session: Session, leaf: str | None = None) -> str:
    found = session.token_breakdown(leaf)
    totals = [found.recorded.total, *found.recorded.by_model.values()]
    totals += found.recorded.by_kind.values()
    orders = [list(total.tokens) for total in totals]
    costs = [total.cost.hex() for total in totals]
    return json.dumps([found.to_dict(), orders, costs, list(found.by_tool)])


def outcome(session: Session, leaf: str | None) -> str:
    """The figures at ``leaf``, or the error a damaged tree gives there."""
    try:
        return figures(session, leaf)
    except SessionTreeError as exc:
        return f"{type(exc).__name__}: {exc}"


def leaves(session: Session) -> list[str | None]:
    """The default leaf and a few others: path figures come from the record too."""
    ids = [entry.id for entry in session.entries]
    return [None, *ids[:: max(1, len(ids) // 4)]]


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the stored figures were measured rather than read back."""
    calls: list[int] = []
    measure = cache_module.measure_spread

    def counted(*args: object, **kwargs: object) -> Stored:
        calls.append(1)
        return measure(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_module, "measure_spread", counted)
    return calls


def copy_of(source: Path, folder: Path) -> Path:
    target = folder / source.name
    shutil.copyfile(source, target)
    return target


FIXTURE_FILES = sorted(p.name for p in FIXTURES.glob("*.jsonl"))


class TestARecordGivesTheMeasuredFigures:
    @pytest.mark.parametrize("name", FIXTURE_FILES)
    def test_every_fixture_read_back_counts_as_measured_at_several_leaves(
        self, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(cache_module, "SMALLEST_BYTES", 0)  # fixtures are small
        path = copy_of(FIXTURES / name, tmp_path)
        try:
            plain = Session.open(path, cache=False)
        except Exception:  # a fixture no session opens: nothing to count
            return
        expected = [outcome(plain, leaf) for leaf in leaves(plain)]
        cache = tmp_path / "cache"
        for _ in range(2):  # the first run writes the record, the second reads it
            session = Session.open(path, cache=cache)
            assert [outcome(session, leaf) for leaf in leaves(session)] == expected

    def test_a_second_stats_of_an_unchanged_file_reads_the_record(
        self, tmp_path: Path, measured: list[int]
    ) -> None:
        path = generate(tmp_path / "s.jsonl", entries=800)
        cache = tmp_path / "cache"
        first = figures(Session.open(path, cache=cache))
        assert len(measured) == 1
        again = Session.open(path, cache=cache)
        assert figures(again) == first and len(measured) == 1
        assert figures(Session.open(path, cache=False)) == first


class TestARecordStandsOnlyForTheFileAsItWas:
    def test_after_an_append_the_file_is_measured_again(
        self, tmp_path: Path, measured: list[int]
    ) -> None:
        path = generate(tmp_path / "s.jsonl", entries=800)
        cache = tmp_path / "cache"
        figures(Session.open(path, cache=cache))
        session = Session.open(path, cache=cache)
        session.append_message({"role": "user", "content": "one more " * 50})
        expected = figures(Session.open(path, cache=False))
        measured.clear()
        assert figures(Session.open(path, cache=cache)) == expected
        assert len(measured) == 1

    def test_a_session_that_appended_since_it_was_opened_is_measured(
        self, tmp_path: Path, measured: list[int]
    ) -> None:
        path = generate(tmp_path / "s.jsonl", entries=800)
        cache = tmp_path / "cache"
        session = Session.open(path, cache=cache)
        figures(session)
        session.append_message({"role": "user", "content": "one more " * 50})
        measured.clear()
        found = figures(session)
        assert measured == []  # not through the record: measured by breakdown itself
        assert found == figures(Session.open(path, cache=False))

    def test_a_touched_file_is_measured_again_without_reading_it_for_a_crc(
        self, tmp_path: Path, measured: list[int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = generate(tmp_path / "s.jsonl", entries=800)
        cache = tmp_path / "cache"
        first = figures(Session.open(path, cache=False))
        figures(Session.open(path, cache=cache))
        measured.clear()
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        session = Session.open(path, cache=cache)  # (the index's record may read it)

        def no_crc(*args: object) -> int:
            raise AssertionError("the stats record is not checked by a CRC")

        monkeypatch.setattr(stamps, "prefix_crc", no_crc)
        assert figures(session) == first
        assert len(measured) == 1

    def test_a_damaged_record_is_not_used(self, tmp_path: Path, measured: list[int]) -> None:
        path = generate(tmp_path / "s.jsonl", entries=800)
        cache = tmp_path / "cache"
        first = figures(Session.open(path, cache=cache))
        (record,) = (cache / f"stats-{cache_module._VERSION}").glob("*.bin")
        data = bytearray(record.read_bytes())
        data[len(data) // 2] ^= 0xFF
        record.write_bytes(bytes(data))
        assert figures(Session.open(path, cache=cache)) == first
        assert len(measured) == 2

    def test_a_record_of_another_number_of_largest_entries_is_not_used(
        self, tmp_path: Path, measured: list[int]
    ) -> None:
        path = generate(tmp_path / "s.jsonl", entries=800)
        cache = tmp_path / "cache"
        Session.open(path, cache=cache).token_breakdown(largest=3)
        found = Session.open(path, cache=cache).token_breakdown(largest=12)
        assert len(found.largest) == 12 and len(measured) == 2

    def test_a_file_whose_last_line_is_not_ended_keeps_no_record(
        self, tmp_path: Path, measured: list[int]
    ) -> None:
        path = generate(tmp_path / "s.jsonl", entries=800)
        path.write_bytes(path.read_bytes().rstrip(b"\n"))
        cache = tmp_path / "cache"
        first = figures(Session.open(path, cache=cache))
        assert not list((cache / f"stats-{cache_module._VERSION}").glob("*.bin"))
        assert figures(Session.open(path, cache=cache)) == first
        assert len(measured) == 2

    def test_a_small_file_is_measured_each_time_and_keeps_no_record(
        self, tmp_path: Path, measured: list[int]
    ) -> None:
        path = generate(tmp_path / "s.jsonl", entries=100)
        assert path.stat().st_size < cache_module.SMALLEST_BYTES
        cache = tmp_path / "cache"
        first = figures(Session.open(path, cache=cache))
        assert figures(Session.open(path, cache=cache)) == first and len(measured) == 2
        assert not (cache / f"stats-{cache_module._VERSION}").exists()

    def test_without_a_cache_nothing_is_written(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "s.jsonl", entries=300)
        figures(Session.open(path, cache=False))
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_only_sessions_whose_stamps_carry_hashes_keep_figures() -> None:
    """Figures are read back only while the file's times are as measured, without
    reading it (`unchanged_only`): a stamp checked by its CRC-32 alone (a small
    covered part) could never pass that, so no such session keeps figures."""
    assert cache_module.SMALLEST_BYTES > stamps.WHOLE_CHECK_BYTES
