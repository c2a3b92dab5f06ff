"""The `jsonl-session` command line: a thin Typer layer over the library.

One module per command group; commands call the public API and turn its errors
into one line on stderr (exit 1). Nothing in the library imports this package.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from jsonl_session.cli import (
    compact_cmds,
    edit_cmds,
    export_cmds,
    inspect_cmds,
    list_cmds,
    maintain_cmds,
    stats_cmds,
)

app = typer.Typer(
    name="jsonl-session",
    help="Inspect, fork, branch, label, compact, migrate and repair append-only JSONL sessions "
    "(pi session format v3).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _everywhere(
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Read every session file in full; neither use nor write the index cache "
            "(same as JSONL_SESSION_NO_CACHE=1).",
        ),
    ] = False,
) -> None:
    if no_cache:
        os.environ["JSONL_SESSION_NO_CACHE"] = "1"


app.command(name="list")(list_cmds.list_)
app.command()(list_cmds.latest)
app.command()(list_cmds.search)
app.command()(inspect_cmds.show)
app.command()(inspect_cmds.tree)
app.command()(inspect_cmds.context)
app.command()(stats_cmds.stats)
app.command()(edit_cmds.fork)
app.command()(edit_cmds.branch)
app.command()(compact_cmds.compact)
app.command()(edit_cmds.label)
app.command()(edit_cmds.name)
app.command()(maintain_cmds.migrate)
app.command()(maintain_cmds.doctor)
app.command()(export_cmds.export)
app.command()(export_cmds.textconv)


def main() -> None:
    app()
