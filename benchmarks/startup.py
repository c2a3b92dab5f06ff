"""How fast a command starts: small-file commands beside `python -c pass`, as ratios.

A command that works on a 7-line file spends almost all its time starting: the
interpreter, then the imports it needs. Each command runs as a whole process, --runs
times, in the same run as the yardstick `python -c pass` (and `python -c "import
jsonl_session"`, the library's own share), and the median is printed with its ratio
to the yardstick. The target (issue 11): each command at most 4x `python -c pass`.

    python benchmarks/startup.py [--runs 15] [--fixture fixtures/tool-calls.jsonl]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 4.0


def command_prefix() -> list[str]:
    """The installed `jsonl-session` script beside this interpreter, else `-m`."""
    script = Path(sys.executable).with_name("jsonl-session")
    if script.exists():
        return [str(script)]
    found = shutil.which("jsonl-session")
    return [found] if found else [sys.executable, "-m", "jsonl_session"]


def time_command(argv: list[str], runs: int) -> list[float]:
    env = dict(os.environ, JSONL_SESSION_NO_CACHE="1")
    subprocess.run(argv, check=True, capture_output=True, env=env)  # warm the page cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--fixture", default=str(ROOT / "fixtures" / "tool-calls.jsonl"))
    args = parser.parse_args()

    cli = command_prefix()
    cases: list[tuple[str, list[str], bool]] = [
        ("python -c pass", [sys.executable, "-c", "pass"], False),
        ("python -c 'import jsonl_session'", [sys.executable, "-c", "import jsonl_session"], False),
        ("jsonl-session --help", [*cli, "--help"], False),
        ("jsonl-session show", [*cli, "show", args.fixture], True),
        ("jsonl-session textconv", [*cli, "textconv", args.fixture], True),
        ("jsonl-session context", [*cli, "context", args.fixture], True),
    ]
    print(f"{args.runs} runs each, median (min-max); fixture {Path(args.fixture).name}")
    yardstick = 0.0
    met = True
    for label, argv, has_target in cases:
        times = time_command(argv, args.runs)
        median = statistics.median(times)
        if not yardstick:
            yardstick = median
        ratio = median / yardstick
        verdict = ""
        if has_target:
            ok = ratio <= TARGET_RATIO
            met = met and ok
            verdict = f"  target <= {TARGET_RATIO:.0f}x: {'met' if ok else 'NOT met'}"
        print(
            f"{label:36} {median * 1000:7.1f} ms ({min(times) * 1000:.1f}-"
            f"{max(times) * 1000:.1f})  {ratio:5.2f}x{verdict}"
        )
    print("all targets met" if met else "some targets not met")


if __name__ == "__main__":
    main()
