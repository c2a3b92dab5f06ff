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

What the rules take from the lines is listing_facts.py's. Reading files is the only
I/O here; keeping the facts between runs is storage/facts_index.py's, spreading the
reading of thousands of files over the cores parallel.py's.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Callable, Collection
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.catalog.finding import files_of, session_file_texts
from jsonl_session.catalog.listing_facts import (
    Facts,
    HeaderFacts,
    ListingRecord,
    from_ms,
    header_facts,
    kept_moment,
    line_facts,
)
from jsonl_session.catalog.parallel import in_order, runs_of, worker_count
from jsonl_session.catalog.session_info import SessionInfo
from jsonl_session.format.entry import NotAnObject, loads_object
from jsonl_session.format.jsonio import NotJson
from jsonl_session.storage.cache import RECORD_ENCODING_ERRORS, CacheOption, cache_root
from jsonl_session.storage.facts_index import FactsIndex, PendingRows, now_ns
from jsonl_session.storage.facts_rows import index_key, index_keys
from jsonl_session.storage.lines import BOM, BOM_PROBLEM, after_line, first_line
from jsonl_session.storage.paths import session_dir_for
from jsonl_session.storage.portable import BINARY
from jsonl_session.storage.stamps import Stamp, stamp, still_valid, summed

Progress = Callable[[int, int], None]
NO_MESSAGES = "(no messages)"


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


# 3 was one record file per session; 4 kept the header's time as its text
_RECORD_KIND, _RECORD_VERSION = "listing", 5
_record_encoder = msgspec.msgpack.Encoder()
_record_decoder = msgspec.msgpack.Decoder(ListingRecord)


def _index(cache: CacheOption, *, many: bool = True) -> FactsIndex | None:
    root = cache_root(cache)
    if root is None:
        return None
    return FactsIndex(root, _RECORD_KIND, _RECORD_VERSION, many=many)


def _describe(file_path: str, index: FactsIndex | None) -> SessionInfo:
    key = index_key(file_path)
    if index is not None:
        (answer,) = index.unchanged_each([key])
        known = _answered(file_path, answer) if answer is not None else None
        if known is not None:
            return known
    return _read_and_describe(file_path, key, index)


def _answered(file_path: str, answer: tuple[bytes, float]) -> SessionInfo | None:
    """The file described from the record its row answered with on its stat (with
    that stat's mtime: `FactsIndex.unchanged_each`); None for a record that does not
    decode (its file is read)."""
    try:
        record: ListingRecord = _record_decoder.decode(answer[0])
    except (msgspec.MsgspecError, TypeError, ValueError):
        return None  # a damaged row: the file is read (as `_decoded`, without its call)
    return _info(file_path, record.header, record.facts, answer[1])


def _read_and_describe(file_path: str, key: str, index: FactsIndex | None) -> SessionInfo:
    """The file described from its bytes (those after its row's, when it has one),
    its facts put in ``index`` for `FactsIndex.save`."""
    row = index.get(key) if index is not None else None
    record = _decoded(row.record) if row is not None else None
    try:
        # (not open(): a file object and its buffer cost a fifth of a small file's reading)
        fd = os.open(file_path, os.O_RDONLY | BINARY)
        try:
            taken, before = now_ns(), os.fstat(fd)  # both before reading (stamp(), QUIET_NS)
            found = row is not None and record is not None and still_valid(row.stamp, fd)
            if not found or row is None or record is None:
                kept = (index, key, fd, taken)
                return _describe_and_keep(file_path, _read_from(fd, 0), before, kept)
            covered = row.stamp.covered
            data = _read_from(fd, covered)
            cut = data.rfind(b"\n") + 1
            facts = record.facts.then(line_facts(data, 0, cut))
            if index is not None:  # stamped anew: once quiet, a stat will do
                crc = zlib.crc32(memoryview(data)[:cut], row.stamp.crc)  # no second read
                mark = stamp(fd, covered + cut, crc, before)
                _keep(index, key, mark, taken, record.header, facts)
        finally:
            os.close(fd)
    except OSError as exc:
        return _broken(file_path, None, exc.strerror or str(exc))
    return _info(file_path, record.header, facts.then(line_facts(data, cut)), before.st_mtime)


def _read_from(fd: int, offset: int) -> bytes:
    """``fd``'s bytes from ``offset`` to its end as it is now (a whole file is read with
    no seek, which a pipe refuses; readall sizes one buffer, past 2 GiB too)."""
    if offset:
        os.lseek(fd, offset, os.SEEK_SET)
    return io.FileIO(fd, closefd=False).readall()


