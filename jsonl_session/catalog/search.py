"""Full-text search over sessions: user and assistant message text and session names,
and with ``tools=True`` tool output too (toolResult messages, pi's bashExecution
command and output).

Substring search, case-insensitive (str.lower on both sides). A line is decoded
only when its bytes could hold the query (for an ASCII query, its lower-cased bytes
must contain it), so a search costs little more than reading the files. Which files
to search is listing.py's job; this module reads them and builds results with
snippets. Text from content is messages.py's; texts are kept between runs in the
facts index (storage/facts_index.py; tool output in an index of its own, kept only
once searched), laid out as search_kept.py lays them out, so that a warm search
decodes only the files whose kept texts may hold an ASCII query.
A hit in a version-1 file, whose entries have no ids on disk, carries the id that
reading the file gives the entry (derived from the session id and the line, so
`Session.open` and every command name it the same way).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.catalog import search_read
from jsonl_session.catalog.parallel import in_order, runs_of, worker_count
from jsonl_session.catalog.search_kept import (
    KeptPlace,
    KeptTexts,
    Sieve,
    texts_of,
)
from jsonl_session.catalog.search_read import cached_texts
from jsonl_session.catalog.search_texts import (
    SearchText,
    foreign_texts,
    plain_query,
    searchable_texts,
    session_id_of,
)
from jsonl_session.errors import JsonlSessionError
from jsonl_session.messages import single_spaced
from jsonl_session.processes import wanted_workers
from jsonl_session.storage.cache import CacheOption, cache_root
from jsonl_session.storage.facts_index import FactsIndex, PendingRows
from jsonl_session.storage.facts_rows import index_key, index_keys
from jsonl_session.storage.lines import after_line, first_line, whole_first_line
from jsonl_session.storage.loader import load_entries

SNIPPET_CHARS = 60


class SearchHit(msgspec.Struct, frozen=True, gc=False):
    """One place a query was found. A frozen msgspec struct with its file's path as
    text (``path_text``, as it was given; ``path`` makes the Path), as listing.py's
    SessionInfo is and for the same reason: a search may return hundreds of thousands
    of hits."""

    path_text: str
    session_id: str | None
    entry_id: str | None  # None when the session's name matched
    line: int
    timestamp: str | None
    role: str  # "user", "assistant", "name"; with tools, "toolResult", "bashExecution"
    snippet: str

    def __post_init__(self) -> None:
        if self.path_text.__class__ is not str:  # a Path given where the text goes
            msgspec.structs.force_setattr(self, "path_text", os.fspath(self.path_text))

    @property
    def path(self) -> Path:
        """The session file."""
        return Path(self.path_text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path_text,
            "sessionId": self.session_id,
            "entryId": self.entry_id,
            "line": self.line,
            "timestamp": self.timestamp,
            "role": self.role,
            "snippet": self.snippet,
        }


def search_sessions(
    query: str,
    files: Iterable[Path | str],
    *,
    tools: bool = False,
    limit: int | None = None,
    cache: CacheOption = None,
    workers: int | None = 1,
) -> Iterator[SearchHit]:
    """Hits for ``query`` in each file, in file order; ``tools``: in tool output too;
    ``limit``: at most that many. With a cache (storage/cache.py), a file's texts are
    kept there, so searching it again reads only what was appended. ``workers``:
    processes to read the files the cache cannot answer for with, when there are
    thousands (None: one per core; see parallel.py for what a script must guard)."""
    if not query.strip():
        raise JsonlSessionError("the search query is empty")
    hits = _search(query, files, tools, cache, workers)
    return hits if limit is None else itertools.islice(hits, limit)


# 1 was one record file per session and kind; 2 kept no column for the warm path; 3
# kept each text as a msgpack value (a warm search decoded them all: search_kept.py)
_RECORD_VERSION = 4
_WINDOW = 500  # files whose kept texts are read at once (and held: a window's, not all)


def _search(
    query: str, files: Iterable[Path | str], tools: bool, cache: CacheOption, workers: int | None
) -> Iterator[SearchHit]:
    wanted_workers(workers)  # (refused before any hit, however many files)
    root = cache_root(cache)
    indexes = _indexes(root, tools, many=True)
    paths = [os.fspath(file) for file in files]  # (a hit holds its file's path as text)
    wanted = Wanted.of(query)
    try:
        if indexes is None:
            count = 1 if workers == 1 else worker_count(workers, len(paths))
            if count > 1:
                yield from _spread(wanted, tools, root, paths, count, indexes)
                return
            for path in paths:
                yield from _file_hits(wanted, path, tools, indexes)
            return
        sieve = wanted.sieve()
        read = 0  # files of the windows so far that the indexes did not answer for
        for at in range(0, len(paths), _WINDOW):
            if at and read and workers != 1:  # (none read so far: nothing to spread)
                # Those read so far and as many again in what is left as in the windows
                # so far: a guess at the files to read made without a pass over the
                # index (reading the trust of every row cost a warm search of 100,000
                # files a sixth of its time)
                count = worker_count(workers, read + read * (len(paths) - at) // at)
                if count > 1:
                    yield from _spread(wanted, tools, root, paths[at:], count, indexes)
                    return
            run = paths[at : at + _WINDOW]
            keys = index_keys(run)
            for index in indexes:
                index.read_rows_of(keys)
            for path, trusted in zip(run, _trusted_all(keys, indexes, sieve), strict=True):
                if trusted is None:  # read (its rows were asked for already)
                    read += 1
                    yield from _file_hits(wanted, path, tools, indexes, trust=False)
                elif trusted[1]:  # (no text that may hold it: most files, most queries)
                    yield from _with_ids(path, list(_place_hits(wanted, path, *trusted)))
    finally:
        for index in indexes or ():
            index.save()  # one transaction per kind for the whole search


def _spread(
    wanted: Wanted,
    tools: bool,
    root: Path | None,
    paths: list[str],
    count: int,
    indexes: list[FactsIndex] | None,
) -> Iterator[SearchHit]:
    """The hits in ``paths``, found by ``count`` worker processes, a run of files
    each, in order; the rows they kept put in ``indexes``."""
    # (the rows of a first search's files are not asked for: there were none)
    ask = indexes is not None and not all(index.absent for index in indexes)
    runs = [(wanted, tools, root, list(run), ask) for run in runs_of(paths)]
    for hits, rows in in_order(_search_run, runs, count):
        yield from hits
        for index, kept in zip(indexes or (), rows, strict=False):
            index.put_rows(kept)


def _indexes(root: Path | None, tools: bool, *, many: bool) -> list[FactsIndex] | None:
    """The indexes a search keeps texts in: messages and names; with tools, tool output."""
    if root is None:
        return None
    kinds = ("search", "search-tools") if tools else ("search",)
    return [FactsIndex(root, kind, _RECORD_VERSION, many=many) for kind in kinds]


def _search_run(
    run: tuple[Wanted, bool, Path | None, list[str], bool],
) -> tuple[list[SearchHit], list[PendingRows]]:
    """In a worker: the hits in the files of a run, and the rows to keep for them
    (none asked for when the run says none were kept)."""
    wanted, tools, root, paths, ask = run
    indexes = _indexes(root, tools, many=False)
    if not ask:  # (else each file's row is read in its turn: a run's texts could be GBs)
        keys = index_keys(paths)
        for index in indexes or ():
            index.read_rows_for(keys, ask=False)
    hits = [hit for path in paths for hit in _file_hits(wanted, path, tools, indexes)]
    return hits, [index.take_pending() for index in indexes or ()]


def _file_hits(
    wanted: Wanted, path: str, tools: bool, indexes: list[FactsIndex] | None, *, trust: bool = True
) -> Iterator[SearchHit]:
    """The hits in one file, its rows in ``indexes`` brought up to date (``trust``:
    first see if they answer on the file's stat)."""
    try:
        if indexes is not None and trust:
            trusted = next(_trusted_all([index_key(path)], indexes, wanted.sieve()))
            if trusted is not None:  # unchanged since kept: not even opened
                yield from _with_ids(path, list(_place_hits(wanted, path, *trusted)))
                return
        foreign = foreign_texts(Path(path), tools)
        if foreign is not None:  # another agent's file: searched as read, never cached
            yield from _hits(wanted, path, *foreign)
        elif indexes is None:
            with open(path, "rb") as handle:
                large = _large_file_hits(wanted, path, handle.fileno(), tools)
                data = handle.read() if large is None else b""
            yield from large if large is not None else _bytes_hits(wanted, path, data, tools)
        else:
            texts: list[SearchText] = []
            for index, of_tools in zip(indexes, (False, True), strict=False):
                session_id, found = cached_texts(path, index, of_tools)
                texts.extend(found)
            texts.sort(key=lambda text: text.line)
            yield from _with_ids(path, list(_hits(wanted, path, session_id, texts)))
    except OSError:
        return  # listed with its problem by `list`; nothing to search


def _trusted_all(
    keys: list[str], indexes: list[FactsIndex], sieve: Sieve
) -> Iterator[KeptTexts | None]:
    """The texts of each file of ``keys`` (their index keys) from its rows, when each
    is trusted on the file's stat (facts_index.py) and covers the whole file; else
    None. None of them when the ``sieve`` finds that none may hold the query. Its rows
    are read already when many (`FactsIndex.read_rows_of`). One file at a time as
    asked for (its texts searched while they are in the processor's caches: a
    window's decoded first took longer). With two indexes, one stat of the file
    answers for both (`FactsIndex.unchanged_in_all`): the rows of both were stamped on
    one stat, so both answer only for a file as it was then."""
    if len(indexes) > 1 and all(index.many for index in indexes):  # (one stat a file)
        for records in FactsIndex.unchanged_in_all(indexes, keys):
            yield None if records is None else texts_of([*records], sieve)
        return
    answers = [index.unchanged_each(keys) for index in indexes]
    for kept in zip(*answers, strict=True):
        yield texts_of([answer[0] if answer is not None else None for answer in kept], sieve)


def search_bytes(
    query: str, path: Path | str, data: bytes, *, tools: bool = False
) -> Iterator[SearchHit]:
    """Hits in a file's bytes; only lines whose bytes could hold the query are decoded."""
    return _bytes_hits(Wanted.of(query), os.fspath(path), data, tools)


def _bytes_hits(wanted: Wanted, path: str, data: bytes, tools: bool) -> Iterator[SearchHit]:
    needle = wanted.needle
    ascii_needle = needle.encode() if needle.isascii() and plain_query(needle) else None
    header = first_line(data)
    if header is None:
        return
    session_id = session_id_of(header.raw)
    start = after_line(data, header)
    region = data[start:]
    texts = searchable_texts(region, start, header.number + 1, ascii_needle)
    if tools:
        texts += searchable_texts(region, start, header.number + 1, ascii_needle, tools=True)
        texts.sort(key=lambda text: text.line)
    yield from _with_ids(path, list(_hits(wanted, path, session_id, texts)))


def _large_file_hits(wanted: Wanted, path: str, fd: int, tools: bool) -> list[SearchHit] | None:
    """`_bytes_hits` of a pi file of search_read.LARGE_BYTES or more, read a chunk at a time
    (None for a shorter one, or one whose first chunk holds no whole header line)."""
    if os.fstat(fd).st_size < search_read.LARGE_BYTES:
        return None
    found = whole_first_line(fd, search_read.READ_BYTES)
    if found is None:
        return None
    header, start, _ = found
    needle = wanted.needle
    ascii_needle = needle.encode() if needle.isascii() and plain_query(needle) else None
    kinds = (False, True) if tools else (False,)
    texts, _, _, number, tail = search_read.texts_after(
        fd, start, header.number + 1, 0, kinds, ascii_needle
    )
    for flag in kinds:
        texts += searchable_texts(tail, -1, number, ascii_needle, tools=flag)
    return _with_ids(path, list(_hits(wanted, path, session_id_of(header.raw), texts)))


def _with_ids(path: str, hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` with the ids reading the file gives entries that have none on disk
    (version 1); as they were when the file cannot be read as a session."""
    for hit in hits:  # (a loop: `all` over a generator cost more, for each file)
        if hit.entry_id is None and hit.role != "name":
            break
    else:
        return hits
    try:
        ids = {entry.line: entry.id for entry in load_entries(path, cache=False).entries}
    except JsonlSessionError:
        return hits
    return [
        msgspec.structs.replace(hit, entry_id=ids.get(hit.line))
        if hit.entry_id is None and hit.role != "name"
        else hit
        for hit in hits
    ]


def _hits(
    wanted: Wanted, path: str, session_id: str | None, texts: list[SearchText]
) -> Iterator[SearchHit]:
    return _place_hits(wanted, path, session_id, texts, [text.text for text in texts])


def _place_hits(
    wanted: Wanted,
    path: str,
    session_id: str | None,
    places: Sequence[KeptPlace | SearchText],
    bodies: list[str],
) -> Iterator[SearchHit]:
    """The hits in a file's texts, each given as its place and its text."""
    needle, probe, length = wanted.needle, wanted.probe, len(wanted.query)
    for place, body in zip(places, bodies, strict=True):
        if probe is not None and probe[0] not in body and probe[1] not in body:
            continue  # it cannot hold the needle: not lower-cased to be sure
        at = body.lower().find(needle)
        if at >= 0:
            snippet = _snippet(body, at, length)
            entry_id, timestamp = place.entry_id, place.timestamp
            yield SearchHit(path, session_id, entry_id, place.line, timestamp, place.role, snippet)


class Wanted(msgspec.Struct, frozen=True):
    """A query as a search looks for it, worked out once for all the files: lower-cased,
    the letter a text must hold to hold it (`probe`), and both as UTF-8 for a query of
    ASCII (looked for in kept texts' bytes: search_kept.py)."""

    query: str
    needle: str
    probe: tuple[str, str] | None
    ascii_needle: bytes | None
    ascii_probe: tuple[bytes, bytes] | None

    @classmethod
    def of(cls, query: str) -> Wanted:
        needle = query.lower()
        probe = _probe(needle)
        if not needle.isascii():
            return cls(query, needle, probe, None, None)
        in_bytes = (probe[0].encode(), probe[1].encode()) if probe is not None else None
        return cls(query, needle, probe, needle.encode(), in_bytes)

    def sieve(self) -> Sieve:
        """What passes over kept texts that cannot hold it, for one search."""
        return Sieve(self.ascii_needle, self.ascii_probe)


_LETTERS_RAREST_FIRST = "zqxjvbpygfwmucldrhsnoate"  # no "i" or "k": see _probe


def _probe(needle: str) -> tuple[str, str] | None:
    """A letter of ``needle`` (lower-cased) that a text must hold, in either case, for
    its lower case to hold ``needle``, or None: its rarest ASCII letter but "i" and
    "k". Only those two ASCII letters come, by str.lower, from characters other than
    themselves and their capitals (İ and the Kelvin sign; every code point was
    tried). Two ``in`` tests cost a fraction of lower-casing a text."""
    ranks = [_LETTERS_RAREST_FIRST.find(char) for char in needle]
    found = [rank for rank in ranks if rank >= 0]
    if not found:
        return None
    letter = _LETTERS_RAREST_FIRST[min(found)]
    return letter, letter.upper()


def _snippet(text: str, at: int, length: int) -> str:
    start = max(0, at - SNIPPET_CHARS)
    end = min(len(text), at + length + SNIPPET_CHARS)
    middle = single_spaced(text[start:end])
    return ("…" if start > 0 else "") + middle + ("…" if end < len(text) else "")
