"""How jsonl_session scales: many sessions, big sessions, a huge line, appends, pi.

Sections, chosen with --only (comma-separated; default: all of them):

  sizes    for each --sizes N, a session of N entries (benchmarks/generate.py): a cold
           `Session.open(...).build_context()` with the cache off and with an empty
           cache; `Session.open` after another process appended one line to a file
           whose cache is warm; `build_context` alone; peak RSS of open + context (and
           of an orjson decode-all) in a fresh process.
  many     --sessions sessions of --session-entries entries: `list_sessions` and
           `search_sessions` in this process, and the `list` / `search` commands in a
           fresh process each, with no cache, on a first run with an empty cache, and
           with the cache warm.
  big      one session of about --big-mb MiB, each measure in a fresh process, its time
           and its peak RSS: open + context with no cache, with an empty cache and
           cached; tree; stats (`token_breakdown`, and `stats --json`); every export
           (`export -f markdown|html|json -o FILE`, Markdown with --redact); `textconv`
           (the commands with the cache warm).
  line     a session whose one tool result holds a --line-mb MiB text (a secret every
           ~100 KB): `stats`, Markdown export without and with --redact, in MiB/s; and
           `redact_text` alone on that much text without secrets and with a secret
           every ~100 KB (a GitHub token or an AWS key id), in MiB/s.
  appends  for each --append-sizes N, one `Session.append_message` to a session of N
           entries (median of 21, fsync never), and the next append after another
           Session object appended 1,000 lines (which it takes in first).
  pi       pi 1.5.2's `SessionManager.open` + `buildSessionContext` on the big session,
           in node, beside ours. Needs node and the peer ../shared/tools/pi15/setup.sh
           builds ($PI15_PEER_DIR, default /tmp/pi15-peer); skipped, saying why, without.
           The target: our first open + context with an empty cache <= 0.25x pi's.

Times are the best of --runs (time.perf_counter), each beside floors measured in the
same run on the same files: stat of every file (many); reading the bytes and splitting
lines; decoding every line with orjson; for many also checking every line is JSON with
msgspec (pi counts only the lines that parse, so an exact listing checks each one).
Commands run as `python -m jsonl_session ...`, timed from outside, with output to a
file or /dev/null. A fresh process's peak is its own ru_maxrss: Linux carries a
parent's peak into a child it starts, so each is started by a shell or a small wrapper.
"Cold" and "no cache" mean without the index cache; the files stay in the OS page
cache. It ends with the issue's targets and whether they are met.

Files go to a temporary directory removed at the end, the cache to a folder of it:
$JSONL_SESSION_CACHE_DIR, set before jsonl_session is imported (deleting the folder
empties it). Fresh processes import the same jsonl_session as this one. Rows that need a
`cache=` keyword the library lacks say "(no cache support)"; a measure an older library
cannot do gives a "failed" row, and the run goes on.

    python benchmarks/scale.py [--only sizes,many,big,line,appends,pi] [--runs 3]
        [--sizes 10000,100000] [--sessions 100] [--session-entries 1000]
        [--big-mb 100] [--line-mb 20] [--append-sizes 1000,300000]

At issue 17's sizes, one section at a time (each needs a few GB of disk in $TMPDIR;
line, a few GB of memory: the 200 MiB text is held as a str, redacted into another):

    python benchmarks/scale.py --only many --sessions 100000 --session-entries 20 --runs 1
    python benchmarks/scale.py --only big,pi --big-mb 500 --runs 1
    python benchmarks/scale.py --only line --line-mb 200 --runs 1
    python benchmarks/scale.py --only appends --append-sizes 1000,300000 --runs 3
    python benchmarks/scale.py --only sizes --sizes 10000,100000 --runs 3
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import inspect
import json
import os
import random
import shutil
import statistics
import string
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
SECTIONS = ("sizes", "many", "big", "line", "appends", "pi")
BYTES_PER_ENTRY = 2_233  # generate.py's sessions: about 213 MiB for 100k entries
QUIET_SECONDS = 2.2  # the facts index trusts a file's times once it was quiet for 2 s
SECRET_EVERY = 100_000  # bytes of text between two secrets planted for redaction
PEAK_LIMIT_MIB = 256  # issue 17: every export and textconv of the 500 MB session
PI_PEER = Path(os.environ.get("PI15_PEER_DIR", "/tmp/pi15-peer"))
PI_PACKAGE = "node_modules/@earendil-works/pi-coding-agent"

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

# One measure in a fresh process; prints JSON: seconds, peak (MiB), and for some more.
#   cli SINK ARGS...         `python -m jsonl_session ARGS` (its own child), stdout to SINK
#   split|decode FILE        the floors: read + split lines; orjson-decode every line
#   open|context|tree|stats FILE on|off   Session.open (cache on or off), then that call
MEASURE = r"""
import inspect, json, resource, subprocess, sys, time
from pathlib import Path

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

