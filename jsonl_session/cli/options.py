"""Shared plumbing for CLI commands: error reporting, JSON output, consoles.

Library errors become one line on stderr and exit code 1, never a traceback.
"""

from __future__ import annotations

import functools
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from jsonl_session.errors import JsonlSessionError
from jsonl_session.format.jsonio import dumps

P = ParamSpec("P")
R = TypeVar("R")

# Text from session files and paths is printed as it is: no markup is ever parsed
# from it. Styled output is built from rich Text objects.
out = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from plain strings and (text, style) pairs."""
    return Text.assemble(*parts)


def fail(message: str) -> typer.Exit:
    err.print(styled(("error:", "red"), " ", message))
    return typer.Exit(1)


def reports_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn library and OS errors into one clear line on stderr and exit code 1."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        for stream in (sys.stdout, sys.stderr):
            # Session text can hold lone surrogates (pi writes them when a cut splits
            # an emoji); show them escaped rather than fail on them.
            if isinstance(stream, io.TextIOWrapper):
                stream.reconfigure(errors="backslashreplace")
        try:
            return command(*args, **kwargs)
        except JsonlSessionError as exc:
            raise fail(str(exc)) from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}") from None

    return wrapper


def print_json(value: Any) -> None:
    """Compact JSON, as JSON.stringify writes it, on stdout."""
    sys.stdout.buffer.write(dumps(value) + b"\n")
    sys.stdout.flush()


def existing_file(path: Path) -> Path:
    if not path.exists():
        raise fail(f"{path}: no such file")
    if path.is_dir():
        raise fail(f"{path}: is a directory, not a session file")
    return path


def file_argument(help_text: str) -> Any:
    # readable=False: an unreadable file is reported by the library as one line
    # with exit code 1, like every other bad input.
    return typer.Argument(help=help_text, readable=False)
