"""The Typer classes behind the app and its commands: how the command line itself
behaves, apart from what any one command does.

- A mistake on the command line (an unknown option, a bad value, a missing argument,
  an unknown command) is one line on stderr, ``error: …``, and exit code 2, the
  convention of click, argparse and the GNU tools; a command that ran and failed
  exits 1 (options.fail). Typer's boxed usage message is never printed.
- Flags (options that take no value) show no ``<bool>`` in help.
- Simple values are read without Typer's pydantic adapters (coercion.py): the
  same values and errors, 75 ms sooner.

Shared options and output helpers are in options.py; the commands in their modules.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer import _click
from typer.core import TyperGroup, TyperOption

from jsonl_session.cli.coercion import quick_values
from jsonl_session.cli.terminal_text import visible

USAGE_EXIT_CODE = 2


def _flags_without_values(params: list[Any]) -> list[Any]:
    """``params`` with every flag's value column left empty in help (Typer shows
    ``<bool>`` for flags; a flag takes no value)."""
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
    return params


def usage_line(exc: _click.ClickException) -> str:
    """A usage error as one line: its message, and where to read the help."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    if message[:2].istitle():  # "Invalid value …", as our own errors: "invalid value …"
        message = message[0].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        message += f" (see '{ctx.command_path} {ctx.help_option_names[0]}')"
    return f"error: {message}"


class Commands(TyperGroup):
    """The app: flags without values in help (its own and its commands'), and usage
    errors as one line (exit 2)."""

    def get_params(self, ctx: _click.Context) -> list[Any]:
        params = _flags_without_values(super().get_params(ctx))
        quick_values(params)
        return params

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            quick_values(_flags_without_values([*command.params, command.get_help_option(ctx)]))
        return command

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        run = super().main
        if not standalone_mode:
            return run(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            # Not standalone: errors come here instead of Typer's boxed printing, and
            # an Exit raised by a command comes back as its exit code.
            code = run(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except _click.exceptions.NoArgsIsHelpError as exc:
            sys.exit(exc.exit_code)  # the help was printed
        except _click.exceptions.UsageError as exc:
            print(visible(usage_line(exc)), file=sys.stderr)
            sys.exit(USAGE_EXIT_CODE)
        except _click.exceptions.ClickException as exc:
            print(visible(f"error: {' '.join(exc.format_message().split())}"), file=sys.stderr)
            sys.exit(exc.exit_code or 1)
        except typer.Abort:
            print("error: aborted", file=sys.stderr)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)
