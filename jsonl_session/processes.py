"""Worker processes: how many cores this process may use, and a pool of *spawned*
workers.

Spawned, never forked: a fork of a process with threads (a progress bar's, or an
embedding application's) can deadlock. A spawned worker imports the caller's
``__main__`` again, so a script that asks for workers must keep its work under
``if __name__ == "__main__":`` (the command line does); for that reason the library
works in one process unless asked for ``workers``, and always for a script read from
stdin (a worker could not import it again). What goes to the workers is each
caller's: catalog/parallel.py (many files), views/slices.py (long exports),
breakdown_spread.py (the figures of a long session). A caller that knows it will
spread may start the pool early (`warm_pool`), so that the workers' start overlaps its
own work; the next `spawned_pool` of that size in the same thread takes it, and one
no one took is let go (`drop_warm_pool`). A worker keeps the top of its heap when
it frees memory (`TOP_PAD_BYTES`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from jsonl_session.errors import JsonlSessionError

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future, ProcessPoolExecutor


def usable_cores() -> int:
    """The cores this process may run on."""
    counting = getattr(os, "process_cpu_count", None)  # 3.13: the affinity mask's
    if counting is not None:
        return int(counting() or 1)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def wanted_workers(workers: int | None) -> int:
    """The processes a caller asks for: ``workers``, None meaning one per usable core;
    fewer than one is refused. One, whatever was asked, when a spawned worker could
    not import the caller's ``__main__`` again (`_main_respawnable`): the results are
    the same in one process."""
    if workers is not None and workers < 1:
        raise JsonlSessionError(f"workers must be 1 or more (or None for each core), not {workers}")
    if not _main_respawnable():
        return 1
    return usable_cores() if workers is None else workers


def _main_respawnable() -> bool:
    """Whether a spawned process can run the caller's ``__main__`` again, as spawning
    does: by its module name (``python -m``), by its file, or not at all (``python
    -c``, an interactive session). A script read from stdin or a pipe names a file
    that is not there ("<stdin>"), and every worker would die starting."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "__spec__", None) is not None:
        return True
    return os.path.isfile(path)


def spawned_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes (imported only when work is spread):
    the one `warm_pool` started in this thread, when it has that many, else a new one."""
    global _warm
    with _lock:
        if _warm is not None and _warm[1:] == (workers, threading.get_ident()):
            pool, _warm = _warm[0], None
            return pool
    return _new_pool(workers)


def warm_pool(workers: int, *modules: str) -> ProcessPoolExecutor | None:
    """Start ``workers`` spawned processes now, each importing ``modules``, for the
    next `spawned_pool` of that size in this thread to take: a spawned worker takes a
    few tenths of a second to start, which then pass while the caller makes the head
    of an export it knows will spread, or opens the session it will measure. One
    waits at a time; the pool started (None when one waits already, or for no
    worker) is the caller's to let go with `drop_warm_pool` if no one takes it."""
    global _warm
    with _lock:
        if workers < 1 or _warm is not None:
            return None
        pool = _new_pool(workers)
        for _ in range(workers):  # each submission starts one more process
            pool.submit(_import, modules)
        _warm = (pool, workers, threading.get_ident())
        return pool


def warm_pool_waiting() -> int:
    """How many workers the pool `warm_pool` started in this thread has, if one waits
    (for `submit_warm`); else 0."""
    with _lock:
        return _warm[1] if _warm is not None and _warm[2] == threading.get_ident() else 0


def submit_warm(function: Callable[..., Any], *args: Any) -> Future[Any] | None:
    """``function(*args)`` on a worker of the pool `warm_pool` started in this thread,
    when one waits (the pool stays there for `spawned_pool`); else None, the caller's
    to do: also when a worker of that pool ended, which lets the pool go."""
    from concurrent.futures.process import BrokenProcessPool

    global _warm
    with _lock:
        if _warm is None or _warm[2] != threading.get_ident():
            return None
        pool = _warm[0]
        try:
            return pool.submit(function, *args)
        except BrokenProcessPool:  # a worker ended (it could not start): none waits now
            _warm = None
    pool.shutdown(wait=False, cancel_futures=True)
    return None


