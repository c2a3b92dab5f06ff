"""How jsonl_session scales: big sessions, many sessions, warm and cold index cache.

For each size N it writes a session of N entries (benchmarks/generate.py) and times,
best of --runs with time.perf_counter, beside floors measured in the same run (read +
split lines; orjson-decode every line): a cold `Session.open(...).build_context()`
with the cache off and with an empty cache; `Session.open` after another process
appended one line to a file whose cache is warm; `build_context` alone; and peak RSS
of open + context (and of an orjson decode-all) in a fresh process. First, once, it
lists and searches --sessions sessions of --session-entries entries, cold and warm,
beside one more floor: checking every line is JSON with msgspec (pi counts only the
lines that parse, so an exact listing checks each one).
It ends with the targets and whether they are met.

The cache lives in $JSONL_SESSION_CACHE_DIR, set to a folder of the temporary
directory before jsonl_session is imported; deleting the folder empties it. While
the library has no `cache=` keyword, rows that need it say "(no cache support)".

    python benchmarks/scale.py [--sizes 10000,100000] [--sessions 100]
                               [--session-entries 1000] [--runs 3]

benchmarks/scale_big.py goes further, at the sizes issue 17 names: 100,000 small
sessions, a 500 MB session (every export, textconv, stats; peak memory of each), a
200 MB line, appends to 300,000 entries, and pi 1.5.2 on the same file.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec
import orjson

NO_CACHE = "(no cache support)"
ISSUE_SIZE = 100_000  # open + context and peak RSS have targets at this size

APPEND = r"""
import secrets, sys, time, orjson
path = sys.argv[1]
with open(path, "rb") as f:  # the id of the last line, as pi knows its leaf
    size, chunk = f.seek(0, 2), 1 << 16
    while True:
        f.seek(max(0, size - chunk))
        lines = f.read().rstrip(b"\n").split(b"\n")
        if len(lines) > 1 or chunk >= size:
            break
        chunk *= 4
ms = int(time.time() * 1000)
stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"
text = [{"type": "text", "text": "One more thing: rerun the tests → café"}]
entry = {"type": "message", "id": secrets.token_hex(4), "parentId": orjson.loads(lines[-1])["id"],
         "timestamp": stamp, "message": {"role": "user", "content": text, "timestamp": ms}}
with open(path, "ab") as f:
    f.write(orjson.dumps(entry) + b"\n")
