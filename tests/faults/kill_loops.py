"""The kill -9 loops, one function per write path: appends, migrate, compact, fork,
export and the cache records written when a large file is read or listed. Each runs
rounds in ``folder`` until ``count`` kills landed and returns its `faultkit.Figures`;
a round starts fault_child.py, kills it at a random moment of its work (timed once,
uninterrupted), and audits what it left. Used by test_kill_loops.py (CI rounds) and
benchmarks/faults.py (the long run).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import orjson
from faultkit import (
    CACHE_TEMP_GLOB,
    Arg,
    Figures,
    KillClock,
    as_if_long_after,
    audit_session,
    check_acknowledged,
    count_leftovers,
    kill_rounds,
    run_child,
    start_child,
    stop_child,
    temps_in,
    timed,
    write_after,
)
from helpers_large import generate, loaded_key
from helpers_write import new_session

from jsonl_session import Session, list_sessions, load_entries

BIG_ENTRIES = 700  # about 1.5 MB: past the 1 MiB above which the index cache is kept


def big_v3(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return generate(path, BIG_ENTRIES)


def as_v2(v3: bytes) -> bytes:
    return v3.replace(b'"version":3', b'"version":2', 1)


def as_v1(v3: bytes) -> bytes:
    """The same talk as version 1 wrote it: no version, no ids, messages only."""
    lines = v3.splitlines()
    header = orjson.loads(lines[0])
    del header["version"]
    out = [orjson.dumps(header)]
    for line in lines[1:]:
        entry = orjson.loads(line)
        if entry["type"] == "message":
            del entry["id"], entry["parentId"]
            out.append(orjson.dumps(entry))
    return b"\n".join(out) + b"\n"


def appends(folder: Path, count: int, seed: int) -> Figures:
    """A child appending entries (now and then, or often, one of megabytes) is killed; a
    new file every 5 rounds, so each file also sees the torn tails earlier kills left
    (a kill can stop a long write() part way)."""
    rng = random.Random(seed)
    figures = Figures("kill -9 during appends")
    target = folder / "none"
    for n in kill_rounds(figures, count):
        if n % 5 == 0:
            target = new_session(folder / f"s{n}")[0].path
        before = target.read_bytes()
        big_share = 0.02 if n // 5 % 2 == 0 else 0.3  # every other file: many long writes
        args: list[Arg] = ["append", target, 1_000_000, rng.randrange(1 << 30), big_share]
        outcome = run_child(args, rng.uniform(0, 0.4))
        figures.killed += outcome.killed
        session = audit_session(figures, target, before)
        if session is not None:
            check_acknowledged(figures, session, [x for x in outcome.lines if x != "done"])
        write_after(figures, target)
        count_leftovers(figures, target.parent)
    return figures


def appends_beside_pi(folder: Path, count: int, seed: int) -> Figures:
    """`appends` while a pi-like writer (whole lines, O_APPEND, no lock) appends to the
    same file; both are killed. A kill that stops one of our long writes part way
    leaves a fragment the other writer's next line is fused with: its bytes stay in
    the file, but in a line that is not JSON (counted as fused_lines, not lost)."""
    rng = random.Random(seed)
    figures = Figures("kill -9 during appends beside an unlocked writer")
    target = folder / "none"
    for n in kill_rounds(figures, count):
        if n % 5 == 0:
            target = new_session(folder / f"s{n}")[0].path
        before = target.read_bytes()
        pi = start_child(["unlocked", target, 1_000_000, rng.randrange(1 << 30), 0.002])
        args: list[Arg] = ["append", target, 1_000_000, rng.randrange(1 << 30), 0.3]
        ours = run_child(args, rng.uniform(0, 0.4))
        pi.kill()
        theirs = stop_child(pi)
        figures.killed += ours.killed
        session = audit_session(figures, target, before)
        if session is not None:
            check_acknowledged(figures, session, [x for x in ours.lines if x != "done"])
            check_foreign(figures, session, target, theirs)
        write_after(figures, target)
        count_leftovers(figures, target.parent)
    return figures


def check_foreign(
    figures: Figures, session: Session, target: Path, acknowledged: list[str]
) -> None:
    """The unlocked writer's lines: loadable, or at least their bytes in the file."""
    figures.acknowledged += len(acknowledged)
    data = target.read_bytes()
    for entry_id in acknowledged:
        if session.get(entry_id) is not None:
            continue
        if b'"id":"%s"' % entry_id.encode() in data:
            figures.fused_lines += 1
            figures.note(
                f"round {figures.rounds}: unlocked writer's {entry_id} fused into a bad line"
            )
        else:
            figures.entries_lost += 1
            figures.note(f"round {figures.rounds}: unlocked writer's {entry_id} is gone")


