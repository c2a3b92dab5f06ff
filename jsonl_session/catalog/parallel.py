"""Work on many files spread over the machine's cores: the listing and search of files
the cache cannot answer for (a cold run, or no cache) are cut into runs of files, each
run done in a worker process, and the results taken back in the order of the files,
so what is listed or found, and in what order, is what one process gives.

Owns how many workers (`worker_count`), when spreading pays (`PARALLEL_FROM` files),
and the runs in order (`in_order`, also views/slices.py's). The pool of spawned
workers, and why the library works in one process unless asked for ``workers``, are
processes.py's.
What a worker does with a run is the caller's (listing.py, search.py).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, TypeVar

from jsonl_session.errors import JsonlSessionError
from jsonl_session.processes import spawned_pool, wanted_workers

if TYPE_CHECKING:
    from concurrent.futures import Executor

PARALLEL_FROM = 5_000
"""Fewer files than this to read are read in the calling process: starting a worker
(a Python and the package: 0.2-0.4 s) costs what reading a few thousand small files does."""
RUN_FILES = 250  # files a worker reads before handing its results back
_MEANWHILE_QUEUED = 8  # runs handed to each worker before the caller's own work

Run = TypeVar("Run")
Result = TypeVar("Result")


def worker_count(workers: int | None, files: int) -> int:
    """How many processes to read ``files`` files with: ``workers`` (None: one per
    usable core), and one when there are too few files for more to pay."""
    wanted = wanted_workers(workers)
    return 1 if files < PARALLEL_FROM else max(1, min(wanted, files // RUN_FILES))


def runs_of(items: Sequence[Run], size: int = RUN_FILES) -> list[Sequence[Run]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def in_order(
    work: Callable[[Run], Result],
    runs: Sequence[Run],
    workers: int,
    meanwhile: Callable[[], object] | None = None,
    here: Callable[[Run], Callable[[Run, Executor], Result] | None] | None = None,
) -> Generator[Result, None, None]:
    """``work(run)`` of each run, done by ``workers`` spawned processes, yielded in
    the order of ``runs`` as each is ready. ``work`` must be a module-level function
    and runs and results picklable. Closing the iterator early stops what has not
    started. ``meanwhile``: the caller's own work, done here once the first runs are
    handed out (more of them then: the workers go on while it runs). ``here``: for a
    run whose result would cost more to send back than to make, the function that
    makes it in this process, in its turn (the workers go on meanwhile), given the
    pool for work of its own; else None."""
    from collections import deque
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    pool = spawned_pool(workers)

    def handed(run: Run) -> Future[Result] | Callable[[], Result]:
        local = here(run) if here is not None else None
        if local is not None:
            return lambda: local(run, pool)
        try:  # (a worker that ended breaks the pool: the next submission says so)
            return pool.submit(work, run)
        except BrokenProcessPool as exc:
            raise JsonlSessionError(f"a worker process ended abruptly: {exc}") from exc

    try:
        # Two runs queued for each worker: a result waits in memory only as long as
        # the run before it takes.
        pending: deque[Future[Result] | Callable[[], Result]] = deque()
        queued = 0
        while queued < min(len(runs), (2 if meanwhile is None else _MEANWHILE_QUEUED) * workers):
            pending.append(handed(runs[queued]))
            queued += 1
        if meanwhile is not None:
            meanwhile()
        while pending:
            done = pending.popleft()
            if queued < len(runs):
                pending.append(handed(runs[queued]))
                queued += 1
            if not isinstance(done, Future):
                yield done()
                continue
            try:
                result = done.result()
            except BrokenProcessPool as exc:
                raise JsonlSessionError(f"a worker process ended abruptly: {exc}") from exc
            yield result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
