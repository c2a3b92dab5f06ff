"""Reading a Claude Code transcript and its sub-agents, beside a pi file of the same
size, as a ratio (issue 13), with the floor of decoding every line measured in the
same run.

A realistic pi session (benchmarks/generate.py: tool rounds, thinking, outputs of
real sizes) is written as Claude Code writes transcripts (one line per content block,
tool results as user lines) by our own converter, cut to about --mb megabytes, with
three sub-agent transcripts beside it. Timed, best of --runs: `Session.open` +
`build_context` of the main transcript and each sub-agent (no cache: a foreign file
is always read whole), and the same for a pi file of the same total size; the floor
is reading the bytes and decoding every line with orjson.

    python benchmarks/dialects.py [--mb 2.8] [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from jsonl_session import Session, convert

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> object:
    spec = importlib.util.spec_from_file_location(
        "bench_generate", ROOT / "benchmarks" / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_generate"] = module
    spec.loader.exec_module(module)
    return module


def pi_file(path: Path, megabytes: float, seed: int) -> Path:
    """A generated pi session of about ``megabytes``."""
    generate = _generator()
    entries, target = 200, megabytes * 1e6
    for attempt in range(8):
        facts = generate.write_session(path, entries, seed=seed)  # type: ignore[attr-defined]
        if abs(facts["bytes"] - target) <= 0.03 * target or attempt == 7:
            return path
        entries = max(10, int(entries * target / max(facts["bytes"], 1)))
        path.unlink()
    return path


def claude_project(folder: Path, megabytes: float) -> tuple[Path, list[Path]]:
    """A Claude Code transcript of about ``megabytes`` and three sub-agents."""
    probe = pi_file(folder / "probe.jsonl", megabytes / 4, seed=7)
    written = convert(probe, "claude", folder / "probe-claude.jsonl", cache=False).path
    growth = written.stat().st_size / probe.stat().st_size  # Claude Code's lines are longer
    source = pi_file(folder / "source.jsonl", megabytes / growth, seed=7)
    main = convert(source, "claude", folder / "main.jsonl", cache=False).path
    agents = []
    for n in range(3):
        small = pi_file(folder / f"agent-source-{n}.jsonl", megabytes / 12, seed=20 + n)
        target = folder / "main" / "subagents" / f"agent-{n:08x}.jsonl"
        agents.append(convert(small, "claude", target, cache=False).path)
    return main, agents


def best(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def open_all(files: list[Path]) -> None:
    for path in files:
        Session.open(path, cache=False).build_context()


def decode_all(files: list[Path]) -> None:
    for path in files:
        for line in path.read_bytes().splitlines():
            if line.strip():
                orjson.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=2.8)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        main_file, agents = claude_project(folder, args.mb)
        claude_files = [main_file, *agents]
        total = sum(p.stat().st_size for p in claude_files)
        pi = pi_file(folder / "same-size-pi.jsonl", total / 1e6, seed=99)
        lines = sum(p.read_bytes().count(b"\n") for p in claude_files)
        print(
            f"Claude Code: main {main_file.stat().st_size / 1e6:.2f} MB + 3 sub-agents "
            f"{sum(p.stat().st_size for p in agents) / 1e6:.2f} MB, {lines} lines"
        )
        pi_lines = pi.read_bytes().count(b"\n")
        print(f"pi file:     {pi.stat().st_size / 1e6:.2f} MB, {pi_lines} lines")
        claude_s = best(args.runs, lambda: open_all(claude_files))
        pi_s = best(args.runs, lambda: open_all([pi]))
        floor_claude = best(args.runs, lambda: decode_all(claude_files))
        floor_pi = best(args.runs, lambda: decode_all([pi]))
    print(f"open + context, Claude Code + sub-agents: {claude_s * 1000:8.1f} ms")
    print(f"open + context, pi file of the same size: {pi_s * 1000:8.1f} ms")
    print(f"orjson floor, Claude Code files:          {floor_claude * 1000:8.1f} ms")
    print(f"orjson floor, pi file:                    {floor_pi * 1000:8.1f} ms")
    print(f"ratio Claude Code / pi:       {claude_s / pi_s:5.2f}x")
    print(f"ratio Claude Code / its floor: {claude_s / floor_claude:5.2f}x")


if __name__ == "__main__":
    main()