def _decoded(record: bytes) -> ListingRecord | None:
    try:
        decoded: ListingRecord = _record_decoder.decode(record)
    except (msgspec.MsgspecError, TypeError, ValueError):
        return None  # a damaged row: the file is read
    return decoded


def _keep(
    index: FactsIndex, key: str, mark: Stamp, taken: int, head: HeaderFacts, facts: Facts
) -> None:
    try:
        record = _record_encoder.encode(ListingRecord(head, facts))
    except RECORD_ENCODING_ERRORS:  # a lone surrogate in a name: that file is read each time
        return
    index.put(key, mark, taken, record)


def _describe_and_keep(
    path: str,
    data: bytes,
    before: os.stat_result,
    kept: tuple[FactsIndex | None, str, int, int],
) -> SessionInfo:
    """Describe a file read whole, and keep its facts in ``kept``: (the index, the
    file's key there, its descriptor, when its stat ``before`` was taken)."""
    index, key, fd, taken = kept
    mtime = before.st_mtime
    header_line = first_line(data)
    header: dict[str, Any] | None = None
    try:
        header = loads_object(header_line.raw) if header_line is not None else None
    except (NotJson, NotAnObject):
        header = None
    if header_line is None or header is None or header.get("type") != "session":
        foreign = _foreign_info(path, data, mtime) if header_line is not None else None
        if foreign is not None:
            return foreign
        problem = "file is empty" if header_line is None else "line 1 is not a session header"
        if header_line is not None and header_line.raw.startswith(BOM):
            problem = BOM_PROBLEM
        return _broken(path, mtime, problem)
    head = header_facts(header)
    start = after_line(data, header_line)
    cut = max(start, data.rfind(b"\n") + 1)
    facts = line_facts(data, start, cut)
    # A header without its newline may still grow: nothing is kept until it ends.
    if index is not None and cut and header_line.terminated:
        crc = summed(data, cut)
        _keep(index, key, stamp(fd, cut, crc, before, data), taken, head, facts)
    return _info(path, head, facts.then(line_facts(data, cut)), mtime)


def _foreign_info(path: str, data: bytes, mtime: float) -> SessionInfo | None:
    """Another agent's file described by the same rules, from the pi entries its
    dialect reader makes of it (None when no reader knows it). Not kept in the cache:
    its lines cannot be folded one run at a time as pi's can."""
    if data.startswith(BOM):
        return None
    from jsonl_session.dialects.reading import read_foreign

    loaded = read_foreign(data, Path(path))
    if loaded is None:
        return None
    head = header_facts(loaded.header)
    lines = b"\n".join(entry.raw for entry in loaded.entries) + b"\n"
    info = _info(path, head, line_facts(lines), mtime)
    return msgspec.structs.replace(info, agent=loaded.dialect)


def _info(path: str, head: HeaderFacts, facts: Facts, mtime: float) -> SessionInfo:
    created = head.created_ms
    # _held's first test inline: it holds for the times of nearly every session
    if created is not None and not (0 <= created < _SURELY_HELD_MS or _held(created)):
        created = None
    modified = facts.latest
    if modified is None or not modified > 0 or not (modified < _SURELY_HELD_MS or _held(modified)):
        modified = created if created is not None else _file_time_ms(mtime)
    return SessionInfo(
        path,
        head.id,
        head.cwd,
        facts.name,
        head.parent_session,
        created,
        modified,
        facts.count,
        facts.first_message or NO_MESSAGES,
    )


_SURELY_HELD_MS = 32_503_680_000_000
"""Milliseconds from 0 up to this (the year 3000) make a datetime on every platform:
the times of sessions, checked with two comparisons, not by making one."""


def _held(ms: float) -> bool:
    """Whether ``ms`` makes a datetime (kept_moment's test: times a row kept)."""
    return 0 <= ms < _SURELY_HELD_MS or kept_moment(ms) is not None


def _file_time_ms(mtime: float) -> float:
    """A file's mtime in milliseconds when a listing shows it (from_ms's test), else
    the epoch's."""
    ms = mtime * 1000
    return ms if from_ms(ms) is not None else 0.0


def _broken(path: str, mtime: float | None, problem: str) -> SessionInfo:
    moment = _file_time_ms(mtime if mtime is not None else 0)
    return SessionInfo(path, None, "", None, None, None, moment, 0, NO_MESSAGES, problem)


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
                described[at] = _read_and_describe(files[at], index_key(files[at]), index)
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
    index = FactsIndex(root, _RECORD_KIND, _RECORD_VERSION, many=False) if root else None
    keys = index_keys(paths)
    if index is not None:
        index.read_rows_for(keys, ask=ask)
    infos = [
        _fields_after_path(_read_and_describe(path, key, index))
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
