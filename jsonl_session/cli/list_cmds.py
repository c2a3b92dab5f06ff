"""`list`, `latest` and `search`: finding sessions. Thin over listing.py and search.py."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress as Bar
from rich.text import Text

from jsonl_session.catalog.listing import Progress, latest_session, list_sessions, session_files
from jsonl_session.catalog.search import search_sessions
from jsonl_session.cli.options import err, fail, out, print_json, reports_errors
from jsonl_session.storage.paths import session_dir_for, session_root

DirArg = Annotated[
    Path | None,
    typer.Argument(help="A project folder of sessions (default: the current directory's)."),
]
AllOption = Annotated[
    bool, typer.Option("--all", help="Every project under the session root (or under DIR).")
]
CwdOption = Annotated[
    str | None, typer.Option("--cwd", help="List the sessions of this directory instead.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Read every file in full; leave the cache alone.")
]
PROGRESS_AFTER_SECONDS = 0.5


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Progress]:
    """A progress callback that shows a bar on stderr once work has taken a moment."""
    started = time.monotonic()
    holder: dict[str, tuple[Bar, object]] = {}

    def report(done: int, total: int) -> None:
        if "bar" not in holder:
            if not err.is_terminal or time.monotonic() - started < PROGRESS_AFTER_SECONDS:
                return
            bar = Bar(console=err, transient=True)
            bar.start()
            holder["bar"] = (bar, bar.add_task(label, total=total))
        bar, task = holder["bar"]
        bar.update(task, completed=done)  # type: ignore[arg-type]

    try:
        yield report
    finally:
        if "bar" in holder:
            holder["bar"][0].stop()


def _folder(folder: Path | None, all_projects: bool, cwd: str | None) -> Path:
    if folder is not None:
        return folder
    if all_projects:
        return session_root()
    return session_dir_for(os.path.abspath(cwd or os.getcwd()))


@reports_errors
def list_(
    folder: DirArg = None,
    all_projects: AllOption = False,
    cwd: CwdOption = None,
    as_json: JsonOption = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N sessions.")] = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Sessions, newest first: name or first message, when, how many messages."""
    where = _folder(folder, all_projects, cwd)
    if folder is None and not all_projects and not where.is_dir():
        infos = []
    else:
        with progress_bar("reading sessions") as report:
            infos = list_sessions(
                where,
                all_projects=all_projects,
                limit=limit,
                progress=report,
                cache=False if no_cache else None,
            )
    if as_json:
        print_json([info.to_dict() for info in infos])
        return
    if not infos:
        out.print(f"no sessions in {where}")
        return
    for info in infos:
        title = info.name or " ".join(info.first_message.split())
        if info.problem:
            title = f"[{info.problem}]"
        when = info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
        count = f"{info.message_count} msg" + ("" if info.message_count == 1 else "s")
        out.print(Text(f"{when}  {count:>8}  {title[:72]}"))
        out.print(Text(f"    {info.path}"), style="dim")


@reports_errors
def latest(cwd: CwdOption = None, no_cache: NoCacheOption = False) -> None:
    """Print the path of the most recent session of this directory (for resume scripts)."""
    found = latest_session(cwd, cache=False if no_cache else None)
    if found is None:
        where = os.path.abspath(cwd or os.getcwd())
        raise fail(f"no sessions for {where} in {session_dir_for(where)}")
    out.print(Text(str(found.path)))


@reports_errors
def search(
    query: Annotated[str, typer.Argument(help="Text to find (case-insensitive).")],
    folder: DirArg = None,
    all_projects: AllOption = False,
    cwd: CwdOption = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
) -> None:
    """Find text in user and assistant messages and session names."""
    where = _folder(folder, all_projects, cwd)
    files = session_files(where, all_projects=all_projects) if where.is_dir() else []
    hits = list(search_sessions(query, files, cache=False if no_cache else None))
    if as_json:
        print_json([hit.to_dict() for hit in hits])
        return
    for hit in hits:
        what = f"{hit.entry_id} {hit.role}" if hit.entry_id else hit.role
        out.print(Text(f"{hit.path}:{hit.line} {what} {hit.timestamp or ''}"))
        out.print(Text(f"    {hit.snippet}"))
    if not hits:
        out.print(f"no matches for {query!r} in {len(files)} sessions")