what, args = sys.argv[1], sys.argv[2:]
if what == "cli":
    command = [sys.executable, "-m", "jsonl_session", *args[1:]]
    with open(args[0], "wb") as out:
        start = time.perf_counter()
        done = subprocess.run(command, stdout=out, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}")
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result = {"seconds": seconds, "peak": child}
elif what in ("split", "decode"):
    import orjson
    base = peak()
    start = time.perf_counter()
    lines = Path(args[0]).read_bytes().split(b"\n")
    if what == "decode":
        decoded = [orjson.loads(line) for line in lines if line]
    result = {"seconds": time.perf_counter() - start, "base": base, "peak": peak()}
else:
    from jsonl_session import Session
    options = {}
    if "cache" in inspect.signature(Session.open).parameters:
        options["cache"] = args[1] == "on"
    base = peak()
    start = time.perf_counter()
    session = Session.open(Path(args[0]), **options)
    result = {"open": time.perf_counter() - start}
    if what == "context":
        kept = session.build_context()
        result["messages"] = len(kept.messages)
    elif what == "tree":
        kept = session.tree()
    elif what == "stats":
        kept = session.token_breakdown()
    result |= {"seconds": time.perf_counter() - start, "base": base, "peak": peak()}
print(json.dumps(result))
"""

# pi 1.5.2's SessionManager.open + buildSessionContext, as ../shared/tools/pi15 loads it.
PI_OPEN = r"""
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const [peer, file, dir] = process.argv.slice(2);
process.env.PI_CODING_AGENT_DIR ||= join(peer, "agent-dir-guard"); // never ~/.pi
const pkg = join(peer, "node_modules/@earendil-works/pi-coding-agent");
const module = join(pkg, "dist/core/session-manager.js");
const { SessionManager } = await import(pathToFileURL(module).href);
const start = performance.now();
const context = SessionManager.open(file, dir).buildSessionContext();
const seconds = (performance.now() - start) / 1000;
const peak = process.resourceUsage().maxRSS / 1024;
console.log(JSON.stringify({ seconds, peak, messages: context.messages.length }));
"""


class Report:
    """The table's rows and the targets, printed at the end."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []
        self.targets: list[tuple[str, float, float, str, str]] = []
        self.group = ""  # the first column of the rows being added
        self.floors: dict[str, float] = {}  # seconds of each floor, for `timed`

    def row(self, measure: str, value: str, ratios: str = "") -> None:
        self.rows.append((self.group, measure, value, ratios))
        print(f"  {self.group:>14}  {measure:<50} {value:>12}  {ratios}", file=sys.stderr)

    def timed(self, measure: str, value: float, note: str = "") -> None:
        """A row of seconds, with their ratios to the floors."""
        ratios = "  ".join(f"{value / floor:6.2f}x {name}" for name, floor in self.floors.items())
        self.row(measure, f"{value:.4f} s", ratios + note)

    def measured(self, measure: str, result: dict[str, Any], note: str = "") -> None:
        """A row of a fresh process's seconds and peak RSS."""
        self.timed(measure, result["seconds"], f"  peak {result['peak']:.0f} MiB{note}")

    def measure_floors(self, files: list[Path], runs: int, what: str = "") -> None:
        """The floors, in this process."""
        self.floors = {
            "split": best_of(runs, lambda: split_all(files)),
            "decode": best_of(runs, lambda: decode_all(files)),
        }
        self.row(f"floor: read + split lines{what}", f"{self.floors['split']:.4f} s")
        self.row(f"floor: orjson decode every line{what}", f"{self.floors['decode']:.4f} s")

    def fresh_floors(self, path: Path, runs: int) -> None:
        """The floors, each in a fresh process as the measures beside them."""
        self.floors = {}
        for name, label in (
            ("split", "read + split lines"),
            ("decode", "orjson decode every line"),
        ):
            result = measure(runs, name, path)
            self.floors[name] = result["seconds"]
            self.row(
                f"floor: {label}", f"{result['seconds']:.4f} s", f"peak {result['peak']:.0f} MiB"
            )

    def target(
        self, what: str, value: float, limit: float, note: str = "", unit: str = "x"
    ) -> None:
        """``value`` must be at most ``limit`` (at least, for a rate: a unit in "/s")."""
        self.targets.append((what, value, limit, note, unit))

    def print(self) -> None:
        header = ("case", "measure", "value", "ratios")
        widths = [max(len(r[i]) for r in [header, *self.rows]) for i in range(3)]
        group = ""
        for r in [header, *self.rows]:
            if r[0] != group and group not in ("", header[0]):
                print()  # a blank line between cases
            group = r[0]
            line = f"{r[0]:>{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}"
            print(line.rstrip())
        print("\ntargets")
        width = max((len(t[0]) for t in self.targets), default=0)
        for what, value, limit, note, unit in self.targets:
            at_least = unit.endswith("/s")
            if unit == "%":
                shown = f"{value:.2%} <= {limit:.0%}"
            else:
                digits = 1 if unit.endswith("/s") else 0 if "MiB" in unit else 2
                sign = ">=" if at_least else "<="
                shown = f"{value:.{digits}f}{unit} {sign} {limit:g}{unit}"
            met = value >= limit if at_least else value <= limit
            verdict = "met" if met else "NOT met"
            print(f"  {what:<{width}}  {shown:>24}  {verdict} {note}".rstrip())


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


