"""Scale beyond benchmarks/scale.py: many small sessions, one huge session, one huge
line, appends to long sessions, and pi 1.5.2 on the same file; each figure beside a
floor measured in the same run, with time and peak memory, and the issue's targets.

    python benchmarks/scale_big.py [--only many,big,line,appends,pi]
        [--sessions 100000] [--big-mb 500] [--line-mb 200] [--append-sizes 1000,300000]

Floors: ``stat`` of every file; reading and splitting the bytes into lines; decoding
every line with orjson. Commands run as the CLI does (``python -m jsonl_session``) in
a fresh process each, whose peak RSS is read from the kernel after it exits; library
calls are timed in this process. Files go to a temporary folder removed at the end,
and the index cache to a folder of it ($JSONL_SESSION_CACHE_DIR), so the user's cache
is left alone. pi runs only when node and the pi 1.5.2 peer (../shared/tools/pi15,
``bash setup.sh``) are there; otherwise its row says why not.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import SEARCH_WORD, write_session

ROOT = Path(__file__).resolve().parents[1]
PI_PEER = Path(os.environ.get("PI15_PEER_DIR", "/tmp/pi15-peer"))
ROWS: list[tuple[str, str, str, str]] = []
TARGETS: list[tuple[str, float, float]] = []


def row(section: str, what: str, value: str, ratio: str = "") -> None:
    ROWS.append((section, what, value, ratio))
    print(f"  {section:>8}  {what:<52} {value:>14}  {ratio}", file=sys.stderr, flush=True)


def target(what: str, ratio: float, limit: float) -> None:
    TARGETS.append((what, ratio, limit))


def timed(work: Callable[[], object], runs: int = 1) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


MEASURE = r"""
import resource, subprocess, sys, time
started = time.perf_counter()
with open(sys.argv[1], "wb") as out:
    done = subprocess.run(sys.argv[2:], stdout=out)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(done.returncode, seconds, peak)
