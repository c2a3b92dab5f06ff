"""Describing sessions: `session_info` for one file, `list_sessions` for the files
finding.py picks (a project folder, every project, a working directory's), newest
first, and `latest_session`, the one pi's ``--continue`` would pick.

Each field follows pi's listing rules: ``name`` is the latest ``session_info``
(trimmed; an empty one clears it), ``first_message`` the text of the first user
message (text blocks joined by spaces), ``message_count`` the ``message`` entries in
the file (every branch), ``modified`` the latest user or assistant message time
(the message's own ``timestamp`` if it is a number, else the entry's), else the
header's time, else the file's mtime. Unlike pi, a file that cannot be read as a
session (a byte order mark before the header included) is listed with its problem
instead of being dropped, and so is one pi 1.5.2 fails on (a null user content).

What the rules take from the lines is listing_facts.py's; reading one file and
keeping its facts, listing_read.py's; keeping the facts between runs,
storage/facts_index.py's; spreading the reading of thousands of files over the
cores, parallel.py's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.catalog.finding import files_of, session_file_texts
from jsonl_session.catalog.listing_facts import ListingRecord
from jsonl_session.catalog.listing_read import (
    RECORD_KIND,
    RECORD_VERSION,
    info_of,
    read_and_describe,
    record_decoder,
)
from jsonl_session.catalog.parallel import in_order, runs_of, worker_count
from jsonl_session.catalog.session_info import SessionInfo
from jsonl_session.storage.cache import CacheOption, cache_root
from jsonl_session.storage.facts_index import FactsIndex, PendingRows
from jsonl_session.storage.facts_rows import index_key, index_keys
from jsonl_session.storage.paths import session_dir_for

Progress = Callable[[int, int], None]


def session_info(path: Path | str, *, cache: CacheOption = None) -> SessionInfo:
    """Describe one session file; never raises for a damaged file (see ``problem``).

    The listing facts of the file's whole lines are kept in the facts index
    (storage/facts_index.py), so describing it again costs a ``stat`` when it has not
    changed, and reads only the bytes appended since when it has."""
    index = _index(cache, many=False)
    try:
        return _describe(str(Path(path)), index)
    finally:
        if index is not None:
            index.save()


def _index(cache: CacheOption, *, many: bool = True) -> FactsIndex | None:
    root = cache_root(cache)
    if root is None:
        return None
    return FactsIndex(root, RECORD_KIND, RECORD_VERSION, many=many)


def _describe(file_path: str, index: FactsIndex | None) -> SessionInfo:
    key = index_key(file_path)
    if index is not None:
        (answer,) = index.unchanged_each([key])
        known = _answered(file_path, answer) if answer is not None else None
        if known is not None:
            return known
    return read_and_describe(file_path, key, index)


def _answered(file_path: str, answer: tuple[bytes, float]) -> SessionInfo | None:
    """The file described from the record its row answered with on its stat (with
    that stat's mtime: `FactsIndex.unchanged_each`); None for a record that does not
    decode (its file is read)."""
    try:
        record: ListingRecord = record_decoder.decode(answer[0])
    except (msgspec.MsgspecError, TypeError, ValueError):
        return None  # a damaged row: the file is read (as `_decoded`, without its call)
    return info_of(file_path, record.header, record.facts, answer[1])


def list_sessions(
    dir_or_root: Path | str | None = None,
    *,
    cwd: str | None = None,
    all_projects: bool = False,
    agents: Collection[str] | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    cache: CacheOption = None,
    workers: int | None = 1,
) -> list[SessionInfo]:
    """Sessions, newest first: of ``dir_or_root`` (a project folder; with
    ``all_projects``, a root and every folder under it), or by default of ``cwd``
    (default: the current directory) in every agent's folders (finding.py); only
    those of ``agents`` when given ("pi", "claude", "codex"). ``workers``: processes
    to read the files the cache cannot answer for with, when there are thousands
    (None: one per core; see parallel.py for what a script doing so must guard)."""
    files = session_file_texts(dir_or_root, cwd=cwd, all_projects=all_projects, agents=agents)
    infos = _described(files, progress, cache, workers)
    _newest_first(infos, files)
    return infos[:limit] if limit is not None else infos


def _newest_first(infos: list[SessionInfo], files: list[str]) -> None:
    """Sort ``infos`` (of ``files``, in their order) newest first, and those of one
    time by path from the last. A folder's files come sorted by path: turned round,
    a stable sort by time alone gives that order, in a third of the time comparing
    (time, path) pairs takes."""
    if files == sorted(files):
        infos.reverse()
        infos.sort(key=_MODIFIED, reverse=True)  # (reverse=True keeps equal ones in order)
    else:
        infos.sort(key=lambda info: (info.modified_ms, info.path_text), reverse=True)


_MODIFIED = attrgetter("modified_ms")


def _described(
    files: list[str], progress: Progress | None, cache: CacheOption, workers: int | None
) -> list[SessionInfo]:
    """Each file described, in their order: from the index where it answers, then the
    rest read, by ``workers`` processes when there are enough of them (parallel.py)."""
    index = _index(cache)
    described: list[SessionInfo | None] = [None] * len(files)
    done = 0
    to_read: list[int] = []
    try:
        if index is not None:
            answers = index.unchanged_each(index_keys(files))
            for at, (path, answer) in enumerate(zip(files, answers, strict=True)):
                known = _answered(path, answer) if answer is not None else None
                if known is None:
                    to_read.append(at)
                    continue
                described[at] = known
                done += 1
                if progress is not None:
                    progress(done, len(files))
        else:
            to_read = list(range(len(files)))
        count = worker_count(workers, len(to_read))
        if count == 1:
            for at in to_read:
                described[at] = read_and_describe(files[at], index_key(files[at]), index)
                done += 1
                if progress is not None:
                    progress(done, len(files))
        else:
            root = cache_root(cache)
            positions = runs_of(to_read)
            ask = index is not None and not index.absent  # (else a first listing)
            runs = [(root, [files[at] for at in run], ask) for run in positions]
            for run, (infos, rows) in zip(
                positions, in_order(_describe_run, runs, count), strict=True
            ):
                for at, fields in zip(run, infos, strict=True):
                    described[at] = SessionInfo(files[at], *fields)
                if index is not None:
                    index.put_rows(rows)
                done += len(run)
                if progress is not None:
                    progress(done, len(files))
    finally:
        if index is not None:
            index.save()  # one transaction for the whole listing
    return [info for info in described if info is not None]


def _describe_run(
    run: tuple[Path | None, list[str], bool],
) -> tuple[list[tuple[Any, ...]], PendingRows]:
    """In a worker: the files of a run described (each SessionInfo's fields but its
    path, which the caller has), and the rows to keep for them; the rows kept for
    them read first unless the run says none were (`FactsIndex.read_rows_for`)."""
    root, paths, ask = run
    index = FactsIndex(root, RECORD_KIND, RECORD_VERSION, many=False) if root else None
    keys = index_keys(paths)
    if index is not None:
        index.read_rows_for(keys, ask=ask)
    infos = [
        _fields_after_path(read_and_describe(path, key, index))
        for path, key in zip(paths, keys, strict=True)
    ]
    return infos, index.take_pending() if index is not None else {}


def _fields_after_path(info: SessionInfo) -> tuple[Any, ...]:
    """``info``'s fields after ``path``, in order."""
    return msgspec.structs.astuple(info)[1:]


def latest_session(
    cwd: str | None = None,
    root: Path | str | None = None,
    *,
    folder: Path | str | None = None,
    agents: Collection[str] = ("pi",),
    cache: CacheOption = None,
) -> SessionInfo | None:
    """The session pi's ``--continue`` would pick for ``cwd``: of the files in its
    folders (under ``root``, or pi's session folder and ours; or in ``folder``, then
    only those whose header names ``cwd`` unless it is ``cwd``'s own folder), the one
    changed last whose header reads; None when there is none. With other
    ``agents``, the same among their sessions of ``cwd`` (Claude Code's, Codex's)."""
    where = os.path.abspath(cwd or os.getcwd())
    if folder is not None:
        files = session_file_texts(folder, cwd=where, agents=None if agents == ("pi",) else agents)
    elif root is not None:
        place = session_dir_for(where, Path(root))
        files = files_of(place, False) if place.is_dir() else []
    else:
        files = session_file_texts(cwd=where, agents=agents)
    index = _index(cache, many=False)  # most often the first file is the one
    try:
        for path in sorted(files, key=_mtime, reverse=True):
            info = _describe(path, index)
            if info.problem is None:
                return info
    finally:
        if index is not None:
            index.save()
    return None


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