def attempt(report: Report, label: str, work: Callable[[], Any]) -> Any:
    """``work()``, or None after a row saying why it failed (an older library may lack
    a command, an option or a call), so that one failure does not end the run."""
    try:
        return work()
    except Exception as error:
        lines = str(error).strip().splitlines() or [type(error).__name__]
        report.row(label, "failed", lines[-1][:100])
        return None


def stat_all(folder: Path) -> None:
    """The floor of a warm listing: find the files and stat each one."""
    for entry in os.scandir(folder):
        entry.stat()


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


def fresh(command: list[str | Path]) -> str:
    """Run ``command`` in a fresh process and return its output. It is started by a
    shell: Linux carries a parent's peak RSS into a child it starts (so ru_maxrss would
    start at this process's peak), but not into a grandchild. It runs in a temporary
    folder and, through $PYTHONPATH (set in `main`), imports the same jsonl_session."""
    argv = ["/bin/sh", "-c", '"$@"; exit $?', "sh", *map(str, command)]
    done = subprocess.run(argv, cwd=tempfile.gettempdir(), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"subprocess failed:\n{done.stderr}")
    return done.stdout


def python(script: str, *args: str | Path) -> str:
    """Run a Python ``script`` in a fresh process (see `fresh`); return its output."""
    return fresh([sys.executable, "-c", script, *args])


def measure(
    runs: int, what: str, *args: str | Path, setup: Callable[[], object] | None = None
) -> dict[str, Any]:
    """The best of ``runs`` fresh processes doing MEASURE's ``what``, with the largest
    peak RSS (MiB) of them."""
    best: dict[str, Any] = {}
    top = 0.0
    for _ in range(runs):
        if setup is not None:
            setup()
        result = json.loads(python(MEASURE, what, *args).splitlines()[-1])
        top = max(top, result["peak"])
        if not best or result["seconds"] < best["seconds"]:
            best = result
    return best | {"peak": top}


def cli(
    runs: int, *args: str | Path, out: Path | None = None, setup: Callable[[], object] | None = None
) -> dict[str, Any]:
    """`python -m jsonl_session ARGS`, its standard output to /dev/null: the best time of
    ``runs`` and its peak RSS. ``out``, a file the command writes, is removed before each
    run (a command does not replace a file without --force, which older ones lack)."""

    def prepare() -> None:
        if out is not None:
            out.unlink(missing_ok=True)
        if setup is not None:
            setup()

    return measure(runs, "cli", os.devnull, *args, setup=prepare)


def peak_rss(what: str, path: Path) -> tuple[float, float]:
    """(baseline, peak) ru_maxrss in MiB of a fresh process that loads ``path``: open +
    context with the cache off ("session"), or decoding every line ("orjson")."""
    args = ("context", path, "off") if what == "session" else ("decode", path)
    result = measure(1, *args)
    return result["base"], result["peak"]