"""


def command(*args: str | Path, stdout: Path | None = None) -> tuple[float, float]:
    """Seconds and peak MB of ``python -m jsonl_session ARGS`` in a fresh process."""
    sink = str(stdout or os.devnull)
    cli = [sys.executable, "-m", "jsonl_session", *map(str, args)]
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, sink, *cli], capture_output=True, text=True, check=True
    )
    code, seconds, peak = done.stdout.split()
    if code != "0":
        raise SystemExit(f"{' '.join(cli)} exited {code}")
    return float(seconds), int(peak) / 1024


def read_split(files: list[Path]) -> None:
    for path in files:
        path.read_bytes().split(b"\n")


def decode_all(files: list[Path]) -> None:
    for path in files:
        for line in path.read_bytes().split(b"\n"):
            if line:
                orjson.loads(line)


# --- many small sessions ---------------------------------------------------------


def bench_many(work: Path, sessions: int) -> None:
    folder = work / "many"
    folder.mkdir()
    for n in range(sessions):
        write_session(folder / f"s{n:06d}.jsonl", 6, seed=n)
    files = sorted(folder.iterdir())
    mb = sum(p.stat().st_size for p in files) / 1e6
    row("many", f"{sessions:,} sessions of 6 entries", f"{mb:.0f} MB")
    stat_all = timed(lambda: [os.stat(p) for p in files], 3)
    split, decode = timed(lambda: read_split(files)), timed(lambda: decode_all(files))
    row("many", "floor: stat every file", f"{stat_all:.3f} s")
    row("many", "floor: read + split every file", f"{split:.3f} s")
    row("many", "floor: orjson decode every line", f"{decode:.3f} s")
    for verb, args in (("list", ["list", folder, "--json"]),
                       ("search", ["search", SEARCH_WORD, folder, "--json"])):  # fmt: skip
        cold, _ = command("--no-cache", *args)
        first, _ = command(*args)
        time.sleep(2.2)  # the index trusts a row once its file was quiet for 2 s
        warm, _ = command(*args)
        again, _ = command(*args)
        warm = min(warm, again)
        row("many", f"{verb}: no cache (CLI)", f"{cold:.2f} s", f"{cold / decode:.2f}x decode")
        row(
            "many",
            f"{verb}: first run, empty cache",
            f"{first:.2f} s",
            f"{first / cold:.2f}x no cache",
        )
        row("many", f"{verb}: warm cache", f"{warm:.2f} s", f"{warm / stat_all:.1f}x stat")
        target(f"{verb}: warm <= 3x stat", warm / stat_all, 3)
        target(f"{verb}: first run <= 1.3x no cache", first / cold, 1.3)
    # the same in this process: the listing's own work, without the CLI's start
    from jsonl_session import list_sessions, search_sessions

    cache = Path(os.environ["JSONL_SESSION_CACHE_DIR"])
    for verb, work_with in (
        ("list", lambda c: list_sessions(folder, cache=c)),
        ("search", lambda c: list(search_sessions(SEARCH_WORD, files, cache=c))),
    ):
        shutil.rmtree(cache, ignore_errors=True)
        cold = timed(lambda work_with=work_with: work_with(False))
        first = timed(lambda work_with=work_with: work_with(None))
        time.sleep(2.2)
        warm = timed(lambda work_with=work_with: work_with(None), 2)
        row("many", f"{verb}: no cache (library)", f"{cold:.2f} s")
        row(
            "many",
            f"{verb}: first run (library)",
            f"{first:.2f} s",
            f"{first / cold:.2f}x no cache",
        )
        row("many", f"{verb}: warm (library)", f"{warm:.2f} s", f"{warm / stat_all:.1f}x stat")
    startup, _ = command("--version")
    row("many", "the CLI starting (--version)", f"{startup:.2f} s")
    shutil.rmtree(folder)


# --- one huge session ------------------------------------------------------------


def bench_big(work: Path, megabytes: int) -> Path:
    path = work / "big.jsonl"
    facts = write_session(path, int(megabytes * 1e6 / 2150), seed=5)
    size = path.stat().st_size / 1e6
    row("big", f"session of {facts['entries']:,} entries", f"{size:.0f} MB")
    split, decode = timed(lambda: read_split([path])), timed(lambda: decode_all([path]))
    row("big", "floor: read + split lines", f"{split:.2f} s")
    row("big", "floor: orjson decode every line", f"{decode:.2f} s")
    from jsonl_session import Session

    cache = Path(os.environ["JSONL_SESSION_CACHE_DIR"])
    shutil.rmtree(cache, ignore_errors=True)
    opened = timed(lambda: Session.open(path, cache=False).build_context())
    first = timed(lambda: Session.open(path).build_context())
    reopen = timed(lambda: Session.open(path).build_context(), 3)
    session = Session.open(path)
    stats = timed(lambda: session.token_breakdown())
    tree = timed(lambda: session.tree())
    row("big", "open + context, no cache", f"{opened:.2f} s", f"{opened / decode:.2f}x decode")
    row("big", "open + context, empty cache", f"{first:.2f} s", f"{first / decode:.2f}x decode")
    row("big", "open + context, cached", f"{reopen:.2f} s", f"{reopen / decode:.2f}x decode")
    row("big", "tree", f"{tree:.2f} s")
    row(
        "big",
        "stats (token_breakdown) after open",
        f"{stats:.2f} s",
        f"{(opened + stats) / opened:.2f}x open",
    )
    target("first open + context <= 1x orjson decode", first / decode, 1)
    target("stats (open + breakdown) <= 2x open", (opened + stats) / opened, 2)
    out = work / "out"
    for name, args in (
        ("stats --json", ["stats", path, "--json"]),
        ("export markdown", ["export", "-f", "markdown", "-o", out, "--force", path]),
        ("export html", ["export", "-f", "html", "-o", out, "--force", path]),
        ("export json", ["export", "-f", "json", "-o", out, "--force", path]),
        ("export markdown --redact", ["export", "--redact", "-o", out, "--force", path]),
        ("textconv", ["textconv", path]),
    ):
        seconds, peak = command("--no-cache", *args)
        row(
            "big",
            f"{name} (CLI)",
            f"{seconds:.1f} s {peak:.0f} MB",
            f"{seconds / decode:.1f}x decode",
        )
        if name.startswith(("export", "textconv")):
            target(f"{name}: peak <= 256 MB", peak / 256, 1)
            target(f"{name}: time <= 2x decode", seconds / decode, 2)
    return path


# --- one huge line -----------------------------------------------------------------


def prose(size: int, rng: random.Random, secret_every: int = 0) -> str:
    words = ["the", "parser", "returns", "value", "import", "self", "path", "config",
             "error", "def", "x = 1", "for item in items:", "café", "→"]  # fmt: skip
    pieces, length, next_secret = [], 0, secret_every
    while length < size:
        line = " ".join(rng.choice(words) for _ in range(12))
        if secret_every and length >= next_secret:
            line += " token ghp_" + "".join(rng.choice("abcdefABCDEF0123456789") for _ in range(36))
            next_secret += secret_every
        pieces.append(line)
        length += len(line) + 1
    return "\n".join(pieces)


def bench_line(work: Path, megabytes: int) -> None:
    from jsonl_session import redact_text

    rng = random.Random(3)
    text = prose(megabytes * 1_000_000, rng)
    secrets = prose(megabytes * 1_000_000, rng, secret_every=100_000)
    for name, body in (("no secrets", text), ("a secret every 100 KB", secrets)):
        seconds = timed(lambda body=body: redact_text(body))
        rate = len(body.encode()) / 1e6 / seconds
        row("line", f"redact_text, {name}", f"{rate:.0f} MB/s")
        target(f"redaction >= 50 MB/s ({name})", 50 / rate, 1)
    path = work / "line.jsonl"
    header = {"type": "session", "version": 3, "id": "l1", "timestamp": "2026-01-01T00:00:00.000Z"}
    content = [{"type": "text", "text": secrets}]
    result = {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
              "content": content, "isError": False, "timestamp": 3}  # fmt: skip
    lines = [header, {"type": "message", "id": "t1", "parentId": None,
                      "timestamp": "2026-01-01T00:00:03.000Z", "message": result}]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    size = path.stat().st_size / 1e6
    row("line", "session holding one line of", f"{size:.0f} MB")
    decode = timed(lambda: decode_all([path]))
    row("line", "floor: orjson decode the line", f"{decode:.2f} s")
    for name, args in (("stats --json", ["stats", path, "--json"]),
                       ("export markdown --redact", ["export", "--redact", "-o", work / "l.md", "--force", path])):  # fmt: skip  # noqa: E501
        seconds, peak = command("--no-cache", *args)
        row("line", f"{name} (CLI)", f"{seconds:.1f} s {peak:.0f} MB", f"{size / seconds:.0f} MB/s")
    path.unlink()


# --- appends -----------------------------------------------------------------------


def bench_appends(work: Path, sizes: list[int]) -> None:
    from jsonl_session import Session

    per_append: dict[int, float] = {}
    for entries in sizes:
        path = work / f"a{entries}.jsonl"
        write_session(path, entries, seed=9)
        session = Session.open(path, fsync="never")
        session.append_message({"role": "user", "content": "warm", "timestamp": 1})
        count = 200
        started = time.perf_counter()
        for n in range(count):
            session.append_message({"role": "user", "content": f"m{n}", "timestamp": n})
        per_append[entries] = (time.perf_counter() - started) / count
        other = Session.open(path, fsync="never")
        for n in range(1_000):
            other.append_message({"role": "user", "content": f"o{n}", "timestamp": n})
        started = time.perf_counter()
        session.append_message({"role": "user", "content": "x", "timestamp": 1})
        take = time.perf_counter() - started
        row("appends", f"one append, {entries:,} entries", f"{per_append[entries] * 1000:.2f} ms")
        row("appends", f"taking in 1,000 appended lines, {entries:,}", f"{take * 1000:.0f} ms")
        path.unlink()
    small, large = per_append[min(sizes)], per_append[max(sizes)]
    target("one append, largest <= 2x smallest", large / small, 2)


# --- pi 1.5.2 ----------------------------------------------------------------------

PI_OPEN = r"""
const [peer, file] = process.argv.slice(1);
const { pathToFileURL } = await import("node:url");
const pkg = `${peer}/node_modules/@earendil-works/pi-coding-agent`;
const mod = await import(pathToFileURL(`${pkg}/dist/core/session-manager.js`).href);
const started = performance.now();
const manager = mod.SessionManager.open(file);
manager.buildSessionContext();
console.log((performance.now() - started) / 1000);
"""


def bench_pi(work: Path, path: Path | None) -> None:
    if path is None or shutil.which("node") is None or not PI_PEER.is_dir():
        why = "no big session" if path is None else f"node or {PI_PEER} missing"
        row("pi", "pi 1.5.2 open + context", f"skipped: {why}")
        return
    from jsonl_session import Session

    cache = Path(os.environ["JSONL_SESSION_CACHE_DIR"])
    shutil.rmtree(cache, ignore_errors=True)
    ours = timed(lambda: Session.open(path).build_context())
    try:
        done = subprocess.run(
            ["node", "--input-type=module", "-e", PI_OPEN, str(PI_PEER), str(path)],
            capture_output=True, text=True, check=True, timeout=600,
        )  # fmt: skip
    except subprocess.CalledProcessError as exc:
        row("pi", "pi 1.5.2 open + context", f"failed: {exc.stderr.strip()[-80:]}")
        return
    pi = float(done.stdout.split()[-1])
    row("pi", "pi 1.5.2 SessionManager.open + buildSessionContext", f"{pi:.2f} s")
    row("pi", "ours, first open + context (empty cache)", f"{ours:.2f} s", f"{ours / pi:.2f}x pi")
    target("first open + context <= 0.25x pi 1.5.2", ours / pi, 0.25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="many,big,line,appends,pi")
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--big-mb", type=int, default=500)
    parser.add_argument("--line-mb", type=int, default=200)
    parser.add_argument("--append-sizes", default="1000,300000")
    args = parser.parse_args()
    only = set(args.only.split(","))
    work = Path(tempfile.mkdtemp(prefix="jsonl-session-scale-"))
    os.environ["JSONL_SESSION_CACHE_DIR"] = str(work / "cache")
    try:
        if "many" in only:
            bench_many(work, args.sessions)
        big = bench_big(work, args.big_mb) if "big" in only else None
        if "pi" in only:
            bench_pi(work, big)
        if "line" in only:
            bench_line(work, args.line_mb)
        if "appends" in only:
            bench_appends(work, [int(n) for n in args.append_sizes.split(",")])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{'section':>8}  {'measure':<52} {'value':>14}  ratio")
    for section, what, value, ratio in ROWS:
        print(f"{section:>8}  {what:<52} {value:>14}  {ratio}".rstrip())
    print("\ntargets")
    for what, ratio, limit in TARGETS:
        verdict = "met" if ratio <= limit else "NOT met"
        print(f"  {what:<48} {ratio:8.2f} (limit {limit:g})  {verdict}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process {peak:.0f} MB")


if __name__ == "__main__":
    main()
