"""The figures of a long session measured on every core: `stats` of a session of
hundreds of MB decodes every message line, which one process does at about 250 MB/s.

Owns when a session is long enough to spread (`SPREAD_BYTES` of lines), how its body
entries are shared (chunks of `CHUNK_BYTES`: the calling process measures them from
the first on, spawned workers from the last back, until the two ends meet), what a
worker gets (`Part`: the few columns of its entries that measuring reads, never the
session; storage/columns.py) and does (`measure_in_worker`: it reads its entries'
lines from the file by offset), and how the parts' figures join: counts added in
order, the largest entries merged, and the usage tallies merged so that costs are
added in the order one pass adds them. The result is exactly breakdown.py's
`measure_stored` of all the entries; what is measured, and how, is breakdown.py's
and line_sizes.py's; the pool is processes.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jsonl_session.breakdown import Stored, measure_part, measure_stored
from jsonl_session.format.entry import StoredEntry
from jsonl_session.processes import spawned_pool, wanted_workers, warm_pool
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
) -> Stored:
    """`measure_stored` of ``bodies``, by ``workers`` processes (see `spread_workers`)
    when they are long enough and their lines are read from one file. ``meanwhile``:
    the caller's other work, called once: while the workers measure, when they do
    (the workers are otherwise idle while this process works alone), else after."""
    if workers == 1:  # (the library's default: no sum of the sizes)
        return _then(measure_stored(bodies, largest), meanwhile)
    size = sum(entry.length for entry in bodies)
    count = spread_workers(workers, size)
    path = _one_file(bodies)
    if count == 1 or path is None:
        return _then(measure_stored(bodies, largest), meanwhile)
    chunks = _chunks(bodies, size)
    if len(chunks) == 1:  # (one entry holds nearly all the bytes)
        return _then(measure_stored(bodies, largest), meanwhile)
    from concurrent.futures.process import BrokenProcessPool

    pool = spawned_pool(count - 1)
    try:
        # This process measures the chunks from the first on, the workers from the
        # last back, each handed one when it is free (and one queued), until the
        # two ends meet: however long the workers take to start or the others
        # ask of this process, all finish within about a chunk of each other.
        handed: dict[int, Future[tuple[Stored, UsageTally]]] = {}
        low, high = 0, len(chunks)

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


def _then(stored: Stored, meanwhile: Callable[[], object] | None) -> Stored:
    if meanwhile is not None:
        meanwhile()
    return stored


def measure_in_worker(part: Part) -> tuple[Stored, UsageTally]:
    """A worker's work: the figures of ``part``'s entries, and its usage tally."""
    tally = UsageTally(keep_costs=True)
    return measure_part(part.columns.entries(), part.largest, tally), tally


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


def _chunks(bodies: Sequence[StoredEntry], size: int) -> list[tuple[int, int]]:
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
