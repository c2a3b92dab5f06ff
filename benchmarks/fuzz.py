"""The long fuzz run: damaged and hostile files through every public read path.

    python benchmarks/fuzz.py [--inputs N] [--seconds S] [--seed K] [--workers W]

Mutates the bundled fixtures (tests/fuzz/fuzzkit.py: bit flips, truncation, swapped,
doubled and dropped lines, invalid UTF-8, lone surrogates, huge and non-finite
numbers, hostile values of every type anywhere in an entry, deep nesting) and runs
every read path over each input: open with and without the cache, the context at
every entry, the three provider adapters, stats, every export with and without
redaction, textconv, listing, search, the value check, `doctor` and the MCP reads.
With ``--workers``, that many processes share the inputs, each from its own seed.
Prints the figures: inputs, unexpected
exceptions (by signature), our errors that do not name the file, the slowest input,
writes, cache disagreements. Exit 1 if any of those that must be 0 is not.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from fuzzkit import base_files, mutate, run_read_paths


@dataclass
class Tally:
    """What one worker saw."""

    inputs: int = 0
    failing: int = 0
    writes: int = 0
    disagreements: int = 0
    signatures: collections.Counter[str] = field(default_factory=collections.Counter)
    unnamed: collections.Counter[str] = field(default_factory=collections.Counter)
    slowest: tuple[float, str] = (0.0, "")


def fuzz(budget: int, seconds: float | None, seed: int) -> Tally:
    """Up to ``budget`` inputs (or ``seconds``) drawn from ``seed``, in this process."""
    bases = base_files()
    names = sorted(bases)
    rng = random.Random(seed)
    tally = Tally()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        while tally.inputs < budget:
            if seconds is not None and time.perf_counter() - started > seconds:
                break
            name = rng.choice(names)
            input_seed = rng.randrange(2**32)
            data = mutate(bases[name], random.Random(input_seed))
            folder = Path(scratch) / str(tally.inputs % 50)
            outcome = run_read_paths(data, folder / "sessions", folder / "cache")
            tally.inputs += 1
            tally.failing += bool(outcome.unexpected)
            tally.signatures.update(outcome.unexpected)
            tally.unnamed.update(outcome.unnamed)
            tally.writes += outcome.wrote
            tally.disagreements += outcome.cache_disagreed
            if outcome.seconds > tally.slowest[0]:
                where = f"{name} seed {input_seed} ({len(data):,} bytes)"
                tally.slowest = (outcome.seconds, where)
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=2_000)
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1, help="processes (each its own seed)")
    args = parser.parse_args()
    started = time.perf_counter()
    shares = [
        args.inputs // args.workers + (n < args.inputs % args.workers) for n in range(args.workers)
    ]
    if args.workers == 1:
        tallies = [fuzz(args.inputs, args.seconds, args.seed)]
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            runs = [
                pool.submit(fuzz, share, args.seconds, args.seed * 1_000 + n)
                for n, share in enumerate(shares)
            ]
            tallies = [run.result() for run in runs]
    elapsed = time.perf_counter() - started
    inputs = sum(t.inputs for t in tallies)
    signatures = sum((t.signatures for t in tallies), collections.Counter[str]())
    unnamed = sum((t.unnamed for t in tallies), collections.Counter[str]())
    writes = sum(t.writes for t in tallies)
    disagreements = sum(t.disagreements for t in tallies)
    slowest = max(t.slowest for t in tallies)
    print(f"inputs                   {inputs:,} in {elapsed:.0f} s ({inputs / elapsed:.1f}/s)")
    failing = sum(t.failing for t in tallies)
    print(f"unexpected exceptions    {sum(signatures.values())} in {failing} inputs")
    for signature, count in signatures.most_common():
        print(f"  {count:6}  {signature}")
    print(f"errors not naming file   {sum(unnamed.values())}")
    for message, count in unnamed.most_common(10):
        print(f"  {count:6}  {message}")
    print(f"slowest input            {slowest[0] * 1000:.0f} ms: {slowest[1]}")
    print(f"writes                   {writes}")
    print(f"cache disagreements      {disagreements}")
    return 1 if signatures or unnamed or writes or disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
