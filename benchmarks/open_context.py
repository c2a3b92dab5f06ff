"""Open + context on a large session, beside the floors measured in the same run.

Prints seconds for: reading the file and splitting lines (floor), decoding every line
with orjson (floor), `load_entries` (envelopes only), `Session.open` + `build_context`,
and the ratios between them. Usage: python benchmarks/open_context.py [ENTRIES]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from jsonl_session import Session, load_entries


def write_session(path: Path, entries: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    lines = [
        orjson.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "bench",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": "/bench",
            }
        )
    ]
    parent = None
    for n in range(entries):
        entry_id = f"{n:08x}"
        kind = n % 4
        if kind == 0:
            message = {"role": "user", "content": "please " * rng.randint(5, 60), "timestamp": n}
        elif kind in (1, 3):
            message = {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm " * rng.randint(10, 200)},
                    {
                        "type": "toolCall",
                        "id": f"call{n}",
                        "name": "read",
                        "arguments": {"path": f"src/file{n}.py"},
                    },
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-bench",
                "usage": {"input": 1, "output": 1, "totalTokens": 2},
                "stopReason": "toolUse",
                "timestamp": n,
            }
        else:
            size = int(min(rng.lognormvariate(5.7, 1.6), 200_000))
            message = {
                "role": "toolResult",
                "toolCallId": f"call{n - 1}",
                "toolName": "read",
                "content": [{"type": "text", "text": "x" * size}],
                "isError": False,
                "timestamp": n,
            }
        lines.append(
            orjson.dumps(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": message,
                }
            )
        )
        parent = entry_id
    path.write_bytes(b"\n".join(lines) + b"\n")


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    entries = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.jsonl"
        write_session(path, entries)
        size_mb = path.stat().st_size / 2**20
        split = best_of(3, lambda: path.read_bytes().split(b"\n"))
        decode_all = best_of(
            3, lambda: [orjson.loads(line) for line in path.read_bytes().split(b"\n") if line]
        )
        load = best_of(3, lambda: load_entries(path))
        open_context = best_of(3, lambda: Session.open(path).build_context())
    print(f"{entries} entries, {size_mb:.1f} MiB")
    print(f"read + split (floor)        {split:7.3f} s")
    print(f"orjson every line (floor)   {decode_all:7.3f} s")
    print(f"load_entries (envelopes)    {load:7.3f} s  {load / split:5.2f}x split")
    print(
        f"Session.open + context      {open_context:7.3f} s  {open_context / split:5.2f}x split, "
        f"{open_context / decode_all:5.2f}x orjson"
    )


if __name__ == "__main__":
    main()
