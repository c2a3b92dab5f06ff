"""What the CLI's commands share: the settings given before the command name, each
shared argument and option (defined once, one help text each), error reporting, and
the progress bar and spinner. The consoles, JSON and styled output are output.py's.

Light on purpose: it imports typer and `jsonl_session` (whose names load lazily) and
nothing heavier; rich comes in with the first console (output.py) or progress bar,
and library names are imported inside the functions that use them. Library errors
become one line on stderr and exit code 1, never a traceback; options that do not go
together, one line and exit code 2 (`usage`, as the parser's own).
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, ParamSpec, TypeVar

import typer

from jsonl_session import JsonlSessionError
from jsonl_session.cli.output import err, styled

if TYPE_CHECKING:
    from rich.progress import Progress as Bar
    from rich.progress import TaskID

    from jsonl_session import Progress, Summarizer

P = ParamSpec("P")
R = TypeVar("R")


# --- settings given before the command name ---------------------------------------


@dataclass(frozen=True)
class Settings:
    """The global options (`jsonl-session --no-cache COMMAND`), kept on Typer's context
    as ``ctx.obj`` for the command to read."""

    no_cache: bool = False

    def cache(self, no_cache: bool = False) -> Literal[False] | None:
        """The library's ``cache=`` argument: False when either this setting or the
        command's own --no-cache says so, else None (the default cache, which the
        library turns off when JSONL_SESSION_NO_CACHE is set)."""
        return False if self.no_cache or no_cache else None


STDIN_META = "jsonl_session.stdin"  # set on ctx.meta when FILE is '-' (inputs.py)


def cache_for(ctx: typer.Context, no_cache: bool = False) -> Literal[False] | None:
    """``cache=`` for library calls in the command run by ``ctx`` (never the cache for
    a copy of standard input)."""
    stdin = bool(ctx.meta.get(STDIN_META))
    return (ctx.find_object(Settings) or Settings()).cache(no_cache or stdin)


# --- shared arguments and options ---------------------------------------------------


def _file_argument(help_text: str) -> Any:
    # readable=False: an unreadable file is reported by the library as one line
    # with exit code 1, like every other bad input.
    return typer.Argument(help=help_text, readable=False)


FileArg = Annotated[Path, _file_argument("A session .jsonl file.")]
InputArg = Annotated[Path, _file_argument("A session .jsonl file, or - for standard input.")]
FilesArg = Annotated[list[Path], _file_argument("Session .jsonl files.")]
IdArg = Annotated[str, typer.Argument(help="Entry id (or a unique prefix of one).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
RedactOption = Annotated[
    bool,
    typer.Option(
        "--redact",
        help="Replace API keys, tokens, passwords and private keys in what is written.",
    ),
]
NoCacheOption = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Read every session file in full; neither use nor write the index cache "
        "(same as JSONL_SESSION_NO_CACHE=1).",
    ),
]
WorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        help="Processes to read thousands of files with, when the cache cannot answer "
        "for them (default: one per core; 1: this process only).",
    ),
]
LeafOption = Annotated[
    str | None,
    typer.Option(
        "--leaf",
        help="Use the path to this entry (id or unique prefix); default: the active leaf.",
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Say what would be done; write nothing.")
]
DirArg = Annotated[
    Path | None,
    typer.Argument(help="A project folder of sessions (default: the current directory's)."),
]
AllOption = Annotated[
    bool, typer.Option("--all", help="Every project under the session root (or under DIR).")
]
AgentOption = Annotated[
    list[str] | None,
    typer.Option(
        "--agent",
        help="Only this agent's sessions: pi, claude or codex (repeat for several).",
    ),
]
CwdOption = Annotated[
    str | None,
    typer.Option(
        "--cwd",
        help="Use this directory's sessions instead of the current one's; with a "
        "folder, only the sessions started in this directory.",
    ),
]
SummarizerOption = Annotated[
    str,
    typer.Option(
        "--summarizer",
        help="offline (no network), anthropic, openai (Responses), openai-chat, or auto: "
        "anthropic if ANTHROPIC_API_KEY is set, else openai if OPENAI_API_KEY is, else offline.",
    ),
]
ModelOption = Annotated[
    str | None, typer.Option("--model", help="Model for an LLM summarizer (default per provider).")
]
InstructionsOption = Annotated[
    str | None, typer.Option("--instructions", help="Extra instructions for the summary.")
]


# --- errors ---------------------------------------------------------------------------


STDIN_NAME = "<stdin>"
STDIN_COPIES: set[str] = set()  # files standard input was copied into (inputs.py)


def shown(path: Path | str) -> str:
    """A path as messages name it: <stdin> for the copy of standard input."""
    return STDIN_NAME if str(path) in STDIN_COPIES else str(path)


def naming_stdin(message: str) -> str:
    """``message`` with the copy of standard input named <stdin>."""
    for copy in STDIN_COPIES:
        message = message.replace(copy, STDIN_NAME)
    return message


def fail(message: str) -> typer.Exit:
    """One line on stderr, ``error: …``; raise what it returns (exit code 1: the
    command ran and failed)."""
    err().print(styled(("error:", "red"), " ", naming_stdin(message)))
    return typer.Exit(1)


def usage(message: str) -> typer.Exit:
    """A mistake in how the command was called, said like the parser's own (see
    commands.py): one line, exit code 2."""
    from jsonl_session.cli.commands import USAGE_EXIT_CODE

    err().print(styled(("error:", "red"), " ", message))
    return typer.Exit(USAGE_EXIT_CODE)


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
        except BrokenPipeError as exc:
            if exc.filename is not None:  # (a file's pipe, not the reader of stdout)
                raise fail(f"{exc.filename}: {exc.strerror or exc}") from None
            raise reader_gone() from None
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}") from None

    return wrapper


READER_GONE_EXIT_CODE = 141
"""The reader of stdout went (`textconv FILE | head`): the code a program that
SIGPIPE ends exits with, as the shell reports it."""


def reader_gone() -> typer.Exit:
    """Stop quietly: what is left to print has no reader. Stdout is pointed at the
    null device first, so that its flush at exit meets no broken pipe either."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # (no stdout with a file descriptor: nothing to flush)
        pass
    return typer.Exit(READER_GONE_EXIT_CODE)


