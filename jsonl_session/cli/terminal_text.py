"""Text from session files made safe to print: no terminal control sequence in it ever
reaches the terminal.

Session files hold model replies and tool output from anywhere; a file that carries
``ESC ] 0 ; title BEL``, ``ESC [ 2 J``, an OSC 8 hyperlink, a lone CSI (U+009B) or a
right-to-left override would retitle, clear or rewrite the user's terminal, or show
text in another order than it is. Every command prints file text through one of:

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

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.segment import Segment

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# the same code points as UTF-8 bytes, but for C0, which JSON text never holds raw
_UNSAFE_IN_JSON = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab shown escaped."""
    if text.isascii() and text.isprintable():
        return text  # the common case, checked at C speed
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible_utf8(data: bytes) -> bytes:
    """`visible` of UTF-8 text, on its bytes: ``visible(text).encode()`` for
    ``data = text.encode()``, without decoding it. Taking out printable ASCII (at C
    speed) leaves every other character whole, as all its bytes are 0x80 or more, so
    the pattern finds a control there only if ``data`` holds one: most texts are then
    searched in the few bytes left, not in full."""
    rest = data.translate(None, _PRINTABLE_ASCII)
    if not rest or _UNSAFE_UTF8.search(rest) is None:
        return data
    return _UNSAFE_UTF8.sub(_utf8_escape, data)


_PRINTABLE_ASCII = bytes([0x09, 0x0A, *range(0x20, 0x7F)])
_UNSAFE_UTF8 = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)


def _utf8_escape(match: re.Match[bytes]) -> bytes:
    code = ord(match.group().decode())
    return (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}").encode()


def json_visible(data: bytes) -> bytes:
    """Compact JSON ``data`` with DEL, C1 and bidirectional controls as ``\\u`` escapes
    (they can only occur inside strings, where the escape means the same)."""
    if data.isascii() and b"\x7f" not in data:
        return data
    return _UNSAFE_IN_JSON.sub(_json_escape, data)


def _json_escape(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode())


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

        _console_class = SafeConsole
    made: Console = _console_class(**options)
    return made