class WarmHelpers:
    """Work for the pool `warm_pool` started in this thread, while one waits
    (`submit_warm`): an executor's ``submit`` that raises RuntimeError when none
    does, leaving the work to the caller. For help on the side that must not hold a
    pool up: a redactor's (redaction/spread.py) while an export's head is made."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        future = submit_warm(fn, *args)
        if future is None:
            raise RuntimeError("no worker waits in this thread")
        return future

    def accepts(self) -> bool:
        """Whether `submit` would take work now: asked before making what only a
        worker would use (spread.py's copy of a huge text in shared memory)."""
        return warm_pool_waiting() > 0


def drop_warm_pool(pool: ProcessPoolExecutor | None = None) -> None:
    """Let go of ``pool`` (None: whichever) if it still waits, no one having taken it
    (its workers end once started; nothing waits for them here).

    The collector may run this (an export's finalizer, a generator's ``finally``)
    anywhere, also inside a section of this very thread that holds the lock (an
    allocation in ``pool.submit``, in `submit_warm`), where waiting for the lock would
    wait for ever: when it is held, a thread of its own waits for it instead."""
    if _lock.acquire(blocking=False):
        _drop_locked(pool)
        return
    with contextlib.suppress(RuntimeError):  # (at interpreter exit: its pools go with it)
        threading.Thread(target=_drop_when_free, args=(pool,), daemon=True).start()


def _drop_when_free(pool: ProcessPoolExecutor | None) -> None:
    _lock.acquire()
    _drop_locked(pool)


def _drop_locked(pool: ProcessPoolExecutor | None) -> None:
    """`drop_warm_pool`'s work, the lock taken (and released here)."""
    global _warm
    try:
        if _warm is None or (pool is not None and _warm[0] is not pool):
            return
        dropped, _warm = _warm[0], None
    finally:
        _lock.release()
    dropped.shutdown(wait=False, cancel_futures=True)


def _import(modules: tuple[str, ...]) -> None:
    import importlib

    for module in modules:
        importlib.import_module(module)


def _new_pool(workers: int) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_keep_heap_top,
    )
    _widen_pipes(pool)
    return pool


TOP_PAD_BYTES = 16 << 20
"""What a worker's malloc keeps at the top of its heap when it gives memory back, and
adds when it grows it (glibc's M_TOP_PAD; its default is 128 KiB). A worker decodes
and renders a slice (a MiB of lines, tens of MB of objects), lets all of it go, and
starts the next: with the default, the heap shrank and grew again each time, and each
page taken again cost a fault in the kernel. Exporting a 500 MB session, the workers
took 470,000 page faults and 1.0 s of system time; with this, 12,000 and 0.3 s, and
the text conversion's wall time went from 3.4 to 2.7 s. The largest heap is no
larger: the pad is only what stays between two slices. Setting it turns glibc's
moving mmap threshold off (mallopt(3)): a block over 128 KiB is then always mapped
and unmapped. On the exports' work that made no difference (faults, time and peak
alike with the threshold fixed at 4 or 32 MiB), so it is left as it is."""
_M_TOP_PAD = -2  # (glibc's malloc.h)
allocator_tuned = False  # whether `_keep_heap_top` took effect in this process


def _keep_heap_top() -> None:
    """Set `TOP_PAD_BYTES` as a worker starts (glibc; elsewhere nothing changes)."""
    global allocator_tuned
    if not sys.platform.startswith("linux"):
        return
    # Only a tuning: a worker that cannot have it works as it would without it (a
    # Python built without ctypes, a C library without mallopt).
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt  # (musl has it too, doing nothing)
        allocator_tuned = mallopt(_M_TOP_PAD, TOP_PAD_BYTES) == 1
    except (ImportError, AttributeError, OSError, TypeError, ValueError):
        return


PIPE_BYTES = 1 << 20
"""How much a pool's pipes hold on Linux (its default, 64 KiB, is what an unprivileged
process may raise to 1 MiB): a worker's text (a MiB a slice) then crosses in a few
writes, not in sixteen each waiting for this process to read. Half a GB of text
crossed in 0.66 s instead of 1.07 s."""


def _widen_pipes(pool: ProcessPoolExecutor) -> None:
    """Give the pipes of ``pool``'s queues (the results coming back, the work going
    out) PIPE_BYTES each, where the system allows it; where not, they stay as they are."""
    if not sys.platform.startswith("linux"):
        return
    import fcntl  # (Linux only: the package imports no POSIX-only module at its import)

    set_size = getattr(fcntl, "F_SETPIPE_SZ", 1031)
    for queue in (getattr(pool, "_result_queue", None), getattr(pool, "_call_queue", None)):
        reader = getattr(queue, "_reader", None)
        try:
            fcntl.fcntl(reader.fileno(), set_size, PIPE_BYTES)  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):
            continue  # (a queue of another shape, or a limit set lower)


_warm: tuple[ProcessPoolExecutor, int, int] | None = None  # the pool, its size, whose
_lock = threading.Lock()
