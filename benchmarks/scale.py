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
           cached; tree; stats (`token_breakdown` in one process and in one per core, and
           `stats --json`); every export
           (`export -f markdown|html|json -o FILE`, Markdown with --redact); `textconv`;
           `convert --to claude`, and `convert --to pi` of the Claude Code transcript
           that makes; `fork`, `doctor`, `show --json`, `tree --json` (measured, no
           target) (the commands with the cache warm).
  line     a session whose one tool result holds a --line-mb MiB text (a secret every
           ~100 KB): `stats`, Markdown export without and with --redact, HTML export
           and `textconv`, in MiB/s, with their peak RSS; and `redact_text` alone on
           that much text without secrets and with a secret every ~100 KB (a GitHub
           token or an AWS key id), in MiB/s.
  appends  for each --append-sizes N, one `Session.append_message` to a session of N
           entries (median of 21, fsync never), and the next append after another
           Session object appended 1,000 lines (which it takes in first).
  pi       pi 1.5.2's `SessionManager.open` + `buildSessionContext` on the big session
           (or on one session of each --pi-mb size), in node, beside ours and the
           decode floor. Needs node and the peer ../shared/tools/pi15/setup.sh builds
           ($PI15_PEER_DIR, default /tmp/pi15-peer); skipped, saying why, without.
           The targets: our first open + context with an empty cache <= 0.25x pi's,
           and <= 1x decoding every line.

Times are the best of --runs (time.perf_counter), each beside floors measured in the
same run on the same files: stat of every file (many); reading the bytes and splitting
lines; decoding every line with orjson (for big and line also with each decoded line
let go at once: keeping them all grows a 2 GB heap, whose time varies by more than 2x
from run to run on a virtual machine, so big's targets are judged against the lower
of the two); for many also checking every line is JSON with msgspec (pi counts only
the lines that parse, so an exact listing checks each one).
Commands run as `python -m jsonl_session ...`, timed from outside, with output to a
file or /dev/null. A fresh process's peak is its own ru_maxrss: Linux carries a
parent's peak into a child it starts, so each is started by a shell or a small wrapper.
"Cold" and "no cache" mean without the index cache; the files stay in the OS page
cache. It ends with the issue's targets and whether they are met.

The sections live in scale_many.py (sizes, many), scale_big.py (big, pi) and
scale_line.py (line, appends); what they share in scale_kit.py.

Files go to a temporary directory removed at the end, the cache to a folder of it:
$JSONL_SESSION_CACHE_DIR, set before jsonl_session is imported (deleting the folder
empties it). Fresh processes import the same jsonl_session as this one. Rows that need a
`cache=` keyword the library lacks say "(no cache support)"; a measure an older library
cannot do gives a "failed" row, and the run goes on.

    python benchmarks/scale.py [--only sizes,many,big,line,appends,pi] [--runs 3]
        [--sizes 10000,100000] [--sessions 100] [--session-entries 1000]
        [--big-mb 100] [--pi-mb 18,180] [--line-mb 20] [--append-sizes 1000,300000]

At issue 17's sizes, one section at a time (each needs a few GB of disk in $TMPDIR;
line, a few GB of memory: the 200 MiB text is held as a str, redacted into another):

    python benchmarks/scale.py --only many --sessions 100000 --session-entries 20 --runs 1
    python benchmarks/scale.py --only big,pi --big-mb 500 --runs 1
    python benchmarks/scale.py --only pi --pi-mb 18,180 --runs 5
    python benchmarks/scale.py --only line --line-mb 200 --runs 1
    python benchmarks/scale.py --only appends --append-sizes 1000,300000 --runs 3
    python benchmarks/scale.py --only sizes --sizes 10000,100000 --runs 3
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

from scale_big import bench_big, bench_pi, big_session
from scale_kit import (
    SECTIONS,
    Report,
)
from scale_line import bench_appends, bench_line
from scale_many import bench_many, bench_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"sections, comma-separated: {SECTIONS}"
    )
    parser.add_argument("--sizes", default="10000,100000", help="entries per file, comma-separated")
    parser.add_argument("--sessions", type=int, default=100, help="many: how many sessions")
    parser.add_argument("--session-entries", type=int, default=1000, help="many: entries each")
    parser.add_argument("--big-mb", type=float, default=100, help="big, pi: MiB of the session")
    parser.add_argument(
        "--pi-mb",
        default="",
        help="pi: MiB of each session measured beside pi, comma-separated (default: --big-mb)",
    )
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
        pi_sizes = [float(s) for s in args.pi_mb.split(",") if s.strip()]
        if "big" in only or ("pi" in only and not pi_sizes):
            path, facts = big_session(work, args.big_mb)
            if "big" in only:
                bench_big(report, path, facts, cache_dir, args.runs)
            if "pi" in only and not pi_sizes:
                bench_pi(report, path, facts, work, cache_dir, args.runs)
            path.unlink()
        if "pi" in only:
            for mib in pi_sizes:
                path, facts = big_session(work, mib, name="pi")
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
