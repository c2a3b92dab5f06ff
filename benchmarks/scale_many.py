"""scale.py's sections sizes (sessions of N entries: open, context, reopen after an
append, peak RSS) and many (list and search of many sessions, library and CLI)."""

from __future__ import annotations

import gc
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from scale_kit import (
    APPEND,
    ISSUE_SIZE,
    NO_CACHE,
    QUIET_SECONDS,
    Report,
    attempt,
    best_of,
    cache_option,
    check_all,
    clear_cache,
    cli,
    measure,
    peak_rss,
    python,
    read_kept_all,
    read_kept_hits,
    stat_all,
    stat_and_answer_all,
)


def bench_size(
    report: Report,
    entries: int,
    folder: Path,
    cache_dir: Path,
    runs: int,
    compact_every: int | None,
) -> None:
    from generate import write_session

    from jsonl_session import Session

    path = folder / f"session-{entries}.jsonl"
    facts = write_session(path, entries, seed=entries, compact_every=compact_every)
    report.group, mib = f"{entries:,}", facts["bytes"] / 2**20
    sizes = "/".join(str(facts[f"output_p{q}"]) for q in (50, 90, 99))
    report.row(
        "file",
        f"{mib:.1f} MiB",
        f"{facts['branches']} branches, {facts['compactions']} compactions, "
        f"tool output p50/p90/p99 {sizes} B",
    )
    report.measure_floors([path], runs)
    off, on = cache_option(Session.open, False), cache_option(Session.open, True)
    note = "" if on else f"  {NO_CACHE}"
    clear = clear_cache(cache_dir)

    def warm_then_append() -> None:
        clear()
        Session.open(path, **on)  # writes the cache
        python(APPEND, path)

    open_off = best_of(runs, lambda: Session.open(path, **off))
    cold_off = best_of(runs, lambda: Session.open(path, **off).build_context())
    report.timed("cold open, cache off", open_off)
    report.timed("cold open + context, cache off", cold_off)
    report.timed(
        "cold open, empty cache", best_of(runs, lambda: Session.open(path, **on), clear), note
    )
    cold_on = best_of(runs, lambda: Session.open(path, **on).build_context(), clear)
    report.timed("cold open + context, empty cache", cold_on, note)
    split, decode = report.floors["split"], report.floors["decode"]
    targeted = entries >= ISSUE_SIZE  # the issue sets these for a 100k-entry session
    if targeted:
        report.target(f"{report.group}: cold open + context / read + split", cold_off / split, 3.0)
        report.target(f"{report.group}: cold open + context / orjson decode", cold_off / decode, 1)

    session = Session.open(path, **off)
    context = session.build_context()
    kept = sum(len(orjson.dumps(m)) for m in context.messages) / 2**20
    report.row("context", f"{len(context.messages)} messages", f"{kept:.1f} MiB of JSON")
    report.timed("build context alone", best_of(runs, session.build_context))
    del session
    gc.collect()

    for what, label in (("session", "open + context, cache off"), ("orjson", "orjson decode all")):
        baseline, peak = peak_rss(what, path)
        growth = (peak - baseline) / mib
        ratios = f"file {mib:.1f} MiB  (peak-base)/file {growth:.2f}x  peak/file {peak / mib:.2f}x"
        report.row(f"peak RSS: {label}", f"{peak:.1f} MiB", ratios)
        if what == "session" and targeted:
            report.target(
                f"{report.group}: peak RSS of open + context / file size", peak / mib, 1.5
            )

    reopen = best_of(runs, lambda: Session.open(path, **on), warm_then_append)
    ratio = f"{reopen / open_off:6.2%} of cold open, cache off{note}"
    report.row("reopen after one append (cache on)", f"{reopen:.4f} s", ratio)
    what = f"{report.group}: reopen after one append / cold open"
    report.target(what, reopen / open_off, 0.05, note.strip(), unit="%")
    again = best_of(runs, lambda: Session.open(path, **on).build_context(), warm_then_append)
    ratio = f"{again / cold_off:6.2%} of cold open + context, cache off{note}"
    report.row("reopen + context after one append", f"{again:.4f} s", ratio)
    path.unlink()


