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

Each line is decoded only for the few fields the rules need (a narrow decoder here;
format/entry.py's envelope for a line it refuses); a body is decoded for the first user
message. Reading files is the only I/O here; keeping the facts between runs is
storage/cache.py's, and text from content is messages.py's.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from jsonl_session.catalog.finding import files_of, session_files
from jsonl_session.format.entry import NotAnObject, decode_envelope, loads_object
from jsonl_session.format.ids import timestamp_to_ms
from jsonl_session.format.jsonio import NotJson
from jsonl_session.messages import joined_text
from jsonl_session.storage.cache import (
    RECORD_ENCODING_ERRORS,
    CacheOption,
    Stamp,
    cache_root,
    stamp,
    still_valid,
)
from jsonl_session.storage.facts_index import FactsIndex, now_ns
from jsonl_session.storage.lines import BOM, BOM_PROBLEM, after_line, first_line
from jsonl_session.storage.paths import session_dir_for

Progress = Callable[[int, int], None]
NO_MESSAGES = "(no messages)"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    path: Path
    id: str | None
    cwd: str
    name: str | None
    parent_session: str | None
    created: datetime | None
    modified: datetime
    message_count: int
    first_message: str
    problem: str | None = None  # why the file could not be read as a session
    agent: str = "pi"  # who wrote the file: pi, claude or codex (storage/foreign.py)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "id": self.id,
            "cwd": self.cwd,
            "name": self.name,
            "parentSession": self.parent_session,
            "created": _iso(self.created),
            "modified": _iso(self.modified),
            "messageCount": self.message_count,
            "firstMessage": self.first_message,
            "problem": self.problem,
            "agent": self.agent,
        }


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# The times a JavaScript Date holds (±8.64e15 ms, about ±275,000 years); pi's listing
# cannot show a time outside them, and neither can a datetime.
_MAX_MS = 8_640_000_000_000_000
_EPOCH = datetime.fromtimestamp(0, tz=UTC)


def _in_range(ms: Any) -> bool:
    """A number of milliseconds a listing can show: finite and within a Date's range
    (a damaged or hostile file may hold 1e300, 2**70 or 10**400)."""
    # Python compares any int with any float exactly, and NaN with nothing: no overflow.
    return isinstance(ms, int | float) and not isinstance(ms, bool) and -_MAX_MS <= ms <= _MAX_MS


def _from_ms(ms: int | float) -> datetime | None:
    """The time ``ms`` after the epoch, or None when no datetime holds it."""
    if not _in_range(ms):
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):  # outside the platform's years
        return None


def _kept_moment(ms: float) -> datetime | None:
    """`_from_ms` of a time the facts kept, which was in a Date's range when kept
    (a damaged row may hold any float: a datetime that cannot hold it is none)."""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):
        return None


class _HeaderFacts(msgspec.Struct, array_like=True):
    id: str | None
    cwd: str
    parent_session: str | None
    created_ms: float | None  # the header's time, when a Date and a datetime hold it


def _header_facts(header: dict[str, Any]) -> _HeaderFacts:
    timestamp = header.get("timestamp")
    created_ms = timestamp_to_ms(timestamp) if isinstance(timestamp, str) else None
    return _HeaderFacts(
        header.get("id") if isinstance(header.get("id"), str) else None,
        _str_or_none(header.get("cwd")) or "",
        _str_or_none(header.get("parentSession")),
        float(created_ms) if created_ms is not None and _from_ms(created_ms) else None,
    )


class _Facts(msgspec.Struct, array_like=True):
    """What pi's listing rules take from a run of lines; runs fold left to right."""

    count: int = 0
    latest: float | None = None
    first_message: str = ""
    name_seen: bool = False
    name: str | None = None

    def then(self, later: _Facts) -> _Facts:
        latest = self.latest
        if later.latest is not None:
            latest = later.latest if latest is None else max(latest, later.latest)
        return _Facts(
            self.count + later.count,
            latest,
            self.first_message or later.first_message,
            self.name_seen or later.name_seen,
            later.name if later.name_seen else self.name,
        )


class _ListingRecord(msgspec.Struct, array_like=True):
    header: _HeaderFacts
    facts: _Facts


def session_info(path: Path | str, *, cache: CacheOption = None) -> SessionInfo:
    """Describe one session file; never raises for a damaged file (see ``problem``).

    The listing facts of the file's whole lines are kept in the facts index
    (storage/facts_index.py), so describing it again costs a ``stat`` when it has not
    changed, and reads only the bytes appended since when it has."""
    index = _index(cache, many=False)
    info = _describe(Path(path), index)
    if index is not None:
        index.save()
    return info


# 3 was one record file per session; 4 kept the header's time as its text
_RECORD_KIND, _RECORD_VERSION = "listing", 5
_record_encoder = msgspec.msgpack.Encoder()
_record_decoder = msgspec.msgpack.Decoder(_ListingRecord)


