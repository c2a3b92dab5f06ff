"""Maintenance commands: migrate and doctor. They change a file only when asked
(`migrate` without --dry-run, `doctor --repair`), always with backups."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from jsonl_session.cli.common import out, print_json, reports_errors
from jsonl_session.errors import JsonlSessionError, SessionFormatError
from jsonl_session.session import Session

FilesArg = Annotated[list[Path], typer.Argument(help="Session .jsonl files.")]


@reports_errors
def migrate(
    files: FilesArg,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would change; write nothing.")
    ] = False,
) -> None:
    """Rewrite old files as version 3 (atomically, original kept as a backup)."""
    failed = False
    for path in files:
        try:
            session = Session.open(path)
            if not session.migrations and session.version_read >= 3:
                out.print(f"{escape(str(path))}: already version {session.version_read}")
                continue
            steps = "; ".join(session.migrations) or "header repaired"
            if dry_run:
                out.print(
                    f"{escape(str(path))}: would migrate v{session.version_read} → v3 ({steps})"
                )
                continue
            backup = session.migrate()
            out.print(
                f"{escape(str(path))}: migrated v{session.version_read} → v3; "
                f"original kept as {escape(str(backup))}"
            )
        except JsonlSessionError as exc:
            failed = True
            out.print(f"[red]error:[/red] {escape(str(exc))}")
    if failed:
        raise typer.Exit(1)


@reports_errors
def doctor(
    files: FilesArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Seal a torn last line into a sidecar and migrate, with backups. Nothing else.",
        ),
    ] = False,
) -> None:
    """Check files and list every problem with its line number (exit 1 if any)."""
    reports = [_check(path, repair) for path in files]
    if as_json:
        print_json(reports)
    else:
        for report in reports:
            _print_report(report)
    if any(r["problems"] or r.get("error") for r in reports):
        raise typer.Exit(1)


def _check(path: Path, repair: bool) -> dict[str, Any]:
    report: dict[str, Any] = {"path": str(path), "problems": [], "repaired": []}
    try:
        session = Session.open(path)
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
        report["problemsAfter"] = [p.to_dict() for p in Session.open(path).problems]
    return report


def _print_report(report: dict[str, Any]) -> None:
    path = escape(report["path"])
    problems = report["problems"]
    if not problems and not report.get("error"):
        out.print(f"[green]ok[/green] {path} (v{report['version']}, {report['entries']} entries)")
    else:
        out.print(f"[yellow]{len(problems)} problem(s)[/yellow] {path}")
        for problem in problems:
            where = f"line {problem['line']}: " if problem.get("line") else ""
            out.print(f"  {where}{escape(problem['message'])} [dim]({problem['kind']})[/dim]")
        if report.get("error") and report["problems"] and report["problems"][0]["kind"] != "format":
            out.print(f"  [red]error:[/red] {escape(report['error'])}")
    for made in report.get("repaired", []):
        out.print(f"  wrote {escape(made)}")
    if "problemsAfter" in report:
        out.print(f"  after repair: {len(report['problemsAfter'])} problem(s) remain")
