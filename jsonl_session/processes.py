"""Worker processes: how many cores this process may use, and a pool of *spawned*
workers.

Spawned, never forked: a fork of a process with threads (a progress bar's, or an
embedding application's) can deadlock. A spawned worker imports the caller's
``__main__`` again, so a script that asks for workers must keep its work under
``if __name__ == "__main__":`` (the command line does); for that reason the library
works in one process unless asked for ``workers``. What goes to the workers is each
caller's: catalog/parallel.py (many files), views/slices.py (long exports),
breakdown_spread.py (the figures of a long session).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from jsonl_session.errors import JsonlSessionError

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


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
    fewer than one is refused."""
    if workers is not None and workers < 1:
        raise JsonlSessionError(f"workers must be 1 or more (or None for each core), not {workers}")
    return usable_cores() if workers is None else workers


def spawned_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes (imported only when work is spread)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