"""

PEAK_RSS = r"""
import inspect, resource, sys
from pathlib import Path
what, path = sys.argv[1], Path(sys.argv[2])
if what == "session":
    from jsonl_session import Session
    options = {"cache": False} if "cache" in inspect.signature(Session.open).parameters else {}
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    context = Session.open(path, **options).build_context()
else:
    import orjson
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    decoded = [orjson.loads(line) for line in path.read_bytes().split(b"\n") if line]
print(baseline, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


class Report:
    """The table's rows and the targets, printed at the end."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []
        self.targets: list[tuple[str, float, float, str]] = []
        self.group = ""  # the first column of the rows being added
        self.floors = (1.0, 1.0)  # seconds to read + split and to decode, for `timed`

    def row(self, measure: str, value: str, ratios: str = "") -> None:
        self.rows.append((self.group, measure, value, ratios))
        print(f"  {self.group:>9}  {measure:<44} {value:>12}  {ratios}", file=sys.stderr)

    def timed(self, measure: str, value: float, note: str = "") -> None:
        """A row of seconds, with their ratios to the floors."""
        split, decode = self.floors
        ratios = f"{value / split:6.2f}x split  {value / decode:6.2f}x decode{note}"
        self.row(measure, f"{value:.4f} s", ratios)

    def measure_floors(self, files: list[Path], runs: int, what: str = "") -> None:
        self.floors = (
            best_of(runs, lambda: split_all(files)),
            best_of(runs, lambda: decode_all(files)),
        )
        self.row(f"floor: read + split lines{what}", f"{self.floors[0]:.4f} s")
        self.row(f"floor: orjson decode every line{what}", f"{self.floors[1]:.4f} s")

    def target(self, what: str, ratio: float, limit: float, note: str = "") -> None:
        self.targets.append((what, ratio, limit, note))

    def print(self) -> None:
        header = ("entries", "measure", "value", "ratios")
        widths = [max(len(r[i]) for r in [header, *self.rows]) for i in range(3)]
        group = ""
        for r in [header, *self.rows]:
            if r[0] != group and group not in ("", header[0]):
                print()  # a blank line between sizes
            group = r[0]
            line = f"{r[0]:>{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}"
            print(line.rstrip())
        print("\ntargets")
        for what, ratio, limit, note in self.targets:
            verdict = "met" if ratio <= limit else "NOT met"
            shown = f"{ratio:.2f}x <= {limit:.1f}x" if limit >= 1 else f"{ratio:.2%} <= {limit:.0%}"
            print(f"  {what:<56} {shown:>16}  {verdict} {note}".rstrip())


def cache_option(function: Callable[..., Any], cache: bool) -> dict[str, Any]:
    """``{"cache": cache}`` when ``function`` takes that keyword, else nothing."""
    try:
        return {"cache": cache} if "cache" in inspect.signature(function).parameters else {}
    except (TypeError, ValueError):
        return {}


def best_of(
    runs: int, work: Callable[[], object], setup: Callable[[], object] | None = None
) -> float:
    best = float("inf")
    for _ in range(runs):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def split_all(files: Iterable[Path]) -> None:
    for path in files:
        path.read_bytes().split(b"\n")


def decode_all(files: Iterable[Path]) -> None:
    for path in files:
        [orjson.loads(line) for line in path.read_bytes().split(b"\n") if line]


class _Nothing(msgspec.Struct):
    pass


def check_all(files: Iterable[Path]) -> None:
    """Check that every line is JSON (msgspec, keeping no field), line by line where
    it lies, as an exact listing must (pi parses every line): the listing's own floor."""
    check = msgspec.json.Decoder(_Nothing).decode
    for path in files:
        data = path.read_bytes()
        view, start = memoryview(data), 0
        while (end := data.find(b"\n", start)) >= 0:
            with contextlib.suppress(msgspec.DecodeError):
                check(view[start:end])
            start = end + 1


def python(script: str, *args: str | Path) -> str:
    """Run ``script`` in a fresh Python process and return its output. It runs in a
    temporary folder, so it imports the same jsonl_session as this process, and is
    started by a shell: Linux carries a parent's peak RSS into a child it forks (so
    ru_maxrss would start at this process's peak), but not into a grandchild."""
    command = ["/bin/sh", "-c", '"$@"; exit $?', "sh", sys.executable, "-c", script]
    command += map(str, args)
    done = subprocess.run(command, cwd=tempfile.gettempdir(), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"subprocess failed:\n{done.stderr}")
    return done.stdout


def peak_rss(what: str, path: Path) -> tuple[float, float]:
    """(baseline, peak) ru_maxrss in MiB of a fresh process that loads ``path``."""
    baseline, peak = (int(n) / 1024 for n in python(PEAK_RSS, what, path).split())
    return baseline, peak


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

    def clear() -> None:
        shutil.rmtree(cache_dir, ignore_errors=True)

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
    split, decode = report.floors
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
    report.target(what, reopen / open_off, 0.05, note.strip())
    again = best_of(runs, lambda: Session.open(path, **on).build_context(), warm_then_append)
    ratio = f"{again / cold_off:6.2%} of cold open + context, cache off{note}"
    report.row("reopen + context after one append", f"{again:.4f} s", ratio)


def bench_many(report: Report, folder: Path, sessions: int, entries: int, runs: int) -> None:
    from generate import SEARCH_WORD, write_session

    from jsonl_session import list_sessions
    from jsonl_session.catalog.search import search_sessions

    folder.mkdir()
    for i in range(sessions):
        write_session(folder / f"session-{i:04d}.jsonl", entries, seed=1000 + i)
    files = sorted(folder.glob("*.jsonl"))
    report.group = f"{sessions}x{entries:,}"
    mib = sum(f.stat().st_size for f in files) / 2**20
    report.row("files", f"{mib:.1f} MiB", f"{len(files)} sessions of {entries} entries")
    report.measure_floors(files, runs, ", all files")
    decode = report.floors[1]

    off, on = cache_option(list_sessions, False), cache_option(list_sessions, True)
    note = "" if on else f"  {NO_CACHE}"
    cold = best_of(runs, lambda: list_sessions(folder, **off))
    list_sessions(folder, **on)  # fills the cache
    warm = best_of(runs, lambda: list_sessions(folder, **on))
    check = best_of(runs, lambda: check_all(files))
    report.row("floor: msgspec check every line, all files", f"{check:.4f} s")
    report.timed("list_sessions, cold (cache off)", cold, f"  {cold / check:.2f}x check")
    report.timed("list_sessions, warm cache", warm, note)
    report.target("list_sessions cold / orjson decode-all", cold / decode, 0.20)
    report.target("list_sessions warm / orjson decode-all", warm / decode, 0.02, note.strip())

    off, on = cache_option(search_sessions, False), cache_option(search_sessions, True)
    note = "" if on else f"  {NO_CACHE}"
    hits = len(list(search_sessions(SEARCH_WORD, files, **off)))
    cold = best_of(runs, lambda: list(search_sessions(SEARCH_WORD, files, **off)))
    list(search_sessions(SEARCH_WORD, files, **on))  # fills the cache
    warm = best_of(runs, lambda: list(search_sessions(SEARCH_WORD, files, **on)))
    report.timed(f"search '{SEARCH_WORD}', cold (cache off): {hits} hits", cold)
    report.timed(f"search '{SEARCH_WORD}', warm cache", warm, note)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="entries per file, comma-separated")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--session-entries", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--compact-every",
        type=int,
        default=None,
        metavar="N",
        help="compact every ~N entries instead of when the context window fills",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # for `import generate`
    report = Report()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jsonl-session-scale-") as tmp:
        cache_dir = Path(tmp) / "cache"
        os.environ["JSONL_SESSION_CACHE_DIR"] = str(cache_dir)  # before jsonl_session loads
        # Listing first, as a `list` command runs: in a fresh process. After the large
        # files the heap is already grown, which makes the orjson floor about twice
        # as fast (allocation-bound) and listing ratios look worse.
        bench_many(report, Path(tmp) / "many", args.sessions, args.session_entries, args.runs)
        for size in (int(s) for s in args.sizes.split(",") if s.strip()):
            bench_size(report, size, Path(tmp), cache_dir, args.runs, args.compact_every)
    report.print()
    print(f"\n(best of {args.runs} runs; {time.perf_counter() - start:.0f} s in all)")


if __name__ == "__main__":
    main()
