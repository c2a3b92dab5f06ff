"""Commands that add to a session or make a new one: fork, branch, label, name.

Each appends entries (or writes a new file); none rewrites existing lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jsonl_session.cli.common import existing_file, file_argument, out, reports_errors
from jsonl_session.session import Session

FileArg = Annotated[Path, file_argument("A session .jsonl file.")]
IdArg = Annotated[str, typer.Argument(help="Entry id (or a unique prefix of one).")]


@reports_errors
def fork(
    file: FileArg,
    at: Annotated[
        str | None, typer.Option("--at", help="Entry to fork at; default: the active leaf.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Path of the new session file.")
    ] = None,
) -> None:
    """Copy the path root → entry into a new session file (labels come along)."""
    session = Session.open(existing_file(file))
    entry_id = session.resolve_id(at) if at is not None else None
    forked = session.fork(entry_id, output)
    out.print(str(forked.path))


@reports_errors
def branch(file: FileArg, entry: IdArg) -> None:
    """Make an earlier entry the active leaf; the move is saved in the file."""
    session = Session.open(existing_file(file))
    entry_id = session.resolve_id(entry)
    marker = session.branch(entry_id)
    if marker is None:
        out.print(f"{entry_id} is already the active leaf; nothing written")
    else:
        out.print(f"active leaf is now {entry_id} (marker {marker} appended)")


@reports_errors
def label(
    file: FileArg,
    entry: IdArg,
    text: Annotated[str | None, typer.Argument(help="Label text; leave out to clear.")] = None,
) -> None:
    """Set the label of an entry, or clear it when no text is given."""
    session = Session.open(existing_file(file))
    entry_id = session.resolve_id(entry)
    session.append_label(entry_id, text)
    if text:
        out.print(f"labelled {entry_id} {text!r}")
    else:
        out.print(f"cleared the label of {entry_id}")


@reports_errors
def name(
    file: FileArg,
    text: Annotated[str, typer.Argument(help="The session's name; empty clears it.")],
) -> None:
    """Name the session (appends a session_info entry)."""
    session = Session.open(existing_file(file))
    session.append_session_info(text)
    out.print(f"named {text.strip()!r}" if text.strip() else "cleared the name")
