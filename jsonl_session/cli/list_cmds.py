"""`list`, `latest` and `search`: finding sessions. Thin over the library's listing
and search, imported when a command runs; the shared options are in options.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from jsonl_session.cli.options import (
    AllOption,
    CwdOption,
    DirArg,
    JsonOption,
    NoCacheOption,
    cache_for,
    fail,
    out,
    print_json,
    progress_bar,
    reports_errors,
)


def _where(folder: Path | None, all_projects: bool, cwd: str | None) -> str:
    """Where sessions were looked for, for messages: the folder given (started in the
    directory given), or the folders of the directory (or the roots) under pi's
    session folder and ours."""
    from jsonl_session import session_dir_for, session_roots

    if folder is not None:
        return str(folder) + (f" started in {os.path.abspath(cwd)}" if cwd else "")
    if all_projects:
        return " or ".join(map(str, session_roots()))
    directory = os.path.abspath(cwd or os.getcwd())
    return " or ".join(str(session_dir_for(directory, root)) for root in session_roots())


@reports_errors
def list_(
    ctx: typer.Context,
    folder: DirArg = None,
    all_projects: AllOption = False,
    cwd: CwdOption = None,
    as_json: JsonOption = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N sessions.")] = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Sessions, newest first: name or first message, when, how many messages."""
    from jsonl_session import list_sessions

    with progress_bar("reading sessions") as report:
        infos = list_sessions(
            folder,
            cwd=cwd,
            all_projects=all_projects,
            limit=limit,
            progress=report,
            cache=cache_for(ctx, no_cache),
        )
    if as_json:
        print_json([info.to_dict() for info in infos])
        return
    if not infos:
        out().print(f"no sessions in {_where(folder, all_projects, cwd)}")
        return
    from rich.text import Text

    for info in infos:
        title = info.name or " ".join(info.first_message.split())
        if info.problem:
            title = f"[{info.problem}]"
        when = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        count = f"{info.message_count} msg" + ("" if info.message_count == 1 else "s")
        out().print(Text(f"{when}  {count:>8}  {title[:72]}"))
        out().print(Text(f"    {info.path}"), style="dim")


@reports_errors
def latest(
    ctx: typer.Context,
    folder: DirArg = None,
    cwd: CwdOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Print the path of the session pi's --continue would pick for this directory (for
    resume scripts): the one changed last, in pi's session folder or ours (or in
    FOLDER, among the sessions started in this directory)."""
    from jsonl_session import latest_session

    if folder is not None and not folder.is_dir():
        raise fail(f"{folder}: no such folder")
    found = latest_session(cwd, folder=folder, cache=cache_for(ctx, no_cache))
    if found is None:
        where = os.path.abspath(cwd or os.getcwd())
        shown = _where(folder, False, cwd if folder is None else where)
        raise fail(f"no sessions for {where} in {shown}")
    from rich.text import Text

    out().print(Text(str(found.path)))


@reports_errors
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Text to find (case-insensitive).")],
    folder: DirArg = None,
    all_projects: AllOption = False,
    cwd: CwdOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Find text in user and assistant messages and session names."""
    from jsonl_session import search_sessions, session_files

    missing = folder is not None and not folder.is_dir()
    files = [] if missing else session_files(folder, cwd=cwd, all_projects=all_projects)
    hits = list(search_sessions(query, files, cache=cache_for(ctx, no_cache)))
    if as_json:
        print_json([hit.to_dict() for hit in hits])
        return
    from rich.text import Text

    for hit in hits:
        what = f"{hit.entry_id} {hit.role}" if hit.entry_id else hit.role
        out().print(Text(f"{hit.path}:{hit.line} {what} {hit.timestamp or ''}"))
        out().print(Text(f"    {hit.snippet}"))
    if not hits:
        out().print(f"no matches for {query!r} in {len(files)} sessions")
