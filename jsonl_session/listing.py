"""Finding and describing sessions: `session_info` for one file, `list_sessions` for
a project folder or the whole session root, newest first.

Each field follows pi's listing rules: ``name`` is the latest ``session_info``
(trimmed; an empty one clears it), ``first_message`` the text of the first user
message (text blocks joined by spaces), ``message_count`` the ``message`` entries in
the file (every branch), ``modified`` the latest user or assistant message time
(the message's own ``timestamp`` if it is a number, else the entry's), else the
header's time, else the file's mtime. Unlike pi, a file that cannot be read as a
session is listed with its problem instead of being dropped.

Only each line's envelope is decoded (jsonl.py); a body is decoded for the first
user message and for ``session_info`` entries. Reading files is the only I/O here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jsonl_session.describe import text_parts
from jsonl_session.errors import SessionFormatError
from jsonl_session.ids import timestamp_to_ms
from jsonl_session.jsonio import NotJson
from jsonl_session.jsonl import NotAnObject, decode_envelope, loads_object, split_lines
from jsonl_session.paths import session_dir_for, session_root

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
        }


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _from_ms(ms: int | float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def session_info(path: Path | str) -> SessionInfo:
    """Describe one session file; never raises for a damaged file (see ``problem``)."""
    file_path = Path(path)
    try:
        with open(file_path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            data = handle.read()
    except OSError as exc:
        return _broken(file_path, None, exc.strerror or str(exc))
    return describe_bytes(file_path, data, stat.st_mtime)


def describe_bytes(path: Path, data: bytes, mtime: float) -> SessionInfo:
    """SessionInfo for a file's bytes (``mtime`` in seconds, for the last fallback)."""
    lines = split_lines(data)
    header: dict[str, Any] | None = None
    try:
        header = loads_object(lines[0].raw) if lines else None
    except (NotJson, NotAnObject):
        header = None
    if header is None or header.get("type") != "session":
        problem = "file is empty" if not lines else "line 1 is not a session header"
        return _broken(path, mtime, problem)
    name: str | None = None
    first_message = ""
    count = 0
    latest: float | None = None
    for line in lines[1:]:
        try:
            envelope = decode_envelope(line.raw)
        except (NotJson, NotAnObject):
            continue  # pi skips lines it cannot parse
        if envelope.type == "session_info":
            value = loads_object(line.raw).get("name")
            name = value.strip() or None if isinstance(value, str) else None
            continue
        if envelope.type != "message":
            continue
        count += 1
        if envelope.role not in ("user", "assistant"):
            continue
        moment = _message_time(envelope.message_timestamp, envelope.timestamp)
        if moment is not None:
            latest = moment if latest is None else max(latest, moment)
        if not first_message and envelope.role == "user":
            first_message = _text_of(loads_object(line.raw).get("message"))
    created_ms = timestamp_to_ms(header.get("timestamp"))
    created = (
        _from_ms(created_ms)
        if isinstance(header.get("timestamp"), str) and created_ms is not None
        else None
    )
    if latest is not None and latest > 0:
        modified = _from_ms(latest)
    elif created is not None:
        modified = created
    else:
        modified = _from_ms(mtime * 1000)
    return SessionInfo(
        path=path,
        id=header.get("id") if isinstance(header.get("id"), str) else None,
        cwd=_str_or_none(header.get("cwd")) or "",
        name=name,
        parent_session=_str_or_none(header.get("parentSession")),
        created=created,
        modified=modified,
        message_count=count,
        first_message=first_message or NO_MESSAGES,
    )


def _message_time(message_timestamp: Any, entry_timestamp: Any) -> float | None:
    if isinstance(message_timestamp, int | float) and not isinstance(message_timestamp, bool):
        return float(message_timestamp)
    if isinstance(entry_timestamp, str):
        ms = timestamp_to_ms(entry_timestamp)
        return None if ms is None else float(ms)
    return None


def _text_of(message: Any) -> str:
    # Text blocks joined by spaces, as pi's listing joins them.
    return " ".join(text_parts(message.get("content"))) if isinstance(message, dict) else ""


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _broken(path: Path, mtime: float | None, problem: str) -> SessionInfo:
    moment = _from_ms((mtime if mtime is not None else 0) * 1000)
    return SessionInfo(path, None, "", None, None, None, moment, 0, NO_MESSAGES, problem)


def session_files(folder: Path, *, all_projects: bool = False) -> list[Path]:
    """The ``*.jsonl`` files of a project folder, or of every project folder under a
    session root (``all_projects``)."""
    if not folder.is_dir():
        raise SessionFormatError(folder, None, "no such folder")
    folders = [folder]
    if all_projects:
        folders = [folder, *sorted(p for p in folder.iterdir() if p.is_dir())]
    return [f for d in folders for f in sorted(d.glob("*.jsonl")) if f.is_file()]


def list_sessions(
    dir_or_root: Path | str | None = None,
    *,
    cwd: str | None = None,
    all_projects: bool = False,
    limit: int | None = None,
    progress: Progress | None = None,
) -> list[SessionInfo]:
    """Sessions, newest first: of ``dir_or_root`` (a project folder; with
    ``all_projects``, a root whose sub-folders are projects), or by default of ``cwd``
    (default: the current directory) under the session root."""
    if dir_or_root is not None:
        folder = Path(dir_or_root)
    elif all_projects:
        folder = session_root()
    else:
        folder = session_dir_for(os.path.abspath(cwd or os.getcwd()))
        if not folder.is_dir():
            return []
    files = session_files(folder, all_projects=all_projects)
    infos = list(_described(files, progress))
    infos.sort(key=lambda info: (info.modified, str(info.path)), reverse=True)
    return infos[:limit] if limit is not None else infos


def _described(files: list[Path], progress: Progress | None) -> Iterable[SessionInfo]:
    for done, path in enumerate(files, 1):
        yield session_info(path)
        if progress is not None:
            progress(done, len(files))


def latest_session(cwd: str | None = None, root: Path | str | None = None) -> SessionInfo | None:
    """The most recently active readable session of ``cwd``, or None."""
    folder = session_dir_for(
        os.path.abspath(cwd or os.getcwd()), Path(root) if root is not None else None
    )
    if not folder.is_dir():
        return None
    readable = [i for i in list_sessions(folder) if i.problem is None]
    return readable[0] if readable else None
