"""`list`, `latest` and `search`: finding sessions. Thin over the library's listing
and search, imported when a command runs; the shared options are in options.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from jsonl_session.cli.options import (
    AgentOption,
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


def _where(
    folder: Path | None, all_projects: bool, cwd: str | None, agents: list[str] | None = None
) -> str:
    """Where sessions were looked for, for messages: the folder given (started in the
    directory given), or each agent's folders for the directory (or its roots)."""
    from jsonl_session import (
        claude_dir_for,
        claude_projects_root,
        codex_sessions_root,
        session_dir_for,
        session_roots,
    )

    if folder is not None:
        return str(folder) + (f" started in {os.path.abspath(cwd)}" if cwd else "")
    directory = os.path.abspath(cwd or os.getcwd())
    wanted = agents or ["pi", "claude", "codex"]
    places: list[str] = []
    if "pi" in wanted:
        roots = session_roots()
        places += map(
            str, roots if all_projects else (session_dir_for(directory, r) for r in roots)
        )
    if "claude" in wanted:
        places.append(str(claude_projects_root() if all_projects else claude_dir_for(directory)))
    if "codex" in wanted:
        places.append(str(codex_sessions_root()))
    return " or ".join(places)


@reports_errors
def list_(
    ctx: typer.Context,
    folder: DirArg = None,
    all_projects: AllOption = False,
    cwd: CwdOption = None,
    agent: AgentOption = None,
    as_json: JsonOption = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N sessions.")] = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Sessions, newest first: name or first message, when, how many messages, and
    which agent wrote them (pi, Claude Code, Codex)."""
    from jsonl_session import list_sessions

    with progress_bar("reading sessions") as report:
        infos = list_sessions(
            folder,
            cwd=cwd,
            all_projects=all_projects,
            agents=agent or None,
            limit=limit,
            progress=report,
            cache=cache_for(ctx, no_cache),
        )
    if as_json:
        print_json([info.to_dict() for info in infos])
        return
    if not infos:
        out().print(f"no sessions in {_where(folder, all_projects, cwd, agent)}")
        return
    from rich.text import Text

    for info in infos:
        title = info.name or " ".join(info.first_message.split())
        if info.problem:
            title = f"[{info.problem}]"
        when = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        count = f"{info.message_count} msg" + ("" if info.message_count == 1 else "s")
        out().print(Text(f"{when}  {count:>8}  {info.agent:<6}  {title[:64]}"))
        out().print(Text(f"    {info.path}"), style="dim")


@reports_errors
def latest(
    ctx: typer.Context,
    folder: DirArg = None,
    cwd: CwdOption = None,
    agent: AgentOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Print the path of the session pi's --continue would pick for this directory (for
    resume scripts): the one changed last, in pi's session folder or ours (or in
    FOLDER, among the sessions started in this directory; or, with --agent, among
    that agent's sessions of this directory)."""
    from jsonl_session import latest_session

    if folder is not None and not folder.is_dir():
        raise fail(f"{folder}: no such folder")
    agents = tuple(agent) if agent else ("pi",)
    found = latest_session(cwd, folder=folder, agents=agents, cache=cache_for(ctx, no_cache))
    if found is None:
        where = os.path.abspath(cwd or os.getcwd())
        shown = _where(folder, False, cwd if folder is None else where, list(agents))
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
    agent: AgentOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Find text in user and assistant messages and session names (any agent's)."""
    from jsonl_session import search_sessions, session_files

    missing = folder is not None and not folder.is_dir()
    agents = agent or None
    files = (
        [] if missing else session_files(folder, cwd=cwd, all_projects=all_projects, agents=agents)
    )
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