def clear_cache(cache_dir: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(cache_dir, ignore_errors=True)


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
    from jsonl_session.catalog.parallel import usable_cores
    from jsonl_session.catalog.search import search_sessions

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
        report.target(f"{verb} first run with cache / no cache", first / cold, 1.3, note.strip())
        if verb == "list_sessions":
            report.target(f"{verb} cold / orjson decode-all", cold / decode, 0.20, unit="%")
            report.target(
                f"{verb} warm / orjson decode-all", warm / decode, 0.02, note.strip(), unit="%"
            )

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


def big_session(folder: Path, mib: float) -> tuple[Path, dict[str, Any]]:
    """A generated session of about ``mib`` MiB, for the big and pi sections."""
    from generate import write_session

    path = folder / "big.jsonl"
    entries = max(100, round(mib * 2**20 / BYTES_PER_ENTRY))
    return path, write_session(path, entries, seed=17)


def bench_big(
    report: Report, path: Path, facts: dict[str, Any], cache_dir: Path, runs: int
) -> None:
    mib = facts["bytes"] / 2**20
    report.group = f"big {facts['entries']:,}"
    report.row(
        "file",
        f"{mib:.1f} MiB",
        f"{facts['entries']:,} entries, {facts['branches']} branches, "
        f"{facts['compactions']} compactions",
    )
    report.fresh_floors(path, runs)
    decode = report.floors["decode"]
    clear = clear_cache(cache_dir)

    def library(label: str, *args: str, setup: Callable[[], None] | None = None) -> Any:
        result = attempt(report, label, lambda: measure(runs, *args, setup=setup))
        if result is not None:
            report.measured(label, result)
        return result

    opened = library("open + context, no cache", "context", str(path), "off")
    first = library("first open + context, empty cache", "context", str(path), "on", setup=clear)
    library("cached reopen + context", "context", str(path), "on")
    if first is not None:
        report.target(
            "big: first open + context, empty cache / orjson decode", first["seconds"] / decode, 1
        )
    library("tree (library, cache warm; open included)", "tree", str(path), "on")
    stats = attempt(report, "stats", lambda: measure(runs, "stats", path, "off"))
    if stats is not None:
        ratio = stats["seconds"] / stats["open"]
        report.measured(
            "stats: open + token_breakdown, no cache", stats, f"  {ratio:.2f}x its open"
        )
        report.target("big: stats (open + token_breakdown) / open", ratio, 2)

    out = path.with_name("export.out")
    commands: list[tuple[str, list[str | Path], Path | None]] = [
        ("tree (CLI)", ["tree", path], None),
        ("stats --json (CLI)", ["stats", "--json", path], None),
        *(
            (f"export -f {kind} -o FILE (CLI)", ["export", "-f", kind, "-o", out, path], out)
            for kind in ("markdown", "html", "json")
        ),
        (
            "export -f markdown --redact -o FILE (CLI)",
            ["export", "-f", "markdown", "--redact", "-o", out, path],
            out,
        ),
        ("textconv > /dev/null (CLI)", ["textconv", path], None),
    ]
    for label, args, written in commands:
        result = attempt(
            report, label, lambda args=args, written=written: cli(runs, *args, out=written)
        )
        if result is None:
            continue
        seconds, peak = result["seconds"], result["peak"]
        size = f"  wrote {written.stat().st_size / 2**20:.0f} MiB" if written else ""
        if label.startswith("stats") and opened is not None:
            ratio = seconds / opened["seconds"]
            report.measured(label, result, f"  {ratio:.2f}x open + context")
            report.target("big: stats --json (CLI) / open + context, no cache", ratio, 2)
            continue
        report.measured(label, result, size)
        if label.startswith(("export", "textconv")):
            short = label.removesuffix(" (CLI)")
            report.target(f"big: {short}: peak RSS", peak, PEAK_LIMIT_MIB, unit=" MiB")
            report.target(f"big: {short}: time / orjson decode", seconds / decode, 2)
        if written is not None:
            written.unlink(missing_ok=True)


def bench_pi(
    report: Report, path: Path, facts: dict[str, Any], folder: Path, cache_dir: Path, runs: int
) -> None:
    report.group = f"pi {facts['entries']:,}"
    node = shutil.which("node")
    if node is None or not (PI_PEER / PI_PACKAGE).is_dir():
        why = "no node on PATH" if node is None else f"no pi 1.5.2 in {PI_PEER}"
        report.row(
            "pi 1.5.2 open + context", "skipped", f"{why} (see ../shared/tools/pi15/README.md)"
        )
        return
    script = folder / "pi_open.mjs"
    script.write_text(PI_OPEN)
    (folder / "pi-sessions").mkdir(exist_ok=True)
    before = path.stat()
    pi: dict[str, Any] = {}
    for _ in range(runs):
        done = attempt(
            report,
            "pi 1.5.2 open + context",
            lambda: fresh([node, script, PI_PEER, path, folder / "pi-sessions"]),
        )
        if done is None:
            return
        result = json.loads(done.splitlines()[-1])
        if not pi or result["seconds"] < pi["seconds"]:
            pi = result
    after = path.stat()
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        report.row("pi changed the file", "warning", "the measures after it see pi's file")
    report.row(
        "pi 1.5.2 SessionManager.open + buildSessionContext",
        f"{pi['seconds']:.4f} s",
        f"peak {pi['peak']:.0f} MiB  {pi['messages']} messages",
    )
    clear = clear_cache(cache_dir)
    for label, cache, setup in (
        ("ours: first open + context, empty cache", "on", clear),
        ("ours: open + context, no cache", "off", None),
    ):
        ours = attempt(
            report,
            label,
            lambda cache=cache, setup=setup: measure(runs, "context", path, cache, setup=setup),
        )
        if ours is None:
            continue
        ratio = ours["seconds"] / pi["seconds"]
        note = f"  {ratio:.2f}x pi  peak {ours['peak']:.0f} MiB  {ours.get('messages')} messages"
        report.row(label, f"{ours['seconds']:.4f} s", note.strip())
        if cache == "on":
            report.target("pi: first open + context, empty cache / pi 1.5.2", ratio, 0.25)


def secret(rng: random.Random, n: int) -> str:
    """A GitHub token (even ``n``) or an AWS access key id (odd ``n``)."""
    if n % 2 == 0:
        return "ghp_" + "".join(rng.choices(string.ascii_letters + string.digits, k=36))
    return "AKIA" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=16))


