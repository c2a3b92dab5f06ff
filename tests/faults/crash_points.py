"""Every crash point of a write path, in turn: a first run of fault_child.py with
``--die-at 0`` lists the calls that change a file (open for writing, write, fsync,
link, rename, unlink, ...); then one run per call dies (SIGKILL) right before it,
and the same audit as the random kills (faultkit) checks what it left. Where a
random kill lands in a window of microseconds only now and then, this reaches every
window each time. Used by test_crash_points.py and benchmarks/faults.py.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from faultkit import (
    CACHE_TEMP_GLOB,
    Arg,
    Figures,
    audit_session,
    check_acknowledged,
    count_leftovers,
    run_child,
    temps_in,
    write_after,
)
from helpers_large import generate
from helpers_write import new_session, v1_bytes, v2_bytes
from kill_loops import after_output, check_cached_reads, migrate_again

from jsonl_session import JsonlSessionError, Session


@dataclass
class Scenario:
    """One operation on a staged ``s.jsonl`` in ``{root}``."""

    name: str
    args: list[str]
    kind: str  # what to check afterwards: append, migrate, write, output, cache


SCENARIOS = {
    "append": Scenario("append", ["append", "{root}/s.jsonl", "3", "1", "0"], "append"),
    "append-v1": Scenario("append-v1", ["append", "{root}/s.jsonl", "2", "1", "0"], "append"),
    "migrate-v1": Scenario("migrate-v1", ["cli", "migrate", "{root}/s.jsonl"], "migrate"),
    "migrate-v2": Scenario("migrate-v2", ["cli", "migrate", "{root}/s.jsonl"], "migrate"),
    "compact": Scenario(
        "compact",
        [
            "cli",
            "compact",
            "{root}/s.jsonl",
            "--summarizer",
            "offline",
            "--keep-recent-tokens",
            "500",
        ],
        "write",
    ),
    "fork": Scenario(
        "fork", ["cli", "fork", "{root}/s.jsonl", "-o", "{root}/out/fork.jsonl"], "output"
    ),
    "export": Scenario(
        "export",
        ["cli", "export", "{root}/s.jsonl", "-f", "html", "-o", "{root}/out/page.html"],
        "output",
    ),
    "open-cache": Scenario("open-cache", ["open", "{root}/s.jsonl"], "cache"),
    "list-cache": Scenario("list-cache", ["list", "{root}"], "cache"),
}


class Originals:
    """The files scenarios start from, each made once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._made: dict[str, bytes] = {}

    def for_scenario(self, name: str) -> bytes:
        if name not in self._made:
            self._made[name] = self._make(name)
        return self._made[name]

    def _make(self, name: str) -> bytes:
        if name == "append":
            return new_session(self.folder / "small")[0].path.read_bytes()
        if name in ("append-v1", "migrate-v1"):
            return v1_bytes()
        if name == "migrate-v2":
            return v2_bytes()
        self.folder.mkdir(parents=True, exist_ok=True)
        entries = 700 if name.endswith("-cache") else 40  # 700: past 1 MiB, cache records
        return generate(self.folder / f"{name}.jsonl", entries).read_bytes()


def stage(root: Path, original: bytes) -> None:
    shutil.rmtree(root, ignore_errors=True)
    (root / "out").mkdir(parents=True)
    (root / "s.jsonl").write_bytes(original)


def arguments(scenario: Scenario, root: Path) -> list[Arg]:
    return [arg.replace("{root}", str(root)) for arg in scenario.args]


def sweep(folder: Path, name: str) -> Figures:
    """Die before each file-changing call of scenario ``name`` in turn."""
    scenario = SCENARIOS[name]
    figures = Figures(f"crash points of {name}")
    original = Originals(folder / "originals").for_scenario(name)
    whole = folder / "whole"
    stage(whole, original)
    counted = run_child(["--die-at", 0, *arguments(scenario, whole)], None, cache=whole / "c")
    assert counted.returncode == 0, counted.stderr
    (listed,) = [x for x in counted.lines if x.startswith("calls: ")]
    calls = listed.removeprefix("calls: ").split(",")
    for number, call in enumerate(calls, start=1):
        root = folder / "round"
        stage(root, original)
        cache = root / "cache"
        outcome = run_child(["--die-at", number, *arguments(scenario, root)], None, cache=cache)
        figures.killed += outcome.killed
        before = len(figures.notes)
        audit(figures, scenario, root, original, whole, outcome.lines)
        if len(figures.notes) > before:
            figures.notes[before] = f"[before call {number}, {call}] {figures.notes[before]}"
    return figures


def audit(
    figures: Figures, scenario: Scenario, root: Path, original: bytes, whole: Path, lines: list[str]
) -> None:
    target = root / "s.jsonl"
    session = audit_session(figures, target, original)
    figures.temps_after_kill += len(temps_in(root, [CACHE_TEMP_GLOB]))  # the rest: audit_session
    if scenario.kind == "append" and session is not None:
        check_acknowledged(figures, session, [x for x in lines if len(x) == 8])
    if scenario.kind == "migrate":
        migrate_again(figures, target)
    elif scenario.kind == "cache":
        check_cached_reads(figures, target, root / "cache")
    elif scenario.kind == "output":
        check_output(figures, root / "out", whole / "out")
        again_args = [again(arg) for arg in arguments(scenario, root)]
        after_output(figures, again_args, counted=True)  # out/ is under root: audited
    else:
        write_after(figures, target)
    count_leftovers(figures, root, root / "cache")


def again(arg: Arg) -> Arg:
    """The argument naming an output, changed to another name in the same folder."""
    return str(arg).replace("page.html", "again.html").replace("fork.jsonl", "again.jsonl")


def check_output(figures: Figures, out: Path, whole: Path) -> None:
    """What a fork or export left: nothing, or the whole file."""
    for made in sorted(out.iterdir()):
        if made.name.startswith("."):
            continue  # a temporary file: counted by the audit
        reference = whole / made.name
        if made.suffix == ".jsonl":
            try:
                same = len(Session.open(made).entries) == len(Session.open(reference).entries)
            except JsonlSessionError:
                same = False
        else:
            same = made.read_bytes() == reference.read_bytes()
        if not same:
            figures.partial_outputs += 1
            figures.note(
                f"round {figures.rounds}: {made.name} is partial ({made.stat().st_size} B)"
            )
