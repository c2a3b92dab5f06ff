"""The listing's facts index (storage/facts_index.py): one SQLite database for many
sessions, so a warm listing costs a stat per file; never a different answer, not
even with several processes listing and appending at once, and never needed."""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import sqlite3
import stat
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers_large import generate

from jsonl_session import list_sessions
from jsonl_session.catalog import listing, listing_read, search, search_kept
from jsonl_session.catalog.search import search_sessions
from jsonl_session.storage import facts_index
from jsonl_session.storage.facts_rows import check_only
from jsonl_session.storage.stamps import (
    NOT_SUMMED,
    WHOLE_CHECK_BYTES,
    Stamp,
    stamp,
    still_valid,
)

INDEX = "listing-5.sqlite"


CallsTo = Callable[[object, str], list[tuple[Any, ...]]]  # conftest's calls_to


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for seed in range(12):
        generate(folder / f"s{seed:02d}.jsonl", 20 + seed, seed)
    return folder


@pytest.fixture
def quiet_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as quiet as soon as stamped (files made now cannot be two seconds
    old; the rest of the rule is the same)."""
    monkeypatch.setattr(facts_index, "QUIET_NS", 0)


def listed(folder: Path, cache: Path | bool) -> list[dict[str, Any]]:
    return [info.to_dict() for info in list_sessions(folder, cache=cache)]


class Opened:
    """Counts the session files (``*.jsonl``) the listing opens, by open() or os.open."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real, real_os_open = builtins.open, os.open

        def counting(file: Any, *args: Any, **kwargs: Any) -> Any:
            self.paths.append(str(file))
            return real(file, *args, **kwargs)

        def counting_os_open(file: Any, *args: Any, **kwargs: Any) -> int:
            if str(file).endswith(".jsonl"):
                self.paths.append(str(file))
            return real_os_open(file, *args, **kwargs)

        monkeypatch.setattr(listing_read, "open", counting, raising=False)
        monkeypatch.setattr(os, "open", counting_os_open)