def filler(mib: float, secret_every: int = 0, seed: int = 5) -> tuple[list[str], int, int]:
    """About ``mib`` MiB of code, logs and prose (generate.py's text pools) in pieces of
    1-20 KB; with ``secret_every``, a secret on a line of its own after about every that
    many bytes (the same text otherwise). Returns the pieces, their UTF-8 bytes and how
    many secrets they hold."""
    from generate import _pools

    pools = _pools()
    rng, keys = random.Random(seed), random.Random(seed + 1)
    pieces: list[str] = []
    size = planted = 0
    goal, next_secret = int(mib * 2**20), secret_every
    while size < goal:
        pool = pools.code if rng.random() < 0.7 else pools.prose
        at = rng.randrange(len(pool) - 20_000)
        pieces.append(pool[at : at + rng.randint(1_000, 20_000)])
        size += len(pieces[-1].encode())
        if secret_every and size >= next_secret:
            pieces.append(f"\n{secret(keys, planted)}\n")
            size += len(pieces[-1])
            planted += 1
            next_secret += secret_every
    return pieces, size, planted


def write_line_session(path: Path, pieces: list[str]) -> None:
    """A session of four messages: a user asks, the assistant calls a tool, the tool's
    result holds ``pieces`` as one text (written piece by piece), and an answer."""
    from generate import MODEL

    mark = "@@the-huge-text@@"
    usage = {"input": 900, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 940}
    usage["cost"] = {"input": 0.0027, "output": 0.0006, "cacheRead": 0, "cacheWrite": 0}
    call = {"type": "toolCall", "id": "toolu_01huge", "name": "bash"}
    call["arguments"] = {"command": "cat build.log"}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "What does the build log say?"}]},
        {"role": "assistant", "content": [call], **MODEL, "usage": usage, "stopReason": "toolUse"},
        {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": mark}],
            "isError": False,
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "The build passed; the log is long."}],
            **MODEL,
            "usage": usage,
            "stopReason": "stop",
        },
    ]
    header = {"type": "session", "version": 3, "id": "5ca1ab1e-0000-4000-8000-000000000017"}
    header |= {"timestamp": "2026-01-01T09:00:00.000Z", "cwd": "/home/u/project"}
    with open(path, "wb") as out:
        out.write(orjson.dumps(header) + b"\n")
        parent = None
        for n, message in enumerate(messages, 1):
            message["timestamp"] = 1_767_258_000_000 + n * 1000
            entry_id = f"{n:08x}"
            entry = {"type": "message", "id": entry_id, "parentId": parent}
            entry |= {"timestamp": f"2026-01-01T09:00:0{n}.000Z", "message": message}
            before, _, after = orjson.dumps(entry).partition(mark.encode())
            out.write(before)
            if after:  # the huge text, piece by piece: JSON escapes each character alone
                for piece in pieces:
                    out.write(orjson.dumps(piece)[1:-1])
                out.write(after)
            out.write(b"\n")
            parent = entry_id


