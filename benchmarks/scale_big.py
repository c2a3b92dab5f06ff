"""scale.py's sections big (one big session: open, tree, stats, every export,
textconv, time and peak RSS) and pi (pi 1.5.2's open + context on the same file)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scale_kit import (
    BYTES_PER_ENTRY,
    PEAK_LIMIT_MIB,
    PI_OPEN,
    PI_PACKAGE,
    PI_PEER,
    Report,
    attempt,
    clear_cache,
    cli,
    fresh,
    measure,
)


def big_session(folder: Path, mib: float, name: str = "big") -> tuple[Path, dict[str, Any]]:
    """A generated session of about ``mib`` MiB, for the big and pi sections."""
    from generate import write_session

    path = folder / f"{name}.jsonl"
    entries = max(100, round(mib * 2**20 / BYTES_PER_ENTRY))
    return path, write_session(path, entries, seed=17)


def bench_big(
    report: Report, path: Path, facts: dict[str, Any], cache_dir: Path, runs: int
) -> None:
    mib = facts["bytes"] / 2**20
    report.group = f"big {facts['entries']:,}"
    report.row(
        "file",
        f"{mib:.1f} MiB",
        f"{facts['entries']:,} entries, {facts['branches']} branches, "
        f"{facts['compactions']} compactions",
    )
    report.fresh_floors(path, runs)
    # The targets are judged against the lower of the two decode floors: keeping every
    # decoded line grows a heap of 2 GB, whose time varies by more than 2x from run to
    # run on a virtual machine; letting each go does not.
    decode = min(report.floors["decode"], report.floors["decode-each"])
    clear = clear_cache(cache_dir)

    def library(label: str, *args: str, setup: Callable[[], None] | None = None) -> Any:
        result = attempt(report, label, lambda: measure(runs, *args, setup=setup))
        if result is not None:
            report.measured(label, result)
        return result

    opened = library("open + context, no cache", "context", str(path), "off")
    first = library("first open + context, empty cache", "context", str(path), "on", setup=clear)
    library("cached reopen + context", "context", str(path), "on")
    if first is not None:
        report.target(
            "big: first open + context, empty cache / orjson decode", first["seconds"] / decode, 1
        )
    library("tree (library, cache warm; open included)", "tree", str(path), "on")
    from jsonl_session.processes import usable_cores

    # stats must decode every message line at least once: its floor is its open plus
    # decoding every line (shared by the cores, for the spread measure)
    for what, label, cores in (
        ("stats", "one process", 1),
        ("stats-spread", "a process per core", usable_cores()),
    ):
        stats = attempt(report, what, lambda what=what: measure(runs, what, path, "off"))
        if stats is None:
            continue
        ratio = stats["seconds"] / stats["open"]
        floor = (stats["open"] + report.floors["decode-each"] / cores) / stats["open"]
        report.measured(
            f"stats: open + token_breakdown, no cache, {label}",
            stats,
            f"  {ratio:.2f}x its open  floor {floor:.2f}x (open + decode-each"
            + (f" / {cores} cores)" if cores > 1 else ")"),
        )
        report.target(f"big: stats (open + token_breakdown, {label}) / open", ratio, 2)
        report.target(f"big: stats ({label}) / its floor", ratio / floor, 1)

    out = path.with_name("export.out")
    # `stats` keeps the figures it measured in the cache record: each of its runs starts
    # from the record as the open left it, or all but the first would read them back
    kept = cache_dir.with_name(cache_dir.name + "-before-stats")
    shutil.rmtree(kept, ignore_errors=True)
    if cache_dir.is_dir():
        shutil.copytree(cache_dir, kept)

    def before_stats() -> None:
        shutil.rmtree(cache_dir, ignore_errors=True)
        if kept.is_dir():
            shutil.copytree(kept, cache_dir)

    claude = path.with_name("claude.jsonl")  # (made below)
    commands: list[tuple[str, list[str | Path], Path | None]] = [
        ("tree (CLI)", ["tree", path], None),
        ("stats --json (CLI)", ["stats", "--json", path], None),
        *(
            (f"export -f {kind} -o FILE (CLI)", ["export", "-f", kind, "-o", out, path], out)
            for kind in ("markdown", "html", "json")
        ),
        (
            "export -f markdown --redact -o FILE (CLI)",
            ["export", "-f", "markdown", "--redact", "-o", out, path],
            out,
        ),
        ("textconv > /dev/null (CLI)", ["textconv", path], None),
        # every branch as a Claude Code transcript, then that transcript (640 MB) as pi:
        # a file of another agent is read whole into pi entries, then written as it goes
        ("convert --to claude -o FILE (CLI)", ["convert", "--to", "claude", "-o", out, path], out),
        (
            "convert --to pi -o FILE, of that Claude transcript (CLI)",
            ["convert", "--to", "pi", "-o", out, claude],
            out,
        ),
        # measured, without a target of the issue's: a fork of the active path, the
        # check of every value, and the two JSON views that hold every entry or node
        ("fork -o FILE (CLI)", ["fork", "-o", out, path], out),
        ("doctor (CLI)", ["doctor", path], None),
        ("show --json > /dev/null (CLI)", ["show", "--json", path], None),
        ("tree --json > /dev/null (CLI)", ["tree", "--json", path], None),
    ]
    claude.unlink(missing_ok=True)
    attempt(report, "a Claude Code transcript of it", lambda: _claude_copy(path, claude))
    for label, args, written in commands:
        if claude in args and not claude.exists():
            continue  # (said why above)
        setup = before_stats if label.startswith("stats") else None
        result = attempt(
            report,
            label,
            lambda args=args, written=written, setup=setup: cli(
                runs, *args, out=written, setup=setup
            ),
        )
        if result is None:
            continue
        seconds, peak = result["seconds"], result["peak"]
        size = f"  wrote {written.stat().st_size / 2**20:.0f} MiB" if written else ""
        if label.startswith("stats") and opened is not None:
            ratio = seconds / opened["seconds"]
            report.measured(label, result, f"  {ratio:.2f}x open + context")
            report.target("big: stats --json (CLI) / open + context, no cache", ratio, 2)
            continue
        report.measured(label, result, size)
        if label.startswith(("export", "textconv", "convert")):
            short = label.removesuffix(" (CLI)")
            report.target(f"big: {short}: peak RSS", peak, PEAK_LIMIT_MIB, unit=" MiB")
            report.target(f"big: {short}: time / orjson decode", seconds / decode, 2)
        if written is not None:
            written.unlink(missing_ok=True)
    claude.unlink(missing_ok=True)


def _claude_copy(path: Path, claude: Path) -> None:
    """The session as a Claude Code transcript, made once for the convert measures
    (by the library; an older one without convert fails, which `attempt` reports)."""
    from jsonl_session import convert

    convert(path, "claude", claude, cache=False)


def bench_pi(
    report: Report, path: Path, facts: dict[str, Any], folder: Path, cache_dir: Path, runs: int
) -> None:
    report.group = f"pi {facts['entries']:,}"
    mib = facts["bytes"] / 2**20
    node = shutil.which("node")
    if node is None or not (PI_PEER / PI_PACKAGE).is_dir():
        why = "no node on PATH" if node is None else f"no pi 1.5.2 in {PI_PEER}"
        report.row(
            "pi 1.5.2 open + context", "skipped", f"{why} (see ../shared/tools/pi15/README.md)"
        )
        return
    script = folder / "pi_open.mjs"
    script.write_text(PI_OPEN)
    (folder / "pi-sessions").mkdir(exist_ok=True)
    before = path.stat()
    pi: dict[str, Any] = {}
    for _ in range(runs):
        done = attempt(
            report,
            "pi 1.5.2 open + context",
            lambda: fresh([node, script, PI_PEER, path, folder / "pi-sessions"]),
        )
        if done is None:
            return
        result = json.loads(done.splitlines()[-1])
        if not pi or result["seconds"] < pi["seconds"]:
            pi = result
    after = path.stat()
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        report.row("pi changed the file", "warning", "the measures after it see pi's file")
    report.row(
        "pi 1.5.2 SessionManager.open + buildSessionContext",
        f"{pi['seconds']:.4f} s",
        f"peak {pi['peak']:.0f} MiB  {pi['messages']} messages",
    )
    floor = attempt(report, "decode-each", lambda: measure(runs, "decode-each", path))
    if floor is not None:
        report.row(
            "floor: orjson decode every line, each let go",
            f"{floor['seconds']:.4f} s",
            f"{mib:.1f} MiB",
        )
    clear = clear_cache(cache_dir)
    for label, cache, setup in (
        ("ours: first open + context, empty cache", "on", clear),
        ("ours: open + context, no cache", "off", None),
    ):
        ours = attempt(
            report,
            label,
            lambda cache=cache, setup=setup: measure(runs, "context", path, cache, setup=setup),
        )
        if ours is None:
            continue
        ratio = ours["seconds"] / pi["seconds"]
        note = f"  {ratio:.2f}x pi  peak {ours['peak']:.0f} MiB  {ours.get('messages')} messages"
        if floor is not None:
            note += f"  {ours['seconds'] / floor['seconds']:.2f}x decode-each"
        report.row(label, f"{ours['seconds']:.4f} s", note.strip())
        if cache == "on":
            size = f"{mib:.0f} MiB"
            report.target(f"pi {size}: first open + context, empty cache / pi 1.5.2", ratio, 0.25)
            if floor is not None:
                report.target(
                    f"pi {size}: first open + context, empty cache / orjson decode",
                    ours["seconds"] / floor["seconds"],
                    1,
                )
