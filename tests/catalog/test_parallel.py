"""Listing and search spread over worker processes (catalog/parallel.py): the same
sessions, hits and order as in one process, with and without the cache, and the rows
the workers read kept by the calling process as if it had read the files itself."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import pytest
from helpers_large import generate
from locations import FIXTURES

from jsonl_session import JsonlSessionError
from jsonl_session.catalog import parallel, search
from jsonl_session.catalog.finding import session_files
from jsonl_session.catalog.listing import list_sessions
from jsonl_session.catalog.search import search_sessions
from jsonl_session.storage import facts_index

QUERIES = ("the", "zebracorn", "é")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Every pi fixture (damaged ones too), and generated sessions, 50 files."""
    place = tmp_path / "sessions"
    place.mkdir()
    for fixture in sorted(FIXTURES.glob("*.jsonl")):
        shutil.copy(fixture, place / fixture.name)
    for seed in range(50 - len(list(place.iterdir()))):
        generate(place / f"gen-{seed:02d}.jsonl", 10 + seed, seed)
    return place


@pytest.fixture
def spread_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers for a few files, in runs of 4 (the parent decides both), a search's
    first window of 4 files read here; files count as quiet as soon as stamped (the
    parent decides which rows a stat may answer for)."""
    monkeypatch.setattr(parallel, "PARALLEL_FROM", 8)
    monkeypatch.setattr(parallel, "RUN_FILES", 4)
    monkeypatch.setattr(search, "_WINDOW", 4)
    monkeypatch.setattr(facts_index, "QUIET_NS", 0)


def listed(folder: Path, **options: Any) -> list[dict[str, Any]]:
    return [info.to_dict() for info in list_sessions(folder, **options)]


def found(folder: Path, query: str, **options: Any) -> list[dict[str, Any]]:
    files = session_files(folder)
    return [hit.to_dict() for hit in search_sessions(query, files, **options)]


def rows(cache: Path, kind: str) -> dict[str, tuple[Any, ...]]:
    """file -> (stamp, record, unchanged) of every row of a kind's index."""
    (database,) = [p for p in cache.glob("*.sqlite") if p.stem.rsplit("-", 1)[0] == kind]
    with contextlib.closing(sqlite3.connect(database)) as db:
        found = db.execute("SELECT file, stamp, record, unchanged FROM records").fetchall()
    return {file: rest for file, *rest in found}


def test_workers_list_what_one_process_lists_with_and_without_the_cache(
    folder: Path, tmp_path: Path, spread_small: None
) -> None:
    expected = listed(folder, cache=False)
    assert listed(folder, cache=False, workers=2) == expected
    assert listed(folder, cache=tmp_path / "spread", workers=2) == expected
    assert listed(folder, cache=tmp_path / "spread", workers=2) == expected  # warm
    listed(folder, cache=tmp_path / "alone")
    assert rows(tmp_path / "spread", "listing") == rows(tmp_path / "alone", "listing")


def test_workers_find_the_same_hits_in_the_same_order(
    folder: Path, tmp_path: Path, spread_small: None
) -> None:
    for query in QUERIES:
        for tools in (False, True):
            expected = found(folder, query, cache=False, tools=tools)
            assert expected or query == "zebracorn"
            assert found(folder, query, cache=False, tools=tools, workers=2) == expected
            spread = tmp_path / f"spread-{tools}"
            assert found(folder, query, cache=spread, tools=tools, workers=2) == expected
            assert found(folder, query, cache=spread, tools=tools, workers=2) == expected
    found(folder, "the", cache=tmp_path / "alone", tools=True)
    for kind in ("search", "search-tools"):
        assert rows(tmp_path / "spread-True", kind) == rows(tmp_path / "alone", kind)


def test_a_search_spreads_what_its_first_window_shows_is_left_to_read(
    folder: Path,
    tmp_path: Path,
    spread_small: None,
    calls_to: Callable[[object, str], list[tuple[Any, ...]]],
) -> None:
    """Cold, the first window's files are read here and the rest by the workers (as
    many to read as in that window); warm, the indexes answer here, no worker asked."""
    spread = calls_to(search, "in_order")
    files = session_files(folder)
    cold = found(folder, "the", cache=tmp_path / "cache", workers=2)
    assert len(spread) == 1
    (_, runs, count) = spread[0]
    assert count == 2
    assert [path for *_, run, _ in runs for path in run] == [str(f) for f in files[4:]]
    assert not any(ask for *_, ask in runs)  # no database then: no rows to ask for
    assert found(folder, "the", cache=tmp_path / "cache", workers=2) == cold
    assert len(spread) == 1  # warm: no worker
    assert found(folder, "the", cache=tmp_path / "cache", workers=1) == cold


