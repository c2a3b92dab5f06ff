"""The stored part of `stats` kept in the cache: breakdown.py's `Stored` figures of a
session file (what its entries hold whatever the leaf, and each body entry's tokens),
so that `stats` on a file unchanged since costs reading that record instead of
decoding every message line again, which is most of a first run.

A record is used only for the file exactly as it was when the record was made: the
cache's stamp must hold with the file's size, mtime and ctime unchanged (no CRC read
of the file: a file that changed at all, appended to or touched, is measured again,
which costs less than reading it all for a CRC first), it must cover the whole file,
and the session read from it must have as many body entries, the last one ending
where the record says. Entries are read from the file's bytes alone, so the same bytes
give the same entries and the same figures. A record made for another number of
`largest` entries, or by another layout (`_VERSION`), is not used. A file under
1 MiB keeps no record (as its index is not cached either). Where the record
lives and how it is checked and written is storage/cache.py's; measuring is
breakdown.py's; this module decides when a record may stand for a measure.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import msgspec

from jsonl_session.breakdown import Largest, Stored, body_entries
from jsonl_session.breakdown_spread import HeadStart, head_start, measure_spread, warm_spread
from jsonl_session.format.entry import StoredEntry
from jsonl_session.processes import drop_warm_pool, warm_pool_waiting
from jsonl_session.storage.cache import RECORD_ENCODING_ERRORS, CacheOption, RecordCache, cache_root
from jsonl_session.storage.stamps import Stamp, stamp
from jsonl_session.usage import RecordedUsage, UsageTotal

_VERSION = 2  # the record's layout, and what measuring counts: a change gets a new one
_NO_CRC = -1  # the stamp's CRC-32: none (never equal to one), so only an unchanged file
_LINE_END_BYTES = 2  # at most "\r\n" after the last line
# Below this size a file is measured each time, as its index is not cached either:
# measuring it costs about what writing and checking a record would (and a write path,
# such as `compact`, then writes nothing to the cache).
SMALLEST_BYTES = 1 << 20


class _Total(msgspec.Struct, array_like=True):
    tokens: list[tuple[str, int]]  # in the Counter's order
    cost: float
    records: int


class _Record(msgspec.Struct, array_like=True):
    largest_count: int  # the `largest` it was measured with
    bodies: int  # how many body entries
    last_end: int  # where the last one's line ends (-1: none)
    stored_tokens: int
    by_entry_type: list[tuple[str, int]]
    by_role: list[tuple[str, int]]
    by_tool: list[tuple[str, int]]
    largest: list[tuple[str, int, str, int]]  # entry id, line, what, tokens
    total: _Total
    by_model: list[tuple[str, _Total]]
    by_kind: list[tuple[str, _Total]]
    tokens: list[int]


class KeptRecord:
    """A session file held open, its size and times taken before anything is measured
    (a change made since shows as one), and its record when the stamp holds
    (`kept_record`): read once, for `head_start_unless_kept` and `stored_figures`
    both. Closed by whoever made it."""

    __slots__ = ("before", "fd", "found", "records")

    def __init__(
        self,
        records: RecordCache[_Record],
        fd: int,
        before: os.stat_result,
        found: tuple[Stamp, _Record] | None,
    ) -> None:
        self.records, self.fd, self.before, self.found = records, fd, before, found

    @property
    def covers(self) -> bool:
        """Whether the record covers the whole file (it may stand: `_stands_for`)."""
        return self.found is not None and self.found[0].covered == self.before.st_size

    def close(self) -> None:
        os.close(self.fd)


def kept_record(session_path: Path, cache: CacheOption) -> KeptRecord | None:
    """The file at ``session_path`` and its record in ``cache`` (none read for a file
    under `SMALLEST_BYTES`); None without a cache, or for a file that cannot be opened."""
    root = cache_root(cache)
    if root is None:
        return None
    try:
        fd = os.open(session_path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        records = RecordCache(root, "stats", _Record, version=_VERSION)
        before = os.fstat(fd)
        found = None
        if before.st_size >= SMALLEST_BYTES:
            found = records.load(session_path, fd, unchanged_only=True)
    except BaseException:
        os.close(fd)
        raise
    return KeptRecord(records, fd, before, found)


def head_start_unless_kept(
    session_path: Path,
    kept: KeptRecord | None,
    from_the_end: Iterable[StoredEntry],
    largest: int,
    workers: int | None,
) -> HeadStart | None:
    """breakdown_spread.py's `head_start` for the session file at ``session_path``,
    whose entries ``from_the_end`` gives from the last back, to ``workers`` (None: a
    process per core), started now if none waits (`warm_spread`); None when its
    record (``kept``) covers the file as it is now (nothing is measured if it stands),
    or it is too short to spread. The caller lets it go (`HeadStart.release`)."""
    if kept is not None and kept.covers:
        return None
    started = None if warm_pool_waiting() else warm_spread(session_path, workers)
    head = head_start(from_the_end, largest)
    if head is None:
        if started is not None:
            drop_warm_pool(started)
        return None
    head.started = started
    return head


def stored_figures(
    session_path: Path,
    cache: CacheOption,
    entries: Sequence[StoredEntry],
    largest: int,
    workers: int | None = 1,
    meanwhile: Callable[[], object] | None = None,
    head: HeadStart | None = None,
    kept: KeptRecord | None = None,
) -> Stored:
    """`measure_stored` of the body entries of ``entries``, which were read from the
    file at ``session_path``: from its record in ``cache`` when one stands for them,
    else measured, by ``workers`` processes when the session is long (see
    breakdown_spread.py; the record written when the file is as it was read).
    ``meanwhile``: the caller's other work, called once (while workers measure, if
    they do: `measure_spread`); ``head``: `head_start_unless_kept`'s; ``kept``: the
    file and its record as the caller read them (`kept_record`; else read here)."""
    bodies = body_entries(entries)
    own = kept is None
    if kept is None:
        kept = kept_record(session_path, cache)
    if kept is None:
        return measure_spread(bodies, largest, workers, meanwhile, head)
    try:
        before = kept.before
        if before.st_size < SMALLEST_BYTES:
            return measure_spread(bodies, largest, workers, meanwhile, head)
        if kept.found is not None and kept.covers and _stands_for(kept.found[1], bodies, largest):
            if head is not None:
                head.drop()
            if meanwhile is not None:
                meanwhile()
            return _from_record(kept.found[1])
        measured = measure_spread(bodies, largest, workers, meanwhile, head)
        if _read_whole(entries, before.st_size):
            record = _to_record(measured, bodies, largest)
            try:
                msgspec.msgpack.encode(record)  # (a value msgpack cannot hold: not kept)
            except RECORD_ENCODING_ERRORS:
                return measured
            mark = stamp(kept.fd, before.st_size, _NO_CRC, before)
            kept.records.save(session_path, mark, record)
        return measured
    finally:
        if own:
            kept.close()


def _last_end(bodies: Sequence[StoredEntry]) -> int:
    return bodies[-1].offset + bodies[-1].length if bodies else -1


def _stands_for(record: _Record, bodies: Sequence[StoredEntry], largest: int) -> bool:
    return (
        record.largest_count == largest
        and record.bodies == len(bodies)
        and record.last_end == _last_end(bodies)
        and len(record.tokens) == len(bodies)
    )


def _read_whole(entries: Sequence[StoredEntry], size: int) -> bool:
    """Whether ``entries`` were read from a file of ``size`` bytes whole: its last
    line, a line end after it, ends the file (else more may have been written since,
    or a last line not yet whole was left out)."""
    if not entries:
        return False
    last = max(entries, key=lambda entry: entry.offset)
    return 0 < size - (last.offset + last.length) <= _LINE_END_BYTES


def _to_record(stored: Stored, bodies: Sequence[StoredEntry], largest: int) -> _Record:
    recorded = stored.recorded
    return _Record(
        largest,
        len(bodies),
        _last_end(bodies),
        stored.stored_tokens,
        list(stored.by_entry_type.items()),
        list(stored.by_role.items()),
        list(stored.by_tool.items()),
        [(item.entry_id, item.line, item.what, item.tokens) for item in stored.largest],
        _total_record(recorded.total),
        [(name, _total_record(total)) for name, total in recorded.by_model.items()],
        [(name, _total_record(total)) for name, total in recorded.by_kind.items()],
        stored.tokens,
    )


def _from_record(record: _Record) -> Stored:
    recorded = RecordedUsage(
        _total(record.total),
        {name: _total(total) for name, total in record.by_model},
        {name: _total(total) for name, total in record.by_kind},
    )
    return Stored(
        record.stored_tokens,
        Counter(dict(record.by_entry_type)),
        Counter(dict(record.by_role)),
        Counter(dict(record.by_tool)),
        [Largest(*item) for item in record.largest],
        recorded,
        record.tokens,
    )


def _total_record(total: UsageTotal) -> _Total:
    return _Total(list(total.tokens.items()), total.cost, total.records)


def _total(record: _Total) -> UsageTotal:
    return UsageTotal(Counter(dict(record.tokens)), record.cost, record.records)
