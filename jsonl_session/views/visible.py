"""Text made safe to print: control characters shown as escapes, so that nothing a
session file holds can act on a terminal (cli/terminal_text.py says why, and applies
these to everything a command prints), and so that a transcript shows every character
it holds.

- `visible` (of a text) and `visible_utf8` (of its UTF-8, without decoding it): C0
  controls but newline and tab, DEL, the C1 controls (U+0080 to U+009F) and the
  bidirectional embeddings, overrides and isolates (U+202A to U+202E, U+2066 to
  U+2069) as ``\\x1b``, ``\\x9b``, ``\\u202e``;
- `controls_escaped` and `controls_escaped_utf8`: only C0 but newline and tab, and
  DEL, the same way (what a textconv transcript escapes: views/textconv.py);
- `json_visible`: compact JSON with DEL, C1 and the bidirectional controls as ``\\u``
  escapes, so it is still JSON and decodes to the same strings;
- `escaped` and `escaped_utf8`: one of those named by an `Escape` (a worker of
  views/slices.py is told which by name).

An escape is printable ASCII, so escaping twice is escaping once. On bytes, each
function works on UTF-8 with lone surrogates written as ``surrogatepass`` does too:
every pattern is ASCII or a whole character, never part of one.
"""

from __future__ import annotations

import re
from typing import Literal

Escape = Literal["", "controls", "visible"]
"""Which escapes a text gets: none, `controls_escaped`'s or `visible`'s."""

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


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_CONTROL_UTF8 = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
_NOT_CONTROL = bytes(code for code in range(256) if _CONTROL_UTF8.match(bytes([code])) is None)


def controls_escaped(text: str) -> str:
    """``text`` with every C0 control but newline and tab, and DEL, shown escaped."""
    if _CONTROL.search(text) is None:  # (most texts hold none: no call per match)
        return text
    return _CONTROL.sub(_escape, text)


def controls_escaped_utf8(data: bytes) -> bytes:
    """`controls_escaped` of UTF-8 text, on its bytes. Taking out every byte but the
    controls (at C speed) leaves nothing in most texts: no search then."""
    if not data.translate(None, _NOT_CONTROL):
        return data
    return _CONTROL_UTF8.sub(_utf8_escape, data)


def escaped(text: str, escape: Escape) -> str:
    """``text`` with the escapes ``escape`` names."""
    if escape == "controls":
        return controls_escaped(text)
    return visible(text) if escape == "visible" else text


def escaped_utf8(data: bytes, escape: Escape) -> bytes:
    """`escaped` of UTF-8 text, on its bytes."""
    if escape == "controls":
        return controls_escaped_utf8(data)
    return visible_utf8(data) if escape == "visible" else data
