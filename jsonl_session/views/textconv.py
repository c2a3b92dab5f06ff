"""The plain-text transcript that ``git diff`` shows through ``textconv``.

Owns the stable text of a whole session file: one block per line in file order (so
appending entries changes only the end), damaged lines marked, no current time and no
path of the file itself, every control character escaped (views/visible.py). What a
line's block says is textconv_blocks.py's (and transcript.py's); reading the file is
storage/loader.py's. Nothing here
writes a session: `write_textconv` writes the transcript to the caller's stream.
"""

from __future__ import annotations

import io
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO, Any

from jsonl_session.errors import SessionFormatError
from jsonl_session.format.entry import StoredEntry, loads_object, raw_lines
from jsonl_session.format.walk import as_text
from jsonl_session.processes import drop_warm_pool
from jsonl_session.storage.cache import CacheOption
from jsonl_session.storage.loader import load_entries
from jsonl_session.views.pieces import Piece, encoded_pieces, file_pieces, texts_of
from jsonl_session.views.redact import Redactor
from jsonl_session.views.slices import (
    LazySlices,
    Slice,
    export_workers,
    packed_records,
    rendered_pieces,
    slices_of,
    warm_export,
)
from jsonl_session.views.spool import SpooledPiece
from jsonl_session.views.table_slices import table_slices
from jsonl_session.views.textconv_blocks import decode_line, indent, item_block, item_block_after
from jsonl_session.views.transcript import dump_json
from jsonl_session.views.visible import Escape, escaped


def textconv(path: Path | str, *, cache: CacheOption = None) -> str:
    """A stable plain-text transcript of a session file for ``git diff``.

    One block per line of the file, in file order, so appending entries changes only
    the end. Damaged lines appear as such; a file that cannot be read as a session
    still gives its lines. No current time, no path of the file itself. ``cache``: as
    for `Session.open` (False: read the file in full, leave the cache alone).
    """
    return "".join(textconv_chunks(path, cache=cache))


def textconv_chunks(
    path: Path | str, *, cache: CacheOption = None, workers: int | None = 1, visible: bool = False
) -> Iterator[str]:
    """The transcript of `textconv` in pieces, one line of the file at a time, to
    write as they come (memory bounded by the largest entry, not the session). A long
    file is rendered by ``workers`` processes (views/slices.py; None: one per core),
    the same text; they are spawned (see catalog/parallel.py). ``visible``: with the
    C1 and bidirectional controls escaped too, as a terminal must be shown them
    (views/visible.py's `visible`; the transcript escapes the others always)."""
    pieces = _warmed(path, cache, workers, _escape(visible))
    try:
        yield from texts_of(pieces)
    finally:
        pieces.close()  # (its workers let go at once when this one is closed early)


def textconv_encoded(
    path: Path | str, *, cache: CacheOption = None, workers: int | None = 1, visible: bool = False
) -> Iterator[bytes]:
    """`textconv_chunks` as UTF-8 (a lone surrogate as a backslash escape, as the
    command prints it), for a byte stream: the workers' pieces as they wrote them,
    never decoded here, and small pieces joined (views/slices.py's `encoded_pieces`)."""
    pieces = _warmed(path, cache, workers, _escape(visible))
    try:
        yield from encoded_pieces(pieces)
    finally:
        pieces.close()


def write_textconv(
    path: Path | str,
    stream: IO[bytes],
    *,
    cache: CacheOption = None,
    workers: int | None = 1,
    visible: bool = False,
) -> int:
    """Write `textconv_encoded` to the binary ``stream`` (standard output, a pipe, a
    file) and return how many bytes that was. A worker's long text goes from the file
    it left it in to ``stream``'s file by the kernel where it can (copy_file_range,
    sendfile: storage/outputs.py), never read here, when ``stream`` is a plain binary
    file object (`open(..., "wb")`, ``sys.stdout.buffer``); any other stream gets it
    through its own write. The escaping ``visible`` asks for is done by the workers.
    Raises OSError as writing ``stream`` does (a closed pipe: BrokenPipeError)."""
    target = _file_of(stream)
    written = 0
    pieces = _warmed(path, cache, workers, _escape(visible))
    try:
        for item in file_pieces(pieces):
            if isinstance(item, SpooledPiece) and target is not None:
                stream.flush()  # (what was written before goes first)
                item.copy_to_fd(target)
                written += item.size
                continue
            data = item.take() if isinstance(item, SpooledPiece) else item
            view = memoryview(data)
            while view:  # (a pipe may take a long write in parts: the rest goes on)
                took = stream.write(view)
                view = view[took if took is not None else len(view) :]  # (None: all)
            written += len(data)
    finally:
        pieces.close()
    stream.flush()
    return written


def _file_of(stream: IO[bytes]) -> int | None:
    """The descriptor that writing to ``stream`` writes to as it is, or None: only a
    plain binary file object's. A stream that changes what it writes (gzip, bz2, lzma:
    their fileno() is the compressed file's) or counts it must get every byte through
    its own write."""
    if type(stream) not in (io.BufferedWriter, io.BufferedRandom, io.FileIO):
        return None
    try:
        return stream.fileno()
    except (OSError, ValueError):  # (io.UnsupportedOperation is both)
        return None


