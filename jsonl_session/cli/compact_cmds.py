"""`compact`: show the plan, summarize, append the compaction (or prune). Thin: every
decision is the library's, and its compaction is imported only when the command runs.
--keep-recent-tokens and --reserve-tokens, when left out, take the library's defaults
(pi's; their help repeats the figures, which a test holds equal to the library's). The
summarizer options shared with `branch --summarize`, and the spinner, are in options.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jsonl_session.cli.inputs import session_file, telling_rewrites
from jsonl_session.cli.options import (
    DryRunOption,
    InstructionsOption,
    JsonOption,
    ModelOption,
    RedactOption,
    SummarizerOption,
    cache_for,
    reports_errors,
    shown,
    usage,
    working,
)
from jsonl_session.cli.output import out, print_json, redactor_if, say_redacted

if TYPE_CHECKING:
    from rich.table import Table

    from jsonl_session import Breakdown, CompactionPlan, Session


@reports_errors
def compact(
    ctx: typer.Context,
    file: Annotated[
        Path,
        typer.Argument(
            help="A session .jsonl file (with --dry-run, - for standard input).", readable=False
        ),
    ],
    summarizer: SummarizerOption = "auto",
    model: ModelOption = None,
    keep_recent_tokens: Annotated[
        int | None,
        typer.Option(
            min=0, help="Tokens of recent messages kept word for word; default: pi's, 20000."
        ),
    ] = None,
    reserve_tokens: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Tokens kept free in the window; sets the summary budget; default: pi's, 16384.",
        ),
    ] = None,
    instructions: InstructionsOption = None,
    prune_outputs: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="Instead of summarizing, prune old tool outputs from the context "
            "(our extension; pi ignores it).",
        ),
    ] = False,
    dry_run: DryRunOption = False,
    as_json: JsonOption = False,
    redact: RedactOption = False,
) -> None:
    """Compact the active branch: summarize older messages, keep recent ones.

    Appends a compaction entry (history is never deleted)."""
    from jsonl_session import (
        DEFAULT_COMPACTION_SETTINGS,
        SUMMARIZER_NAMES,
        CompactionSettings,
        Session,
        choose_summarizer,
        plan_for,
    )
    from jsonl_session import compact as compact_session

    if prune_outputs and (instructions or model or summarizer != "auto"):
        raise usage("--prune writes no summary: leave out --summarizer, --model and --instructions")
    if summarizer not in SUMMARIZER_NAMES:
        raise usage(f"unknown summarizer {summarizer!r}: use one of {', '.join(SUMMARIZER_NAMES)}")
    path = session_file(ctx, file, writes=None if dry_run else "appends to FILE")
    redactor = redactor_if(redact)  # the summary is written with its secrets replaced
    session = Session.open(path, cache=cache_for(ctx), redact=redactor)
    if prune_outputs:
        _prune(session, dry_run, as_json)
        return
    default = DEFAULT_COMPACTION_SETTINGS
    settings = CompactionSettings(
        reserve_tokens=default.reserve_tokens if reserve_tokens is None else reserve_tokens,
        keep_recent_tokens=(
            default.keep_recent_tokens if keep_recent_tokens is None else keep_recent_tokens
        ),
    )
    plan = plan_for(session, settings)
    kept = _kept_ids(session, plan)
    if dry_run:
        if as_json:
            print_json({**plan.to_dict(), "keep": kept})
        else:
            _print_plan(session, plan, kept, session.token_breakdown().model_tokens)
        return
    chosen = choose_summarizer(summarizer, model)
    before = session.token_breakdown()
    with telling_rewrites(session), working(chosen, "summarizing"):
        result = compact_session(session, chosen, settings, instructions)
    after = session.token_breakdown()
    say_redacted(redactor)
    if as_json:
        print_json({**result.to_dict(), "keep": kept, "modelTokens": _by_role(before, after)})
        return
    _print_plan(session, plan, kept, before.model_tokens)
    out().print(_before_after(before, after))
    out().print(
        f"appended compaction {result.entry_id} ({result.summarizer}): "
        f"{before.model_tokens:,} → {after.model_tokens:,} tokens sent to the model (estimated)"
    )


def _prune(session: Session, dry_run: bool, as_json: bool) -> None:
    from jsonl_session import PruneSettings, plan_prune, prune

    settings = PruneSettings()
    if dry_run:
        plan = plan_prune(session.branch_path(), settings)
        if as_json:
            print_json({**plan.to_dict(), "minimumTokens": settings.minimum_tokens})
        else:
            out().print(
                f"would prune {len(plan.entry_ids)} tool outputs, about {plan.tokens_saved:,} "
                f"tokens (old outputs hold {plan.candidates_tokens:,}; "
                f"minimum {settings.minimum_tokens:,})"
            )
        return
    with telling_rewrites(session):
        result = prune(session, settings)
    if as_json:
        print_json(
            {
                "entryId": result.entry_id,
                **result.plan.to_dict(),
                "tokensBefore": result.tokens_before,
                "tokensAfter": result.tokens_after,
            }
        )
        return
    out().print(
        f"appended prune entry {result.entry_id}: {len(result.plan.entry_ids)} tool outputs, "
        f"{result.tokens_before:,} → {result.tokens_after:,} tokens sent to the model"
    )


def _kept_ids(session: Session, plan: CompactionPlan) -> list[str]:
    ids = [e.id for e in session.branch_path()]
    return ids[ids.index(plan.first_kept_entry_id) :]


def _print_plan(
    session: Session, plan: CompactionPlan, kept: list[str], tokens_before: int
) -> None:
    from rich.table import Table
    from rich.text import Text

    title = f"compaction plan for {shown(session.path)}"
    table = Table(title=title, show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    rows: list[tuple[str, str]] = [
        ("summarize", _span(plan.summarize)),
        (
            "turn prefix",
            _span(plan.turn_prefix) if plan.is_split_turn else "(the cut is at a turn)",
        ),
        ("keep", f"{len(kept)} entries from {plan.first_kept_entry_id}"),
        # one "before" figure on the screen: the estimate the table and the last line
        # use too (the entry records pi's usage-based tokensBefore; --json gives both)
        ("tokens before", f"{tokens_before:,} (estimated)"),
        ("earlier summary", "updated" if plan.previous_summary else "none"),
        ("files read", ", ".join(plan.read_files) or "(none)"),
        ("files modified", ", ".join(plan.modified_files) or "(none)"),
    ]
    for label, value in rows:
        table.add_row(Text(label), Text(value))
    out().print(table)


def _span(entries: list[Any]) -> str:
    if not entries:
        return "nothing"
    return f"{len(entries)} entries ({entries[0].id} … {entries[-1].id})"


def _by_role(before: Breakdown, after: Breakdown) -> dict[str, Any]:
    return {
        "before": dict(before.by_role_model.most_common()),
        "after": dict(after.by_role_model.most_common()),
    }


def _before_after(before: Breakdown, after: Breakdown) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="tokens sent to the model (estimated)", box=None)
    for column in ("role", "before", "after"):
        table.add_column(column, justify="left" if column == "role" else "right")
    roles = sorted(set(before.by_role_model) | set(after.by_role_model))
    for role in roles:
        table.add_row(
            Text(role), f"{before.by_role_model[role]:,}", f"{after.by_role_model[role]:,}"
        )
    table.add_row(Text("total"), f"{before.model_tokens:,}", f"{after.model_tokens:,}")
    return table
