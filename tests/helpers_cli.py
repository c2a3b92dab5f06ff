"""The command line in-process: one Typer test runner for every suite, and `invoke`,
which runs a command through it and returns its exit code, stdout and stderr."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from jsonl_session.cli import app

runner = CliRunner()


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr
