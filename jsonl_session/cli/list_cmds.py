"""`list`, `latest` and `search`: finding sessions. Thin over the library's listing
and search, imported when a command runs; the shared options are in options.py."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jsonl_session.cli.cells import fit, single_spaced
from jsonl_session.cli.options import (
    AgentOption,
    AllOption,
    CwdOption,
    DirArg,
    JsonOption,
    NoCacheOption,
    WorkersOption,
    cache_for,
    fail,
    progress_bar,
    reports_errors,
)
from jsonl_session.cli.output import err, is_terminal, out, print_json, print_json_list

if TYPE_CHECKING:
    from jsonl_session import SearchHit, SessionInfo

TITLE_CELLS = 64  # a title's width when stdout is no terminal (else: what fits)
MIN_TITLE_CELLS = 8  # on a terminal too narrow for the line, still this much
_LINES_AT_ONCE = 10_000


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
    workers: WorkersOption = None,
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
            workers=workers,
        )
    if as_json:
        print_json_list(info.to_dict() for info in infos)
        return
    if not infos:
        out().print(f"no sessions in {_where(folder, all_projects, cwd, agent)}")
        return
    _print_lines(_session_lines(infos, out().width if is_terminal() else 0))


Line = str | tuple[str, str]  # a line of text, or (text, style)


def _session_lines(infos: list[SessionInfo], width: int) -> Iterator[Line]:
    """Two lines a session: when, how many messages, which agent, the title cut to
    the terminal's ``width`` (0: no terminal); then its path."""
    local_minute = _LocalMinutes()
    for info in infos:
        when = local_minute(info)
        count = f"{info.message_count} msg" + ("" if info.message_count == 1 else "s")
        line = f"{when}  {count:>8}  {info.agent:<6}  "
        room = max(width - len(line), MIN_TITLE_CELLS) if width else TITLE_CELLS
        if info.problem:
            title = f"[{info.problem}]"
        else:
            title = info.name or _one_line_head(info.first_message, room)
        yield line + fit(title, room)
        yield (f"    {info.path_text}", "dim")


