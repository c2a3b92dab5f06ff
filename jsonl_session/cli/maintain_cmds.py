"""Maintenance commands: migrate and doctor. They change a file only when asked
(`migrate` without --dry-run, `doctor --repair`), always with backups. The library
is imported when a command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from jsonl_session import JsonlSessionError, SessionFormatError
from jsonl_session.cli.options import (
    DryRunOption,
    FilesArg,
    JsonOption,
    cache_for,
    out,
    print_json,
    reports_errors,
    styled,
)


@reports_errors
def migrate(ctx: typer.Context, files: FilesArg, dry_run: DryRunOption = False) -> None:
    """Rewrite old files as version 3 (atomically, original kept as a backup)."""
    from jsonl_session import Session

    failed = False
    for path in files:
        try:
            session = Session.open(path, cache=cache_for(ctx))
            if not session.migrations and session.version_read >= 3:
                out().print(f"{path}: already version {session.version_read}")
                continue
            steps = "; ".join(session.migrations) or "header repaired"
            if dry_run:
                out().print(f"{path}: would migrate v{session.version_read} → v3 ({steps})")
                continue
            backup = session.migrate()
            if backup is None:
                out().print(f"{path}: already version 3 (migrated meanwhile); nothing written")
            else:
                out().print(
                    f"{path}: migrated v{session.version_read} → v3; original kept as {backup}"
                )
        except JsonlSessionError as exc:
            failed = True
            out().print(styled(("error:", "red"), f" {exc}"))
    if failed:
        raise typer.Exit(1)


@reports_errors
def doctor(
    ctx: typer.Context,
    files: FilesArg,
    as_json: JsonOption = False,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Seal a torn last line into a sidecar and migrate, with backups. Nothing else.",
        ),
    ] = False,
) -> None:
    """Check files and list every problem with its line number (exit 1 if any)."""
    reports = [_check(path, repair, cache_for(ctx)) for path in files]
    if as_json:
        print_json(reports)
    else:
        for report in reports:
            _print_report(report)
    if any(r["problems"] or r.get("error") for r in reports):
        raise typer.Exit(1)


def _check(path: Path, repair: bool, cache: Literal[False] | None) -> dict[str, Any]:
    from jsonl_session import Session

    report: dict[str, Any] = {"path": str(path), "problems": [], "repaired": []}
    try:
        session = Session.open(path, cache=cache)
    except SessionFormatError as exc:
        report["error"] = str(exc)
        report["problems"] = [{"kind": "format", "message": exc.problem, "line": exc.line}]
        return report
    report["version"] = session.version_read
    report["entries"] = len(session.entries)
    report["problems"] = [p.to_dict() for p in session.problems]
    if repair:
        try:
            made = session.repair()
        except JsonlSessionError as exc:
            report["error"] = str(exc)
            return report
        report["repaired"] = [str(p) for p in made]
        report["problemsAfter"] = [p.to_dict() for p in Session.open(path, cache=cache).problems]
    return report


def _print_report(report: dict[str, Any]) -> None:
    path = report["path"]
    problems = report["problems"]
    error = report.get("error")
    if not problems and not error:
        entries = f"v{report['version']}, {report['entries']} entries"
        out().print(styled(("ok", "green"), f" {path} ({entries})"))
    else:
        out().print(styled((f"{len(problems)} problem(s)", "yellow"), f" {path}"))
    for problem in problems:
        where = f"line {problem['line']}: " if problem.get("line") else ""
        out().print(styled(f"  {where}{problem['message']} ", (f"({problem['kind']})", "dim")))
    shown_as_problem = bool(problems) and problems[0]["kind"] == "format"
    if error and not shown_as_problem:
        out().print(styled("  ", ("error:", "red"), f" {error}"))
    for made in report.get("repaired", []):
        out().print(f"  wrote {made}")
    if "problemsAfter" in report:
        out().print(f"  after repair: {len(report['problemsAfter'])} problem(s) remain")
