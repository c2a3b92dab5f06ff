"""Writes that cannot complete: every write path under RLIMIT_FSIZE (SIGXFSZ ignored,
so a write past the limit fails with EFBIG) and on a full file system (a small tmpfs
mounted in a user and mount namespace of the child's own: ``unshare -rm``). A round
stages a session file, runs one operation of fault_child.py against the limit, and
audits the result: the operation either worked or failed with our error (never a
traceback), the file loads, nothing it acknowledged or held before is lost, no torn
line is left in it, no partial output or temporary file stays, and the next write
works once there is room. Used by test_write_limits.py and benchmarks/faults.py.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import orjson
from faultkit import (
    CHILD,
    Arg,
    Figures,
    Outcome,
    audit_session,
    check_acknowledged,
    child_command,
    count_leftovers,
    run_child,
    run_command,
    timed,
    write_after,
)
from helpers_large import generate
from helpers_write import new_session
from kill_loops import as_v1, as_v2, check_cached_reads

from jsonl_session import JsonlSessionError, Session, load_entries

OPERATIONS = ["append", "migrate", "compact", "fork", "export", "open"]
MEDIUM_ENTRIES = 150  # ~300 KB: rewrites and outputs big enough to stop part way

# Runs in the new namespace: $1 mount point, $2 staged files, $3 where to copy the
# result, $4 tmpfs size, $5 bytes to leave free, $6 python, $7 fault_child.py; then
# the operation's command. The tmpfs vanishes with the namespace, hence the copy.
FULL_DISK_SCRIPT = """
mount -t tmpfs -o size="$4" tmpfs "$1" || exit 97
cp -a "$2"/. "$1"/ || exit 98
mnt=$1; out=$3; free=$5; python=$6; child=$7; shift 7
"$python" "$child" fill "$mnt/.filler" "$free" || exit 96
"$@"
rc=$?
rm -f "$mnt/.filler"
cp -a "$mnt"/. "$out"/ || exit 98
exit $rc
"""


def full_disk_unavailable(folder: Path) -> str | None:
    """Why a tmpfs cannot be mounted here (no user namespaces, no unshare), or None."""
    mount_point = folder / "probe"
    mount_point.mkdir(parents=True, exist_ok=True)
    command = ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size=64k tmpfs "{mount_point}"']
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except OSError as exc:
        return f"cannot run unshare: {exc}"
    if done.returncode != 0:
        return f"cannot mount a tmpfs in a user namespace: {done.stderr.strip()}"
    return None


@dataclass
class Inputs:
    """The files rounds start from, made once per loop, and the outputs whole runs give."""

    small: bytes
    medium: bytes
    big: bytes
    fork_entries: int
    page: bytes

    @classmethod
    def make(cls, folder: Path) -> Inputs:
        small = new_session(folder / "small")[0].path.read_bytes()
        medium = generate(folder / "medium.jsonl", MEDIUM_ENTRIES).read_bytes()
        big = generate(folder / "big.jsonl", 700).read_bytes()
        timed(["cli", "fork", folder / "medium.jsonl", "-o", folder / "fork.jsonl"])
        export: list[Arg] = [
            "cli",
            "export",
            folder / "medium.jsonl",
            "-f",
            "html",
            "-o",
            folder / "p.html",
        ]
        timed(export)
        fork_entries = len(load_entries(folder / "fork.jsonl", cache=False).entries)
        return cls(small, medium, big, fork_entries, (folder / "p.html").read_bytes())


@dataclass
class Round:
    operation: str
    original: bytes  # what the session file (s.jsonl) holds before
    args: list[str]  # the child's arguments, with "{root}" for the folder it runs in
    room: int  # bytes past the staged files' that the round allows

    def arguments(self, root: Path) -> list[str]:
        return [arg.replace("{root}", str(root)) for arg in self.args]


def plan(operation: str, inputs: Inputs, rng: random.Random) -> Round:
    session = "{root}/s.jsonl"
    if operation == "append":
        return Round(operation, inputs.small, ["append", session, "1000000", "1"], 0)
    if operation == "migrate":
        old = as_v1(inputs.medium) if rng.random() < 0.5 else as_v2(inputs.medium)
        return Round(operation, old, ["cli", "migrate", session], len(old))
    if operation == "compact":
        args = ["cli", "compact", session, "--summarizer", "offline"]
        return Round(operation, inputs.medium, args, 0)
    if operation == "fork":
        args = ["cli", "fork", session, "-o", "{root}/out/fork.jsonl"]
        return Round(operation, inputs.medium, args, len(inputs.medium))
    if operation == "export":
        args = ["cli", "export", session, "-f", "html", "-o", "{root}/out/page.html"]
        return Round(operation, inputs.medium, args, len(inputs.page))
    return Round(operation, inputs.big, ["open", session], 0)


def allowance(plan: Round, rng: random.Random) -> int:
    """Bytes a round may add: now and then enough, mostly not."""
    if plan.operation == "append":
        return rng.randrange(0, 300_000)
    if plan.operation == "compact":
        return rng.randrange(0, 20_000)
    if plan.operation == "open":
        return rng.randrange(0, 2 << 20)
    return int(rng.uniform(0.0, 1.2) * plan.room)


def stage(folder: Path, plan: Round) -> Path:
    folder.mkdir(parents=True)
    (folder / "out").mkdir()
    (folder / "s.jsonl").write_bytes(plan.original)
    return folder


def size_limits(folder: Path, count: int, seed: int) -> Figures:
    """Each operation in turn under RLIMIT_FSIZE."""
    rng = random.Random(seed)
    figures = Figures("RLIMIT_FSIZE")
    inputs = Inputs.make(folder / "inputs")
    for n in range(count):
        this = plan(OPERATIONS[n % len(OPERATIONS)], inputs, rng)
        root = stage(folder / f"r{n}", this)
        limit = len(this.original) + allowance(this, rng)
        if this.operation in ("migrate", "fork", "export"):
            limit -= len(this.original)  # a new file: the limit is its own size
        outcome = run_child(this.arguments(root), None, fsize=limit, cache=root / "cache")
        audit_round(figures, inputs, this, outcome, root)
        if this.operation == "open":
            check_cached_reads(figures, root / "s.jsonl", root / "cache")
            count_leftovers(figures, root, root / "cache")
    return figures


def full_disk(folder: Path, count: int, seed: int) -> Figures:
    """Each operation in turn on a tmpfs filled up to a few bytes."""
    rng = random.Random(seed)
    figures = Figures("full file system")
    inputs = Inputs.make(folder / "inputs")
    mount_point = folder / "mnt"
    mount_point.mkdir()
    for n in range(count):
        this = plan(OPERATIONS[n % len(OPERATIONS)], inputs, rng)
        staged = stage(folder / f"stage{n}", this)
        result = folder / f"r{n}"
        result.mkdir()
        size = (3 * len(this.original) + (2 << 20)) // 4096 * 4096
        wrapper = ["unshare", "-rm", "sh", "-c", FULL_DISK_SCRIPT, "sh"]
        child = child_command(this.arguments(mount_point))
        setup = [mount_point, staged, result, size, allowance(this, rng), child[0], CHILD]
        command = [*wrapper, *map(str, setup), *child]
        outcome = run_command(command, None, mount_point / "cache")
        audit_round(figures, inputs, this, outcome, result)
        shutil.rmtree(staged)
    return figures


def audit_round(
    figures: Figures, inputs: Inputs, plan: Round, outcome: Outcome, root: Path
) -> None:
    judge(figures, plan.operation, outcome)
    target = root / "s.jsonl"
    session = audit_session(figures, target, plan.original)
    if session is not None and plan.operation == "append":
        check_acknowledged(figures, session, [x for x in outcome.lines if is_entry_id(x)])
    torn = [line for line in target.read_bytes().split(b"\n")[:-1] if not parses(line)]
    if plan.operation in ("append", "compact") and (
        torn or not target.read_bytes().endswith(b"\n")
    ):
        figures.torn_left += len(torn) or 1
        figures.note(f"round {figures.rounds} ({plan.operation}): torn lines left: {torn[:1]!r}")
    check_output(figures, inputs, root / "out")
    count_leftovers(figures, root)  # no fault excuses one: a failed write removes its own
    write_after(figures, target)


def is_entry_id(line: str) -> bool:
    return len(line) == 8 and all(c in "0123456789abcdef" for c in line)


def parses(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def judge(figures: Figures, operation: str, outcome: Outcome) -> None:
    """Worked, or failed with our error: a `refused:` line (the library) or the CLI's
    one error line (exit 1), never a traceback; a read never fails for its cache."""
    if outcome.returncode in (96, 97, 98):
        raise AssertionError(f"the full-disk setup failed: {outcome.stderr}")
    if outcome.returncode == 0:
        return
    ours = any(x.startswith(("refused: ", "exit 1")) for x in outcome.lines)
    if operation == "append":
        ours = any(x.startswith("refused: SessionWriteError") for x in outcome.lines)
    if ours and "Traceback" not in outcome.stderr and operation != "open":
        figures.refused += 1
        return
    figures.unclean_errors += 1
    tail = (outcome.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
    figures.note(f"round {figures.rounds} ({operation}): exit {outcome.returncode}: {tail}")


def check_output(figures: Figures, inputs: Inputs, out: Path) -> None:
    """A fork or export is there whole, or not at all."""
    fork, page = out / "fork.jsonl", out / "page.html"
    if fork.exists():
        try:
            entries = len(Session.open(fork).entries)
        except JsonlSessionError as exc:
            entries = -1
            figures.note(f"round {figures.rounds}: the fork does not load: {exc}")
        if entries != inputs.fork_entries:
            figures.partial_outputs += 1
            figures.note(f"round {figures.rounds}: a partial fork ({entries} entries)")
    if page.exists() and page.read_bytes() != inputs.page:
        figures.partial_outputs += 1
        figures.note(f"round {figures.rounds}: a partial export ({page.stat().st_size} B)")
