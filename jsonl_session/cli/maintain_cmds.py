"""Maintenance commands: migrate and doctor. They change a file only when asked
(`migrate` without --dry-run, `doctor --repair`), always with backups; otherwise
they read FILE, or standard input for '-' (inputs.py). `doctor` exits 1 while a
problem remains (after --repair, only if one still does). The library is imported
when a command runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from jsonl_session import JsonlSessionError, SessionFormatError
from jsonl_session.cli.inputs import STDIN, session_file
from jsonl_session.cli.options import (
    STDIN_COPIES,
    DryRunOption,
    FilesArg,
    JsonOption,
    cache_for,
    naming_stdin,
    reports_errors,
    shown,
)
from jsonl_session.cli.output import err, out, print_json, styled


@reports_errors
def migrate(
    ctx: typer.Context, files: FilesArg, dry_run: DryRunOption = False, as_json: JsonOption = False
) -> None:
    """Rewrite old files as version 3 (atomically, original kept as a backup)."""
    reports = [_migrate(ctx, path, dry_run) for path in files]
    if as_json:
        print_json(reports)
    else:
        for report in reports:
            _print_migration(report)
    if any(report["action"] == "error" for report in reports):
        raise typer.Exit(1)


def _migrate(ctx: typer.Context, path: Path, dry_run: bool) -> dict[str, Any]:
    """What migrating one file did (or would do): {path, action, versionBefore, steps,
    backup}, action one of current, would-migrate, migrated, error (with error)."""
    from jsonl_session import Session

    report: dict[str, Any] = {
        "path": str(path),
        "action": "error",
        "versionBefore": None,
        "steps": [],
        "backup": None,
    }
    try:
        writes = None if dry_run else "rewrites FILE"
        readable = session_file(ctx, path, writes=writes) if str(path) == STDIN else path
        report["path"] = shown(readable)
        session = Session.open(readable, cache=cache_for(ctx))
        report["versionBefore"] = version = session.version_read
        report["steps"] = steps = session.migrations
        if not steps and version >= 3:
            report["action"] = "current"
        elif dry_run:
            report["action"] = "would-migrate"
        else:
            backup = session.migrate()
            report["action"] = "current" if backup is None else "migrated"
            report["backup"] = None if backup is None else str(backup)
    except JsonlSessionError as exc:
        report["error"] = naming_stdin(str(exc))
    return report


def _print_migration(report: dict[str, Any]) -> None:
    path, action, version = report["path"], report["action"], report["versionBefore"]
    steps = "; ".join(report["steps"]) or "header repaired"
    if action == "error":
        err().print(styled(("error:", "red"), f" {report['error']}"))
    elif action == "current" and report["steps"]:
        out().print(f"{path}: already version 3 (migrated meanwhile); nothing written")
    elif action == "current":
        out().print(f"{path}: already version {version}")
    elif action == "would-migrate":
        out().print(f"{path}: would migrate v{version} → v3 ({steps})")
    else:
        out().print(f"{path}: migrated v{version} → v3; original kept as {report['backup']}")


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
    """Check files and list every problem with its line number, values of the wrong
    type or out of range included (exit 1 if any; after --repair, exit 1 if any remain)."""
    reports = [_check(ctx, path, repair) for path in files]
    if as_json:
        print_json(reports)
    else:
        for report in reports:
            _print_report(report)
    if any(r.get("error") or r.get("problemsAfter", r["problems"]) for r in reports):
        raise typer.Exit(1)


def _check(ctx: typer.Context, path: Path, repair: bool) -> dict[str, Any]:
    from jsonl_session import Session

    if str(path) == STDIN:
        path = session_file(ctx, path, writes="--repair rewrites FILE" if repair else None)
    cache = cache_for(ctx)
    report: dict[str, Any] = {"path": shown(path), "problems": [], "repaired": []}
    try:
        session = Session.open(path, cache=cache)
    except SessionFormatError as exc:
        report["error"] = naming_stdin(str(exc))
        problem = {"kind": "format", "message": exc.problem, "line": exc.line}
        report["problems"] = [problem, *_leftovers(path)]
        if repair:  # what killed writes left beside it goes even if the file cannot be read
            report["repaired"] = [f"removed {p}" for p in _remove_leftovers(path)]
        return report
    report["version"] = session.version_read
    report["entries"] = len(session.entries)
    problems = sorted(session.problems + session.check_values(), key=lambda p: p.line or 0)
    report["problems"] = [p.to_dict() for p in problems] + _leftovers(path)
    if repair:
        try:
            made = session.repair()
        except JsonlSessionError as exc:
            report["error"] = naming_stdin(str(exc))
            report["repaired"] = [f"removed {p}" for p in _remove_leftovers(path)]
            return report
        report["repaired"] = [str(p) for p in made]
        report["repaired"] += [f"removed {p}" for p in _remove_leftovers(path)]
        reopened = Session.open(path, cache=cache)
        after = sorted(reopened.problems + reopened.check_values(), key=lambda p: p.line or 0)
        report["problemsAfter"] = [p.to_dict() for p in after] + _leftovers(path)
    return report


def _leftovers(path: Path) -> list[dict[str, Any]]:
    """Temporary files that killed writes left beside ``path`` (storage/leftovers.py)."""
    from jsonl_session import abandoned_temps

    if str(path) in STDIN_COPIES:
        return []
    return [
        {
            "kind": "leftover-temp",
            "message": f"{temp}: a temporary file left by an interrupted write; "
            "doctor --repair removes it",
            "line": None,
        }
        for temp in abandoned_temps(Path(os.path.realpath(path)).parent)
    ]


def _remove_leftovers(path: Path) -> list[Path]:
    from jsonl_session import remove_abandoned_temps

    if str(path) in STDIN_COPIES:
        return []
    return remove_abandoned_temps(Path(os.path.realpath(path)).parent)


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
    for made in report.get("repaired", []):  # a path written, or "removed <path>"
        out().print(f"  {made}" if made.startswith("removed ") else f"  wrote {made}")
    if "problemsAfter" in report:
        left = len(report["problemsAfter"])
        remain = "1 problem remains" if left == 1 else f"{left or 'no'} problems remain"
        out().print(f"  after repair: {remain}")
