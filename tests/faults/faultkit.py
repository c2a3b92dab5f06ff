"""The machinery of the fault loops (tests/faults/test_*.py and benchmarks/faults.py):
start fault_child.py, kill it with SIGKILL at a random moment of its work (or let it
die at a chosen call, or fail against a limit), and audit what it left: the file
loads (the library and the CLI's `show`), every acknowledged entry is there, every
line the file held before is still in it or in one of its backups and sidecars, the
next write works, and which temporary files are still there after that write.

Round counts: each loop has a CI default; ``JSONL_SESSION_FAULT_ROUNDS=N`` runs N
rounds of every loop instead (benchmarks/faults.py sets it for the long run). The
figures of a loop are a `Figures`; a test asserts on them, the benchmark prints them.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path

from jsonl_session import JsonlSessionError, Session

Arg = str | Path | int | float  # a child's argument, passed as str()
CHILD = Path(__file__).resolve().with_name("fault_child.py")
ROUNDS_ENV = "JSONL_SESSION_FAULT_ROUNDS"
CHILD_TIMEOUT = 300.0  # only stops a hung child; nothing asserts how long anything takes
SESSION_TEMP_GLOBS = (".jsonl-session-*.tmp", ".*.tmp")  # store.py's; an output's
CACHE_TEMP_GLOB = ".tmp-*"
SIDECAR_MARKS = (".bak-", ".torn-")


def rounds(ci_default: int) -> int:
    """The rounds a loop runs: ``$JSONL_SESSION_FAULT_ROUNDS`` if set, else the CI default."""
    configured = os.environ.get(ROUNDS_ENV, "")
    return int(configured) if configured else ci_default


@dataclass
class Figures:
    """What a loop counted. entries_lost, bytes_lost, unloadable and failed_after must
    stay 0 in every run (assert_nothing_lost); the rest say how clean it stayed."""

    loop: str
    rounds: int = 0
    killed: int = 0  # rounds whose child the kill stopped before it finished
    acknowledged: int = 0  # entries a child reported written before it was killed
    entries_lost: int = 0
    bytes_lost: int = 0  # bytes of lines found neither in the file nor in a backup
    unloadable: int = 0  # files that Session.open or `show` refused after a round
    failed_after: int = 0  # the next write after a round failed (file left stuck)
    temps_after_kill: int = 0  # temporary files a fault left (it cannot remove them)
    leftover_temps: int = 0  # ... still there after the next write to their folder
    leftover_cache_temps: int = 0  # ... in the cache folder, after the next cache write
    temps_unreported: int = 0  # temporary files beside a session that doctor did not list
    extra_links: int = 0  # session files with more than one hard link after the next write
    partial_outputs: int = 0  # fork/export targets left incomplete
    torn_sidecars: int = 0  # torn tails the next writer cut off into a sidecar
    torn_closed: int = 0  # torn tails too young to cut: closed with a newline, left in place
    refused: int = 0  # writes the library refused with its own error (size limits)
    unclean_errors: int = 0  # failures that were not our error (a traceback, a raw OSError)
    torn_left: int = 0  # lines left in a file that are not whole JSON
    bad_parents: int = 0  # entries whose parent is not an entry before them
    fused_lines: int = 0  # another writer's lines fused with a fragment a kill left
    writer_switches: int = 0  # adjacent lines from different writers (they overlapped)
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if len(self.notes) < 20:
            self.notes.append(text)

    def summary(self) -> str:
        counts = [f.name for f in fields(self) if f.name not in ("loop", "notes")]
        shown = " ".join(f"{name}={getattr(self, name)}" for name in counts)
        return f"{self.loop}: {shown}" + "".join(f"\n  - {n}" for n in self.notes)


@dataclass
class Outcome:
    killed: bool
    returncode: int
    lines: list[str]  # what the child printed after "go"
    stderr: str
    elapsed: float = 0.0  # seconds from "go" to its end or its kill (0: not timed)


def child_command(args: Iterable[Arg], fsize: int | None = None) -> list[str]:
    limit = ["--fsize", str(fsize)] if fsize is not None else []
    return [sys.executable, "-W", "error", str(CHILD), *limit, *map(str, args)]


def run_child(
    args: Iterable[Arg],
    kill_after: float | None,
    *,
    fsize: int | None = None,
    cache: Path | None = None,
) -> Outcome:
    """Run the child; ``kill_after`` seconds after it said "go", SIGKILL it (None: let it
    finish). The pipe keeps what it printed before the kill."""
    return run_command(child_command(args, fsize), kill_after, cache)


def run_command(command: list[str], kill_after: float | None, cache: Path | None) -> Outcome:
    """`run_child` for a command that runs the child in the end (a wrapper around it)."""
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(cache),
    )
    assert child.stdout is not None
    first = child.stdout.readline()
    start = time.monotonic()
    if first == "go\n" and kill_after is not None:
        try:  # as a sleep, but it sees when the child ends first
            child.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            child.kill()
    try:
        out, err = child.communicate(timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        raise AssertionError(f"child hung: {err}") from None
    if first != "go\n":
        raise AssertionError(f"child failed before its work ({child.returncode}): {first}{err}")
    killed = child.returncode == -signal.SIGKILL
    return Outcome(killed, child.returncode, out.splitlines(), err, time.monotonic() - start)


def start_child(args: Iterable[Arg]) -> subprocess.Popen[str]:
    """A child running beside others, once it said "go" (see `stop_child`)."""
    command = child_command(args)
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    if child.stdout.readline() != "go\n":
        child.kill()
        _, err = child.communicate(timeout=CHILD_TIMEOUT)
        raise AssertionError(f"child failed before its work ({child.returncode}): {err}")
    return child


def stop_child(child: subprocess.Popen[str]) -> list[str]:
    """What a child started by `start_child` printed after "go", once it ended."""
    out, _ = child.communicate(timeout=CHILD_TIMEOUT)
    return [line for line in out.splitlines() if line != "done"]


def child_env(cache: Path | None) -> dict[str, str]:
    """The child's environment: this one, with ``cache`` as its cache folder if given."""
    env = dict(os.environ)
    if cache is not None:
        env["JSONL_SESSION_CACHE_DIR"] = str(cache)
    return env