def _index(cache: CacheOption, *, many: bool = True) -> FactsIndex | None:
    root = cache_root(cache)
    if root is None:
        return None
    return FactsIndex(root, _RECORD_KIND, _RECORD_VERSION, many=many)


def _describe(file_path: Path, index: FactsIndex | None) -> SessionInfo:
    key = _key(file_path)
    if index is not None:
        try:
            now = os.stat(key)
        except OSError:
            pass  # described below, with the reason
        else:
            unchanged = index.unchanged(key, now)
            record = _decoded(unchanged) if unchanged is not None else None
            if record is not None:
                return _info(file_path, record.header, record.facts, now.st_mtime)
    row = index.get(key) if index is not None else None
    record = _decoded(row.record) if row is not None else None
    try:
        with open(file_path, "rb") as handle:
            fd = handle.fileno()
            taken, before = now_ns(), os.fstat(fd)  # both before reading (stamp(), QUIET_NS)
            found = row is not None and record is not None and still_valid(row.stamp, fd)
            if not found or row is None or record is None:
                kept = (index, key, fd, taken)
                return _describe_and_keep(file_path, handle.read(), before, kept)
            covered = row.stamp.covered
            handle.seek(covered)
            data = handle.read()
            cut = data.rfind(b"\n") + 1
            facts = record.facts.then(_facts(data, 0, cut))
            if index is not None:  # stamped anew: once quiet, a stat will do
                crc = zlib.crc32(memoryview(data)[:cut], row.stamp.crc)  # no second read
                mark = stamp(fd, covered + cut, crc, before)
                _keep(index, key, mark, taken, record.header, facts)
    except OSError as exc:
        return _broken(file_path, None, exc.strerror or str(exc))
    return _info(file_path, record.header, facts.then(_facts(data, cut)), before.st_mtime)


def _key(path: Path) -> str:
    """The file's absolute path: its index key (os.path.abspath's answer, without its
    cost for a path that is absolute and normal already, as a folder's files are)."""
    text = os.fspath(path)
    if os.sep == "/" and text.startswith("/") and "/." not in text and "//" not in text:
        return text
    return os.path.abspath(text)


def _decoded(record: bytes) -> _ListingRecord | None:
    try:
        decoded: _ListingRecord = _record_decoder.decode(record)
    except (msgspec.MsgspecError, TypeError, ValueError):
        return None  # a damaged row: the file is read
    return decoded


def _keep(
    index: FactsIndex, key: str, mark: Stamp, taken: int, head: _HeaderFacts, facts: _Facts
) -> None:
    try:
        record = _record_encoder.encode(_ListingRecord(head, facts))
    except RECORD_ENCODING_ERRORS:  # a lone surrogate in a name: that file is read each time
        return
    index.put(key, mark, taken, record)