def bench_line(report: Report, folder: Path, cache_dir: Path, mib: float, runs: int) -> None:
    report.group = f"line {mib:g} MiB"
    path = folder / "line.jsonl"
    pieces, size, planted = filler(mib, SECRET_EVERY)
    write_line_session(path, pieces)
    del pieces
    text = size / 2**20
    report.row(
        "file",
        f"{path.stat().st_size / 2**20:.1f} MiB",
        f"one tool result of {text:.1f} MiB, {planted} secrets (one every ~100 KB)",
    )
    report.fresh_floors(path, runs)
    stats = attempt(report, "stats", lambda: measure(runs, "stats", path, "off"))
    if stats is not None:
        rate = text / stats["seconds"]
        note = f"  {stats['seconds'] / stats['open']:.2f}x its open  {rate:.0f} MiB/s"
        report.measured("stats: open + token_breakdown, no cache", stats, note)
    out = path.with_name("line.md")
    plain: dict[str, Any] | None = None
    for label, args in (
        ("stats --json (CLI)", ["stats", "--json", path]),
        ("export -f markdown -o FILE (CLI)", ["export", "-f", "markdown", "-o", out, path]),
        (
            "export -f markdown --redact -o FILE (CLI)",
            ["export", "-f", "markdown", "--redact", "-o", out, path],
        ),
    ):
        written = out if label.startswith("export") else None
        result = attempt(report, label, lambda args=args, o=written: cli(runs, *args, out=o))
        out.unlink(missing_ok=True)
        if result is None:
            continue
        rate = text / result["seconds"]
        note = f"  {rate:.0f} MiB/s"
        if "--redact" in args:
            report.target("line: export --redact (MiB of text / s)", rate, 50, unit=" MiB/s")
            if plain is not None and result["seconds"] > plain["seconds"]:
                alone = text / (result["seconds"] - plain["seconds"])
                note += f"  (the redaction alone: {alone:.0f} MiB/s)"
        elif label.startswith("export"):
            plain = result
        report.measured(label, result, note)
    path.unlink()

    report.floors = {}

    def load() -> Callable[[str], Any]:
        from jsonl_session import redact_text

        return redact_text

    redact = attempt(report, "redact_text", load)
    if redact is None:
        return
    for name, every in (("no secrets", 0), ("a secret every ~100 KB", SECRET_EVERY)):
        pieces, size, planted = filler(mib, every)
        body = "".join(pieces)
        del pieces
        found: list[int] = []

        def work(body: str = body, found: list[int] = found) -> None:
            result = redact(body)
            counts = result[1] if isinstance(result, tuple) else {}
            found[:] = [sum(counts.values())]

        seconds = best_of(runs, work)
        rate = size / 2**20 / seconds
        report.row(
            f"redact_text, {name}",
            f"{rate:.1f} MiB/s",
            f"{seconds:.4f} s for {size / 2**20:.1f} MiB; "
            f"{found[0] if found else '?'} found, {planted} planted",
        )
        report.target(f"line: redact_text, {name}", rate, 50, unit=" MiB/s")
        del body


