"""A session file's searchable texts as a search reads them and keeps them in its
facts index (storage/facts_index.py): read whole, or a large pi file (`LARGE_BYTES`)
a chunk at a time (`texts_after`), and after its row only what was appended since.
What the texts of a line are is search_texts.py's; how a kept row is read back,
search_kept.py's; finding the query in the texts, search.py's.
"""

from __future__ import annotations

import os
import zlib
from operator import attrgetter

from jsonl_session.catalog.search_kept import kept_search_texts, record_of
from jsonl_session.catalog.search_texts import SearchText, searchable_texts, session_id_of
from jsonl_session.storage.cache import RECORD_ENCODING_ERRORS
from jsonl_session.storage.facts_index import FactsIndex, now_ns
from jsonl_session.storage.lines import (
    WholeLines,
    after_line,
    count_newlines,
    first_line,
    whole_first_line,
)
from jsonl_session.storage.stamps import Stamp, kept_crc, stamp, still_valid, summed


def _keep(
    index: FactsIndex,
    key: str,
    mark: Stamp,
    taken: int,
    kept: tuple[str | None, list[SearchText], int],
) -> None:
    try:
        record = record_of(*kept)
    except RECORD_ENCODING_ERRORS:  # a lone surrogate: that file is read each time
        return
    index.put(key, mark, taken, record)


def cached_texts(path: str, index: FactsIndex, tools: bool) -> tuple[str | None, list[SearchText]]:
    """The texts of a pi file, from its row brought up to date; ``tools``: the tool
    output (an index of its own), else the messages and names."""
    key = os.path.abspath(path)
    row = index.get(key)
    kept = kept_search_texts(row.record) if row is not None else None
    with open(path, "rb") as handle:
        fd = handle.fileno()
        taken, before = now_ns(), os.fstat(fd)  # both before reading (stamp(), QUIET_NS)
        if row is None or kept is None or not still_valid(row.stamp, fd):
            large = before.st_size >= LARGE_BYTES
            found = whole_first_line(fd, READ_BYTES) if large else None
            if found is not None:  # a large file: a chunk at a time
                first, start, crc = found
                session_id = session_id_of(first.raw)
                texts, cut, crc, next_number, tail = texts_after(
                    fd, start, first.number + 1, crc, (tools,)
                )
                mark = stamp(fd, cut, kept_crc(crc, cut), before)
                _keep(index, key, mark, taken, (session_id, texts, next_number))
            else:
                data = handle.read()
                header = first_line(data)
                if header is None:
                    return None, []
                session_id = session_id_of(header.raw)
                start = after_line(data, header)
                cut = max(start, data.rfind(b"\n") + 1)
                texts = searchable_texts(data[start:cut], start, header.number + 1, tools=tools)
                next_number = header.number + 1 + count_newlines(data, start, cut)
                tail = data[cut:]
                if header.terminated:  # a header without its newline may still grow
                    mark = stamp(fd, cut, summed(data, cut), before, data)
                    _keep(index, key, mark, taken, (session_id, texts, next_number))
        else:
            session_id, texts, next_number = kept
            added, cut, crc, next_number, tail = texts_after(
                fd, row.stamp.covered, next_number, row.stamp.crc, (tools,)
            )
            texts = texts + added
            # stamped anew even when nothing was added: once quiet, a stat will do
            _keep(index, key, stamp(fd, cut, crc, before), taken, (session_id, texts, next_number))
    return session_id, texts + searchable_texts(tail, -1, next_number, tools=tools)


LARGE_BYTES = 64 << 20
"""A pi file this long is read a chunk at a time (`READ_BYTES`) when its texts are
kept, and searched so without the index: what is held is a chunk and the texts found,
never the file's bytes whole."""
READ_BYTES = 16 << 20


def texts_after(
    fd: int,
    start: int,
    number: int,
    crc: int,
    kinds: tuple[bool, ...],
    needle: bytes | None = None,
) -> tuple[list[SearchText], int, int, int, bytes]:
    """The texts of ``fd``'s whole lines from ``start`` (line ``number``) to its end
    as it is now, read `READ_BYTES` at a time, of each of ``kinds`` (``tools`` of
    `searchable_texts`; two: in line order) and, with an ASCII ``needle``, only of
    lines that may hold it: (the texts, the offset after the last newline, the CRC-32
    of the bytes before it, continuing ``crc``, that of [0, start), the number of the
    line after it, and the bytes after it)."""

    def found(region: bytes, at: int, number: int) -> list[SearchText]:
        texts = [
            text
            for tools in kinds
            for text in searchable_texts(region, at, number, needle, tools=tools)
        ]
        if len(kinds) > 1:
            texts.sort(key=_LINE_OF)
        return texts

    texts: list[SearchText] = []
    lines = WholeLines(fd, start, READ_BYTES)
    cut = start
    for data, begin, end in lines:
        region = data[begin:end]  # (all of it, no copy, but where a chunk holds more)
        texts += found(region, cut, number)
        number += count_newlines(region)
        crc, cut = zlib.crc32(region, crc), cut + len(region)
    return texts, cut, crc, number, lines.tail


_LINE_OF = attrgetter("line")
