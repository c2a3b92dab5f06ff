"""Commands that turn a session into something to read elsewhere: export (Markdown,
HTML, JSON, optionally redacted) and textconv (a transcript for ``git diff``).

Thin: the formats are the library's export and transcript, imported when a command
runs (textconv writes plain text and never imports rich). Neither command changes
the session file; export writes only its own output file.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TextIO

import typer

from jsonl_session.cli.inputs import session_file
from jsonl_session.cli.options import InputArg, LeafOption, cache_for, reports_errors, usage
from jsonl_session.cli.output import print_json, say, write_out

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
    from jsonl_session import Session, check_output, export_chunks, write_export

    if as_json and output is None:
        raise usage(
            "--json describes the file written with -o; for a JSON export use --format json"
        )
    path = session_file(ctx, file)
    if output is not None:  # refused before the work, not after it
        check_output(output, replace=force, source=path)
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
        if fmt.value == "json":  # (its pieces as UTF-8: JSON writes a lone surrogate escaped)
            sys.stdout.flush()
            for data in chunks.encoded():
                write_out(json_visible(data))
        else:
            for piece in chunks:
                sys.stdout.write(visible(piece))
        sys.stdout.flush()
    else:
        write_export(chunks, output, force=force, source=session.path)
    redactions = chunks.redactions
    redacted = sum(redactions.values())
    if redact:
        kinds = ", ".join(f"{kind} {n}" for kind, n in redactions.items())
        noun = "secret" if redacted == 1 else "secrets"
        say(f"redacted {redacted} {noun}" + (f" ({kinds})" if kinds else ""))
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
    say(f"wrote {output}")


@reports_errors
def textconv(ctx: typer.Context, file: InputArg, workers: ExportWorkersOption = None) -> None:
    """Print a stable plain-text transcript for git diff (see README: Transcripts in git)."""
    from jsonl_session import textconv_chunks, write_textconv

    path = session_file(ctx, file)
    # written as it is made, escaped for a terminal (cli/terminal_text.py) by whoever
    # renders each piece; as UTF-8 bytes where the stream would write those (a
    # worker's long text then copied by the kernel, never read here), else through
    # the text stream
    if _writes_utf8(sys.stdout):
        sys.stdout.flush()
        write_textconv(path, sys.stdout.buffer, cache=cache_for(ctx), workers=workers, visible=True)
    else:
        for piece in textconv_chunks(path, cache=cache_for(ctx), workers=workers, visible=True):
            sys.stdout.write(piece)
    sys.stdout.flush()


def _writes_utf8(stream: TextIO) -> bool:
    """Whether ``stream`` writes text as UTF-8 unchanged: its encoding, and no
    newline translation (Windows writes CRLF)."""
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    return encoding == "utf8" and os.linesep == "\n" and hasattr(stream, "buffer")