def timed(args: Iterable[Arg], cache: Path | None = None) -> float:
    """Seconds one uninterrupted run takes from "go" to its end (where kills should land)."""
    command = child_command(args)
    start = 0.0
    env = child_env(cache)
    quiet = subprocess.DEVNULL  # the CLI's "wrote ..." lines
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=quiet, text=True, env=env
    ) as child:
        assert child.stdout is not None
        if child.stdout.readline() == "go\n":
            start = time.monotonic()
        child.communicate(timeout=CHILD_TIMEOUT)
    assert child.returncode == 0, f"{command} failed"
    return time.monotonic() - start


# --- auditing what a round left ---------------------------------------------------------------


def temps_in(folder: Path, patterns: Iterable[str] = SESSION_TEMP_GLOBS) -> list[Path]:
    """Temporary files under ``folder`` (its subfolders too)."""
    if not folder.exists():
        return []
    return sorted({path for pattern in patterns for path in folder.rglob(pattern)})


def sidecars_of(target: Path) -> list[Path]:
    return sorted(
        p
        for p in target.parent.iterdir()
        if p.name.startswith(target.name) and any(m in p.name for m in SIDECAR_MARKS)
    )


def body_lines(data: bytes) -> list[bytes]:
    """Lines without their line ends; a torn last line counts as a line."""
    return [line.rstrip(b"\r") for line in data.split(b"\n") if line]


def lost_bytes(before: bytes, target: Path) -> int:
    """Bytes of the lines of ``before`` found neither in ``target`` nor in its backups
    and sidecars (a migration keeps the original there; a cut torn tail goes there)."""
    pool: set[bytes] = set()
    for place in [target, *sidecars_of(target)]:
        if place.exists():
            pool.update(body_lines(place.read_bytes()))
    return sum(len(line) + 1 for line in body_lines(before) if line not in pool)


def load_problem(path: Path) -> str | None:
    """Why the file does not load (Session.open, then the CLI's `show`), or None."""
    from helpers_cli import invoke  # the CLI in-process: a subprocess per round is slow

    try:
        Session.open(path)
    except JsonlSessionError as exc:
        return f"Session.open: {exc}"
    code, _, err = invoke("show", path)
    return None if code == 0 else f"show exited {code}: {err.strip()}"


def audit_session(figures: Figures, target: Path, before: bytes) -> Session | None:
    """The checks every round makes on a session file; the loaded session, if it loads."""
    figures.rounds += 1
    lost = lost_bytes(before, target)
    if lost:
        figures.bytes_lost += lost
        figures.note(f"round {figures.rounds}: {lost} bytes of earlier lines gone")
    figures.temps_after_kill += len(temps_in(target.parent))
    check_doctor_lists_temps(figures, target)
    problem = load_problem(target)
    if problem is not None:
        figures.unloadable += 1
        figures.note(f"round {figures.rounds}: {problem}")
        return None
    return Session.open(target, fsync="never")


@contextmanager
def as_if_long_after() -> Iterator[None]:
    """Run the next write as if the fault were long past: the temporary files it left
    count as abandoned at once (leftovers.py waits ABANDONED_AFTER_SECONDS, 15 min, for
    a file it cannot tell from a live write's; the killed writer's lock is gone)."""
    from jsonl_session.storage import leftovers

    saved = leftovers.ABANDONED_AFTER_SECONDS
    leftovers.ABANDONED_AFTER_SECONDS = 0.0
    try:
        yield
    finally:
        leftovers.ABANDONED_AFTER_SECONDS = saved


