"""`stats`: where a session's tokens go, as a table with bars, and the usage and cost
it recorded, by model and by kind; or JSON. Read-only.
The library is imported when the command runs, rich's tables only for the tables."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated

import typer

from jsonl_session.cli.inputs import session_file
from jsonl_session.cli.options import InputArg, JsonOption, LeafOption, cache_for, reports_errors
from jsonl_session.cli.output import out, print_json

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from jsonl_session import UsageTotal

BAR_WIDTH = 30


StatsWorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        help="Processes to measure a long session with (default: one per core; 1: this "
        "process only). The figures are the same.",
    ),
]


@reports_errors
def stats(
    ctx: typer.Context,
    file: InputArg,
    leaf: LeafOption = None,
    as_json: JsonOption = False,
    workers: StatsWorkersOption = None,
) -> None:
    """Stored vs model-facing tokens, by entry type, role and tool, and the largest entries."""
    from jsonl_session import token_breakdown_of

    path = session_file(ctx, file)
    # (the workers start while the session is opened)
    found = token_breakdown_of(path, leaf, workers=workers, cache=cache_for(ctx))
    if as_json:
        print_json(found.to_dict())
        return
    from rich.table import Table
    from rich.text import Text

    total = max(found.stored_tokens, 1)
    summary = Table(title="Tokens (estimated: characters / 4)", show_header=False, box=None)
    summary.add_column(style="bold")
    summary.add_column(justify="right")
    summary.add_column()
    for label, value in (
        ("stored in the file", found.stored_tokens),
        ("on the active path", found.path_tokens),
        ("sent to the model", found.model_tokens),
        ("  other branches", found.other_branches_tokens),
        ("  saved by compaction", found.compaction_saved_tokens),
    ):
        summary.add_row(Text(label), f"{value:,}", _bar(value, total))
    summary.add_row(
        Text("context estimate"), f"{found.context_estimate:,}", Text("(last usage + estimate)")
    )
    out().print(summary)
    for title, stored, model in (
        ("by entry type", found.by_entry_type, None),
        ("by message role", found.by_role, found.by_role_model),
        ("by tool", found.by_tool, found.by_tool_model),
    ):
        out().print(_counter_table(title, stored, model, total))
    largest = Table(title="largest entries", box=None)
    for column in ("entry", "line", "what", "tokens"):
        largest.add_column(column, justify="right" if column in ("line", "tokens") else "left")
    for item in found.largest:
        largest.add_row(item.entry_id, str(item.line), Text(item.what), f"{item.tokens:,}")
    out().print(largest)
    recorded = found.recorded
    if recorded.total.records:
        for title, totals in (
            ("recorded usage by model (all branches)", recorded.by_model),
            ("recorded usage by kind", recorded.by_kind),
        ):
            out().print(_usage_table(title, {**totals, "total": recorded.total}))


def _usage_table(title: str, totals: dict[str, UsageTotal]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, box=None)
    table.add_column("")
    for column in ("input", "output", "cache read", "cache write", "total", "cost $"):
        table.add_column(column, justify="right")
    keys = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
    for name, total in totals.items():
        cells = [f"{total.tokens.get(key, 0):,}" for key in keys]
        table.add_row(Text(name), *cells, f"{total.cost:.4f}")
    return table


def _counter_table(
    title: str, stored: Counter[str], model: Counter[str] | None, total: int
) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, box=None)
    table.add_column("")
    table.add_column("stored", justify="right")
    if model is not None:
        table.add_column("to model", justify="right")
    table.add_column("")
    for name, tokens in stored.most_common():
        cells: list[Text | str] = [Text(name), f"{tokens:,}"]
        if model is not None:
            cells.append(f"{model.get(name, 0):,}")
        table.add_row(*cells, _bar(tokens, total))
    return table


def _bar(value: int, total: int) -> Text:
    from rich.text import Text

    filled = round(BAR_WIDTH * value / total) if total else 0
    return Text("█" * filled + "·" * (BAR_WIDTH - filled), style="cyan")