def _describe_and_keep(
    path: Path,
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
    head = _header_facts(header)
    start = after_line(data, header_line)
    cut = max(start, data.rfind(b"\n") + 1)
    facts = _facts(data, start, cut)
    # A header without its newline may still grow: nothing is kept until it ends.
    if index is not None and cut and header_line.terminated:
        crc = zlib.crc32(memoryview(data)[:cut])  # of the bytes read: no second read
        _keep(index, key, stamp(fd, cut, crc, before, data), taken, head, facts)
    return _info(path, head, facts.then(_facts(data, cut)), mtime)


def _foreign_info(path: Path, data: bytes, mtime: float) -> SessionInfo | None:
    """Another agent's file described by the same rules, from the pi entries its
    dialect reader makes of it (None when no reader knows it). Not kept in the cache:
    its lines cannot be folded one run at a time as pi's can."""
    if data.startswith(BOM):
        return None
    from jsonl_session.dialects.reading import read_foreign

    loaded = read_foreign(data, path)
    if loaded is None:
        return None
    head = _header_facts(loaded.header)
    lines = b"\n".join(entry.raw for entry in loaded.entries) + b"\n"
    info = _info(path, head, _facts(lines), mtime)
    return replace(info, agent=loaded.dialect)


def _info(path: Path, head: _HeaderFacts, facts: _Facts, mtime: float) -> SessionInfo:
    created = _kept_moment(head.created_ms) if head.created_ms is not None else None
    latest_ms = facts.latest
    latest = _kept_moment(latest_ms) if latest_ms is not None and latest_ms > 0 else None
    modified = latest or created or _from_ms(mtime * 1000) or _EPOCH
    return SessionInfo(
        path=path,
        id=head.id,
        cwd=head.cwd,
        name=facts.name,
        parent_session=head.parent_session,
        created=created,
        modified=modified,
        message_count=facts.count,
        first_message=facts.first_message or NO_MESSAGES,
    )


class _ListedMessage(msgspec.Struct, gc=False):
    role: Any = None
    timestamp: Any = None


class _ListedLine(msgspec.Struct, gc=False):
    type: Any = None
    timestamp: Any = None
    name: Any = None
    message: _ListedMessage | None = None


_listed_line = msgspec.json.Decoder(_ListedLine)


def _facts(data: bytes, start: int = 0, stop: int | None = None) -> _Facts:
    """The listing facts of lines after the header. Each line is decoded on its own,
    as pi parses each (so two objects on one line, or one object over two lines, make
    bad lines, not entries), and only for the few fields the rules need. A line the
    fast decoder refuses is read by format/entry.py's slower rules, which skip what pi skips.
    Reads ``data[start:stop]`` where it lies, without copying it."""
    facts = _Facts()
    view = memoryview(data)
    find = data.find
    decode = _listed_line.decode
    size = len(data) if stop is None else stop
    while start < size:
        end = find(b"\n", start, size)
        if end < 0:
            end = size
        try:
            line = decode(view[start:end])
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            _note_odd_line(facts, data[start:end])
        else:
            message = line.message
            role, moment = (None, None) if message is None else (message.role, message.timestamp)
            if (
                line.type == "message"
                and moment.__class__ is int
                and -_MAX_MS <= moment <= _MAX_MS
                and role in _TIMED_ROLES
            ):
                # Most lines: folded here as _note_line would fold them, but faster.
                facts.count += 1
                latest = facts.latest
                facts.latest = moment if latest is None or moment > latest else latest
                is_user = role == "user"
            else:
                is_user = _note_line(facts, line.type, line.name, role, moment, line.timestamp)
            if is_user and not facts.first_message:  # an empty one: pi takes the next
                facts.first_message = _text_of(loads_object(data[start:end]).get("message"))
        start = end + 1
    if facts.latest is not None:
        facts.latest = float(facts.latest)
    return facts


_TIMED_ROLES = ("user", "assistant")


def _note_odd_line(facts: _Facts, raw: bytes) -> None:
    """A line that is blank, not JSON, not UTF-8, or of another shape."""
    try:
        env = decode_envelope(raw)
    except (NotJson, NotAnObject):
        return  # pi skips lines it cannot parse
    name = loads_object(raw).get("name") if env.type == "session_info" else None
    is_user = _note_line(facts, env.type, name, env.role, env.message_timestamp, env.timestamp)
    if is_user and not facts.first_message:
        facts.first_message = _text_of(loads_object(raw).get("message"))


def _note_line(
    facts: _Facts, kind: Any, name: Any, role: Any, message_time: Any, entry_time: Any
) -> bool:
    """Fold one line's fields into ``facts`` by pi's rules; True for a user message
    (whose text may be the first message)."""
    if kind == "session_info":
        facts.name_seen = True
        facts.name = name.strip() or None if isinstance(name, str) else None
    elif kind == "message":
        facts.count += 1
        if role == "user" or role == "assistant":
            _note_time(facts, message_time, entry_time)
            return bool(role == "user")
    return False


def _note_time(facts: _Facts, message_timestamp: Any, entry_timestamp: Any) -> None:
    moment = _message_time(message_timestamp, entry_timestamp)
    if moment is not None:
        facts.latest = moment if facts.latest is None else max(facts.latest, moment)


def _message_time(message_timestamp: Any, entry_timestamp: Any) -> float | None:
    # A time no Date holds counts as none: the listing shows the other times.
    if isinstance(message_timestamp, int | float) and not isinstance(message_timestamp, bool):
        return float(message_timestamp) if _in_range(message_timestamp) else None
    if isinstance(entry_timestamp, str):
        ms = timestamp_to_ms(entry_timestamp)
        return float(ms) if ms is not None and _in_range(ms) else None
    return None


def _text_of(message: Any) -> str:
    # Text blocks joined by spaces, as pi's listing joins them.
    return joined_text(message.get("content"), " ") if isinstance(message, dict) else ""


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _broken(path: Path, mtime: float | None, problem: str) -> SessionInfo:
    moment = _from_ms((mtime if mtime is not None else 0) * 1000) or _EPOCH
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
) -> list[SessionInfo]:
    """Sessions, newest first: of ``dir_or_root`` (a project folder; with
    ``all_projects``, a root and every folder under it), or by default of ``cwd``
    (default: the current directory) in every agent's folders (finding.py); only
    those of ``agents`` when given ("pi", "claude", "codex")."""
    files = session_files(dir_or_root, cwd=cwd, all_projects=all_projects, agents=agents)
    infos = list(_described(files, progress, cache))
    infos.sort(key=lambda info: (info.modified, str(info.path)), reverse=True)
    return infos[:limit] if limit is not None else infos


def _described(
    files: list[Path], progress: Progress | None, cache: CacheOption
) -> Iterable[SessionInfo]:
    index = _index(cache)
    try:
        for done, path in enumerate(files, 1):
            yield _describe(path, index)
            if progress is not None:
                progress(done, len(files))
    finally:
        if index is not None:
            index.save()  # one transaction for the whole listing


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
        files = session_files(folder, cwd=where, agents=None if agents == ("pi",) else agents)
    elif root is not None:
        place = session_dir_for(where, Path(root))
        files = files_of(place, False) if place.is_dir() else []
    else:
        files = session_files(cwd=where, agents=agents)
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


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
