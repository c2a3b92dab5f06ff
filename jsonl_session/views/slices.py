"""A long export or transcript rendered on every core: its entries cut into slices,
each slice rendered by a worker process, the texts taken back in order, so the output
is byte for byte what one process writes.

Owns when an export is long enough to spread (`PARALLEL_BYTES` of lines), the slices
(`Slice`: the entries' envelopes and where their lines are, never the session), and
`render_slice`, what a worker does: it reads only its slice's lines from the file
(by offset, a batch at a time), renders each entry with the slice's `render`
function (the one-process export's own: export/markdown.py's, html.py's, json.py's,
textconv.py's) and hands back the text and what it redacted. Its memory is one
slice's, whatever the size of the session. A text without a lone surrogate may be
handed on as the worker's bytes, or, when long, as the file the worker left it in
(`SPOOL_BYTES`; views/spool.py), which an output file copies as it is. A line of
`HERE_BYTES` or more is a slice of its own, rendered in the calling process in its
turn (`_Here`), and a long text is handed on in pieces, never copied into one (what
a piece is, and how pieces are taken on, is views/pieces.py's). When to start the
workers early is `warm_export`'s and `warm_workers`'; the pool (spawned processes,
results in order) is catalog/parallel.py's and processes.py's; what goes around the
entries is the caller's.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate, compress
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from jsonl_session.catalog.parallel import in_order
from jsonl_session.format.entry import StoredEntry, loads_object, raw_lines
from jsonl_session.processes import wanted_workers, warm_pool
from jsonl_session.storage.header import pi_file_size
from jsonl_session.storage.lines import LineSource
from jsonl_session.storage.table import no_source
from jsonl_session.views.pieces import Piece, Utf8Piece, utf8_of, utf8_parts
from jsonl_session.views.redact import Redactor
from jsonl_session.views.spool import SpooledPiece, SpooledText, new_spool, spool_text
from jsonl_session.views.visible import Escape, escaped, escaped_utf8

if TYPE_CHECKING:
    from concurrent.futures import Executor, ProcessPoolExecutor

PARALLEL_BYTES = 64 << 20
"""Exports of fewer bytes of lines than this are rendered in the calling process:
starting a worker (a Python and the package, 0.3-0.5 s) costs what rendering a few
tens of MB does."""
SLICE_BYTES = 1 << 20  # bytes of lines a worker renders before handing its text back
HERE_BYTES = 16 << 20
"""An entry whose line is this long is a slice of its own, rendered in the calling
process in its turn while the workers go on: from a worker its text would cross a
pipe whole (pickled, sent, read, taken apart), which costs more than a worker saves."""
SLICE_ENTRIES = 1024  # ...or this many entries, whichever comes first
SPOOL_BYTES = 64 << 10
"""A worker's text shorter than this comes back through the pipe, a longer one in a
file (views/spool.py) when the caller takes it as bytes: a file costs about what
piping that much does."""
# (the texts of four slices wait in memory at once: two queued for each worker)

EntryRecord = tuple[Any, ...]  # StoredEntry's fields, its `source` left out
Records = list[EntryRecord | bytes] | bytes
"""A slice's entries as a worker rebuilds them: one by one (records; a damaged line
as its bytes), or packed into one msgpack string as the index cache keeps entries
(`packed_records`)."""
Render = Callable[[StoredEntry | bytes, Any, Any, Any, Redactor], str | list[str] | bytes]
"""How an entry is rendered: (the entry, or a damaged line's bytes; its body; what
the caller says of that entry; what the caller says of all; the redactor) -> text;
or its pieces (`joined`: a huge text one of them, not copied into a join); or its
UTF-8 holding no lone surrogate (as orjson writes) for a render that writes bytes
itself (json.py's: every entry of a slice then as bytes). A module-level function,
so a worker finds it by name."""


@dataclass(frozen=True, slots=True)
class Slice:
    """What a worker renders: entries in order, as records (StoredEntry rebuilds
    them; a damaged line as its bytes), read from ``path``, each through ``render``
    with its item of ``context`` (or None) and ``shared``, the texts joined by
    ``separator``, each body decoded by ``body``. ``counted``: the lines of the entries
    whose secrets the caller has counted already (it showed them early, in a title or
    an outline).
    ``escape``: the escapes the text gets (views/visible.py), on the worker's bytes,
    once for the slice. ``spool``: set by `rendered_pieces` when its caller takes the
    text as bytes."""

    render: Render
    path: str
    redact: bool
    records: Records
    shared: Any = None
    context: list[Any] | None = None
    counted: frozenset[int] = frozenset()
    separator: str = ""
    body: Callable[[bytes], Any] = loads_object
    escape: Escape = ""
    spool: str | None = None  # the folder its text goes to as a file (views/spool.py)...
    spool_from: int = 0  # ...when it has this many bytes


def export_workers(workers: int | None, size: int) -> int:
    """How many processes render an export of ``size`` bytes of lines: ``workers``
    (None: one per usable core), and one when the export is short."""
    wanted = wanted_workers(workers)
    return 1 if size < PARALLEL_BYTES else wanted


def warm_export(
    path: Path | str | None, workers: int | None, *modules: str
) -> ProcessPoolExecutor | None:
    """Start the workers of a transcript of the session file at ``path`` now (see
    `warm_workers`) when it is long enough to spread (its size) and a pi file (its
    first line): they then start while the file is read."""
    size = pi_file_size(path) if path is not None else 0
    return warm_workers(workers, size, *modules) if size else None


def warm_workers(workers: int | None, size: int, *modules: str) -> ProcessPoolExecutor | None:
    """Start the workers of an export of ``size`` bytes of lines now, importing
    ``modules`` (the renderer's), when it is long enough to spread
    (processes.warm_pool: `rendered_pieces` then takes them); the pool, to let go with
    processes.drop_warm_pool if no one took it, or None."""
    count = export_workers(workers, size)
    return warm_pool(count, __name__, *modules) if count > 1 else None


def lines_size(entries: Sequence[StoredEntry]) -> int:
    return sum(map(_LENGTH_OF, entries))


def slices_of(items: Sequence[StoredEntry | int]) -> list[tuple[int, int]]:
    """Entries (or their sizes) cut into (start, stop) ranges of about `SLICE_BYTES`
    of lines or `SLICE_ENTRIES` entries; an entry of `HERE_BYTES` or more alone.
    Each cut is found by a search in the running sizes, not a step per entry."""
    try:
        lengths = list(map(_LENGTH_OF, items))
    except AttributeError:  # (sizes)
        lengths = [item if isinstance(item, int) else item.length for item in items]
    count = len(lengths)
    running = list(accumulate(lengths, initial=0))
    huge = list(compress(range(count), map(HERE_BYTES.__le__, lengths)))
    huge.append(count)
    cuts: list[tuple[int, int]] = []
    start = next_huge = 0
    while start < count:
        while huge[next_huge] < start:
            next_huge += 1
        if huge[next_huge] == start:  # alone
            cuts.append((start, start + 1))
            start += 1
            continue
        full = bisect_left(running, running[start] + SLICE_BYTES, start + 1)
        stop = min(full, start + SLICE_ENTRIES, huge[next_huge], count)
        cuts.append((start, stop))
        start = stop
    return cuts


_LENGTH_OF = attrgetter("length")


def record(entry: StoredEntry) -> EntryRecord:
    """``entry`` as a record a worker rebuilds it from (its open file stays here)."""
    return msgspec.structs.astuple(entry)[:-1]


def packed_records(items: Sequence[StoredEntry | bytes]) -> Records:
    """A slice's ``items`` (entries, and damaged lines as their bytes) as its records:
    packed into one msgpack string, which costs this process a third of making and
    pickling a record for each; one item alone (it may be a line rendered here:
    `_here` reads its length), or an entry msgpack cannot hold (an integer beyond
    64 bits, a lone surrogate in a text), as records one by one."""
    if len(items) > 1:
        try:
            return _packer.encode(items)
        except (msgspec.EncodeError, OverflowError, NotImplementedError, TypeError, ValueError):
            pass  # (UnicodeEncodeError is a ValueError)
    return [item if isinstance(item, bytes) else record(item) for item in items]


_packer = msgspec.msgpack.Encoder(enc_hook=no_source)
_unpacker = msgspec.msgpack.Decoder(list[StoredEntry | bytes])


def _unpacked(records: Records) -> list[StoredEntry | bytes]:
    """The items of a slice's records, each entry without its source."""
    if isinstance(records, bytes):
        return _unpacker.decode(records)
    return [item if isinstance(item, bytes) else StoredEntry(*item) for item in records]


class LazySlices(Sequence[Slice]):
    """Slices made when the pool asks for them, so the records of a whole session
    are never held at once."""

    def __init__(self, count: int, make: Any) -> None:
        self._count = count
        self._make = make

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._make(i) for i in range(*index.indices(self._count))]
        if not -self._count <= index < self._count:
            raise IndexError(index)
        return self._make(index % self._count)


def rendered_pieces(
    slices: Sequence[Slice],
    workers: int,
    redactor: Redactor,
    *,
    utf8: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> Iterator[tuple[int, Piece]]:
    """Each slice's text, rendered by ``workers`` processes, in pieces: (the slice's
    index, a piece), what they redacted added to ``redactor``'s counts. With
    ``utf8``, a piece without a lone surrogate comes as its bytes: a long one as the
    file a worker left it in (`SpooledPiece`), a short one as `Utf8Piece`.
    ``meanwhile``: the caller's work done while the workers render the first slices
    (catalog/parallel.py's `in_order`). A slice of one huge line is rendered here, in
    its turn, a piece at a time (`_Here`)."""
    spool = new_spool() if utf8 else None
    jobs = _Spooling(slices, spool.folder) if spool is not None else slices
    results = in_order(render_slice, jobs, workers, meanwhile, _here)
    try:
        for index, result in enumerate(results):
            if isinstance(result, _Here):
                for piece in result.pieces(redactor):
                    yield index, piece
                continue
            data, counts, plain = result
            redactor.counts.update(counts)
            if isinstance(data, SpooledText):
                assert spool is not None
                yield index, SpooledPiece(spool, data.name, data.size)
                continue
            for part in utf8_parts(data):
                yield (
                    index,
                    (Utf8Piece(part) if utf8 and plain else part.decode("utf-8", "surrogatepass")),
                )
    finally:
        results.close()  # (its workers stop before the spool may go)


class _Spooling(Sequence[Slice]):
    """``slices``, each to leave its text in the spool's ``folder``."""

    def __init__(self, slices: Sequence[Slice], folder: str) -> None:
        self._slices = slices
        self._folder = folder

    def __len__(self) -> int:
        return len(self._slices)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return replace(self._slices[index], spool=self._folder, spool_from=SPOOL_BYTES)


Rendered = tuple[bytes | SpooledText, dict[str, int], bool]


def _here(job: Slice) -> Callable[[Slice, Executor], Rendered | _Here] | None:
    """How a slice of one huge line is rendered in this process (in_order's ``here``)."""
    if not isinstance(job.records, list) or len(job.records) != 1:
        return None
    item = job.records[0]
    length = len(item) if isinstance(item, bytes) else item[_LENGTH]
    return _Here if length >= HERE_BYTES else None


_LENGTH = StoredEntry.__struct_fields__.index("length")


class _Here:
    """A slice rendered in the calling process when its pieces are taken: each piece
    of its text goes on as it is made, never joined or encoded here (the file it
    opens is let go after, not kept as a worker keeps it). The workers' ``pool``
    helps redact its huge texts (`Redactor`'s ``helpers``)."""

    def __init__(self, job: Slice, pool: Executor | None = None) -> None:
        self.job = job
        self.pool = pool

    def pieces(self, redactor: Redactor) -> Iterator[Piece]:
        """The pieces, what they redacted added to ``redactor``'s counts at the end."""
        job = self.job
        own = Redactor(enabled=job.redact, helpers=self.pool)
        try:
            for text in _slice_texts(job, own):
                # (bytes: UTF-8 without a lone surrogate, see Render)
                if isinstance(text, bytes):
                    yield Utf8Piece(escaped_utf8(text, job.escape))
                else:
                    yield escaped(text, job.escape)
        finally:
            _sources.pop(job.path, None)
        redactor.counts.update(own.counts)


_sources: dict[str, LineSource] = {}  # a worker's open files, one per session


def render_slice(job: Slice) -> Rendered:
    """A worker's work: the slice's text, what it redacted (by kind) and whether the
    text is plain UTF-8 (no lone surrogate). The text comes back as UTF-8 (lone
    surrogates kept) and is decoded only when its turn comes, if at all: the texts
    waiting their turn stay compact (a str holding one emoji takes four bytes a
    character). With a spool, a long plain text comes as the file it was left in
    (`SpooledText`)."""
    redactor = Redactor(enabled=job.redact)
    texts: list[Any] = []  # all str, or all bytes
    if job.separator:
        texts += _slice_texts(job, redactor)
    else:  # (the pieces of each entry taken at once, not yielded one by one)
        for text in _entry_texts(job, redactor):
            if isinstance(text, list):
                texts += text
            else:
                texts.append(text)
    if texts and isinstance(texts[0], bytes):  # UTF-8 without a lone surrogate
        data, plain = b"".join(texts), True
    else:
        data, plain = utf8_of(texts)
    if job.escape:  # (a lone surrogate, as surrogatepass writes it, holds no control)
        data = escaped_utf8(data, job.escape)
    if job.spool is not None and plain and len(data) >= job.spool_from and not data.isspace():
        name = spool_text(job.spool, data)
        if name is not None:
            return SpooledText(name, len(data)), dict(redactor.counts), True
    return data, dict(redactor.counts), plain


def _slice_texts(job: Slice, redactor: Redactor) -> Iterator[str | bytes]:
    """The slice's text in pieces, joined by nothing: each entry's (`_entry_texts`),
    its pieces one by one, the slice's separator between entries (as bytes between
    a render's bytes)."""
    separator, encoded = job.separator, job.separator.encode()
    for index, text in enumerate(_entry_texts(job, redactor)):
        if index and separator:
            yield encoded if isinstance(text, bytes) else separator
        if isinstance(text, list):
            yield from text
        else:
            yield text


def _entry_texts(job: Slice, redactor: Redactor) -> Iterator[str | list[str] | bytes]:
    """Each entry of the slice rendered (see `Render`), its secrets counted by
    ``redactor`` unless the caller counted them already."""
    items = _unpacked(job.records)
    entries = [item for item in items if isinstance(item, StoredEntry)]
    source = _sources.get(job.path)
    if source is None and any(entry.inline is None for entry in entries):
        # a worker serves one export: the file stays open for its next slices
        fd = os.open(job.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        source = _sources[job.path] = LineSource(Path(job.path), fd)
    for entry in entries:
        entry.source = source
    bodies = iter(raw_lines(entries))
    context = job.context
    decode = job.body
    for index, item in enumerate(items):
        said = context[index] if context is not None else None
        if isinstance(item, bytes):
            yield job.render(item, None, said, job.shared, redactor)
            continue
        data = decode(next(bodies))
        counted = item.line in job.counted
        before = Counter(redactor.counts) if counted else None
        rendered = job.render(item, data, said, job.shared, redactor)
        del data  # (a huge body is let go before its text is taken on)
        if before is not None:
            redactor.counts = before  # the caller counted this entry's secrets
        yield rendered
