"""How fast a command starts: small-file commands beside `python -c pass`, as ratios.

A command that works on a 7-line file spends almost all its time starting: the
interpreter, then the imports it needs. Each command runs as a whole process, --runs
times, in the same run as two yardsticks: `python -c pass`, and the floor of any Typer
command line here (a one-command Typer app, written to a temporary folder, that takes
a file argument, a flag and a global option and prints the file's size: Typer imports
pydantic to check parameters, so no Typer command can start faster). The library's
own share (`import jsonl_session`) is shown too. Medians are printed with their ratio
to `python -c pass` and to the Typer floor, and for each command what it costs above
the floor (its own imports and work). The target (issue 11): each command at most 4x
`python -c pass`; the last lines say whether the Typer floor itself is above that.

    python benchmarks/startup.py [--runs 15] [--fixture fixtures/tool-calls.jsonl]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 4.0
FLOOR = "Typer floor (one-command app)"
LIBRARY = "python -c 'import jsonl_session'"

TYPER_FLOOR_APP = """
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False)


@app.callback()
def everywhere(no_cache: Annotated[bool, typer.Option("--no-cache")] = False) -> None:
    pass


@app.command()
def show(
    file: Annotated[Path, typer.Argument()],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    print(len(file.read_bytes()))


@app.command()
def other() -> None:
    pass


app()
"""


def command_prefix() -> list[str]:
    """`python -m jsonl_session` on this checkout (PYTHONPATH is set in time_command),
    so the tree this script sits in is measured, whatever is installed."""
    return [sys.executable, "-m", "jsonl_session"]


def time_command(argv: list[str], runs: int) -> list[float]:
    env = dict(os.environ, JSONL_SESSION_NO_CACHE="1", PYTHONPATH=str(ROOT))
    # As on a user's machine: compiled modules are kept (the first run writes them).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
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
    with tempfile.TemporaryDirectory() as folder:
        floor_app = Path(folder) / "typer_floor.py"
        floor_app.write_text(TYPER_FLOOR_APP)
        cases: list[tuple[str, list[str], bool]] = [
            ("python -c pass", [sys.executable, "-c", "pass"], False),
            (
                "Typer floor (one-command app)",
                [sys.executable, str(floor_app), "show", args.fixture],
                False,
            ),
            (
                "python -c 'import jsonl_session'",
                [sys.executable, "-c", "import jsonl_session"],
                False,
            ),
            ("jsonl-session --help", [*cli, "--help"], False),
            ("jsonl-session show", [*cli, "show", args.fixture], True),
            ("jsonl-session textconv", [*cli, "textconv", args.fixture], True),
            ("jsonl-session context", [*cli, "context", args.fixture], True),
        ]
        print(f"{args.runs} runs each, median (min-max); fixture {Path(args.fixture).name}")
        print(f"{'':36} {'median':>9} {'(min-max)':>15}  {'x pass':>6}  {'x floor':>7}")
        medians: dict[str, float] = {}
        verdicts: list[str] = []
        for label, argv, has_target in cases:
            times = time_command(argv, args.runs)
            median = medians[label] = statistics.median(times)
            per_pass = median / medians["python -c pass"]
            floor = medians.get(FLOOR)
            per_floor = f"{median / floor:7.2f}" if floor else f"{'':7}"
            print(
                f"{label:36} {median * 1000:6.1f} ms ({min(times) * 1000:5.1f}-"
                f"{max(times) * 1000:5.1f})  {per_pass:6.2f}  {per_floor}"
            )
            if has_target and floor:
                verdicts.append(
                    f"{label}: {per_pass:.2f}x python -c pass "
                    f"({'met' if per_pass <= TARGET_RATIO else 'NOT met'}), "
                    f"{(median - floor) * 1000:.0f} ms above the Typer floor"
                )
    floor_ratio = medians[FLOOR] / medians["python -c pass"]
    above = "above" if floor_ratio > TARGET_RATIO else "within"
    print(f"\nThe Typer floor is {floor_ratio:.2f}x python -c pass: {above} the 4x target.")
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
