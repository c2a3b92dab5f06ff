"""The long fuzz run: damaged and hostile files through every public read path.

    python benchmarks/fuzz.py [--inputs N] [--seconds S] [--seed K]

Mutates the bundled fixtures (tests/fuzz/fuzzkit.py: bit flips, truncation, swapped,
doubled and dropped lines, invalid UTF-8, lone surrogates, huge and non-finite
numbers, hostile values of every type anywhere in an entry, deep nesting) and runs
every read path over each input: open with and without the cache, the context at
every entry, the three provider adapters, stats, every export with and without
redaction, textconv, listing and search. Prints the figures: inputs, unexpected
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from fuzzkit import base_files, mutate, run_read_paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=2_000)
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bases = base_files()
    names = sorted(bases)
    rng = random.Random(args.seed)
    signatures: collections.Counter[str] = collections.Counter()
    unnamed: collections.Counter[str] = collections.Counter()
    inputs = failing = writes = disagreements = 0
    slowest = (0.0, "")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        while inputs < args.inputs:
            if args.seconds is not None and time.perf_counter() - started > args.seconds:
                break
            name = rng.choice(names)
            seed = rng.randrange(2**32)
            data = mutate(bases[name], random.Random(seed))
            folder = Path(scratch) / str(inputs % 50)
            outcome = run_read_paths(data, folder / "sessions", folder / "cache")
            inputs += 1
            failing += bool(outcome.unexpected)
            signatures.update(outcome.unexpected)
            unnamed.update(outcome.unnamed)
            writes += outcome.wrote
            disagreements += outcome.cache_disagreed
            if outcome.seconds > slowest[0]:
                slowest = (outcome.seconds, f"{name} seed {seed} ({len(data):,} bytes)")
    elapsed = time.perf_counter() - started
    print(f"inputs                   {inputs:,} in {elapsed:.0f} s ({inputs / elapsed:.1f}/s)")
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