def bench_appends(report: Report, folder: Path, sizes: list[int], runs: int) -> None:
    from generate import write_session

    from jsonl_session import Session

    def message() -> dict[str, Any]:
        text = [{"type": "text", "text": "One more thing: rerun the tests → café"}]
        return {"role": "user", "content": text, "timestamp": int(time.time() * 1000)}

    one: dict[int, float] = {}
    take_in: dict[int, float] = {}
    for entries in sizes:
        report.group = f"append {entries:,}"
        path = folder / f"append-{entries}.jsonl"
        facts = write_session(path, entries, seed=entries + 3)
        report.row("file", f"{facts['bytes'] / 2**20:.1f} MiB", f"{entries:,} entries")

        def appends(path: Path = path, entries: int = entries) -> None:
            session = Session.open(path, fsync="never")
            session.append_message(message())  # the first one opens the file for writing
            times = []
            for _ in range(21):
                start = time.perf_counter()
                session.append_message(message())
                times.append(time.perf_counter() - start)
            one[entries] = statistics.median(times)
            report.row(
                "one append_message (median of 21, fsync never)", f"{one[entries] * 1e3:.3f} ms"
            )
            other = Session.open(path, fsync="never")
            best = float("inf")
            for _ in range(runs):
                for _ in range(1_000):
                    other.append_message(message())
                start = time.perf_counter()
                session.append_message(message())  # takes in the other's lines first
                best = min(best, time.perf_counter() - start)
            take_in[entries] = best
            report.row(
                "next append after another Session appended 1,000",
                f"{best * 1e3:.3f} ms",
                f"{best / one[entries]:.1f}x one append",
            )

        attempt(report, "appends", appends)
        path.unlink()
    if len(one) >= 2:
        small, large = min(one), max(one)
        what = f"appends: one append, {large:,} / {small:,} entries"
        report.target(what, one[large] / one[small], 2)
        report.group = "appends"
        ratio = take_in[large] / take_in[small]
        report.row(f"taking in 1,000 lines, {large:,} / {small:,} entries", f"{ratio:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"sections, comma-separated: {SECTIONS}"
    )
    parser.add_argument("--sizes", default="10000,100000", help="entries per file, comma-separated")
    parser.add_argument("--sessions", type=int, default=100, help="many: how many sessions")
    parser.add_argument("--session-entries", type=int, default=1000, help="many: entries each")
    parser.add_argument("--big-mb", type=float, default=100, help="big, pi: MiB of the session")
    parser.add_argument("--line-mb", type=float, default=20, help="line: MiB of the one text")
    parser.add_argument("--append-sizes", default="1000,300000", help="appends: entries")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--compact-every",
        type=int,
        default=None,
        metavar="N",
        help="sizes: compact every ~N entries instead of when the context window fills",
    )
    args = parser.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    if only - set(SECTIONS):
        parser.error(f"--only: unknown {sorted(only - set(SECTIONS))}; known: {SECTIONS}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # for `import generate`
    spec = importlib.util.find_spec("jsonl_session")  # found, not imported yet
    if spec is None or spec.origin is None:
        parser.error("jsonl_session is not importable (set PYTHONPATH)")
    library = str(Path(spec.origin).resolve().parents[1])
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [library, os.environ.get("PYTHONPATH")])
    )
    report = Report()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jsonl-session-scale-") as tmp:
        work, cache_dir = Path(tmp), Path(tmp) / "cache"
        os.environ["JSONL_SESSION_CACHE_DIR"] = str(cache_dir)  # before jsonl_session loads
        # Listing first, as a `list` command runs: in a fresh process (see bench_many).
        if "many" in only:
            bench_many(
                report, work / "many", cache_dir, args.sessions, args.session_entries, args.runs
            )
        if "sizes" in only:
            for size in (int(s) for s in args.sizes.split(",") if s.strip()):
                bench_size(report, size, work, cache_dir, args.runs, args.compact_every)
        if only & {"big", "pi"}:
            path, facts = big_session(work, args.big_mb)
            if "big" in only:
                bench_big(report, path, facts, cache_dir, args.runs)
            if "pi" in only:
                bench_pi(report, path, facts, work, cache_dir, args.runs)
            path.unlink()
        if "appends" in only:
            sizes = [int(s) for s in args.append_sizes.split(",") if s.strip()]
            bench_appends(report, work, sizes, args.runs)
        if "line" in only:
            bench_line(report, work, cache_dir, args.line_mb, args.runs)
    report.print()
    print(f"\n(best of {args.runs} runs; {time.perf_counter() - start:.0f} s in all)")


if __name__ == "__main__":
    main()
