"""The long run of the fault loops (tests/faults/): kill -9 at random moments of every
write path, every write path under RLIMIT_FSIZE and on a full tmpfs, eight writers
beside an unlocked one, and a death before every crash point of every write path
(once: those are not random); it prints what each loop counted and the totals.

Figures per loop: rounds, kills that landed, acknowledged entries, entries lost,
bytes lost, unloadable files, writes that failed after a fault, leftover temporary
files (session folder and cache), extra hard links, partial outputs, torn tails cut
or closed, lines of an unlocked writer fused with a fragment, and writes refused with
our error (or failing otherwise). Entries lost, bytes lost, unloadable files and
failed writes must be 0; the exit code is 1 if one is not.

    python benchmarks/faults.py [--rounds 60] [--appends 1000] [--only appends,migrate]
                                [--seed 16] [--keep]

The loops live in tests/faults/ (kill_loops.py, limit_loops.py, many_writers.py); the
tests there run the same loops with few rounds. The cache goes to a folder of the
temporary directory, set before jsonl_session is imported.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MUST_BE_ZERO = ("entries_lost", "bytes_lost", "unloadable", "failed_after", "unclean_errors")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=60, help="rounds of each loop")
    parser.add_argument("--appends", type=int, default=1000, help="appends per writer")
    parser.add_argument("--only", default="", help="comma-separated loop names")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="jsonl-session-faults-"))
    os.environ["JSONL_SESSION_CACHE_DIR"] = str(work / "cache")
    os.environ["PI_CODING_AGENT_DIR"] = str(work / "pi-agent")
    os.environ["JSONL_SESSION_FAULT_ROUNDS"] = str(options.rounds)
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "faults")]

    from crash_points import SCENARIOS, sweep
    from faultkit import Figures
    from kill_loops import LOOPS
    from limit_loops import full_disk, full_disk_unavailable, size_limits
    from many_writers import many_writers

    loops: dict[str, Callable[[Path, int, int], Figures]] = dict(LOOPS)
    loops["fsize"] = size_limits
    loops["full-disk"] = full_disk
    loops["writers"] = lambda folder, _rounds, seed: many_writers(
        folder, 8, options.appends, 1, seed
    )
    for scenario in SCENARIOS:  # every crash point once: they are not random
        loops[f"crash:{scenario}"] = functools.partial(sweep_once, sweep, scenario)
    chosen = [name for name in options.only.split(",") if name] or list(loops)
    print(f"work folder: {work}", flush=True)
    results: list[Figures] = []
    for name in chosen:
        folder = work / "loops" / name.replace(":", "-")
        folder.mkdir(parents=True)
        if name == "full-disk" and (reason := full_disk_unavailable(folder)):
            print(f"{name}: skipped: {reason}", flush=True)
            continue
        start = time.monotonic()
        figures = loops[name](folder, options.rounds, options.seed)
        print(f"[{time.monotonic() - start:.0f} s] {figures.summary()}", flush=True)
        results.append(figures)
    if not options.keep:
        shutil.rmtree(work, ignore_errors=True)
    return report(results)


def sweep_once(sweep: Callable[[Path, str], Any], scenario: str, folder: Path, *_: int) -> Any:
    return sweep(folder, scenario)


def report(results: Sequence[Any]) -> int:
    names = [f.name for f in fields(results[0]) if f.name not in ("loop", "notes")]
    totals = {name: sum(getattr(figures, name) for figures in results) for name in names}
    print("\ntotals:")
    for name, value in totals.items():
        flag = "  <-- must be 0" if name in MUST_BE_ZERO and value else ""
        print(f"  {name:22} {value}{flag}")
    return 1 if any(totals[name] for name in MUST_BE_ZERO) else 0


if __name__ == "__main__":
    sys.exit(main())
