"""Converting a session from one agent's format to another's: a new file, written as
its lines are made, a block at a time, and appearing whole or not at all
(storage/outputs.py: mode 0600, never over an existing file or through a link, the
folders it made removed again if it fails; default names checked by
paths.safe_name), and a report of what did not carry over. The source is only read:
a pi session's lines a batch at a time, another agent's file whole (its reader,
dialects/claude.py or codex.py, makes its pi entries before a line is written).

- **to pi**: the entries as the reader made them (a Claude Code tree keeps its
  uuids, so converting twice gives the same ids), under a header with the source's
  session id, time and cwd, and first a ``custom`` entry of type
  ``jsonl-session/source`` recording the source's agent, path and sha256 and what
  was left out; a Claude Code session's sub-agents are converted beside it, each a
  session whose ``parentSession`` is the converted main file;
- **to Claude Code** (to_claude.py) every branch; **to Codex** (to_codex.py) the
  active branch.

By default the new file goes where the target agent looks for the session's
working directory (pi's folder, Claude Code's project folder, Codex's dated
folder); ``out`` names it instead. With ``redact``, every line written goes through a
`Redactor` (redaction/) first: the new file holds no secret the source held.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jsonl_session.errors import JsonlSessionError
from jsonl_session.format.entry import entry_lines
from jsonl_session.format.ids import file_timestamp
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.walk import as_text
from jsonl_session.redaction import Redactor, redactor_for
from jsonl_session.session.facade import Session
from jsonl_session.storage import paths
from jsonl_session.storage.cache import CacheOption
from jsonl_session.storage.foreign import AGENT_NAMES
from jsonl_session.storage.output_lines import write_lines
from jsonl_session.storage.outputs import refuse_existing

Target = Literal["pi", "claude", "codex"]
SOURCE_TYPE = "jsonl-session/source"


@dataclass(slots=True)
class Conversion:
    """A finished conversion: the file written, its agent, the sub-agent sessions
    written beside it, and what did not carry over (a description -> a count)."""

    path: Path
    to: str
    entries: int
    not_carried: Counter[str] = field(default_factory=Counter)
    sub_sessions: list[Path] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "to": self.to,
            "entries": self.entries,
            "notCarried": dict(self.not_carried.most_common()),
            "subSessions": [str(p) for p in self.sub_sessions],
        }


def convert(
    source: str | Path | Session,
    to: str,
    out: str | Path | None = None,
    *,
    leaf_id: str | None = None,
    cache: CacheOption = None,
    redact: bool | Redactor = False,
) -> Conversion:
    """Write ``source`` (a file of any agent, or an open session) as a session of
    ``to`` ("pi", "claude", "codex"); see the module docstring. ``leaf_id`` picks the
    branch for targets that take one branch (Codex; default: the active one);
    ``redact``: secrets replaced in every line written (a `Redactor` counts them)."""
    if to not in AGENT_NAMES:
        raise JsonlSessionError(f"unknown agent {to!r}; convert to one of {', '.join(AGENT_NAMES)}")
    session = source if isinstance(source, Session) else Session.open(source, cache=cache)
    redactor = redactor_for(redact)
    if to == "pi":
        return _to_pi(session, None if out is None else Path(out), cache, redactor)
    lines: Iterable[bytes]
    if to == "claude":
        from jsonl_session.dialects.to_claude import claude_file

        lines, missing, default = claude_file(session)
    else:
        from jsonl_session.dialects.to_codex import codex_file

        lines, missing, default = codex_file(session, leaf_id)
    target = Path(out) if out is not None else default
    count = _write(target, lines, redactor)
    return Conversion(target, to, count, missing)


def _to_pi(
    session: Session, out: Path | None, cache: CacheOption, redactor: Redactor | None
) -> Conversion:
    data = session.header_data
    header: dict[str, Any] = {"type": "session", "version": 3}
    header.update({k: data[k] for k in ("id", "timestamp", "cwd") if k in data})
    if isinstance(data.get("parentSession"), str):
        header["parentSession"] = data["parentSession"]
    target = out if out is not None else _pi_path(header)
    return _write_pi(session, header, target, cache, redactor)


def _write_pi(
    session: Session,
    header: dict[str, Any],
    target: Path,
    cache: CacheOption,
    redactor: Redactor | None,
) -> Conversion:
    missing = Counter({f"{p.kind}: {p.message}": 1 for p in session.problems})
    first: list[bytes] = []
    if session.dialect != "pi":
        missing.update(session.not_carried)
        record = {
            "type": "custom",
            "id": "source",
            "parentId": None,
            "timestamp": header.get("timestamp", ""),
            "customType": SOURCE_TYPE,
            "data": {
                "agent": session.dialect,
                "path": str(session.path),
                "sha256": _sha256_of(session.path),
                "notCarried": dict(missing.most_common()),
            },
        }
        first.append(dumps(record))
    body: Iterable[bytes] = itertools.chain(first, (raw for _, raw in entry_lines(session.entries)))
    if redactor is not None:  # (the header is structure, as a fork's: not redacted)
        body = map(redactor.line, body)
    count = _write(target, itertools.chain([dumps(header)], body), None) - 1  # (the header)
    done = Conversion(target, "pi", count, missing)
    for agent_file in _sub_agents(session):
        sub = Session.open(agent_file, cache=cache)
        sub_header = {"type": "session", "version": 3, "id": sub.header_data.get("id", "")}
        sub_header["timestamp"] = sub.header_data.get("timestamp", "")
        sub_header["cwd"] = sub.cwd
        sub_header["parentSession"] = str(target)
        sub_target = target.with_name(f"{target.stem}.{agent_file.stem}.jsonl")
        done.sub_sessions.append(_write_pi(sub, sub_header, sub_target, cache, redactor).path)
    return done


def _sub_agents(session: Session) -> list[Path]:
    """A Claude Code session's sub-agent files (``<sessionId>/subagents/agent-*.jsonl``)."""
    if session.dialect != "claude":
        return []
    folder = session.path.with_suffix("") / "subagents"
    return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []


def _pi_path(header: dict[str, Any]) -> Path:
    """Where pi would keep the session: its folder for the cwd, named by time and id.
    The header comes from the file being converted, so its cwd, id and timestamp are
    checked to make one folder name and one file name (a hostile id such as
    ``../../x`` is refused, never followed out of pi's folder)."""
    cwd = str(header.get("cwd") or "/")
    folder = paths.pi_session_root() / paths.safe_name(paths.encode_cwd(cwd), "folder name for cwd")
    stamp = file_timestamp(as_text(header.get("timestamp") or ""))
    return folder / paths.safe_name(f"{stamp}_{header.get('id')}.jsonl", "session file name")


def _write(target: Path, lines: Iterable[bytes], redactor: Redactor | None) -> int:
    """Write the new file (outputs.py: mode 0600, complete or absent) where nothing is
    yet, an existing name, a dangling link included, refused: ``lines`` as they come
    (`write_lines`), each redacted first with ``redactor``. How many were written."""
    hint = "refusing to overwrite it (choose another -o)"
    refuse_existing(target, hint)
    if redactor is not None:
        lines = map(redactor.line, lines)
    return write_lines(target, lines, exists_hint=hint, make_folders=True)


def _sha256_of(path: Path) -> str:
    """The SHA-256 of the file at ``path``, read a block at a time."""
    with open(path, "rb") as source:
        return hashlib.file_digest(source, "sha256").hexdigest()
