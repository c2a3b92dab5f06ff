"""Which files to look at: the session files of a project folder or of every project
under a root, of a working directory under pi's session folder and ours, and of a
folder only those started in a given working directory (read from each header's
first line). Describing the files is listing.py's; searching them search.py's.
"""

from __future__ import annotations

import os
from pathlib import Path

from jsonl_session.errors import SessionFormatError
from jsonl_session.format.entry import NotAnObject, loads_object
from jsonl_session.format.jsonio import NotJson
from jsonl_session.storage.lines import first_line
from jsonl_session.storage.paths import encode_cwd, session_dir_for, session_roots


def session_files(
    folder: Path | str | None = None, *, cwd: str | None = None, all_projects: bool = False
) -> list[Path]:
    """The ``*.jsonl`` files of a project folder, or of every project folder under a
    session root (``all_projects``). With no folder: the folders of ``cwd`` (default:
    the current directory), or with ``all_projects`` every project, under pi's session
    folder and ours (paths.session_roots), each file once. With a folder *and* a
    ``cwd``, only the files whose header names that working directory, unless the
    folder is that directory's own (as pi 1.5's ``list(cwd, dir)`` does)."""
    if folder is not None:
        files = files_of(Path(folder), all_projects)
        return files if cwd is None else for_cwd(files, Path(folder), cwd)
    if all_projects:
        folders = session_roots()
    else:
        where = os.path.abspath(cwd or os.getcwd())
        folders = [session_dir_for(where, root) for root in session_roots()]
    found: dict[Path, Path] = {}
    for each in folders:
        for path in files_of(each, all_projects) if each.is_dir() else []:
            found.setdefault(path.resolve(), path)
    return list(found.values())


def for_cwd(files: list[Path], folder: Path, cwd: str) -> list[Path]:
    """The files whose header's cwd is ``cwd`` (both resolved; an empty one never
    matches); all of them when ``folder`` is the folder pi names for ``cwd``."""
    where = _resolved(cwd)
    if folder.name == encode_cwd(where):
        return files
    return [path for path in files if (found := header_cwd(path)) and _resolved(found) == where]


def _resolved(path: str) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def header_cwd(path: Path) -> str | None:
    """The ``cwd`` of a file's header, reading only its first line (None when the
    file has no readable header or no string cwd)."""
    try:
        with open(path, "rb") as handle:
            data = b""
            while b"\n" not in data and len(data) < _HEADER_SCAN_BYTES:
                chunk = handle.read(64 << 10)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    line = first_line(data)
    try:
        header = loads_object(line.raw) if line is not None else None
    except (NotJson, NotAnObject):
        return None
    if header is None or header.get("type") != "session":
        return None
    cwd = header.get("cwd")
    return cwd if isinstance(cwd, str) else None


_HEADER_SCAN_BYTES = 1 << 20  # pi reads at most this much looking for a header


def files_of(folder: Path, all_projects: bool) -> list[Path]:
    if not folder.is_dir():
        raise SessionFormatError(folder, None, "no such folder")
    folders = [folder]
    if all_projects:
        folders = [folder, *sorted(p for p in folder.iterdir() if p.is_dir())]
    return [f for d in folders for f in sorted(d.glob("*.jsonl")) if f.is_file()]
