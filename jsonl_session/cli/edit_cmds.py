"""Commands that add to a session or make a new one: fork, branch (optionally
with a summary of the branch left), label, name, and edit (what an entry shows the
model on this branch).

Each appends entries (or writes a new file); none rewrites existing lines, except
that the library first rewrites a file of an older version as version 3 (keeping a
backup), which the command then says on stderr (inputs.telling_rewrites). The
library is imported when a command runs; shared options are in options.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jsonl_session.cli.inputs import NEW_FILE_HINT, session_file, telling_rewrites
from jsonl_session.cli.options import (
    FileArg,
    IdArg,
    InstructionsOption,
    JsonOption,
    ModelOption,
    RedactOption,
    SummarizerOption,
    cache_for,
    reports_errors,
    usage,
    working,
)
from jsonl_session.cli.output import out, print_json, redactor_if, say_redacted


@reports_errors
def fork(
    ctx: typer.Context,
    file: FileArg,
    at: Annotated[
        str | None, typer.Option("--at", help="Entry to fork at; default: the active leaf.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Path of the new session file.")
    ] = None,
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="Write the fork for another agent (claude, codex), to continue it there.",
        ),
    ] = "pi",
    as_json: JsonOption = False,
    redact: RedactOption = False,
) -> None:
    """Copy the path root → entry into a new session file (labels come along), as a
    pi session or, with --to, one of another agent's; --redact writes the copy with
    its secrets replaced."""
    import tempfile

    from jsonl_session import Session, check_output, convert

    path = session_file(ctx, file, writes="records FILE as the new file's parent")
    if output is not None:  # refused before the work, not after it
        check_output(output, exists_hint=NEW_FILE_HINT, make_folders=True)
    session = Session.open(path, cache=cache_for(ctx))
    entry_id = session.resolve_id(at) if at is not None else None
    redactor = redactor_if(redact)
    if to == "pi":
        forked = session.fork(entry_id, output, cache=cache_for(ctx), redact=redactor)
        if as_json:
            print_json({"path": str(forked.path), "to": "pi"})
        else:
            out().print(str(forked.path))
        say_redacted(redactor)
        return
    from jsonl_session.cli.convert_cmds import report

    with tempfile.TemporaryDirectory(prefix="jsonl-session-fork-") as scratch:
        forked = session.fork(entry_id, Path(scratch) / "fork.jsonl", cache=False, redact=redactor)
        report(convert(forked, to, output, cache=False), as_json)
    say_redacted(redactor)


@reports_errors
def branch(
    ctx: typer.Context,
    file: FileArg,
    entry: IdArg,
    summarize: Annotated[
        bool,
        typer.Option(
            "--summarize",
            help="Summarize the branch being left and append the summary at the entry "
            "(--summarizer, --model and --instructions go with it).",
        ),
    ] = False,
    summarizer: SummarizerOption = "auto",
    model: ModelOption = None,
    instructions: InstructionsOption = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print JSON for scripts: {leafId, markerId} (markerId null when nothing "
            "was written); with --summarize, the summary's result.",
        ),
    ] = False,
    redact: RedactOption = False,
) -> None:
    """Make an earlier entry the active leaf; the move is saved in the file."""
    from jsonl_session import Session

    if not summarize and (instructions or model or summarizer != "auto"):
        raise usage("--summarizer, --model and --instructions go with --summarize")
    path = session_file(ctx, file, writes="appends to FILE")
    redactor = redactor_if(redact)
    session = Session.open(path, cache=cache_for(ctx), redact=redactor)
    entry_id = session.resolve_id(entry)
    if summarize:
        from jsonl_session import choose_summarizer, summarize_branch

        chosen = choose_summarizer(summarizer, model)
        with telling_rewrites(session), working(chosen, "summarizing the branch"):
            result = summarize_branch(session, entry_id, chosen, instructions=instructions)
        if as_json:
            print_json(result.to_dict())
        else:
            out().print(
                f"summarized {len(result.summarized)} entries of the branch left behind "
                f"({result.summarizer}); active leaf is now the branch summary "
                f"{result.entry_id} at {entry_id}"
            )
        say_redacted(redactor)
        return
    with telling_rewrites(session):
        marker = session.branch(entry_id)
    if as_json:
        print_json({"leafId": entry_id, "markerId": marker})
    elif marker is None:
        out().print(f"{entry_id} is already the active leaf; nothing written")
    else:
        out().print(f"active leaf is now {entry_id} (marker {marker} appended)")


@reports_errors
def label(
    ctx: typer.Context,
    file: FileArg,
    entry: IdArg,
    text: Annotated[str | None, typer.Argument(help="Label text; leave out to clear.")] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print JSON for scripts: {entryId, label, labelEntryId} (label null "
            "when cleared).",
        ),
    ] = False,
    redact: RedactOption = False,
) -> None:
    """Set the label of an entry, or clear it when no text is given."""
    from jsonl_session import Session

    path = session_file(ctx, file, writes="appends to FILE")
    session = Session.open(path, cache=cache_for(ctx), redact=redact)
    entry_id = session.resolve_id(entry)
    with telling_rewrites(session):
        label_id = session.append_label(entry_id, text)
    if as_json:
        print_json(
            {"entryId": entry_id, "label": session.labels.get(entry_id), "labelEntryId": label_id}
        )
    elif text:
        out().print(f"labelled {entry_id} {text!r}")
    else:
        out().print(f"cleared the label of {entry_id}")


@reports_errors
def name(
    ctx: typer.Context,
    file: FileArg,
    text: Annotated[str, typer.Argument(help="The session's name; empty clears it.")],
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print JSON for scripts: {name, entryId} (name null when cleared).",
        ),
    ] = False,
    redact: RedactOption = False,
) -> None:
    """Name the session (appends a session_info entry)."""
    from jsonl_session import Session

    path = session_file(ctx, file, writes="appends to FILE")
    session = Session.open(path, cache=cache_for(ctx), redact=redact)
    with telling_rewrites(session):
        info_id = session.append_session_info(text)
    if as_json:
        print_json({"name": session.name, "entryId": info_id})
    else:
        out().print(f"named {text.strip()!r}" if text.strip() else "cleared the name")


@reports_errors
def edit(
    ctx: typer.Context,
    file: FileArg,
    entry: IdArg,
    hide: Annotated[
        bool, typer.Option("--hide", help="Leave the entry out of the model's context.")
    ] = False,
    replace: Annotated[
        str | None, typer.Option("--replace", help="Show the model this text instead.")
    ] = None,
    restore: Annotated[
        bool, typer.Option("--restore", help="Show the model the entry as written again.")
    ] = False,
    as_json: JsonOption = False,
    redact: RedactOption = False,
) -> None:
    """Change what an entry shows the model on the active branch, from here on.

    Appends a context_edit (pi 1.5): the entry stays in the file, in views and in
    accounting; going back to before the edit shows it as it was. For a user,
    assistant or tool-result message, or a custom message.
    """
    from jsonl_session import Session

    chosen = [
        name
        for name, on in (
            ("--hide", hide),
            ("--replace", replace is not None),
            ("--restore", restore),
        )
        if on
    ]
    if len(chosen) != 1:
        raise usage("give exactly one of --hide, --replace TEXT, --restore")
    path = session_file(ctx, file, writes="appends to FILE")
    session = Session.open(path, cache=cache_for(ctx), redact=redact)
    entry_id = session.resolve_id(entry)
    with telling_rewrites(session):
        if restore:
            edit_id = session.restore_in_context(entry_id)
        else:
            edit_id = session.append_context_edit(entry_id, None if hide else replace)
    what = {"--hide": "hidden from", "--replace": "replaced for", "--restore": "restored for"}
    if as_json:
        print_json({"entryId": entry_id, "editId": edit_id, "action": chosen[0].removeprefix("--")})
    else:
        out().print(
            f"entry {entry_id} {what[chosen[0]]} the model on this branch "
            f"(context_edit {edit_id} appended)"
        )