def bench_many(
    report: Report, folder: Path, cache_dir: Path, sessions: int, entries: int, runs: int
) -> None:
    from generate import SEARCH_WORD, write_session

    from jsonl_session import list_sessions
    from jsonl_session.catalog.search import search_sessions
    from jsonl_session.processes import usable_cores

    folder.mkdir()
    start = time.perf_counter()
    for i in range(sessions):
        write_session(folder / f"session-{i:06d}.jsonl", entries, seed=1000 + i)
        if sessions >= 10_000 and (i + 1) % (sessions // 10) == 0:
            print(f"  ... {i + 1:,} sessions written", file=sys.stderr)
    written = time.perf_counter() - start
    files = sorted(folder.glob("*.jsonl"))
    report.group = f"{sessions:,}x{entries:,}"
    mib = sum(f.stat().st_size for f in files) / 2**20
    report.row(
        "files",
        f"{mib:.1f} MiB",
        f"{len(files):,} sessions of {entries} entries, written in {written:.1f} s",
    )
    time.sleep(QUIET_SECONDS)  # else the index would not trust the times of the newest files
    stat = best_of(runs, lambda: stat_all(folder))
    report.row("floor: list the folder + stat every file", f"{stat:.4f} s")
    answer = best_of(runs, lambda: stat_and_answer_all(folder))
    report.row(
        "floor: list + stat + make each SessionInfo (path text, times in ms)",
        f"{answer:.4f} s",
        f"{answer / stat:.2f}x stat",
    )
    report.measure_floors(files, runs, ", all files")
    report.floors = {"stat": stat, **report.floors}
    decode = report.floors["decode"]
    check = best_of(runs, lambda: check_all(files))
    report.row("floor: msgspec check every line, all files", f"{check:.4f} s")
    clear = clear_cache(cache_dir)

    # The library, in this process. Listing first, as a `list` command runs: in a fresh
    # process. After the large files the heap is already grown, which makes the orjson
    # floor about twice as fast (allocation-bound) and listing ratios look worse.
    def do_list(**options: Any) -> object:
        return list_sessions(folder, **options)

    def do_search(**options: Any) -> object:
        return list(search_sessions(SEARCH_WORD, files, **options))

    hits = len(do_search(**cache_option(search_sessions, False)))
    for name, function, work in (
        ("list_sessions", list_sessions, do_list),
        (f"search_sessions '{SEARCH_WORD}' ({hits} hits)", search_sessions, do_search),
    ):
        off, on = cache_option(function, False), cache_option(function, True)
        note = "" if on else f"  {NO_CACHE}"
        cold = best_of(runs, lambda work=work, off=off: work(**off))
        first = best_of(runs, lambda work=work, on=on: work(**on), clear)
        warm = best_of(runs, lambda work=work, on=on: work(**on))
        report.timed(f"{name}, no cache", cold, f"  {cold / check:.2f}x check")
        cores = usable_cores()
        if cores > 1:
            spread = best_of(runs, lambda work=work, off=off: work(**off, workers=None))
            report.timed(
                f"{name}, no cache, {cores} workers", spread, f"  {spread / cold:.2f}x one process"
            )
        report.timed(f"{name}, first run, empty cache", first, f"  {first / cold:.2f}x no cache")
        report.timed(f"{name}, warm cache", warm, note)
        verb = name.split()[0]
        report.target(f"{verb} warm / stat every file", warm / stat, 3, note.strip())
        if verb == "list_sessions":
            report.target(
                f"{verb} warm / list + stat + make each result", warm / answer, 1.5, note.strip()
            )
        report.target(f"{verb} first run with cache / no cache", first / cold, 1.3, note.strip())
        if verb == "list_sessions":
            report.target(f"{verb} cold / orjson decode-all", cold / decode, 0.20, unit="%")
            report.target(
                f"{verb} warm / orjson decode-all", warm / decode, 0.02, note.strip(), unit="%"
            )
    bench_warm_search(report, folder, files, cache_dir, stat, runs)
    bench_fresh_processes(report, folder, stat, runs)

    # The commands, each run in a fresh process as a user runs them.
    started = attempt(report, "the CLI starting (--version)", lambda: cli(runs, "--version"))
    if started is not None:
        report.measured("the CLI starting (--version)", started)
    for verb, args in (("list", [folder]), ("search", [SEARCH_WORD, folder])):
        label = f"{verb}, no cache, one process (CLI --no-cache --workers 1)"
        alone = attempt(
            report,
            label,
            lambda verb=verb, args=args: cli(runs, verb, *args, "--no-cache", "--workers", "1"),
        )
        if alone is not None:
            report.measured(label, alone)
        label = f"{verb}, no cache (CLI --no-cache: a worker per core)"
        cold = attempt(
            report, label, lambda verb=verb, args=args: cli(runs, verb, *args, "--no-cache")
        )
        if cold is not None:
            note = f"  {cold['seconds'] / alone['seconds']:.2f}x one process" if alone else ""
            report.measured(label, cold, note)
        label = f"{verb}, first run, empty cache (CLI)"
        first = attempt(
            report, label, lambda verb=verb, args=args: cli(runs, verb, *args, setup=clear)
        )
        if first is not None:
            note = f"  {first['seconds'] / cold['seconds']:.2f}x no cache" if cold else ""
            report.measured(label, first, note)
        label = f"{verb}, warm cache (CLI)"
        warm = attempt(report, label, lambda verb=verb, args=args: cli(runs, verb, *args))
        if warm is not None:
            beyond = (warm["seconds"] - started["seconds"]) / stat if started else 0
            report.measured(label, warm, f"  less the start {beyond:.2f}x stat" if started else "")
            report.target(f"{verb} (CLI) warm / stat every file", warm["seconds"] / stat, 3)
        if cold is not None and first is not None:
            ratio = first["seconds"] / cold["seconds"]
            report.target(f"{verb} (CLI) first run with cache / no cache", ratio, 1.3)
    shutil.rmtree(folder)
    clear()


ABSENT_WORD = "quokka"  # in no generated session (their words: generate.py's _WORD_TEXT)


def bench_warm_search(
    report: Report, folder: Path, files: list[Path], cache_dir: Path, stat: float, runs: int
) -> None:
    """A warm search for a word in no session (as most searches for a name or an error
    find few), beside the floor of any warm search that keeps texts: stat every file,
    read every kept text from the index, check each row's bytes (a CRC-32) and look
    for the word in them (lower-cased, one find). Then one for a word in every session,
    beside that floor with a snippet cut for each place the word stands."""
    from generate import SEARCH_WORD

    from jsonl_session.catalog.search import search_sessions

    def do_search(word: str) -> int:
        return len(list(search_sessions(word, files, cache=True)))

    if do_search(SEARCH_WORD) == 0 or do_search(ABSENT_WORD):  # (the cache made warm)
        raise RuntimeError(f"'{SEARCH_WORD}' should be found and '{ABSENT_WORD}' not")
    index = next(cache_dir.glob("search-*.sqlite"), None)
    if index is None:
        report.row("warm search for a word in no session", "no index", NO_CACHE)
        return
    cases = (
        (
            ABSENT_WORD,
            "no hits",
            "a word in no session",
            read_kept_all,
            f"floor: stat + read the kept texts + check + look for '{ABSENT_WORD}'",
        ),
        (
            SEARCH_WORD,
            "in every session",
            "a word in every session",
            read_kept_hits,
            f"floor: the same for '{SEARCH_WORD}' + a snippet for each place it stands",
        ),
    )
    for word, found, case, floor_of, floor_label in cases:
        floor = best_of(runs, lambda of=floor_of, word=word: of(folder, index, word.encode()))
        report.row(floor_label, f"{floor:.4f} s", f"{floor / stat:.2f}x stat")
        warm = best_of(runs, lambda word=word: do_search(word))
        report.timed(
            f"search_sessions '{word}' ({found}), warm cache", warm, f"  {warm / floor:.2f}x floor"
        )
        if word == ABSENT_WORD:  # (the other's is the library's figure above)
            report.target(f"search_sessions warm, {case} / stat", warm / stat, 3)
        report.target(f"search_sessions warm, {case} / its floor", warm / floor, 1.5)


def bench_fresh_processes(report: Report, folder: Path, stat: float, runs: int) -> None:
    """The warm `list_sessions` and `search_sessions` again, each as the first call of
    a fresh process, as a user's script runs them (this process has written the
    sessions and read them all for the floors). A first call costs 0.05-0.1 s more
    than later ones in a process that listed before: not its imports, but the memory
    it first takes (a listing of 100,000 faulted in 35,000 pages the first time,
    10,000 the next). This process's own warm figure has come out both below and
    above this one."""
    from generate import SEARCH_WORD

    for what, args in (
        ("list", [folder]),
        ("search", [folder, SEARCH_WORD]),
        ("search", [folder, ABSENT_WORD]),
    ):
        label = f"{what}_sessions {' '.join(map(repr, map(str, args[1:])))}".rstrip()
        label = f"{label}, warm cache, in a fresh process"
        done = attempt(report, label, lambda what=what, args=args: measure(runs, what, *args))
        if done is None:
            continue
        report.measured(label, done, f"  {done['found']} found")
        report.target(f"{label} / stat every file", done["seconds"] / stat, 3)
