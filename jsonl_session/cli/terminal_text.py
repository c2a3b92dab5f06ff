"""Text from session files made safe to print: no terminal control sequence in it ever
reaches the terminal.

Session files hold model replies and tool output from anywhere; a file that carries
``ESC ] 0 ; title BEL``, ``ESC [ 2 J``, an OSC 8 hyperlink, a lone CSI (U+009B) or a
right-to-left override would retitle, clear or rewrite the user's terminal, or show
text in another order than it is. Every command prints file text through one of
these (the functions are the library's, views/visible.py's: its transcripts use them too):

- `visible`: for text a person reads. C0 controls but newline and tab, DEL, the C1
  controls (U+0080 to U+009F) and the bidirectional embeddings, overrides and isolates
  (U+202A to U+202E, U+2066 to U+2069) are shown as escapes (``\\x1b``, ``\\x9b``,
  ``\\u202e``), on a terminal and into a pipe alike;
- `json_visible`: for ``--json`` (and JSON exports to stdout). JSON already escapes
  C0; the rest become ``\\u`` escapes, so the output is still JSON and decodes to the
  same strings: a consumer loses nothing.

The consoles of options.py apply `visible` to every piece of text they render (rich's
own styling escapes are added afterwards). Files written with ``-o`` keep the text
exactly: that is data, not a terminal.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from jsonl_session import json_visible, visible, visible_utf8

__all__ = ["json_visible", "safe_console", "visible", "visible_utf8"]

if TYPE_CHECKING:
    from rich.console import Console
    from rich.segment import Segment

_console_class: type | None = None


def safe_console(**options: Any) -> Console:
    """A rich Console (rich imported now) that renders every text segment through
    `visible` before styling it: tables, trees and styled text from files included."""
    global _console_class
    if _console_class is None:
        from rich.console import Console
        from rich.segment import Segment

        class SafeConsole(Console):
            def _render_buffer(self, buffer: Iterable[Segment]) -> str:
                return super()._render_buffer(
                    segment if segment.control else Segment(visible(segment.text), segment.style)
                    for segment in buffer
                )

            def on_broken_pipe(self) -> None:
                # the reader went: said as every command says it (exit code 141,
                # options.reports_errors), not rich's own exit code 1
                self.quiet = True
                raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

        _console_class = SafeConsole
    made: Console = _console_class(**options)
    return made
