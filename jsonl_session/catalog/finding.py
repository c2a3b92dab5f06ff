"""Which files to look at: the session files of a project folder or of every project
under a root, of a working directory under pi's session folder and ours, and of a
folder only those started in a given working directory (read from each header's
first line). Describing the files is listing.py's; searching them search.py's.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from jsonl_session.errors import JsonlSessionError, SessionFormatError
from jsonl_session.format.entry import NotAnObject, loads_object
from jsonl_session.format.jsonio import NotJson
from jsonl_session.storage.lines import line_spans
from jsonl_session.storage.paths import (
    claude_dir_for,
    claude_projects_root,
    codex_sessions_root,
    encode_cwd,
    session_dir_for,
    session_roots,
)

AGENTS = ("pi", "claude", "codex")


def session_files(
    folder: Path | str | None = None,
    *,
    cwd: str | None = None,
    all_projects: bool = False,
    agents: Collection[str] | None = None,
) -> list[Path]:
    """`session_file_texts` as Paths."""
    found = session_file_texts(folder, cwd=cwd, all_projects=all_projects, agents=agents)
    return [Path(file) for file in found]


def session_file_texts(
    folder: Path | str | None = None,
    *,
    cwd: str | None = None,
    all_projects: bool = False,
    agents: Collection[str] | None = None,
) -> list[str]:
    """The paths, as ``str(Path(...))`` writes them (a listing of 100,000 files makes
    no Path: see listing.py's SessionInfo), of the ``*.jsonl`` files of a project
    folder, or of every folder under a root (``all_projects``, at any depth,
    sub-agents' folders aside). With no folder: the sessions of ``cwd`` (default:
    the current directory), or with ``all_projects`` every session, of each agent in
    ``agents`` (default: all): pi's session folder and ours, Claude Code's projects
    folder, Codex's sessions folder; each file once. With a folder *and* a ``cwd``,
    only the files whose header names that working directory, unless the folder is
    that directory's own (as pi 1.5's ``list(cwd, dir)`` does); with a folder and
    ``agents``, only those agents' files."""
    wanted = set(AGENTS if agents is None else agents)
    if unknown := wanted - set(AGENTS):
        raise JsonlSessionError(
            f"unknown agent {sorted(unknown)[0]!r}; use one of {', '.join(AGENTS)}"
        )
    if folder is not None:
        files = files_of(Path(folder), all_projects)
        files = files if cwd is None else for_cwd(files, Path(folder), cwd)
        return files if agents is None else [f for f in files if _agent(f) in wanted]
    where = _resolved(cwd or os.getcwd())
    found: dict[str, str] = {}
    for path in _agent_files(wanted, where, all_projects):
        found.setdefault(os.path.realpath(path), path)  # (what Path.resolve gives)
    return list(found.values())


def _agent_files(wanted: set[str], where: str, all_projects: bool) -> list[str]:
    """Each wanted agent's files: all of them, or those of the directory ``where``."""
    out: list[str] = []
    if "pi" in wanted:
        for root in session_roots():
            place = root if all_projects else session_dir_for(where, root)
            out += files_of(place, all_projects) if place.is_dir() else []
    if "claude" in wanted:
        root = claude_projects_root()
        place = root if all_projects else claude_dir_for(where, root)
        out += files_of(place, all_projects) if place.is_dir() else []
    if "codex" in wanted and codex_sessions_root().is_dir():
        rollouts = files_of(codex_sessions_root(), True)
        out += rollouts if all_projects else [f for f in rollouts if _same(header_cwd(f), where)]
    return out


def _agent(path: str) -> str | None:
    from jsonl_session.dialects.reading import detect_file

    return detect_file(Path(path))


def _same(cwd: str | None, where: str) -> bool:
    return bool(cwd) and _resolved(cwd or "") == where


def for_cwd(files: list[str], folder: Path, cwd: str) -> list[str]:
    """The files whose header's cwd is ``cwd`` (both resolved; an empty one never
    matches); all of them when ``folder`` is the folder pi names for ``cwd``."""
    where = _resolved(cwd)
    if folder.name == encode_cwd(where):
        return files
    return [path for path in files if _same(header_cwd(path), where)]


def _resolved(path: str) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def header_cwd(path: Path | str) -> str | None:
    """The working directory a session file names in its first lines (None when it
    names none): a pi header's ``cwd``, a Codex ``session_meta`` payload's, or the
    ``cwd`` of the first Claude Code line that carries one."""
    try:
        with open(path, "rb") as handle:
            data = b""
            while b"\n" not in data and len(data) < _HEADER_SCAN_BYTES:
                chunk = handle.read(64 << 10)
                if not chunk:
                    break
                data += chunk
            if b'"sessionId"' in data[:4096] and data.count(b"\n") < 8:
                data += handle.read(256 << 10)  # a Claude Code file's first lines may lack it
    except OSError:
        return None
    for index, start, end, _ in line_spans(data):
        if index > 32:
            break
        try:
            value = loads_object(data[start:end])
        except (NotJson, NotAnObject):
            return None
        if value.get("type") == "session_meta" and isinstance(value.get("payload"), dict):
            value = value["payload"]
        elif index == 0 and value.get("type") == "session":
            cwd = value.get("cwd")
            return cwd if isinstance(cwd, str) else None
        cwd = value.get("cwd")
        if isinstance(cwd, str):
            return cwd
        if "sessionId" not in value and value.get("type") not in _CLAUDE_BOOKKEEPING:
            return None
    return None


# lines a Claude Code transcript may start with that carry no cwd
_CLAUDE_BOOKKEEPING = frozenset(
    {"summary", "file-history-snapshot", "queue-operation", "custom-title", "ai-title"}
)
_HEADER_SCAN_BYTES = 1 << 20  # pi reads at most this much looking for a header


def files_of(folder: Path, all_projects: bool) -> list[str]:
    """The ``*.jsonl`` files in ``folder`` (their paths as text, as ``str(folder /
    name)`` writes them); with ``all_projects`` in its sub-folders at any depth too,
    except Claude Code's sub-agent folders (a sub-agent is not a session of its own)."""
    if not folder.is_dir():
        raise SessionFormatError(folder, None, "no such folder")
    if not all_projects:
        # scandir's entries know a regular file without a stat (the listing stats
        # each file once, later); names sort as the paths of one folder do
        with os.scandir(folder) as entries:
            names = [n for e in entries if (n := e.name).endswith(".jsonl") and e.is_file()]
        within = _prefix(folder)
        return [within + name for name in sorted(names)]
    found = []
    seen: set[str] = set()  # folders linked twice (or in a loop) are walked once
    for place, folders, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(place)
        if real in seen:
            folders[:] = []
            continue
        seen.add(real)
        folders[:] = sorted(d for d in folders if d != "subagents")
        within = _prefix(Path(place))
        found += [within + n for n in sorted(names) if n.endswith(".jsonl")]
    return [f for f in found if os.path.isfile(f)]


def _prefix(folder: Path) -> str:
    """What ``str(folder / name)`` writes before a file's name (nothing for ".")."""
    return str(folder / "_")[:-1]
