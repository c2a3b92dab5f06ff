"""scale.py's sections line (a session holding one huge text: stats, exports, and
redaction in MiB/s) and appends (one append, and taking in what another writer
appended, by session size)."""

from __future__ import annotations

import random
import statistics
import string
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from scale_kit import (
    SECRET_EVERY,
    Report,
    attempt,
    best_of,
    cli,
    measure,
)


def secret(rng: random.Random, n: int) -> str:
    """A GitHub token (even ``n``) or an AWS access key id (odd ``n``)."""
    if n % 2 == 0:
        return "ghp_" + "".join(rng.choices(string.ascii_letters + string.digits, k=36))
    return "AKIA" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=16))


def filler(mib: float, secret_every: int = 0, seed: int = 5) -> tuple[list[str], int, int]:
    """About ``mib`` MiB of code, logs and prose (generate.py's text pools) in pieces of
    1-20 KB; with ``secret_every``, a secret on a line of its own after about every that
    many bytes (the same text otherwise). Returns the pieces, their UTF-8 bytes and how
    many secrets they hold."""
    from generate import _pools

    pools = _pools()
    rng, keys = random.Random(seed), random.Random(seed + 1)
    pieces: list[str] = []
    size = planted = 0
    goal, next_secret = int(mib * 2**20), secret_every
    while size < goal:
        pool = pools.code if rng.random() < 0.7 else pools.prose
        at = rng.randrange(len(pool) - 20_000)
        pieces.append(pool[at : at + rng.randint(1_000, 20_000)])
        size += len(pieces[-1].encode())
        if secret_every and size >= next_secret:
            pieces.append(f"\n{secret(keys, planted)}\n")
            size += len(pieces[-1])
            planted += 1
            next_secret += secret_every
    return pieces, size, planted


def write_line_session(path: Path, pieces: list[str]) -> None:
    """A session of four messages: a user asks, the assistant calls a tool, the tool's
    result holds ``pieces`` as one text (written piece by piece), and an answer."""
    from generate import MODEL

    mark = "@@the-huge-text@@"
    usage = {"input": 900, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 940}
    usage["cost"] = {"input": 0.0027, "output": 0.0006, "cacheRead": 0, "cacheWrite": 0}
    call = {"type": "toolCall", "id": "toolu_01huge", "name": "bash"}
    call["arguments"] = {"command": "cat build.log"}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "What does the build log say?"}]},
        {"role": "assistant", "content": [call], **MODEL, "usage": usage, "stopReason": "toolUse"},
        {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": mark}],
            "isError": False,
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "The build passed; the log is long."}],
            **MODEL,
            "usage": usage,
            "stopReason": "stop",
        },
    ]
    header = {"type": "session", "version": 3, "id": "5ca1ab1e-0000-4000-8000-000000000017"}
    header |= {"timestamp": "2026-01-01T09:00:00.000Z", "cwd": "/home/u/project"}
    with open(path, "wb") as out:
        out.write(orjson.dumps(header) + b"\n")
        parent = None
        for n, message in enumerate(messages, 1):
            message["timestamp"] = 1_767_258_000_000 + n * 1000
            entry_id = f"{n:08x}"
            entry = {"type": "message", "id": entry_id, "parentId": parent}
            entry |= {"timestamp": f"2026-01-01T09:00:0{n}.000Z", "message": message}
            before, _, after = orjson.dumps(entry).partition(mark.encode())
            out.write(before)
            if after:  # the huge text, piece by piece: JSON escapes each character alone
                for piece in pieces:
                    out.write(orjson.dumps(piece)[1:-1])
                out.write(after)
            out.write(b"\n")
            parent = entry_id


