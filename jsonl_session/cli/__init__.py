"""The `jsonl-session` command line: a thin Typer layer over the library.

One module per command group; what they share (options, settings, output, errors)
is in options.py, how the command line itself behaves in commands.py, the app that
holds them all in typer_app.py. Commands call the public API, importing what they
use when they run, so starting the CLI imports only typer and these modules; they
turn library errors into one line on stderr (exit 1), and a mistake on the command
line is one line too (exit 2; commands.py). Shell completion is Typer's
(--install-completion, --show-completion). Nothing in the library imports this
package.

Importing the package imports none of that: `main` (the ``jsonl-session`` script's
entry point) imports the app when it runs, and ``app`` is made on first use. A
worker process spawned by a command runs the script again as its main module, and
the command line (Typer, Rich, the command modules: about 30 ms) is not for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonl_session.cli.typer_app import app

__all__ = ["app", "main"]


def main() -> None:
    """Run the command line (``sys.argv``)."""
    from jsonl_session.cli.typer_app import app

    app()


def __getattr__(name: str) -> Any:
    if name == "app":  # (the Typer app, for tests and for embedding it in another)
        from jsonl_session.cli.typer_app import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