def test_a_warm_listing_opens_no_session_file(
    sessions: Path, tmp_path: Path, quiet_at_once: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    expected = listed(sessions, False)
    assert listed(sessions, cache) == expected  # cold: every file read, facts kept
    opened = Opened(monkeypatch)
    assert listed(sessions, cache) == expected
    assert opened.paths == []


def test_only_the_file_that_changed_is_read_again(
    sessions: Path, tmp_path: Path, quiet_at_once: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    listed(sessions, cache)
    changed = sessions / "s03.jsonl"
    line = json.loads(changed.read_bytes().splitlines()[-1])
    line["id"] = "zz000001"
    with changed.open("a") as file:
        file.write(json.dumps(line) + "\n")
    expected = listed(sessions, False)
    opened = Opened(monkeypatch)
    assert listed(sessions, cache) == expected
    assert opened.paths == [str(changed)]


def test_a_first_listing_stats_no_file_before_reading_it(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With nothing in the index a stat could answer for, each file is read at once
    (its descriptor's fstat stamps it): no os.stat of each file first."""
    cache = tmp_path / "cache"
    expected = listed(sessions, False)
    stated: list[str] = []
    real = os.stat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        stated.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(listing.os, "stat", counting)
    assert listed(sessions, cache) == expected
    assert [p for p in stated if p.endswith(".jsonl")] == []


def test_a_recent_file_is_checked_not_trusted_on_its_times(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Just written: within QUIET_NS of its stamp, so its times alone do not vouch for
    # it (a write in the same clock tick could have left them as they were).
    cache = tmp_path / "cache"
    listed(sessions, cache)
    expected = listed(sessions, False)
    opened = Opened(monkeypatch)
    assert listed(sessions, cache) == expected
    assert len(set(opened.paths)) == 12


def test_a_same_size_rewrite_in_place_right_after_listing_is_seen(
    sessions: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    listed(sessions, cache)
    target = sessions / "s05.jsonl"
    data = target.read_bytes()
    with target.open("r+b") as file:  # same inode, same size, maybe the same times
        file.write(data.replace(b'"role":"user"', b'"role":"USER"', 1))
    assert listed(sessions, cache) == listed(sessions, False)


def test_a_damaged_index_is_rebuilt_and_never_changes_an_answer(
    sessions: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    expected = listed(sessions, False)
    listed(sessions, cache)
    (cache / INDEX).write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{cache / INDEX}{suffix}").unlink(missing_ok=True)
    assert listed(sessions, cache) == expected
    assert listed(sessions, cache) == expected
    assert (cache / INDEX).read_bytes().startswith(b"SQLite format 3")


def test_the_index_is_owner_only(sessions: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    listed(sessions, cache)
    assert stat.S_IMODE(os.stat(cache / INDEX).st_mode) == 0o600


LISTER = """
import json, sys
from jsonl_session import list_sessions
folder, cache, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
for _ in range(rounds):
    infos = list_sessions(folder, cache=cache)
print(json.dumps([i.to_dict() for i in infos]))
"""
APPENDER = """
import json, sys
from jsonl_session import Session
folder, rounds = sys.argv[1], int(sys.argv[2])
sessions = [Session.open(f"{folder}/s{n:02d}.jsonl", cache=False) for n in range(4)]
for n in range(rounds):
    sessions[n % 4].append_message({"role": "user", "content": f"more {n}", "timestamp": n})
"""


def test_processes_listing_and_appending_at_once_agree_in_the_end(
    sessions: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    running = [
        subprocess.Popen(
            [sys.executable, "-c", LISTER, str(sessions), str(cache), "15"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(2)
    ]
    running.append(
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(sessions), "80"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    )
    for number, process in enumerate(running):
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err.decode()
        if number < 2:  # a lister: every session listed, whatever it met
            assert len(json.loads(out)) == 12
    expected = listed(sessions, False)
    assert listed(sessions, cache) == expected
    assert listed(sessions, cache) == expected


def test_an_index_of_an_earlier_layout_is_removed_when_the_new_one_is_made(
    sessions: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    older = [cache / name for name in ("listing-4.sqlite", "listing-4.sqlite-wal")]
    for path in older:
        path.write_bytes(b"kept by an earlier release")
    other_kind = cache / "search-2.sqlite"
    other_kind.write_bytes(b"not the listing's")
    assert listed(sessions, cache) == listed(sessions, False)
    assert (cache / INDEX).exists()
    assert not any(path.exists() for path in older)
    assert other_kind.exists()


def test_an_index_of_another_layout_under_the_same_name_is_made_again(
    sessions: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    with contextlib.closing(sqlite3.connect(cache / INDEX)) as db, db:
        db.execute("CREATE TABLE records (file TEXT PRIMARY KEY, stamp BLOB)")
    expected = listed(sessions, False)
    assert listed(sessions, cache) == expected
    with contextlib.closing(sqlite3.connect(cache / INDEX)) as db:
        kept = db.execute("SELECT count(*) FROM records").fetchone()[0]
    assert kept == len(expected)
    assert listed(sessions, cache) == expected


def searched(
    folder: Path, cache: Path | bool, query: str = "zebracorn", *, tools: bool = False
) -> list[dict[str, Any]]:
    files = sorted(folder.glob("*.jsonl"))
    hits = search_sessions(query, files, tools=tools, cache=cache)
    return [hit.to_dict() for hit in hits]


def test_a_first_search_writes_its_records_as_it_goes_and_finds_the_same(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facts_index, "SAVE_FROM_BYTES", 1)  # each record written at once
    saves: list[int] = []
    real_save = facts_index.FactsIndex.save

    def counting(index: facts_index.FactsIndex, *, final: bool = True) -> None:
        saves.append(len(index._pending))
        real_save(index, final=final)

    monkeypatch.setattr(facts_index.FactsIndex, "save", counting)
    cache = tmp_path / "cache"
    expected = searched(sessions, False)
    assert expected
    assert searched(sessions, cache) == expected
    assert saves.count(1) == len(list(sessions.glob("*.jsonl")))  # one at a time
    with contextlib.closing(sqlite3.connect(cache / "search-4.sqlite")) as db:
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == saves.count(1)
    assert searched(sessions, cache) == expected


def test_records_written_as_they_come_go_through_one_connection_closed_at_the_end(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facts_index, "SAVE_FROM_BYTES", 1)  # each record written at once
    opened: list[facts_index.FactsIndex] = []
    real_connect = facts_index.FactsIndex._connect

    def counting(index: facts_index.FactsIndex, *, create: bool) -> sqlite3.Connection:
        if create:
            opened.append(index)
        return real_connect(index, create=create)

    monkeypatch.setattr(facts_index.FactsIndex, "_connect", counting)
    cache = tmp_path / "cache"
    expected = listed(sessions, False)
    assert listed(sessions, cache) == expected
    assert len(opened) == 1  # twelve records, twelve transactions, one connection
    assert opened[0]._writer is None  # closed when the listing ended
    with contextlib.closing(sqlite3.connect(cache / INDEX)) as db:
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 12
    assert listed(sessions, cache) == expected


@pytest.mark.usefixtures("quiet_at_once")
def test_a_warm_search_holds_the_texts_of_one_window_of_files(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    expected = searched(sessions, cache)
    monkeypatch.setattr(search, "_WINDOW", 5)
    held: list[int] = []
    real_read = facts_index.FactsIndex.read_rows_of

    def reading(index: facts_index.FactsIndex, files: Any) -> None:
        real_read(index, files)
        held.append(len(index._unchanged or {}))

    monkeypatch.setattr(facts_index.FactsIndex, "read_rows_of", reading)
    assert searched(sessions, cache) == expected
    assert held == [5, 5, 2]  # twelve files, five at a time, each row trusted


@pytest.mark.usefixtures("quiet_at_once")
@pytest.mark.parametrize("kind", ["listing-5", "search-4"])
@pytest.mark.parametrize("damage", ["another row's record", "a damaged stamp"])
def test_a_row_trusted_on_its_times_is_not_trusted_with_a_record_or_stamp_not_its_own(
    sessions: Path, tmp_path: Path, kind: str, damage: str
) -> None:
    cache = tmp_path / "cache"
    expected = listed(sessions, False), searched(sessions, False)
    assert (listed(sessions, cache), searched(sessions, cache)) == expected
    victim, other = str(sessions / "s01.jsonl"), str(sessions / "s02.jsonl")
    with contextlib.closing(sqlite3.connect(cache / f"{kind}.sqlite")) as db, db:
        rows = dict(db.execute("SELECT file, unchanged FROM records").fetchall())
        assert rows[victim] is not None  # trusted on the file's times alone
        if damage == "another row's record":
            db.execute(
                "UPDATE records SET (stamp, record) = (SELECT stamp, record FROM records"
                " WHERE file = ?) WHERE file = ?",
                (other, victim),
            )
        else:
            db.execute(
                "UPDATE records SET stamp = CAST(x'00' || stamp AS BLOB) WHERE file = ?", (victim,)
            )
    assert (listed(sessions, cache), searched(sessions, cache)) == expected
    with contextlib.closing(sqlite3.connect(cache / f"{kind}.sqlite")) as db:
        (stamp,) = db.execute("SELECT stamp FROM records WHERE file = ?", (victim,)).fetchone()
    assert not stamp.startswith(b"\x00")  # read afresh and kept again


def _stamp_of(path: Path) -> Stamp:
    with path.open("rb") as handle:
        info = os.fstat(handle.fileno())
        return stamp(handle.fileno(), info.st_size, None, info)


def test_rows_handed_to_another_process_leave_no_connection_open(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facts_index, "SAVE_FROM_BYTES", 1)  # written as soon as put
    index = facts_index.FactsIndex(tmp_path / "cache", "listing", 5, many=False)
    (tmp_path / "cache").mkdir()
    first = sessions / "s00.jsonl"
    index.put(str(first), _stamp_of(first), facts_index.now_ns(), b"record")
    assert index._writer is not None  # kept for the next rows
    assert index.take_pending() == {}
    assert index._writer is None


def test_rows_written_after_another_process_removed_the_index_go_to_the_new_one(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(facts_index, "SAVE_FROM_BYTES", 1)
    cache = tmp_path / "cache"
    cache.mkdir()
    index = facts_index.FactsIndex(cache, "listing", 5, many=False)
    first, second = sessions / "s00.jsonl", sessions / "s01.jsonl"
    index.put(str(first), _stamp_of(first), facts_index.now_ns(), b"one")
    for suffix in ("", "-wal", "-shm"):  # as a process that found it damaged would
        Path(f"{index.path}{suffix}").unlink(missing_ok=True)
    index.put(str(second), _stamp_of(second), facts_index.now_ns(), b"two")
    index.save()
    with contextlib.closing(sqlite3.connect(index.path)) as db:
        assert db.execute("SELECT file, record FROM records").fetchall() == [(str(second), b"two")]


class TestSmallFilesKeepNoCrc:
    """A row of a file of at most WHOLE_CHECK_BYTES keeps no CRC-32 (NOT_SUMMED): once
    its file's times change, it is read again whole; a larger file's row is checked
    and only what was appended is read."""

    def kept_crcs(self, cache: Path) -> dict[str, int]:
        index = facts_index.FactsIndex(cache, "listing", 5)
        with contextlib.closing(sqlite3.connect(cache / INDEX)) as db:
            files = [row[0] for row in db.execute("SELECT file FROM records")]
        rows = {Path(file).name: index.get(file) for file in files}
        index.save()
        return {name: row.stamp.crc for name, row in rows.items() if row is not None}

    def test_a_small_file_is_read_again_whole_and_a_large_one_from_its_end(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        folder, cache = tmp_path / "sessions", tmp_path / "cache"
        folder.mkdir()
        small, large = folder / "small.jsonl", folder / "large.jsonl"
        generate(small, 20, 1)
        generate(large, 200, 2)
        assert small.stat().st_size <= WHOLE_CHECK_BYTES < large.stat().st_size
        listed(folder, cache)
        crcs = self.kept_crcs(cache)
        assert crcs["small.jsonl"] == NOT_SUMMED
        assert crcs["large.jsonl"] == zlib.crc32(large.read_bytes())
        for path in (small, large):
            last = json.loads(path.read_bytes().splitlines()[-1])
            last["id"] = "zz000001"
            with path.open("a") as file:
                file.write(json.dumps(last) + "\n")
        expected = listed(folder, False)
        whole: list[str] = []
        real = listing_read._describe_and_keep
        monkeypatch.setattr(
            listing_read,
            "_describe_and_keep",
            lambda path, *rest: whole.append(os.path.basename(path)) or real(path, *rest),
        )
        assert listed(folder, cache) == expected
        assert whole == ["small.jsonl"]
        assert self.kept_crcs(cache)["small.jsonl"] == NOT_SUMMED

    def test_a_stamp_without_a_crc_never_checks_as_unchanged(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        path.write_bytes(b'{"type":"session"}\n')
        with path.open("rb") as file:
            info = os.fstat(file.fileno())
            mark = stamp(file.fileno(), info.st_size, NOT_SUMMED, info)
            assert not still_valid(mark, file.fileno())
            summed_mark = stamp(file.fileno(), info.st_size, zlib.crc32(path.read_bytes()), info)
            assert still_valid(summed_mark, file.fileno())


class TestUnchangedEach:
    """`FactsIndex.unchanged_each`, the warm path's loop, answers for each file what
    `unchanged` answers, with the mtime of the stat it looked at."""

    def _kept(self, sessions: Path, tmp_path: Path) -> tuple[Path, list[str]]:
        cache = tmp_path / "cache"
        listed(sessions, cache)
        files = [str(path) for path in sorted(sessions.glob("*.jsonl"))]
        (sessions / "s01.jsonl").unlink()  # gone
        with (sessions / "s02.jsonl").open("a") as file:
            file.write("\n")  # changed since its row was kept
        with contextlib.closing(sqlite3.connect(cache / INDEX)) as db, db:
            db.execute("DELETE FROM records WHERE file = ?", (files[3],))  # no row
            # damaged columns: not text, not bytes
            db.execute("UPDATE records SET unchanged = 7 WHERE file = ?", (files[4],))
            db.execute("UPDATE records SET stamp = 'text' WHERE file = ?", (files[5],))
        return cache, [*files, str(sessions / "never-there.jsonl")]

    def _one_by_one(self, cache: Path, files: list[str]) -> list[tuple[bytes, float] | None]:
        index = facts_index.FactsIndex(cache, "listing", 5, many=False)
        try:
            answers: list[tuple[bytes, float] | None] = []
            for file in files:
                try:
                    info = os.stat(file)
                except OSError:
                    answers.append(None)
                    continue
                record = index.unchanged(file, info)
                answers.append(None if record is None else (record, info.st_mtime))
            return answers
        finally:
            index.save()

    @pytest.mark.parametrize("many", [True, False])
    def test_it_answers_as_unchanged_does_file_by_file(
        self, sessions: Path, tmp_path: Path, quiet_at_once: None, many: bool
    ) -> None:
        cache, files = self._kept(sessions, tmp_path)
        expected = self._one_by_one(cache, files)
        untrusted = [at for at, answer in enumerate(expected) if answer is None]
        assert untrusted == [1, 2, 3, 4, 5, 12]  # (the others answer)
        index = facts_index.FactsIndex(cache, "listing", 5, many=many)
        try:
            answers = list(index.unchanged_each(files))
        finally:
            index.save()
        assert answers == expected

    def test_damaged_and_changed_rows_and_missing_files_answer_none(
        self, sessions: Path, tmp_path: Path, quiet_at_once: None
    ) -> None:
        cache, files = self._kept(sessions, tmp_path)
        index = facts_index.FactsIndex(cache, "listing", 5)
        try:
            answers = list(index.unchanged_each(files))
        finally:
            index.save()
        untrusted = [at for at, answer in enumerate(answers) if answer is None]
        assert untrusted == [1, 2, 3, 4, 5, 12]

    def test_a_file_without_a_row_is_not_stated(
        self, sessions: Path, tmp_path: Path, quiet_at_once: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        cache, files = self._kept(sessions, tmp_path)
        stated: list[str] = []
        real = os.stat

        def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            stated.append(os.fspath(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, "stat", counting)
        index = facts_index.FactsIndex(cache, "listing", 5)
        try:
            list(index.unchanged_each(files))
        finally:
            index.save()
        assert files[3] not in stated and files[12] not in stated
        assert files[0] in stated and files[2] in stated


@pytest.mark.usefixtures("quiet_at_once")
def test_a_warm_search_for_a_word_in_no_file_decodes_no_kept_texts(
    sessions: Path, tmp_path: Path, calls_to: CallsTo
) -> None:
    cache = tmp_path / "cache"
    files = sorted(sessions.glob("*.jsonl"))
    assert searched(sessions, cache) == searched(sessions, False)  # the rows kept
    decoded = calls_to(search_kept, "kept_texts")
    read = calls_to(search, "_file_hits")
    assert list(search_sessions("quokka", files, cache=cache)) == []
    assert decoded == []
    assert read == []  # nor read: the index answered that none holds it
    assert searched(sessions, cache) == searched(sessions, False)
    assert len(decoded) == len(files)  # each holds the word searched for before


@pytest.mark.usefixtures("quiet_at_once")
def test_a_warm_search_for_a_word_in_most_files_stops_looking_through_their_bytes_first(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calls_to: CallsTo
) -> None:
    cache = tmp_path / "cache"
    expected = searched(sessions, False)
    assert searched(sessions, cache) == expected  # the rows kept
    looked = calls_to(search_kept, "may_hold")
    monkeypatch.setattr(search_kept.Sieve, "TRIAL", 3)
    assert searched(sessions, cache) == expected
    assert len(looked) == 3  # and then the others were decoded straight away


@pytest.mark.usefixtures("quiet_at_once")
@pytest.mark.parametrize("query", ["ZEBRACORN", "ZebraCorn", "zebraCORN"])
def test_a_warm_search_for_a_query_in_capitals_finds_what_reading_the_files_finds(
    sessions: Path, tmp_path: Path, query: str
) -> None:
    cache = tmp_path / "cache"
    expected = searched(sessions, False, query)
    assert expected
    assert searched(sessions, cache, query) == expected  # cold: the texts kept
    assert searched(sessions, cache, query) == expected  # warm: judged on the kept bytes


@pytest.mark.parametrize("kind", ["listing-5", "search-4"])
@pytest.mark.parametrize("quiet", [True, False], ids=["trusted on a stat", "not quiet"])
def test_a_row_given_another_rows_record_alone_is_not_read_through_either(
    sessions: Path, tmp_path: Path, kind: str, quiet: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its stamp still describes its file, so only the row check in its `unchanged`
    column tells: not the warm path's alone, the read-through path's too, and also of
    a row stamped while its file was not quiet (which holds the check alone)."""
    monkeypatch.setattr(facts_index, "QUIET_NS", 0 if quiet else 10**18)
    cache = tmp_path / "cache"
    expected = listed(sessions, False), searched(sessions, False)
    assert (listed(sessions, cache), searched(sessions, cache)) == expected
    victim, other = str(sessions / "s01.jsonl"), str(sessions / "s02.jsonl")
    with contextlib.closing(sqlite3.connect(cache / f"{kind}.sqlite")) as db, db:
        own, unchanged = db.execute(
            "SELECT record, unchanged FROM records WHERE file = ?", (victim,)
        ).fetchone()
        assert unchanged.startswith("-:") != quiet
        db.execute(
            "UPDATE records SET record = (SELECT record FROM records WHERE file = ?)"
            " WHERE file = ?",
            (other, victim),
        )
    assert (listed(sessions, cache), searched(sessions, cache)) == expected
    with contextlib.closing(sqlite3.connect(cache / f"{kind}.sqlite")) as db:
        (kept,) = db.execute("SELECT record FROM records WHERE file = ?", (victim,)).fetchone()
    assert kept == own  # read afresh and kept again


@pytest.mark.usefixtures("quiet_at_once")
def test_a_warm_search_of_tool_output_too_stats_each_file_once(
    sessions: Path, tmp_path: Path, calls_to: CallsTo
) -> None:
    """Two indexes (messages, tool output), one stat of each file answers for both."""
    cache = tmp_path / "cache"
    files = sorted(sessions.glob("*.jsonl"))
    expected = searched(sessions, False, "a", tools=True)
    assert any(hit["role"] == "toolResult" for hit in expected)
    assert searched(sessions, cache, "a", tools=True) == expected  # the rows of both kept
    stats = calls_to(os, "stat")
    assert searched(sessions, cache, "a", tools=True) == expected
    stated = [str(args[0]) for args in stats if str(args[0]).endswith(".jsonl")]
    assert sorted(stated) == sorted(map(str, files))  # each once


def _listing_run(cache: Path, paths: list[str], ask: bool = True) -> Any:
    """What a listing's worker makes of a run of files (its rows' times of taking left
    out: they differ from one run to the next)."""
    infos, rows = listing._describe_run((cache, paths, ask))
    return infos, {file: row[:2] + row[3:] for file, row in rows.items()}


def _search_run(cache: Path, paths: list[str], ask: bool = True) -> Any:
    """What a search's worker makes of a run of files, the same way."""
    hits, kept = search._search_run((search.Wanted.of("a"), False, cache, paths, ask))
    rows = [{file: row[:2] + row[3:] for file, row in each.items()} for each in kept]
    return [hit.to_dict() for hit in hits], rows


@pytest.mark.usefixtures("quiet_at_once")
def test_a_listing_workers_run_reads_its_rows_in_one_query_and_makes_what_it_made_a_row_at_a_time(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of every sort: trusted on a stat, of a file appended to since, holding its
    check alone (stamped while its file was not quiet), given another row's record, and
    none."""
    cache = tmp_path / "cache"
    assert listed(sessions, cache)
    paths = sorted(map(str, sessions.glob("*.jsonl")))
    with open(paths[0], "a", encoding="utf-8") as grown:
        grown.write(json.dumps({"type": "custom", "id": "grown01", "parentId": None}) + "\n")
    with contextlib.closing(sqlite3.connect(cache / INDEX)) as db, db:
        stamp_bytes, record = db.execute(
            "SELECT stamp, record FROM records WHERE file = ?", (paths[1],)
        ).fetchone()
        db.execute(
            "UPDATE records SET unchanged = ? WHERE file = ?",
            (check_only(stamp_bytes, record), paths[1]),
        )
        db.execute(
            "UPDATE records SET record = (SELECT record FROM records WHERE file = ?)"
            " WHERE file = ?",
            (paths[3], paths[2]),
        )
        db.execute("DELETE FROM records WHERE file = ?", (paths[4],))
    queries = calls_to_query(monkeypatch)
    together = _listing_run(cache, paths)
    assert len(queries) == 1  # twelve files: one query for all their rows
    monkeypatch.setattr(facts_index.FactsIndex, "read_rows_for", lambda *args, **kwargs: None)
    queries.clear()
    one_at_a_time = _listing_run(cache, paths)
    assert len(queries) == len(paths)
    assert together == one_at_a_time
    assert together[1]  # rows made again: the grown, damaged and missing ones at least


@pytest.mark.usefixtures("quiet_at_once")
def test_a_search_workers_run_asks_for_each_files_row_in_its_turn_and_for_none_if_none_were_kept(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search's rows hold a file's texts: a run's, read at once, could be GBs."""
    cache = tmp_path / "cache"
    paths = sorted(map(str, sessions.glob("*.jsonl")))
    cold = _search_run(cache, paths)  # (no database yet: every file read whole, kept)
    queries = calls_to_query(monkeypatch)
    warm = _search_run(cache, paths)
    assert warm[0] == cold[0] and warm[0]
    assert len(queries) >= len(paths)  # one at least for each file, as it comes
    queries.clear()
    told_none = _search_run(cache, paths, ask=False)
    assert queries == []
    assert told_none == cold  # every file read whole, its rows made again


@pytest.mark.usefixtures("quiet_at_once")
def test_the_workers_of_a_first_listing_ask_for_no_rows_and_those_of_a_later_one_do(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing that found no database tells its workers so: they open none (the
    rows it writes meanwhile are of other files), and describe the files as read."""
    handed: list[tuple[Any, ...]] = []

    def here(work: Callable[[Any], Any], runs: list[Any], count: int) -> Any:
        handed.extend(runs)
        return map(work, runs)  # each run worked in this process, in order

    monkeypatch.setattr(listing, "worker_count", lambda workers, files: 2)
    monkeypatch.setattr(listing, "in_order", here)
    queries = calls_to_query(monkeypatch)
    cache = tmp_path / "cache"
    expected = listed(sessions, False)
    handed.clear()  # (of a listing without the cache: no rows either)
    assert listed(sessions, cache) == expected
    assert handed and not any(ask for _, _, ask in handed)
    assert len(queries) == 1  # the listing's own, which found no database
    handed.clear()
    for path in sessions.glob("*.jsonl"):  # each grows: read from its row on
        with path.open("a", encoding="utf-8") as grown:
            grown.write(json.dumps({"type": "custom", "id": f"g{path.stem}", "parentId": None}))
            grown.write("\n")
    expected = listed(sessions, False)
    handed.clear()
    assert listed(sessions, cache) == expected
    assert handed and all(ask for _, _, ask in handed)


def calls_to_query(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The queries every `FactsIndex` asks from then on (still asked)."""
    queries: list[str] = []
    real_query = facts_index.FactsIndex._query

    def counting(index: facts_index.FactsIndex, query: str, *values: str) -> list[Any]:
        queries.append(query)
        return real_query(index, query, *values)

    monkeypatch.setattr(facts_index.FactsIndex, "_query", counting)
    return queries


def test_a_file_whose_name_is_not_utf8_is_listed_and_searched_with_the_cache_as_without(
    sessions: Path, tmp_path: Path
) -> None:
    """SQLite takes no such name (Python holds it with a lone surrogate): the file is
    not kept, and read each time. A listing or search with the cache stopped there."""
    try:
        with open(os.fsencode(sessions) + b"/odd\xff.jsonl", "wb") as odd:
            odd.write((sessions / "s00.jsonl").read_bytes())
    except OSError:
        pytest.skip("this file system takes only UTF-8 names")
    cache = tmp_path / "cache"
    expected = listed(sessions, False), searched(sessions, False, "a")
    assert any("\udcff" in info["path"] for info in expected[0])
    assert any("\udcff" in hit["path"] for hit in expected[1])
    for _ in ("first", "warm"):
        assert (listed(sessions, cache), searched(sessions, cache, "a")) == expected
    with contextlib.closing(sqlite3.connect(cache / INDEX)) as db:
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == 12  # not the odd one