def bench_line(report: Report, folder: Path, cache_dir: Path, mib: float, runs: int) -> None:
    report.group = f"line {mib:g} MiB"
    path = folder / "line.jsonl"
    pieces, size, planted = filler(mib, SECRET_EVERY)
    write_line_session(path, pieces)
    del pieces
    text = size / 2**20
    report.row(
        "file",
        f"{path.stat().st_size / 2**20:.1f} MiB",
        f"one tool result of {text:.1f} MiB, {planted} secrets (one every ~100 KB)",
    )
    report.fresh_floors(path, runs)
    stats = attempt(report, "stats", lambda: measure(runs, "stats", path, "off"))
    if stats is not None:
        rate = text / stats["seconds"]
        note = f"  {stats['seconds'] / stats['open']:.2f}x its open  {rate:.0f} MiB/s"
        report.measured("stats: open + token_breakdown, no cache", stats, note)
    out = path.with_name("line.md")
    plain: dict[str, Any] | None = None
    for label, args in (
        ("stats --json (CLI)", ["stats", "--json", path]),
        ("export -f markdown -o FILE (CLI)", ["export", "-f", "markdown", "-o", out, path]),
        (
            "export -f markdown --redact -o FILE (CLI)",
            ["export", "-f", "markdown", "--redact", "-o", out, path],
        ),
        ("export -f html -o FILE (CLI)", ["export", "-f", "html", "-o", out, path]),
        ("textconv > /dev/null (CLI)", ["textconv", path]),
    ):
        written = out if label.startswith("export") else None
        result = attempt(report, label, lambda args=args, o=written: cli(runs, *args, out=o))
        out.unlink(missing_ok=True)
        if result is None:
            continue
        rate = text / result["seconds"]
        note = f"  {rate:.0f} MiB/s"
        if "--redact" in args:
            report.target("line: export --redact (MiB of text / s)", rate, 50, unit=" MiB/s")
            if plain is not None and result["seconds"] > plain["seconds"]:
                alone = text / (result["seconds"] - plain["seconds"])
                note += f"  (the redaction alone: {alone:.0f} MiB/s)"
        elif label.startswith("export -f markdown"):
            plain = result
        report.measured(label, result, note)
    path.unlink()

    report.floors = {}

    def load() -> Callable[[str], Any]:
        from jsonl_session import redact_text

        return redact_text

    redact = attempt(report, "redact_text", load)
    if redact is None:
        return
    for name, every in (("no secrets", 0), ("a secret every ~100 KB", SECRET_EVERY)):
        pieces, size, planted = filler(mib, every)
        body = "".join(pieces)
        del pieces
        found: list[int] = []

        def work(body: str = body, found: list[int] = found) -> None:
            result = redact(body)
            counts = result[1] if isinstance(result, tuple) else {}
            found[:] = [sum(counts.values())]

        seconds = best_of(runs, work)
        rate = size / 2**20 / seconds
        report.row(
            f"redact_text, {name}",
            f"{rate:.1f} MiB/s",
            f"{seconds:.4f} s for {size / 2**20:.1f} MiB; "
            f"{found[0] if found else '?'} found, {planted} planted",
        )
        report.target(f"line: redact_text, {name}", rate, 50, unit=" MiB/s")
        del body


def bench_appends(report: Report, folder: Path, sizes: list[int], runs: int) -> None:
    from generate import write_session

    from jsonl_session import Session

    def message() -> dict[str, Any]:
        text = [{"type": "text", "text": "One more thing: rerun the tests → café"}]
        return {"role": "user", "content": text, "timestamp": int(time.time() * 1000)}

    one: dict[int, float] = {}
    take_in: dict[int, float] = {}
    for entries in sizes:
        report.group = f"append {entries:,}"
        path = folder / f"append-{entries}.jsonl"
        facts = write_session(path, entries, seed=entries + 3)
        report.row("file", f"{facts['bytes'] / 2**20:.1f} MiB", f"{entries:,} entries")

        def appends(path: Path = path, entries: int = entries) -> None:
            session = Session.open(path, fsync="never")
            session.append_message(message())  # the first one opens the file for writing
            times = []
            for _ in range(21):
                start = time.perf_counter()
                session.append_message(message())
                times.append(time.perf_counter() - start)
            one[entries] = statistics.median(times)
            report.row(
                "one append_message (median of 21, fsync never)", f"{one[entries] * 1e3:.3f} ms"
            )
            other = Session.open(path, fsync="never")
            best = float("inf")
            for _ in range(runs):
                for _ in range(1_000):
                    other.append_message(message())
                start = time.perf_counter()
                session.append_message(message())  # takes in the other's lines first
                best = min(best, time.perf_counter() - start)
            take_in[entries] = best
            report.row(
                "next append after another Session appended 1,000",
                f"{best * 1e3:.3f} ms",
                f"{best / one[entries]:.1f}x one append",
            )

        attempt(report, "appends", appends)
        path.unlink()
    if len(one) >= 2:
        small, large = min(one), max(one)
        what = f"appends: one append, {large:,} / {small:,} entries"
        report.target(what, one[large] / one[small], 2)
        report.group = "appends"
        ratio = take_in[large] / take_in[small]
        report.row(f"taking in 1,000 lines, {large:,} / {small:,} entries", f"{ratio:.2f}x")
