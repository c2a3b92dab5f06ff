"""The figures of a long session measured on every core: `stats` of a session of
hundreds of MB decodes every message line, which one process does at about 250 MB/s.

Owns when a session is long enough to spread (`SPREAD_BYTES` of lines), how its body
entries are shared (chunks of `CHUNK_BYTES`: the calling process measures them from
the first on, spawned workers from the last back, until the two ends meet; the last
chunks may be handed out before the session's entries are all built, `head_start`),
what a worker gets (`Part`: the few columns of its entries that measuring reads, never the
session; storage/columns.py) and does (`measure_in_worker`: it reads its entries'
lines from the file by offset), and how the parts' figures join: counts added in
order, the largest entries merged, and the usage tallies merged so that costs are
added in the order one pass adds them. The result is exactly breakdown.py's
`measure_stored` of all the entries; what is measured, and how, is breakdown.py's
and line_sizes.py's; the pool is processes.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jsonl_session.breakdown import Stored, is_body, measure_part, measure_stored
from jsonl_session.format.entry import StoredEntry
from jsonl_session.processes import (
    drop_warm_pool,
    spawned_pool,
    submit_warm,
    wanted_workers,
    warm_pool,
    warm_pool_waiting,
)
from jsonl_session.storage.columns import EntryColumns, entry_columns
from jsonl_session.storage.header import pi_file_size
from jsonl_session.usage import UsageTally

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

SPREAD_BYTES = 64 << 20
"""Sessions of fewer bytes of lines are measured in the calling process: starting a
worker (a Python and the package, 0.2-0.4 s) costs what measuring 50-100 MB does."""
CHUNK_BYTES = 16 << 20
"""The bytes of lines handed out at a time: this process and each worker measure
chunks until none is left (a tenth of a second each, at 150-250 MB/s)."""


@dataclass(frozen=True, slots=True)
class Part:
    """What a worker measures: entries of the session as columns (storage/columns.py),
    and how many of the largest to keep."""

    columns: EntryColumns
    largest: int


@dataclass(slots=True)
class HeadStart:
    """The last body entries of a session (``tail``, in file order), already handed to
    the waiting workers in chunks (``cuts``, ranges of ``tail``) whose figures
    ``futures`` will give: see `head_start`."""

    tail: list[StoredEntry]
    cuts: list[tuple[int, int]] = field(default_factory=list)
    futures: list[Future[tuple[Stored, UsageTally]]] = field(default_factory=list)
    started: ProcessPoolExecutor | None = None  # the pool started for it, if it was

    def drop(self) -> None:
        """Not used: the figures are had otherwise. Its chunks are left to run, not
        cancelled: the pool may go on (see `measure_spread`)."""
        self.futures = []
        self.release()

    def release(self) -> None:
        """Let go of the pool started for it, unless `measure_spread` took it."""
        if self.started is not None:
            drop_warm_pool(self.started)
            self.started = None


def head_start(from_the_end: Iterable[StoredEntry], largest: int) -> HeadStart | None:
    """Hand the last chunks of a session's body entries to the workers `warm_spread`
    started, taking its entries from the last back
    (``from_the_end``: an index-cache table builds only the blocks asked for). The
    workers then measure while this process builds every entry, which takes it a
    tenth of a second or more on a session long enough to spread. None when no
    worker waits, or the session is too short to keep any entry for this process."""
    workers = warm_pool_waiting()
    if workers < 1:
        return None
    # one chunk each and one queued, as `measure_spread` hands them out (never more:
    # a future handed out cannot be taken back safely, see there), each twice as long,
    # so that they last about as long as this process takes to build every entry
    wanted = workers + 1
    tail: list[StoredEntry] = []
    sizes: list[int] = []  # each chunk's entries, from the last back
    seen = 0
    for entry in from_the_end:
        if len(sizes) == wanted:
            break  # (an entry is left for this process)
        if is_body(entry):
            tail.append(entry)
            seen += entry.length
            if seen >= 2 * CHUNK_BYTES:
                sizes.append(len(tail) - sum(sizes))
                seen = 0
    else:
        return None
    tail.reverse()
    path = _one_file(tail)
    if path is None:
        return None
    head = HeadStart(tail)
    stop = len(tail)
    for size in sizes:  # the last chunk first, as `measure_spread` hands them out
        cut = (stop - size, stop)
        future = submit_warm(
            measure_in_worker, Part(entry_columns(path, tail[slice(*cut)]), largest)
        )
        if future is None:
            break
        head.cuts.append(cut)
        head.futures.append(future)
        stop -= size
    if not head.futures:
        return None
    del tail[:stop]  # (entries no chunk holds are measured with the rest)
    head.cuts = [(start - stop, end - stop) for start, end in head.cuts]
    return head


def spread_workers(workers: int | None, size: int) -> int:
    """How many processes measure a session of ``size`` bytes of lines: ``workers``
    (None: one per usable core), and one when the session is short."""
    wanted = wanted_workers(workers)
    return 1 if size < SPREAD_BYTES else wanted


def warm_spread(path: Path | str, workers: int | None) -> ProcessPoolExecutor | None:
    """Start the workers that will measure the session file at ``path`` now, when it is
    long enough to spread (its size) and a pi file (its first line: another agent's
    lines are held in memory and measured here): they then start while the session
    is opened (processes.warm_pool; `measure_spread` takes them). The pool, to let
    go with processes.drop_warm_pool whether or not it was taken (the figures may be
    cached), or None."""
    size = pi_file_size(path)
    count = spread_workers(workers, size) if size else 1
    return warm_pool(count - 1, __name__) if count > 1 else None


def measure_spread(
    bodies: Sequence[StoredEntry],
    largest: int = 10,
    workers: int | None = 1,
    meanwhile: Callable[[], object] | None = None,
    head: HeadStart | None = None,
) -> Stored:
    """`measure_stored` of ``bodies``, by ``workers`` processes (see `spread_workers`)
    when they are long enough and their lines are read from one file. ``meanwhile``:
    the caller's other work, called once: while the workers measure, when they do
    (the workers are otherwise idle while this process works alone), else after.
    ``head``: the last of ``bodies`` already handed out (`head_start`); its figures
    are used when it holds the very last of them and the session is spread."""
    if workers == 1:  # (the library's default: no sum of the sizes)
        return _alone(bodies, largest, meanwhile, head)
    size = sum(entry.length for entry in bodies)
    count = spread_workers(workers, size)
    path = _one_file(bodies)
    if count == 1 or path is None:
        return _alone(bodies, largest, meanwhile, head)
    handed: dict[int, Future[tuple[Stored, UsageTally]]] = {}
    if head is not None and _ends(head, bodies):
        kept = len(bodies) - len(head.tail)
        chunks = _chunks(bodies[:kept])
        for (start, stop), future in reversed(list(zip(head.cuts, head.futures, strict=True))):
            handed[len(chunks)] = future
            chunks.append((kept + start, kept + stop))
    else:
        if head is not None:
            head.drop()
        chunks = _chunks(bodies)
        if len(chunks) == 1:  # (one entry holds nearly all the bytes)
            return _then(measure_stored(bodies, largest), meanwhile)
    from concurrent.futures.process import BrokenProcessPool

    pool = spawned_pool(count - 1)
    try:
        # This process measures the chunks from the first on, the workers from the
        # last back, each handed one when it is free (and one queued), until the
        # two ends meet: however long the workers take to start or the others
        # ask of this process, all finish within about a chunk of each other.
        low, high = 0, len(chunks) - len(handed)

        broken = False

        def hand_out() -> None:
            nonlocal high, broken
            busy = sum(not future.done() for future in handed.values())
            # (count - 1 workers, and one chunk queued)
            while not broken and busy < count and high - 1 > low:
                start, stop = chunks[high - 1]
                part = Part(entry_columns(path, bodies[start:stop]), largest)
                try:
                    handed[high - 1] = pool.submit(measure_in_worker, part)
                except BrokenProcessPool:
                    # a worker died (its chunks are measured again below): the
                    # chunks not handed out yet are this process's
                    broken = True
                    return
                high -= 1
                busy += 1

        hand_out()
        if meanwhile is not None:
            meanwhile()
            hand_out()  # (those that finished meanwhile)
        tally = UsageTally()
        out = Stored()
        while low < high:
            start, stop = chunks[low]
            _join(out, measure_part(bodies[start:stop], largest, tally), largest)
            low += 1
            hand_out()
        for index in range(high, len(chunks)):  # in order
            # (a future is never cancelled here to be measured instead: on Python 3.11
            # a worker that died after that left the pool's manager thread dead and
            # the other workers waiting for ever, CPython gh-107219)
            try:
                later, later_tally = handed[index].result()
            except Exception:
                # measured again here, which raises the error whole: a worker's may not
                # cross processes (a session error does not unpickle; a dead worker is
                # only BrokenProcessPool)
                start, stop = chunks[index]
                later_tally = UsageTally(keep_costs=True)
                later = measure_part(bodies[start:stop], largest, later_tally)
            _join(out, later, largest)
            tally.merge(later_tally)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    out.recorded = tally.recorded()
    return out


def _alone(
    bodies: Sequence[StoredEntry],
    largest: int,
    meanwhile: Callable[[], object] | None,
    head: HeadStart | None,
) -> Stored:
    """`measure_stored` in this process (a head start's figures are not used)."""
    if head is not None:
        head.drop()
    return _then(measure_stored(bodies, largest), meanwhile)


def _ends(head: HeadStart, bodies: Sequence[StoredEntry]) -> bool:
    """Whether ``head`` holds the last of ``bodies`` (the same entries: both were
    taken from one index, whose entries are built once)."""
    tail = head.tail
    return 0 < len(tail) <= len(bodies) and bodies[-len(tail)] is tail[0] and bodies[-1] is tail[-1]


def _then(stored: Stored, meanwhile: Callable[[], object] | None) -> Stored:
    if meanwhile is not None:
        meanwhile()
    return stored


def measure_in_worker(part: Part) -> tuple[Stored, UsageTally]:
    """A worker's work: the figures of ``part``'s entries, and its usage tally."""
    tally = UsageTally(keep_costs=True)
    stored = measure_part(part.columns.entries(), part.largest, tally)
    tally.fold()  # (its sums cross to the caller, not a row per record)
    return stored, tally


def _one_file(bodies: Sequence[StoredEntry]) -> str | None:
    """The path of the one file the lines not in memory are read from, or None
    (lines from several files or from none: measured in this process)."""
    found = None
    for entry in bodies:
        if entry.inline is None:
            source = entry.source
            if source is None or (found is not None and source is not found):
                return None
            found = source
    path = getattr(found, "path", None)
    return str(path) if path is not None else None


def _chunks(bodies: Sequence[StoredEntry]) -> list[tuple[int, int]]:
    """``bodies`` cut into contiguous ranges of about `CHUNK_BYTES` of lines (a
    longer entry alone in its range)."""
    cuts: list[tuple[int, int]] = []
    start = seen = 0
    for index, entry in enumerate(bodies):
        seen += entry.length
        if seen >= CHUNK_BYTES:
            cuts.append((start, index + 1))
            start, seen = index + 1, 0
    if start < len(bodies):
        cuts.append((start, len(bodies)))
    return cuts


def _join(out: Stored, later: Stored, largest: int) -> None:
    """Add to ``out`` the figures of the entries measured after its own."""
    out.stored_tokens += later.stored_tokens
    out.by_entry_type.update(later.by_entry_type)  # (new keys after, as one pass adds them)
    out.by_role.update(later.by_role)
    out.by_tool.update(later.by_tool)
    out.tokens.extend(later.tokens)
    # each list is largest first, earlier first among equals, and every entry of
    # ``later`` comes after ``out``'s: a stable sort by size keeps that order
    joined = sorted([*out.largest, *later.largest], key=lambda item: -item.tokens)
    out.largest = joined[:largest]