def check_doctor_lists_temps(figures: Figures, target: Path) -> None:
    """`jsonl-session doctor FILE` names each temporary file left beside the file."""
    from helpers_cli import invoke

    left = temps_in(target.parent, [".jsonl-session-*.tmp"])
    left = [temp for temp in left if temp.parent == target.parent]
    if not left:
        return
    with as_if_long_after():
        _, out, _ = invoke("doctor", target)
    unlisted = [temp.name for temp in left if temp.name not in out]
    figures.temps_unreported += len(unlisted)
    if unlisted:
        figures.note(f"round {figures.rounds}: doctor does not list {unlisted}")


def count_leftovers(figures: Figures, folder: Path, cache: Path | None = None) -> None:
    """Temporary files still under ``folder`` (and ``cache``) after the next write there
    (`write_after` and the like): counted, then removed so no round counts them twice;
    and session files there still sharing their inode with another name (a rewrite
    killed after linking its backup: the next rewrite must finish it)."""
    for linked in sorted(folder.rglob("*.jsonl")):
        if os.stat(linked).st_nlink > 1:
            figures.extra_links += 1
            figures.note(
                f"round {figures.rounds}: {linked.name} has {os.stat(linked).st_nlink} links"
            )
    found = [(t, "leftover_temps") for t in temps_in(folder)]
    if cache is not None:
        found += [(t, "leftover_cache_temps") for t in temps_in(cache, [CACHE_TEMP_GLOB])]
    for temp, counter in found:
        setattr(figures, counter, getattr(figures, counter) + 1)
        figures.note(f"round {figures.rounds}: {temp.name} still there after the next write")
        temp.unlink()


def check_acknowledged(figures: Figures, session: Session, acknowledged: list[str]) -> None:
    figures.acknowledged += len(acknowledged)
    missing = [entry_id for entry_id in acknowledged if session.get(entry_id) is None]
    if missing:
        figures.entries_lost += len(missing)
        figures.note(f"round {figures.rounds}: acknowledged entries missing: {missing[:5]}")


def write_after(figures: Figures, target: Path) -> None:
    """The next run appends (sealing what the kill left); it must work."""
    torn_before = len([p for p in sidecars_of(target) if ".torn-" in p.name])
    bad_before = sum(p.kind == "invalid-json" for p in Session.open(target).problems)
    try:
        with as_if_long_after():
            Session.open(target, fsync="never").append_custom("after-fault")
    except JsonlSessionError as exc:
        figures.failed_after += 1
        figures.note(f"round {figures.rounds}: the next append failed: {exc}")
        return
    figures.torn_sidecars += len([p for p in sidecars_of(target) if ".torn-" in p.name]) - (
        torn_before
    )
    figures.torn_closed += sum(p.kind == "invalid-json" for p in Session.open(target).problems) - (
        bad_before
    )


def kill_rounds(figures: Figures, count: int) -> Iterator[int]:
    """Round numbers until ``count`` kills landed: a kill that came after the child had
    finished (it was quicker than when timed) does not count; at most 3 x count rounds."""
    n = 0
    while figures.killed < count and n < 3 * count:
        yield n
        n += 1


@dataclass
class KillClock:
    """When to kill a child: a moment in its work, by the time one uninterrupted run took,
    shortened by every round the child finished before its kill. The timed run can take
    several times longer than the rounds (it writes the cache records they read, and under
    load any one run is slow), and kills timed by it would all come too late."""

    duration: float

    def moment(self, rng: random.Random) -> float:
        return kill_moment(rng, self.duration)

    def saw(self, outcome: Outcome) -> Outcome:
        if not outcome.killed:
            self.duration = min(self.duration, outcome.elapsed)
        return outcome


def kill_moment(rng: random.Random, duration: float) -> float:
    """A moment in the child's work (a little past its end too: a kill that comes late
    must change nothing); half of them in its last third, where rewrites and outputs
    are written after everything was read and built."""
    if rng.random() < 0.5:
        return rng.uniform(duration * 0.67, duration * 1.05)
    return rng.uniform(0.0, duration * 1.1)


def assert_nothing_lost(figures: Figures) -> None:
    """The promises every loop keeps: no acknowledged entry or earlier byte lost, every
    file loads, and the next write works."""
    assert figures.rounds > 0 and figures.killed + figures.refused > 0, figures.summary()
    assert figures.entries_lost == 0, figures.summary()
    assert figures.bytes_lost == 0, figures.summary()
    assert figures.unloadable == 0, figures.summary()
    assert figures.failed_after == 0, figures.summary()


def assert_clean(figures: Figures) -> None:
    """Nothing left half done: no temporary files (after the next write; doctor lists
    them before), no extra hard links, no partial outputs."""
    assert figures.temps_unreported == 0, figures.summary()
    assert figures.leftover_temps == 0, figures.summary()
    assert figures.leftover_cache_temps == 0, figures.summary()
    assert figures.extra_links == 0, figures.summary()
    assert figures.partial_outputs == 0, figures.summary()
