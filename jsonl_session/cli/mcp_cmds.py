"""`mcp`: serve the session files to an agent over MCP (stdio), read-only unless
--allow-writes. Thin over the library's `serve_mcp` (integrations/mcp_server.py, which
owns the tools), imported when the command runs; shared options are in options.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jsonl_session.cli.options import CwdOption, NoCacheOption, cache_for, reports_errors


@reports_errors
def mcp(
    ctx: typer.Context,
    allow_writes: Annotated[
        bool,
        typer.Option(
            "--allow-writes",
            help="Also offer label_entry, name_session and fork_session, which append to "
            "session files (or write a new one); without it they are not offered at all.",
        ),
    ] = False,
    root: Annotated[
        list[Path] | None,
        typer.Option(
            "--root",
            help="Serve the sessions under this folder (repeat for several) instead of "
            "pi's, ours, Claude Code's and Codex's; no file outside them is opened.",
        ),
    ] = None,
    cwd: CwdOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Let an agent read its history: an MCP server on stdin/stdout with tools to list,
    search and show sessions and read a session's context or tree. An MCP client
    starts it (command `jsonl-session`, args `["mcp"]`); it runs until the client
    closes it."""
    from jsonl_session import serve_mcp

    serve_mcp(allow_writes=allow_writes, roots=root, cwd=cwd, cache=cache_for(ctx, no_cache))
