"""Commands that turn a session into something to read elsewhere: export (Markdown,
HTML, JSON, optionally redacted) and textconv (a transcript for ``git diff``).

Thin: the formats are the library's export and transcript, imported when a command
runs (textconv writes plain text and never imports rich). Neither command changes
the session file; export writes only its own output file.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from jsonl_session.cli.inputs import session_file
from jsonl_session.cli.options import (
    InputArg,
    LeafOption,
    cache_for,
    err,
    print_json,
    reports_errors,
    usage,
)

ExportWorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        help="Processes to render a long session with (default: one per core; 1: this "
        "process only). The output is the same.",
    ),
]


class Format(StrEnum):
    MARKDOWN = "markdown"
    HTML = "html"
    JSON = "json"


@reports_errors
def export(
    ctx: typer.Context,
    file: InputArg,
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.MARKDOWN,
    leaf: LeafOption = None,
    all_branches: Annotated[
        bool, typer.Option("--all-branches", help="Every branch, not only the active path.")
    ] = False,
    redact: Annotated[
        bool,
        typer.Option("--redact", help="Replace API keys, tokens, passwords and private keys."),
    ] = False,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write here instead of stdout.")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace OUTPUT if it exists (never the session).")
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="With -o: print what was written as JSON {path, format, redacted, "
            "redactions} (for the export itself as JSON: --format json).",
        ),
    ] = False,
    workers: ExportWorkersOption = None,
) -> None:
    """Export as Markdown, one self-contained HTML page, or JSON (entries with the tree)."""
    from jsonl_session import Session, export_chunks, write_export

    if as_json and output is None:
        raise usage(
            "--json describes the file written with -o; for a JSON export use --format json"
        )
    path = session_file(ctx, file)
    session = Session.open(path, cache=cache_for(ctx))
    leaf_id = session.resolve_id(leaf) if leaf is not None else None
    # written as it is made: a large session is never held whole
    chunks = export_chunks(
        session,
        fmt.value,
        leaf_id=leaf_id,
        all_branches=all_branches,
        redact=redact,
        workers=workers,
    )
    if output is None:
        from jsonl_session.cli.terminal_text import json_visible, visible

        # to a terminal or pipe, control characters from the file are shown escaped
        # (JSON keeps them as \u escapes); a file written with -o keeps them exactly
        for piece in chunks:
            if fmt.value == "json":
                sys.stdout.buffer.write(json_visible(piece.encode("utf-8", "surrogatepass")))
            else:
                sys.stdout.write(visible(piece))
        sys.stdout.flush()
    else:
        write_export(chunks, output, force=force, source=session.path)
    redactions = chunks.redactions
    redacted = sum(redactions.values())
    if redact:
        kinds = ", ".join(f"{kind} {n}" for kind, n in redactions.items())
        noun = "secret" if redacted == 1 else "secrets"
        err().print(f"redacted {redacted} {noun}" + (f" ({kinds})" if kinds else ""))
    if output is None:
        return
    if as_json:
        print_json(
            {
                "path": str(output),
                "format": fmt.value,
                "redacted": redacted,
                "redactions": dict(redactions),
            }
        )
        return
    err().print(f"wrote {output}")


@reports_errors
def textconv(ctx: typer.Context, file: InputArg, workers: ExportWorkersOption = None) -> None:
    """Print a stable plain-text transcript for git diff (see README: Transcripts in git)."""
    from jsonl_session import textconv_chunks
    from jsonl_session.cli.terminal_text import visible

    path = session_file(ctx, file)
    # written as it is made
    for piece in textconv_chunks(path, cache=cache_for(ctx), workers=workers):
        sys.stdout.write(visible(piece))
    sys.stdout.flush()