class _LocalMinutes:
    """When sessions changed, as the local date and minute ("2025-09-25 01:53", as
    strftime writes ``info.modified``), by integer arithmetic on the milliseconds
    since the epoch: the zone's offset is asked once an hour and each date written
    once a day, where astimezone and strftime for each of 100,000 sessions cost more
    than reading their facts (and making each one's datetime as much as the rest of
    this). An hour in which the offset changes (daylight saving, or an offset of
    seconds as some before 1973), years strftime writes otherwise, and a time of a
    fraction of a millisecond (which a datetime rounds to microseconds) go the slow
    way."""

    def __init__(self) -> None:
        self._offsets: dict[int, int | None] = {}  # in ms, by hours since the epoch
        self._dates: dict[int, str] = {}  # by local days since the epoch

    def __call__(self, info: SessionInfo) -> str:
        ms = 0
        offset = None
        if float(info.modified_ms).is_integer():
            ms = int(info.modified_ms)
            hour = ms // 3_600_000
            offset = self._offsets.get(hour, _UNKNOWN)
            if offset is _UNKNOWN:
                offset = self._offsets[hour] = _steady_offset(hour)
        if offset is None:
            try:
                return info.modified.astimezone().strftime("%Y-%m-%d %H:%M")
            except (OverflowError, ValueError, OSError):  # local time past what a datetime holds
                return info.modified.strftime("%Y-%m-%d %H:%M UTC")
        day, minute = divmod((ms + offset) // 60_000, 1440)
        written = self._dates.get(day)
        if written is None:
            written = self._dates[day] = _EPOCH_DAY.fromordinal(
                _EPOCH_DAY.toordinal() + day
            ).isoformat()
        return f"{written} {_CLOCK[minute]}"


_UNKNOWN = -(1 << 70)  # no offset is this
_CLOCK = [f"{minute // 60:02d}:{minute % 60:02d}" for minute in range(1440)]  # of a day
_EPOCH_DAY = date(1970, 1, 1)


def _steady_offset(hour: int) -> int | None:
    """The local zone's offset in milliseconds throughout ``hour`` (hours since the
    epoch), or None when it differs at the hour's ends, is not whole milliseconds, or
    the hour is outside the years 1000-9999 (where strftime's %Y is not four digits,
    or a datetime ends)."""
    try:
        first, last = (
            datetime.fromtimestamp(hour * 3600 + second, tz=UTC).astimezone()
            for second in (0, 3599.999999)
        )
    except (OverflowError, ValueError, OSError):
        return None
    offsets = first.utcoffset(), last.utcoffset()
    if offsets[0] != offsets[1] or offsets[0] is None or not 1000 < first.year < 9999:
        return None
    ms, rest = divmod(offsets[0], timedelta(milliseconds=1))
    return ms if not rest else None


def _one_line_head(text: str, room: int) -> str:
    """``text`` with its runs of whitespace made one space, or as much of its start
    as fit(·, room) looks at: ``room + 1`` characters when they are printable ASCII
    (fit's fast path), else ``4 * room + 5``; without splitting all of a long first
    message, nor its first few hundred characters when a hundred will do."""
    for chars in (room + 1, 4 * room + 5):
        head = single_spaced(text[: chars + 64])
        if len(text) <= chars + 64:
            return head  # all of it
        if len(head) >= chars:
            start = head[: room + 1]
            if chars > room + 1 or (start.isascii() and start.isprintable()):
                return head
    return single_spaced(text)  # more whitespace than text in its head


def _hit_lines(hits: Iterable[SearchHit]) -> Iterator[Line]:
    for hit in hits:
        what = f"{hit.entry_id} {hit.role}" if hit.entry_id else hit.role
        yield f"{hit.path_text}:{hit.line} {what} {hit.timestamp or ''}".rstrip()
        yield f"    {hit.snippet}"


def _print_lines(lines: Iterable[Line]) -> int:
    """Lines on stdout, many at a time (the text of a part of them is held, not of
    all): Text on a terminal, plain text into a pipe, which is what rich writes there
    (no style, no padding) without its cost (a print per line cost more than a
    listing of thousands of sessions). Returns how many were printed."""
    from jsonl_session.cli.terminal_text import visible

    on_terminal = is_terminal()
    remaining, printed = iter(lines), 0
    while part := list(itertools.islice(remaining, _LINES_AT_ONCE)):
        printed += len(part)
        if on_terminal:
            from rich.text import Text

            shown = Text()
            for line in part:
                text, style = line if isinstance(line, tuple) else (line, "")
                shown.append(text + "\n", style=style)
            out().print(shown, end="")
            continue
        plain = "\n".join([line if line.__class__ is str else line[0] for line in part]) + "\n"
        if " \n" in plain:  # (rare: a line that ends in a space)
            plain = "\n".join(piece.rstrip(" ") for piece in plain.split("\n"))
        sys.stdout.write(visible(plain))
    sys.stdout.flush()
    return printed


@reports_errors
def latest(
    ctx: typer.Context,
    folder: DirArg = None,
    cwd: CwdOption = None,
    agent: AgentOption = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print JSON for scripts: the session as one item of list --json."
        ),
    ] = False,
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
    if as_json:
        print_json(found.to_dict())
        return
    from jsonl_session.cli.terminal_text import visible

    # what the console prints, without rich (a script's $(jsonl-session latest))
    sys.stdout.write(visible(found.path_text) + "\n")


@reports_errors
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Text to find (case-insensitive).")],
    folder: DirArg = None,
    all_projects: AllOption = False,
    cwd: CwdOption = None,
    agent: AgentOption = None,
    tools: Annotated[
        bool,
        typer.Option(
            "--tools", help="Search tool output too (tool results, bash commands and output)."
        ),
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N matches.")] = None,
    as_json: JsonOption = False,
    no_cache: NoCacheOption = False,
    workers: WorkersOption = None,
) -> None:
    """Find text in user and assistant messages and session names (any agent's), with
    the entry id to give other commands; --tools: in tool output too."""
    from jsonl_session import search_sessions, session_file_texts

    missing = folder is not None and not folder.is_dir()
    agents = agent or None
    files = (
        []
        if missing
        else session_file_texts(folder, cwd=cwd, all_projects=all_projects, agents=agents)
    )
    cache = cache_for(ctx, no_cache)
    wanted = None if limit is None else limit + 1  # one more: to say there are more
    found = search_sessions(query, files, tools=tools, limit=wanted, cache=cache, workers=workers)
    shown = itertools.islice(found, limit)
    if as_json:
        print_json_list(hit.to_dict() for hit in shown)
    else:
        if not _print_lines(_hit_lines(shown)):  # printed as found: not all held
            out().print(f"no matches for {query!r} in {len(files)} sessions")
    more = limit is not None and next(found, None) is not None
    if more:
        err().print(f"more matches than --limit {limit}; showing the first {limit}")
