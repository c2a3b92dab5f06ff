"""The Typer app: the commands of every group registered, and the options given
before a command's name (kept on Typer's context, options.Settings).

Imported when the command line runs (the package's `main`), not when the package
is: see there why.
"""

from __future__ import annotations

from typing import Annotated

import typer

from jsonl_session.cli import (
    compact_cmds,
    convert_cmds,
    edit_cmds,
    export_cmds,
    inspect_cmds,
    list_cmds,
    maintain_cmds,
    mcp_cmds,
    resume_cmds,
    stats_cmds,
)
from jsonl_session.cli.commands import Commands
from jsonl_session.cli.options import NoCacheOption, Settings

app = typer.Typer(
    name="jsonl-session",
    help="Inspect, fork, branch, label, compact, migrate and repair append-only JSONL sessions "
    "(pi session format v3).",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=Commands,
)


def _print_version(asked: bool) -> None:
    if asked:
        from jsonl_session import __version__

        typer.echo(f"jsonl-session {__version__}")
        raise typer.Exit()


VersionOption = Annotated[
    bool,
    typer.Option(
        "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
    ),
]


@app.callback()
def _everywhere(
    ctx: typer.Context, no_cache: NoCacheOption = False, version: VersionOption = False
) -> None:
    ctx.obj = Settings(no_cache=no_cache)
    if not no_cache:
        from jsonl_session import on_record_not_kept

        on_record_not_kept(_say_record_not_kept)


def _say_record_not_kept(message: str) -> None:
    """A cache record that could not be written: said once, as a note (the results
    are the same as without the cache)."""
    from jsonl_session.cli.terminal_text import visible

    typer.echo(visible(f"note: {message}; read without it (same results)"), err=True)


app.command(name="list")(list_cmds.list_)
app.command()(list_cmds.latest)
app.command()(list_cmds.search)
app.command()(inspect_cmds.show)
app.command()(inspect_cmds.tree)
app.command()(inspect_cmds.context)
app.command()(stats_cmds.stats)
app.command()(edit_cmds.fork)
app.command()(resume_cmds.resume)
app.command()(convert_cmds.convert)
app.command()(edit_cmds.branch)
app.command()(compact_cmds.compact)
app.command()(edit_cmds.label)
app.command()(edit_cmds.name)
app.command()(edit_cmds.edit)
app.command()(maintain_cmds.migrate)
app.command()(maintain_cmds.doctor)
app.command()(export_cmds.export)
app.command()(export_cmds.textconv)
app.command()(mcp_cmds.mcp)
