"""Cutting text to the terminal cells it takes, as rich measures them, for the lines
of `list`, `tree` and `inspect` (a wide CJK character takes two cells).

Owns `fit`, `one_line` and `single_spaced`, and the fast paths that make them cheap
for the common text of 100,000 titles: rich is imported only for text those paths
cannot measure. Where lines go and how they are styled is options.py's and each
command's.
"""

from __future__ import annotations

import re

# Characters one terminal cell wide (printable ASCII, Latin, IPA, Greek, Cyrillic,
# general punctuation, arrows): text made only of them is measured by its length.
_ONE_CELL = re.compile(
    "[\u0020-\u007e\u00a0-\u02ff\u0370-\u0482\u2010-\u2027\u2030-\u205e\u2190-\u21ff]*"
)


# Characters each of which is a grapheme of its own next to any other of them (no
# combining mark, joiner, variation selector, emoji modifier or regional indicator):
# the one-cell ones, currency signs, symbols and dingbats, CJK punctuation, kana and
# ideographs, Hangul syllables, full-width forms and the common emoji blocks. Text made
# only of them measures as the sum of its characters' widths, as rich measures it.
_OWN_GRAPHEMES = re.compile(
    "[\u0020-\u007e\u00a0-\u02ff\u0370-\u0482\u2010-\u2027\u2030-\u205e"
    "\u20a0-\u20c0\u2190-\u21ff\u2600-\u27bf\u3000-\u3029\u3030-\u303f"
    "\u3041-\u3096\u309b-\u30ff\u4e00-\u9fff\uac00-\ud7a3\uff01-\uff60"
    "\U0001f300-\U0001f3fa\U0001f400-\U0001f64f\U0001f680-\U0001f6ff"
    "\U0001f900-\U0001f9ff]*"
)


def fit(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` terminal cells (a wide CJK character takes
    two), ending in "…" when cut."""
    start = text[: width + 1]  # all that is shown of text of one cell a character
    if (start.isascii() and start.isprintable()) or _ONE_CELL.fullmatch(start):
        # one cell a character (rich agrees): no measuring
        if len(text) <= width:
            return text
        if width < 2:
            return "…" if width == 1 else ""
        return text[: width - 1].rstrip(" ") + "…"
    head = text[: 4 * width + 4]
    if _OWN_GRAPHEMES.fullmatch(head):  # rich's grapheme splitting cost 150 µs a title
        return _fit_by_characters(text, head, width)
    from rich.cells import cell_len, set_cell_size

    # Measured on a prefix: a long first message is cut anyway, and measuring all of
    # it cost more than listing thousands of sessions (only a text of more than three
    # zero-width characters a cell could be cut where the whole would not).
    if len(head) == len(text) and cell_len(text) <= width:
        return text
    if width < 2:
        return "…" if width == 1 else ""
    return set_cell_size(head, width - 1).rstrip(" ") + "…"


def _fit_by_characters(text: str, head: str, width: int) -> str:
    """`fit` for text whose characters are graphemes of their own: a character that
    would straddle the last cell is left out, as rich's set_cell_size pads it."""
    from rich.cells import get_character_cell_size

    if len(head) == len(text) and sum(map(get_character_cell_size, text)) <= width:
        return text
    if width < 2:
        return "…" if width == 1 else ""
    cells = end = 0
    for character in head:
        cells += get_character_cell_size(character)
        if cells > width - 1:
            break
        end += 1
    return head[:end].rstrip(" ") + "…"


def one_line(text: str, width: int = 72) -> str:
    """``text`` on one line (runs of whitespace made one space), cut to ``width``
    terminal cells."""
    flat = single_spaced(text)
    return flat if len(flat) <= width // 2 else fit(flat, width)


def single_spaced(text: str) -> str:
    """``" ".join(text.split())``, without splitting printable text that has no two
    spaces together (U+0020 is the only printable white space): the library's
    messages.single_spaced, which the command line does not import (it calls only the
    public API)."""
    if text.isprintable() and "  " not in text:
        return text.strip(" ")
    return " ".join(text.split())
