"""A file read in regions that end at a newline, so that no line is split between
two, each region one read; and `read_ahead`, a thread reading the next region while
the caller decodes this one. What the lines mean is reading.py's; when to read ahead,
loader.py's.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from typing import Any

from jsonl_session.storage.portable import pread

CHUNK_BYTES = 8 << 20
FIRST_BYTES = 1 << 20
"""The first region's bytes; each next one twice the last, up to CHUNK_BYTES: the
lines of the start are decoded while the next regions are read."""


Region = tuple[bytes, int]
"""Bytes and how many of them are the region: ``data[:stop]``. What follows ``stop``
is a line the next region starts with (left there, so no region is copied)."""


def file_regions(fd: int, start: int) -> Iterator[Region]:
    """The file from ``start`` on, in regions that end at a newline (the last one may
    not), so no line is split between two regions. Each region is one read: the part
    of a line after its last newline is read again as the next region's start. The
    first is small (FIRST_BYTES), so the caller starts on it at once."""
    position = start
    size = min(FIRST_BYTES, CHUNK_BYTES)
    while True:
        data = pread(fd, size, position)
        if len(data) < size:  # the rest of the file
            if data:
                yield data, len(data)
            return
        stop = data.rfind(b"\n") + 1
        if stop == 0:  # a line longer than a chunk
            data, stop = _through_newline(fd, data, position)
        yield data, stop
        position += stop
        size = min(size * 2, CHUNK_BYTES)


def _through_newline(fd: int, data: bytes, position: int) -> Region:
    """``data`` read at ``position`` (no newline in it) and what follows it, up to and
    including the next newline or the end of the file."""
    parts = [data]
    at = position + len(data)
    while True:
        more = pread(fd, CHUNK_BYTES, at)
        parts.append(more)
        at += len(more)
        if b"\n" in more or len(more) < CHUNK_BYTES:
            break
    joined = b"".join(parts)
    if len(more) < CHUNK_BYTES:
        return joined, len(joined)  # the file ends in this region
    return joined, joined.rfind(b"\n") + 1


def read_ahead(regions: Iterator[Region]) -> Iterator[Region]:
    """``regions`` as they come, made by a thread of their own one region ahead.

    Reading (pread) and summing (zlib's CRC) let go of the GIL, so with a second core
    the next region is read while this one is decoded. One region waits at most:
    a slow reader holds back nothing, and a slow decoder holds two regions more."""
    waiting: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def make() -> None:
        try:
            for region in regions:
                waiting.put((True, region))
                if stop.is_set():
                    return
            waiting.put((False, None))
        except BaseException as exc:  # told to the reader, and raised there
            waiting.put((False, exc))

    maker = threading.Thread(target=make, name="jsonl-session read-ahead", daemon=True)
    maker.start()
    try:
        while True:
            more, item = waiting.get()
            if not more:
                if item is not None:
                    raise item
                return
            yield item
    finally:
        stop.set()
        while maker.is_alive():  # a maker waiting to hand over a region: take it
            with contextlib.suppress(queue.Empty):
                waiting.get(timeout=0.01)
