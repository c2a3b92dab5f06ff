"""Text that holds no Markdown but paragraphs, line breaks and simple code spans,
turned into the HTML markdown-it-py gives it (as markup.py configures it), without
running the parser: most of a session's prose is such text, and the parser costs
about ten times more than this.

Owns `plain_html` and the rules for when it may answer: only when nothing in the
text could start a construct of CommonMark, tables or strikethrough (raw HTML is
escaped, linkify and the typographer are off). Whatever is not certainly plain gets
None, and markup.py renders it with markdown-it-py; a differential test keeps the
two the same. Nothing here knows about pages or entries.
"""

from __future__ import annotations

import re

from markdown_it.common.utils import escapeHtml

# Outside code spans, each of these may start (or close) a construct: escapes,
# emphasis, links and images, raw HTML and autolinks, entities, headings, tables,
# strikethrough. `!` is left: it starts nothing without a `[` after it.
_SYNTAX = re.compile(r"[\\*_\[\]<>&#|~]")
# Anywhere: a table row (even inside a code span), or what markdown-it rewrites
# before parsing (carriage returns, NUL).
_ANYWHERE = re.compile(r"[|\r\0]")
# At a line's start: a list item, a setext underline or a thematic break (`-`,
# `+`, `=`), an ordered list item (digits then `.` or `)`).
_LINE_START = re.compile(r"[-+=]|\d+[.)]")


def plain_html(text: str) -> str | None:
    """``text``'s HTML as markdown-it-py renders it (paragraphs, ``<br>`` for each
    line break, ``<code>`` for single-backtick spans), or None when the text may
    hold any other syntax."""
    if _ANYWHERE.search(text):
        return None
    paragraphs: list[str] = []
    lines: list[str] = []
    unmatched = False  # a backtick of this paragraph was left unmatched
    given = text.split("\n")
    for index, line in enumerate(given):
        if not line:
            if lines:
                paragraphs.append("<br>\n".join(lines))
                lines = []
            unmatched = False
            continue
        if index + 1 == len(given) or not given[index + 1]:
            # a paragraph's last line: markdown-it strips the paragraph, so spaces
            # at its end are dropped (other whitespace is left to the parser)
            line = line.rstrip(" ")
            if not line:  # a line of whitespace only: left to the parser
                return None
        # Whitespace at a line's start (Python's sense) may be an indented code block
        # or a paragraph's stripped edge; at another line's end, a hard break.
        if line[0].isspace() or line[-1].isspace() or _LINE_START.match(line):
            return None
        if "`" in line:
            # A backtick opens a span the next one closes, through the paragraph: one
            # left over is the paragraph's last, and stays a backtick. Any after it
            # would pair with it across lines: left to the parser.
            if unmatched:
                return None
            unmatched = line.count("`") % 2 == 1
        shown = _line_html(line)
        if shown is None:
            return None
        lines.append(shown)
    if lines:
        paragraphs.append("<br>\n".join(lines))
    return "".join(f"<p>{paragraph}</p>\n" for paragraph in paragraphs)


def _line_html(line: str) -> str | None:
    """One line's HTML: its text escaped, each pair of single backticks a code span
    (one line's spans only: a span over two lines is left to the parser), an odd
    backtick left at the end as it is (plain_html sees that none follows it).

    Outside the spans ``&``, ``<`` and ``>`` are syntax (the line is then not
    plain), so only ``"`` is left to escape there: it is escaped in the line once the
    spans are written, as a span's own escaping leaves no ``"`` behind."""
    if "`" not in line:  # most lines: one search, at most one replacement
        if _SYNTAX.search(line):
            return None
        return line.replace('"', "&quot;") if '"' in line else line
    if "``" in line:  # a longer run of backticks (or two spans side by side)
        return None
    pieces = line.split("`")
    if len(pieces) % 2 == 0:  # an odd number of backticks: the last is unmatched, text
        pieces[-2:] = [f"{pieces[-2]}`{pieces[-1]}"]
    if _SYNTAX.search("".join(pieces[::2])):  # (one character a match: joins make none)
        return None
    for index in range(1, len(pieces), 2):
        piece = pieces[index]
        if piece[0] == " " or piece[-1] == " ":  # one space at each end is stripped
            return None
        pieces[index] = f"<code>{escapeHtml(piece)}</code>"
    shown = "".join(pieces)
    return shown.replace('"', "&quot;") if '"' in shown else shown
