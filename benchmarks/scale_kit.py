"""What benchmarks/scale.py's sections share: the report and its targets, timing (best
of runs, fresh processes with their peak RSS), the floors (stat, split, decode,
check every line), and the scripts run in fresh processes."""

from __future__ import annotations

import contextlib
import gc
import inspect
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import zlib
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
#   decode-each FILE         the same, each decoded line let go at once
#   open|context|tree|stats|stats-spread FILE on|off   Session.open (cache on or off),
#                            then that call (stats-spread: token_breakdown(workers=None))
#   list FOLDER | search FOLDER WORD   list_sessions / search_sessions of its files
#                            (found before the clock starts), with the cache
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
elif what in ("split", "decode", "decode-each"):
    import orjson
    base = peak()
    start = time.perf_counter()
    lines = Path(args[0]).read_bytes().split(b"\n")
    if what == "decode":
        decoded = [orjson.loads(line) for line in lines if line]
    elif what == "decode-each":  # none kept: no heap of 2 GB to grow (its time varies)
        for line in lines:
            if line:
                orjson.loads(line)
    result = {"seconds": time.perf_counter() - start, "base": base, "peak": peak()}
elif what in ("list", "search"):
    from jsonl_session import list_sessions, search_sessions, session_file_texts
    base = peak()
    folder = Path(args[0])
    files = session_file_texts(folder) if what == "search" else []
    start = time.perf_counter()
    if what == "list":
        found = len(list_sessions(folder))
    else:
        found = sum(1 for _ in search_sessions(args[1], files))
    result = {"seconds": time.perf_counter() - start, "base": base, "peak": peak()}
    result["found"] = found
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
    elif what == "stats-spread":  # one process per core, as the command measures
        kept = session.token_breakdown(workers=None)
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
            ("decode-each", "orjson decode every line, each let go"),
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


def stat_and_answer_all(folder: Path) -> list[Any]:
    """The floor of a warm `list_sessions` that answers with objects: find the files,
    stat each, and make what it returns for each (a SessionInfo, with its path as text
    and its two times in milliseconds), the facts taken from memory as if read from an
    index for free."""
    from jsonl_session import SessionInfo

    answers = []
    with os.scandir(folder) as entries:
        names = sorted(e.name for e in entries if e.name.endswith(".jsonl") and e.is_file())
    within = str(folder / "_")[:-1]
    for name in names:
        path = within + name
        info = os.stat(path)
        created, modified = info.st_mtime * 1000, info.st_mtime * 1000 + 1
        answers.append(
            SessionInfo(path, name, "/p", None, None, created, modified, 2, "first message")
        )
    answers.sort(key=lambda answer: (answer.modified_ms, answer.path_text), reverse=True)
    return answers


def read_kept_all(folder: Path, index: Path, word: bytes) -> int:
    """The floor of a warm search that keeps texts (catalog/search.py): stat every
    file, read every row's kept texts from the search ``index`` (500 at a time, as the
    search reads them), check each (a CRC-32 of its bytes, as the row's check makes)
    and look for ``word`` in its bytes lower-cased. How many may hold it."""
    stat_all(folder)
    held = 0
    with contextlib.closing(sqlite3.connect(f"file:{index}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT record FROM records")
        while part := rows.fetchmany(500):
            for (record,) in part:
                zlib.crc32(record)
                held += record.lower().find(word) >= 0
    return held


def read_kept_hits(folder: Path, index: Path, word: bytes) -> int:
    """The floor of a warm search that finds ``word`` in many files: that of
    `read_kept_all`, and for each place the word stands in a row's bytes lower-cased,
    a hit: the row's file and the 80 bytes around the place decoded (a search's hit
    also says which line and entry, which this leaves out). How many hits."""
    stat_all(folder)
    hits: list[tuple[str, str]] = []
    with contextlib.closing(sqlite3.connect(f"file:{index}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT file, record FROM records")
        while part := rows.fetchmany(500):
            for file, record in part:
                zlib.crc32(record)
                low = record.lower()
                at = low.find(word)
                while at >= 0:
                    around = record[max(0, at - 40) : at + len(word) + 40]
                    hits.append((file, around.decode("utf-8", "replace")))
                    at = low.find(word, at + len(word))
    return len(hits)


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