def existing_file(path: Path) -> Path:
    if not path.exists():
        raise fail(f"{path}: no such file")
    if path.is_dir():
        raise fail(f"{path}: is a directory, not a session file")
    return path


# --- progress -------------------------------------------------------------------------

PROGRESS_AFTER_SECONDS = 0.5


_PROGRESS_STEP_SECONDS = 0.05


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Progress]:
    """A progress callback that shows a bar on stderr once work has taken a moment."""
    started = time.monotonic()
    holder: dict[str, tuple[Bar, TaskID]] = {}
    shown_at = [0.0]
    # Asked once: the callback runs for each of 100,000 files, where asking the
    # console each time cost more than listing a file from the cache. isatty, not
    # rich's is_terminal: FORCE_COLOR must not send a bar into a log, and a command
    # into a pipe or a file then imports no rich (0.05 s) for its bar.
    on_terminal = _stderr_is_terminal()

    def report(done: int, total: int) -> None:
        if not on_terminal:
            return
        now = time.monotonic()
        if "bar" not in holder:
            if now - started < PROGRESS_AFTER_SECONDS:
                return
            from rich.progress import Progress as Bar

            bar = Bar(console=err(), transient=True)
            bar.start()
            holder["bar"] = (bar, bar.add_task(label, total=total))
        elif now - shown_at[0] < _PROGRESS_STEP_SECONDS and done < total:
            return  # the bar redraws ten times a second: a newer count is soon enough
        shown_at[0] = now
        bar, task = holder["bar"]
        bar.update(task, completed=done)

    try:
        yield report
    finally:
        if "bar" in holder:
            holder["bar"][0].stop()


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # none, or closed
        return False


@contextlib.contextmanager
def working(summarizer: Summarizer, what: str) -> Iterator[None]:
    """A spinner on stderr while a model writes (none offline or off a terminal)."""
    # isatty, not rich's is_terminal: FORCE_COLOR must not send a spinner to a pipe
    if summarizer.name == "offline" or not _stderr_is_terminal():
        yield
        return
    model = getattr(summarizer, "model", "")
    with err().status(f"{what} with {summarizer.name} {model}…"):
        yield