def migrations(folder: Path, count: int, seed: int) -> Figures:
    """`jsonl-session migrate` of a 1.5 MB v1 or v2 file is killed; then migrating again
    must work and give a version-3 file."""
    rng = random.Random(seed)
    figures = Figures("kill -9 during migrate")
    v3 = big_v3(folder / "template.jsonl").read_bytes()
    originals = {"v1": as_v1(v3), "v2": as_v2(v3)}
    clocks = {}
    for name, data in originals.items():
        (folder / f"time-{name}.jsonl").write_bytes(data)
        clocks[name] = KillClock(timed(["cli", "migrate", folder / f"time-{name}.jsonl"]))
    for n in kill_rounds(figures, count):
        name = rng.choice(sorted(originals))
        target = folder / f"r{n}" / "old.jsonl"
        target.parent.mkdir()
        target.write_bytes(originals[name])
        clock = clocks[name]
        outcome = clock.saw(run_child(["cli", "migrate", target], clock.moment(rng)))
        figures.killed += outcome.killed
        audit_session(figures, target, originals[name])
        migrate_again(figures, target)
        count_leftovers(figures, target.parent)
    return figures


def migrate_again(figures: Figures, target: Path) -> None:
    from jsonl_session import JsonlSessionError

    try:
        with as_if_long_after():
            Session.open(target, fsync="never").migrate()
        version = orjson.loads(target.read_bytes().split(b"\n", 1)[0]).get("version")
    except JsonlSessionError as exc:
        figures.failed_after += 1
        figures.note(f"round {figures.rounds}: migrating again failed: {exc}")
        return
    if version != 3:
        figures.failed_after += 1
        figures.note(f"round {figures.rounds}: migrated again, header version is {version}")


def compactions(folder: Path, count: int, seed: int) -> Figures:
    """`jsonl-session compact --summarizer offline` of a 1.5 MB file is killed."""
    rng = random.Random(seed)
    figures = Figures("kill -9 during compact")
    original = big_v3(folder / "template.jsonl").read_bytes()
    (folder / "time.jsonl").write_bytes(original)
    clock = KillClock(timed(["cli", "compact", folder / "time.jsonl", "--summarizer", "offline"]))
    for n in kill_rounds(figures, count):
        target = folder / f"r{n}" / "s.jsonl"
        target.parent.mkdir()
        target.write_bytes(original)
        args: list[Arg] = ["cli", "compact", target, "--summarizer", "offline"]
        outcome = clock.saw(run_child(args, clock.moment(rng)))
        figures.killed += outcome.killed
        audit_session(figures, target, original)
        write_after(figures, target)
        count_leftovers(figures, target.parent)
    return figures


def forks(folder: Path, count: int, seed: int) -> Figures:
    """`jsonl-session fork -o NEW` of a 1.5 MB file is killed: the source stays as it
    was; the fork is either absent or whole."""
    rng = random.Random(seed)
    figures = Figures("kill -9 during fork")
    source = big_v3(folder / "source" / "s.jsonl")
    original = source.read_bytes()
    clock = KillClock(timed(["cli", "fork", source, "-o", folder / "timed.jsonl"]))
    whole = len(Session.open(folder / "timed.jsonl").entries)
    for n in kill_rounds(figures, count):
        fork = folder / f"r{n}" / "fork.jsonl"
        fork.parent.mkdir()
        outcome = clock.saw(run_child(["cli", "fork", source, "-o", fork], clock.moment(rng)))
        figures.killed += outcome.killed
        audit_session(figures, source, original)
        if source.read_bytes() != original:
            figures.bytes_lost += abs(len(source.read_bytes()) - len(original)) or 1
            figures.note(f"round {figures.rounds}: the source changed")
        if fork.exists() and len(load_entries(fork, cache=False).entries) != whole:
            figures.partial_outputs += 1
            figures.note(f"round {figures.rounds}: a partial fork")
        after_output(figures, ["cli", "fork", source, "-o", fork.with_name("again.jsonl")])
    return figures


