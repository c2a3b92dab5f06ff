"""`convert`: a session of one agent written as another's (pi, Claude Code, Codex).
Thin over the library's `convert`; `fork --to` (edit_cmds.py) uses it too."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from jsonl_session.cli.inputs import NEW_FILE_HINT, session_file
from jsonl_session.cli.options import FileArg, JsonOption, RedactOption, cache_for, reports_errors
from jsonl_session.cli.output import out, print_json, redactor_if, say_redacted

ToOption = Annotated[
    str, typer.Option("--to", help="The agent to write for: pi, claude (Claude Code) or codex.")
]


@reports_errors
def convert(
    ctx: typer.Context,
    file: FileArg,
    to: ToOption,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="Path of the new file (default: where that agent looks)."
        ),
    ] = None,
    leaf: Annotated[
        str | None, typer.Option("--leaf", help="The branch to write for Codex (default: active).")
    ] = None,
    as_json: JsonOption = False,
    redact: RedactOption = False,
) -> None:
    """Write a session (any agent's) as a new session file of another agent, and say
    what did not carry over. The source is only read."""
    from jsonl_session import Session, check_output
    from jsonl_session import convert as convert_session

    path = session_file(ctx, file, writes="records FILE's path in the new file")
    if output is not None:  # refused before the work, not after it
        check_output(output, exists_hint=NEW_FILE_HINT, make_folders=True)
    session = Session.open(path, cache=cache_for(ctx))
    leaf_id = session.resolve_id(leaf) if leaf is not None else None
    redactor = redactor_if(redact)
    done = convert_session(
        session, to, output, leaf_id=leaf_id, cache=cache_for(ctx), redact=redactor
    )
    report(done, as_json)
    say_redacted(redactor)


def report(done: Any, as_json: bool) -> None:
    """Print a finished conversion: its path, and what was left out."""
    if as_json:
        print_json(done.to_dict())
        return
    from rich.text import Text

    out().print(Text(str(done.path)))
    for sub in done.sub_sessions:
        out().print(Text(f"  sub-agent: {sub}"))
    for what, count in done.not_carried.most_common():
        out().print(Text(f"  not carried over: {what} ({count})"), style="dim")
