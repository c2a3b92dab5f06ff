"""The process the fault loops kill: ``python fault_child.py OPERATION ARGS...``.

Everything is imported first; then it prints ``go`` (the parent starts its kill
timer only then, so the random moment falls in the operation, not in start-up) and
runs one operation. ``append`` prints each entry id after `append_custom` returned,
so the parent knows exactly which entries were acknowledged; every operation
prints ``done`` when it finished. A write the library refused ends the child with
``refused: <exception type>: <message>`` and exit code 3 (the size-limit loops
expect that). With ``--fsize N`` the child runs under RLIMIT_FSIZE = N bytes with
SIGXFSZ ignored, so a write past the limit fails with EFBIG instead of killing it.

Operations: ``append FILE COUNT SEED [BIG]`` (entries of mixed sizes, a share BIG of them
(default 0.02) of megabytes, whose write a kill can cut short), ``cli ARGS...`` (the
command line, as `jsonl-session ARGS...`), ``open FILE`` (reads the file, writing
the index cache records), ``list FOLDER`` (the listing and its cache), ``unlocked
FILE COUNT SEED [PAUSE]`` (whole lines appended without a lock, as pi does; both
appenders wait after "go" for the file $JSONL_SESSION_FAULT_BARRIER when set); and, before
the full-disk loops' operation, ``fill FILE FREE`` (writes FILE until FREE bytes are
left on its file system; prints nothing).

With ``--die-at N`` (before the other options) the child SIGKILLs itself right before
the Nth call that changes a file (os.open for writing, os.write, ftruncate, fsync,
link, replace, rename, unlink, mkdir; the built-in open for writing and its writes);
``--die-at 0`` dies nowhere and prints ``calls: NAME,...``, the list to sweep.
"""

from __future__ import annotations

import atexit
import builtins
import os
import random
import resource
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from jsonl_session import JsonlSessionError, Session, SessionWriteError, list_sessions
from jsonl_session.cli import main as cli_main


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def wait_for_barrier() -> None:
    """With $JSONL_SESSION_FAULT_BARRIER set, wait until that file exists, so writers
    started one by one begin together."""
    barrier = os.environ.get("JSONL_SESSION_FAULT_BARRIER")
    deadline = time.monotonic() + 300
    while barrier and not os.path.exists(barrier):
        if time.monotonic() > deadline:
            sys.exit("barrier: no go")
        time.sleep(0.001)


def append(path: str, count: int, seed: int, big_share: float) -> None:
    rng = random.Random(seed)
    session = Session.open(path, fsync=rng.choice(["always", "never"]))
    say("go")
    wait_for_barrier()
    for n in range(count):
        roll = rng.random()
        if roll < big_share:
            size = rng.randrange(256 << 10, 4 << 20)  # long enough for a kill to land mid-write
        elif roll < 0.2:
            size = rng.randrange(1_000, 100_000)
        else:
            size = rng.randrange(0, 300)
        entry_id = session.append_custom("fault", {"n": n, "seed": seed, "pad": "p" * size})
        say(entry_id)


def append_unlocked(path: str, count: int, seed: int, pause: float) -> None:
    """Append whole lines as pi does (appendFileSync: O_APPEND, no lock), a chain of
    custom entries of its own; print each id after its write returned."""
    rng = random.Random(seed)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    say("go")
    wait_for_barrier()
    parent = None
    for n in range(count):
        entry_id = f"{rng.getrandbits(32):08x}"
        line = orjson.dumps(
            {
                "type": "custom",
                "customType": "pi-like",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "data": {"n": n, "pad": "q" * rng.randrange(0, 3000)},
            }
        )
        os.write(fd, line + b"\n")
        parent = entry_id
        say(entry_id)
        if pause:
            time.sleep(pause)
    os.close(fd)


def fill(path: str, leave: int) -> None:
    """Fill the file system holding ``path`` with one file until ``leave`` bytes are free."""
    with open(path, "wb") as filler:
        while True:
            info = os.statvfs(path)
            free = info.f_bavail * info.f_frsize
            if free <= leave:
                return
            try:
                filler.write(b"\0" * min(free - leave, 1 << 20))
                filler.flush()
            except OSError:
                return


def run_cli(args: list[str]) -> None:
    # What the commands import when they run, imported before "go" so the kill
    # timer measures the command's work, not its imports.
    import jsonl_session.compaction.execute
    import jsonl_session.export.render  # noqa: F401

    sys.argv = ["jsonl-session", *args]
    say("go")
    try:
        cli_main()
    except SystemExit as exc:
        if exc.code not in (0, None):
            say(f"exit {exc.code}")  # the CLI's own error line is on stderr
            sys.exit(exc.code if isinstance(exc.code, int) else 1)


# --- crash points: die (SIGKILL) right before the Nth call that changes a file --------

WATCHED = ("open", "write", "ftruncate", "fsync", "link", "replace", "rename", "unlink", "mkdir")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT
calls: list[str] = []
die_at = 0  # 0: never


def passing(name: str) -> None:
    """Count a call that changes a file; at the chosen one, die before it happens."""
    calls.append(name)
    if len(calls) == die_at:
        os.kill(os.getpid(), signal.SIGKILL)


def watched(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        changes = not (
            (name == "open" and not args[1] & WRITE_FLAGS) or (name == "write" and args[0] <= 2)
        )
        if changes:
            passing(name)
        return real(*args, **kwargs)

    return call


class WatchedFile:
    """A file opened for writing with the built-in open: its writes are crash points."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def write(self, data: Any) -> Any:
        passing("file.write")
        return self._handle.write(data)

    def __enter__(self) -> WatchedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)


def watch_calls() -> None:
    """Route the calls that change files through `passing` (the library calls them as
    ``os.name``, and the built-in open, so patching the modules is enough)."""
    for name in WATCHED:
        setattr(os, name, watched(name, getattr(os, name)))
    real_open = builtins.open

    def open_watched(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        if not any(c in mode for c in "wxa+"):
            return handle
        passing("file.open")
        return WatchedFile(handle)

    builtins.open = open_watched


def main(argv: list[str]) -> None:
    global die_at
    if argv[:1] == ["--die-at"]:  # 0: only count, and print the calls at the end
        die_at = int(argv[1])
        argv = argv[2:]
        atexit.register(lambda: say("calls: " + ",".join(calls)))
        watch_calls()
    if argv[:1] == ["--fsize"]:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limit = int(argv[1])
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
        argv = argv[2:]
    operation, args = argv[0], argv[1:]
    try:
        if operation == "append":
            big_share = float(args[3]) if len(args) > 3 else 0.02
            append(args[0], int(args[1]), int(args[2]), big_share)
        elif operation == "cli":
            run_cli(args)
        elif operation == "open":
            say("go")
            Session.open(args[0])
        elif operation == "unlocked":
            pause = float(args[3]) if len(args) > 3 else 0.0
            append_unlocked(args[0], int(args[1]), int(args[2]), pause)
        elif operation == "fill":
            fill(args[0], int(args[1]))
            return
        elif operation == "list":
            say("go")
            list_sessions(args[0])
        else:
            sys.exit(f"unknown operation {operation!r}")
    except SessionWriteError as exc:
        say(f"refused: {type(exc).__name__}: {exc}")
        sys.exit(3)
    except JsonlSessionError as exc:
        say(f"refused: {type(exc).__name__}: {exc}")
        sys.exit(3)
    say("done")


if __name__ == "__main__":
    main(sys.argv[1:])
