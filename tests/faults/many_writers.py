"""Many processes appending to one session at once: ``writers`` of ours (the locked
append path) beside ``unlocked`` writers that append whole lines with O_APPEND and no
lock, as pi does. Every entry any of them acknowledged must be in the file, each
writer's entries in its own order, every line whole JSON, every id unique and every
parent an entry earlier in the file. Used by test_many_writers.py and
benchmarks/faults.py.
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
from pathlib import Path

import orjson
from faultkit import CHILD_TIMEOUT, Arg, Figures, Outcome, audit_session, check_acknowledged
from faultkit import child_command as command_for
from helpers_write import new_session


def start(args: list[Arg], barrier: Path) -> subprocess.Popen[str]:
    """A writer that, once ready, waits for ``barrier`` to exist (see release)."""
    env = dict(os.environ, JSONL_SESSION_FAULT_BARRIER=str(barrier))
    return subprocess.Popen(
        command_for(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def release(children: list[subprocess.Popen[str]], barrier: Path) -> None:
    """Let the writers go together, once every one said it is ready."""
    for child in children:
        assert child.stdout is not None
        if child.stdout.readline() != "go\n":
            child.kill()
            raise AssertionError(f"a writer failed to start: {child.communicate()[1]}")
    barrier.touch()


def finish(child: subprocess.Popen[str]) -> Outcome:
    out, err = child.communicate(timeout=CHILD_TIMEOUT)
    return Outcome(False, child.returncode, out.splitlines(), err)


def many_writers(
    folder: Path, writers: int, appends: int, unlocked: int, seed: int = 16
) -> Figures:
    """One round: ``writers`` x ``appends`` locked appends beside ``unlocked`` writers
    of ``appends`` lines each."""
    rng = random.Random(seed)
    figures = Figures(f"{writers} writers x {appends} appends + {unlocked} unlocked")
    target = new_session(folder)[0].path
    before = target.read_bytes()
    barrier = folder / "go"
    ours = [
        start(["append", target, appends, rng.randrange(1 << 30), 0], barrier)
        for _ in range(writers)
    ]
    theirs = [
        start(["unlocked", target, appends, rng.randrange(1 << 30)], barrier)
        for _ in range(unlocked)
    ]
    try:
        release([*ours, *theirs], barrier)
    finally:
        outcomes = [finish(child) for child in [*ours, *theirs]]
    for outcome in outcomes:
        if outcome.returncode != 0 or outcome.lines[-1:] != ["done"]:
            figures.unclean_errors += 1
            figures.note(f"a writer failed ({outcome.returncode}): {outcome.stderr[-300:]}")
    session = audit_session(figures, target, before)
    per_writer = [[x for x in outcome.lines if x != "done"] for outcome in outcomes]
    if session is not None:
        check_acknowledged(figures, session, [x for ids in per_writer for x in ids])
    check_lines(figures, target, per_writer)
    return figures


def check_lines(figures: Figures, target: Path, per_writer: list[list[str]]) -> None:
    """Whole lines, unique ids, parents earlier in the file, each writer's order kept."""
    seen: dict[str, int] = {}
    for number, line in enumerate(target.read_bytes().split(b"\n")[1:-1], start=2):
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            figures.torn_left += 1
            figures.note(f"line {number} is not whole JSON: {line[:60]!r}")
            continue
        if entry["id"] in seen:
            figures.unloadable += 1
            figures.note(f"line {number}: id {entry['id']} again")
        if entry["parentId"] is not None and entry["parentId"] not in seen:
            figures.bad_parents += 1
            figures.note(f"line {number}: parent {entry['parentId']} not earlier in the file")
        seen[entry["id"]] = number
    writer_of = {entry_id: n for n, ids in enumerate(per_writer) for entry_id in ids}
    in_file_order = [writer_of.get(entry_id, -1) for entry_id in seen]
    figures.writer_switches = sum(a != b for a, b in itertools.pairwise(in_file_order))
    for ids in per_writer:
        places = [seen.get(entry_id, 0) for entry_id in ids]
        if places != sorted(places):
            figures.unloadable += 1
            figures.note("a writer's entries are out of its order")