def _escape(visible: bool) -> Escape:
    return "visible" if visible else "controls"


def _warmed(
    path: Path | str, cache: CacheOption, workers: int | None, escape: Escape
) -> Generator[Piece, None, None]:
    warm = warm_export(path, workers, __name__)  # they start while the file is read
    try:
        yield from _chunks(path, cache, workers, escape)
    finally:
        if warm is not None:  # (None would let go of another caller's waiting pool)
            drop_warm_pool(warm)  # if none took it


def _chunks(
    path: Path | str, cache: CacheOption, workers: int | None, escape: Escape
) -> Iterator[Piece]:
    """The transcript's pieces, each escaped as ``escape`` says: a worker's by the
    worker, and the text of one huge line in its pieces (views/slices.py)."""
    try:
        loaded = load_entries(path, cache=cache)
    except SessionFormatError as exc:
        yield escaped(_unreadable(Path(path), exc), escape)
        return
    header = dict(loaded.header)
    head = [f"session {as_text(header.pop('id', '?'))} (format version {loaded.version_read})"]
    for key, label in (("timestamp", "created"), ("cwd", "cwd"), ("parentSession", "forked from")):
        if key in header:
            head.append(f"{label} {as_text(header.pop(key))}")
    header.pop("type", None)
    header.pop("version", None)
    if header:
        head.append(f"header {dump_json(header, indent=False)}")
    yield escaped("\n".join(head), escape)
    spread = table_slices(loaded, str(loaded.path or path), item_block_after, escape, workers)
    if spread is not None:  # (no entry built here)
        for _, piece in rendered_pieces(*spread, Redactor(enabled=False), utf8=True):
            yield piece
        yield "\n"
        return
    problems: dict[int, str] = {p.line: p.kind for p in loaded.problems if p.line is not None}
    damaged = [(b.line, b.raw) for b in loaded.bad_lines]
    if loaded.torn_tail is not None:
        damaged.append((loaded.torn_tail.number, loaded.torn_tail.raw))
    items: list[tuple[int, StoredEntry | bytes]] = [(e.line, e) for e in loaded.entries]
    items.extend(damaged)
    items.sort(key=lambda pair: pair[0])
    sizes = [len(item) if isinstance(item, bytes) else item.length for _, item in items]
    # another agent's file: its entries' lines are not the file's, one process reads it
    count = export_workers(workers, sum(sizes)) if loaded.dialect == "pi" else 1
    if count > 1:
        slices = _slices(items, sizes, problems, str(loaded.path or path), escape)
        # (each slice's text in pieces, without a lone surrogate as the bytes written)
        for _, piece in rendered_pieces(slices, count, Redactor(enabled=False), utf8=True):
            yield piece
        yield "\n"
        return
    befores = _befores(items, problems)
    for start in range(0, len(items), _BATCH):
        batch = items[start : start + _BATCH]
        # the batch's entries' lines in one read, not one each
        entries = [item for _, item in batch if not isinstance(item, bytes)]
        bodies = iter(raw_lines(entries))
        for (_, item), before in zip(batch, befores, strict=False):
            data = None if isinstance(item, bytes) else loads_object(next(bodies))
            block = item_block(item, data, before, None, None)
            if isinstance(block, str):
                yield escaped(block, escape)
            else:
                yield from (escaped(piece, escape) for piece in block)
    yield "\n"


def _befores(
    items: list[tuple[int, StoredEntry | bytes]], problems: dict[int, str]
) -> Iterator[Any]:
    """What each line's block says of the lines before it: for an entry, the entry
    before it and whether its id came before; for a damaged line, its number and why."""
    previous: str | None = None
    seen: set[str] = set()
    for line, item in items:
        if isinstance(item, bytes):
            yield line, problems.get(line, "damaged")
            continue
        yield previous, item.id in seen
        seen.add(item.id)
        previous = item.id


def _slices(
    items: list[tuple[int, StoredEntry | bytes]],
    sizes: list[int],
    problems: dict[int, str],
    path: str,
    escape: Escape,
) -> LazySlices:
    cuts = slices_of(sizes)
    befores = _befores(items, problems)  # taken slice by slice, in order

    def make(index: int) -> Slice:
        start, stop = cuts[index]
        part = [item for _, item in items[start:stop]]
        records = packed_records(part)
        context = [next(befores) for _ in part]
        return Slice(item_block, path, False, records, context=context, escape=escape)

    return LazySlices(len(cuts), make)


_BATCH = 1024  # lines of the file taken at once


def _unreadable(path: Path, exc: SessionFormatError) -> str:
    where = f" (line {exc.line})" if exc.line is not None else ""
    lines = [f"not readable as a session{where}: {exc.problem}"]
    try:
        # only a regular file: reading a FIFO would wait for a writer
        data = path.read_bytes() if path.is_file() else b""
    except OSError:
        data = b""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            text = decode_line(raw.removesuffix(b"\r"))
            lines.append(f"line {number}:\n{indent(text)}")
    return "\n\n".join(lines) + "\n"