def exports(folder: Path, count: int, seed: int) -> Figures:
    """`jsonl-session export -f html -o OUT` of a 1.5 MB file is killed: OUT is either
    absent or the whole page."""
    rng = random.Random(seed)
    figures = Figures("kill -9 during export")
    source = big_v3(folder / "source" / "s.jsonl")
    original = source.read_bytes()
    clock = KillClock(timed(["cli", "export", source, "-f", "html", "-o", folder / "timed.html"]))
    whole = (folder / "timed.html").read_bytes()
    for n in kill_rounds(figures, count):
        page = folder / f"r{n}" / "out.html"
        page.parent.mkdir()
        args: list[Arg] = ["cli", "export", source, "-f", "html", "-o", page]
        outcome = clock.saw(run_child(args, clock.moment(rng)))
        figures.killed += outcome.killed
        audit_session(figures, source, original)
        if page.exists() and page.read_bytes() != whole:
            figures.partial_outputs += 1
            figures.note(f"round {figures.rounds}: a partial export ({page.stat().st_size} B)")
        after_output(figures, [*args[:-1], page.with_name("again.html")])
    return figures


def after_output(figures: Figures, again: list[Arg], *, counted: bool = False) -> None:
    """The temporary files a kill left in an output's folder (unless ``counted``
    already); then the same command (``again``: "cli", then its arguments, the output
    last) writes another output there, in this process, which must work and leave none."""
    from helpers_cli import invoke

    folder = Path(str(again[-1])).parent
    if not counted:
        figures.temps_after_kill += len(temps_in(folder))
    with as_if_long_after():
        code, _, err = invoke(*map(str, again[1:]))
    if code != 0:
        figures.failed_after += 1
        figures.note(f"round {figures.rounds}: writing the output again failed: {err}")
    count_leftovers(figures, folder)


def cache_writes(folder: Path, count: int, seed: int) -> Figures:
    """Reading (index records) or listing (listing records) a 1.5 MB file is killed
    while its cache is written (the cache emptied, or the file appended to, before
    each round); a read or listing afterwards must match one without the cache."""
    rng = random.Random(seed)
    figures = Figures("kill -9 during cache writes")
    sessions, cache = folder / "sessions", folder / "cache"
    source = big_v3(sessions / "s.jsonl")
    durations = {"open": timed(["open", source], cache), "list": timed(["list", sessions], cache)}
    # A read after the cache was emptied writes whole records; one after an append, less.
    clocks = {(op, emptied): KillClock(durations[op]) for op in durations for emptied in (0, 1)}
    for n in kill_rounds(figures, count):
        emptied = rng.random() < 0.5
        if emptied:
            shutil.rmtree(cache, ignore_errors=True)
        else:
            Session.open(source, fsync="never", cache=False).append_custom("grow", {"n": n})
        before = source.read_bytes()
        op = rng.choice(["open", "list"])
        arg = source if op == "open" else sessions
        clock = clocks[op, int(emptied)]
        outcome = clock.saw(run_child([op, arg], clock.moment(rng), cache=cache))
        figures.killed += outcome.killed
        audit_session(figures, source, before)
        figures.temps_after_kill += len(temps_in(cache, [CACHE_TEMP_GLOB]))
        check_cached_reads(figures, source, cache)
        count_leftovers(figures, sessions, cache)
    return figures


def check_cached_reads(figures: Figures, source: Path, cache: Path) -> None:
    """Reads through the cache answer as reads without it; being the next write to the
    cache folder, as if long after the fault, they remove its abandoned temporary files."""
    with as_if_long_after():
        _compare_cached_reads(figures, source, cache)


def _compare_cached_reads(figures: Figures, source: Path, cache: Path) -> None:
    fresh = loaded_key(load_entries(source, cache=False))
    if loaded_key(load_entries(source, cache=cache)) != fresh:
        figures.unloadable += 1
        figures.note(f"round {figures.rounds}: a read through the cache differs")
    listed: list[list[dict[str, Any]]] = [
        [info.to_dict() for info in list_sessions(source.parent, cache=option)]
        for option in (cache, False)
    ]
    if listed[0] != listed[1]:
        figures.unloadable += 1
        figures.note(f"round {figures.rounds}: a listing through the cache differs")


LOOPS = {
    "appends": appends,
    "appends-beside-pi": appends_beside_pi,
    "migrate": migrations,
    "compact": compactions,
    "fork": forks,
    "export": exports,
    "cache": cache_writes,
}
