"""The CLI's output: the rich consoles on stdout and stderr, JSON for scripts, styled
text, and plain lines on stderr (`say`; among them what --redact replaced, counted by
the Redactor `redactor_if` makes).

Light on purpose: rich is imported, and a console made, on first use, so a command
that prints only JSON or raw text (--json, textconv, export to stdout) never imports
rich; library names are imported inside the functions that use them. On a terminal
rich fits output to its width (cells.py's `fit` cuts text by the cells it takes);
into a pipe or file nothing is wrapped or padded. No markup is parsed from session
text and no control character reaches the terminal (terminal_text.py). Error
reporting, the shared options and the progress bar are options.py's.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

PIPE_WIDTH = 1 << 20  # a console that is no terminal: never wrap


class _Unpadded:
    """stdout for rich when it is no terminal: each line without the spaces rich pads
    it with (tables pad every cell to its column's width)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._pending = ""
        self.encoding = str(getattr(stream, "encoding", None) or "utf-8")

    def write(self, text: str) -> int:
        *lines, self._pending = (self._pending + text).split("\n")
        if lines:
            self._stream.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    def isatty(self) -> bool:
        return False


_consoles: dict[bool, tuple[Any, Console]] = {}


def _console(stderr: bool) -> Console:
    from jsonl_session.cli.terminal_text import safe_console

    stream = sys.stderr if stderr else sys.stdout
    made = _consoles.get(stderr)
    if made is not None and made[0] is stream:
        return made[1]
    # No markup is ever parsed from text of session files and paths, and no control
    # character in it reaches the terminal (terminal_text.py). Styled output is built
    # from rich Text objects. On a terminal, rich fits
    # tables to its width; into a pipe or file nothing is wrapped or padded.
    piped = not stderr and not is_terminal()
    console = safe_console(
        file=cast("IO[str]", _Unpadded(stream)) if piped else stream,
        width=PIPE_WIDTH if piped else None,
        highlight=False,
        soft_wrap=True,
        markup=False,
        emoji=False,
    )
    _consoles[stderr] = (stream, console)
    return console


def out() -> Console:
    """The console on stdout (made, and rich imported, on first use)."""
    return _console(False)


def err() -> Console:
    """The console on stderr (made, and rich imported, on first use)."""
    return _console(True)


def say(line: str) -> None:
    """``line`` on stderr, its control characters shown escaped (`visible`; a tab
    stays a tab, where the rich console wrote spaces), without importing rich: a long
    export that only says what it wrote then spends nothing on it (rich takes
    0.05-0.07 s to import and set up)."""
    from jsonl_session import visible

    sys.stderr.write(visible(line) + "\n")
    sys.stderr.flush()


def redactor_if(redact: bool) -> Any:
    """A `Redactor` for ``--redact`` (its counts are said by `say_redacted`), else False."""
    from jsonl_session import Redactor

    return Redactor() if redact else False


def say_redacted(redactor: Any) -> None:
    """``redacted N secrets (kind n, …)`` on stderr, for a command run with --redact."""
    if not redactor:
        return
    counts = redactor.summary()
    kinds = ", ".join(f"{kind} {n}" for kind, n in counts.items())
    noun = "secret" if redactor.total == 1 else "secrets"
    say(f"redacted {redactor.total} {noun}" + (f" ({kinds})" if kinds else ""))


def is_terminal() -> bool:
    """Whether stdout is a terminal (lines are then fitted to its width)."""
    try:
        return sys.stdout.isatty()
    except ValueError:  # closed
        return False


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from plain strings and (text, style) pairs."""
    from rich.text import Text

    return Text.assemble(*parts)


def write_out(data: bytes) -> None:
    """``data`` on stdout, all of it: a pipe takes a long write in parts, and the
    buffer gives back how much went (a reader that went stops the part after: a
    BrokenPipeError, the command's exit code 141), never raising on a short write."""
    out = sys.stdout.buffer
    view = memoryview(data)
    while view:
        took = out.write(view)
        view = view[took if took is not None else len(view) :]  # (None: all of it)


def print_json(value: Any) -> None:
    """Compact JSON, as JSON.stringify writes it, on stdout."""
    from jsonl_session import to_json
    from jsonl_session.cli.terminal_text import json_visible

    write_out(json_visible(to_json(value)) + b"\n")
    sys.stdout.flush()


def print_json_list(items: Iterable[Any]) -> None:
    """`print_json` of a list, written a thousand items at a time as they come (the
    same bytes, without holding the JSON of all of them)."""
    _write_json_list(items)
    write_out(b"\n")
    sys.stdout.flush()


def print_json_with_list(
    before: dict[str, Any], key: str, items: Iterable[Any], after: dict[str, Any]
) -> None:
    """`print_json` of ``{**before, key: list(items), **after}``, the list written as
    it comes (`print_json_list`): the same bytes, never the JSON of all its items."""
    from jsonl_session import to_json
    from jsonl_session.cli.terminal_text import json_visible

    head = to_json(before)[:-1]  # (without its closing brace)
    write_out(json_visible(head + (b"," if before else b"") + to_json(key) + b":"))
    _write_json_list(items)
    tail = to_json(after)
    write_out(json_visible(b"," + tail[1:] if after else b"}") + b"\n")
    sys.stdout.flush()


def _write_json_list(items: Iterable[Any]) -> None:
    from jsonl_session import to_json
    from jsonl_session.cli.terminal_text import json_visible

    write, remaining, separator = write_out, iter(items), b"["
    while part := list(itertools.islice(remaining, 1000)):
        write(separator + json_visible(b",".join(map(to_json, part))))
        separator = b","
    write(b"[]" if separator == b"[" else b"]")