def test_a_search_spreads_when_the_files_to_read_reach_the_threshold_with_those_read(
    folder: Path,
    tmp_path: Path,
    spread_small: None,
    monkeypatch: pytest.MonkeyPatch,
    calls_to: Callable[[object, str], list[tuple[Any, ...]]],
) -> None:
    """As many files to read as the threshold, cold: spread, though those left after
    the first window are fewer (the threshold is of the files to read, as told)."""
    files = session_files(folder)
    monkeypatch.setattr(parallel, "PARALLEL_FROM", len(files))
    spread = calls_to(search, "in_order")
    found(folder, "the", cache=tmp_path / "cache", workers=2)
    assert len(spread) == 1


def test_workers_below_one_are_refused_before_any_hit(folder: Path, tmp_path: Path) -> None:
    files = session_files(folder)
    for cache in (tmp_path / "cache", False):
        hits = search_sessions("the", files, cache=cache, workers=0)
        with pytest.raises(JsonlSessionError, match="workers must be 1 or more"):
            next(hits)


def test_a_search_stopped_at_its_limit_gives_the_first_hits(
    folder: Path, spread_small: None
) -> None:
    files = session_files(folder)
    every = [h.to_dict() for h in search_sessions("the", files, cache=False)]
    first = search_sessions("the", files, cache=False, limit=7, workers=2)
    assert [h.to_dict() for h in first] == every[:7]


def test_few_files_are_read_in_this_process() -> None:
    assert parallel.worker_count(None, parallel.PARALLEL_FROM - 1) == 1
    assert parallel.worker_count(4, parallel.PARALLEL_FROM * 10) == 4
    assert parallel.worker_count(1, parallel.PARALLEL_FROM * 10) == 1
    with pytest.raises(JsonlSessionError, match="workers must be 1 or more"):
        parallel.worker_count(0, 10)


def test_a_script_read_from_stdin_asking_for_workers_lists_in_one_process(
    folder: Path,
) -> None:
    """A spawned worker cannot run a ``__main__`` read from stdin again (its file,
    "<stdin>", is not there): every worker would die starting, so the work is done
    here, with the same result."""
    script = (
        "import json, sys\nfrom pathlib import Path\n"
        "from jsonl_session.catalog import parallel\n"
        "parallel.PARALLEL_FROM, parallel.RUN_FILES = 8, 4\n"
        "from jsonl_session import list_sessions\n"
        "infos = list_sessions(Path(sys.argv[1]), cache=False, workers=2)\n"
        "print(json.dumps([info.to_dict() for info in infos]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-", str(folder)], input=script, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == listed(folder, cache=False)


def test_the_command_lists_thousands_of_files_with_two_workers(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    header = (
        '{"type":"session","version":3,"id":"s%05d","cwd":"/p",'
        '"timestamp":"2025-01-01T00:00:00.000Z"}\n'
    )
    line = (
        '{"type":"message","id":"a0000001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"question %d","timestamp":%d}}\n'
    )
    for n in range(parallel.PARALLEL_FROM + 100):
        (folder / f"s{n:05d}.jsonl").write_text(header % n + line % (n, 1_750_000_000_000 + n))
    outputs = []
    for workers in ("1", "2"):
        command = [sys.executable, "-m", "jsonl_session", "--no-cache", "list", str(folder)]
        done = subprocess.run(
            [*command, "--workers", workers], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\n") == 2 * (parallel.PARALLEL_FROM + 100)


def test_the_callers_own_work_is_done_once_while_the_workers_go_on() -> None:
    done: list[int] = []
    results = []
    for result in parallel.in_order(abs, [-n for n in range(40)], 2, lambda: done.append(1)):
        assert done == [1]  # before the first result is taken
        results.append(result)
    assert results == list(range(40))
    assert done == [1]


@pytest.mark.parametrize("runs", [1, 60], ids=["while waiting", "while handing out"])
def test_a_worker_that_ends_abruptly_is_said_plainly(runs: int) -> None:
    # os._exit ends the worker at once; with runs still to hand out, the caller's own
    # work lasts until the pool has seen it, so a submission is what finds it broken
    with pytest.raises(JsonlSessionError, match="ended abruptly"):
        list(parallel.in_order(os._exit, [3] * runs, 2, lambda: time.sleep(1.5)))


def test_runs_the_caller_marks_are_done_here_in_their_turn_with_the_pool_at_hand() -> None:
    def here(run: int) -> Callable[[int, Executor], Any] | None:
        # (the pool: for work of the run's own, as a huge text's redaction sends)
        def local(n: int, pool: Executor) -> Any:
            return ("here", os.getpid(), -n, pool.submit(os.getpid).result())

        return local if -run % 10 == 3 else None

    results = list(parallel.in_order(abs, [-n for n in range(40)], 2, here=here))
    assert [r if isinstance(r, int) else r[2] for r in results] == list(range(40))
    local = [r for r in results if not isinstance(r, int)]
    assert [r[:3] for r in local] == [("here", os.getpid(), n) for n in (3, 13, 23, 33)]
    assert all(r[3] != os.getpid() for r in local)  # a worker's
