"""Session text as safe HTML: Markdown, highlighted code, JSON and diffs.

Owns the two libraries the HTML export renders with: markdown-it-py (CommonMark with
tables and strikethrough, raw HTML in the text escaped, never passed through) and
Pygments (code highlighted with CSS classes; `highlight_css` gives their stylesheet).
Session text is untrusted model and tool output, so nothing here lets markup through:
links get ``rel="noopener noreferrer nofollow"``, and an image whose address is not a
``data:image/`` URL becomes a link, so opening the page fetches nothing.

Highlighting costs about a second per megabyte, so one `Markup` (one page) highlights
at most `HIGHLIGHT_BUDGET` characters of code, none of a block over `HIGHLIGHT_LIMIT`,
and stops once less than a block's worth (`HIGHLIGHT_LIMIT`) is left: from then on
(`Markup.spent`) nothing is highlighted, so the rest of a page can be rendered in
pieces by worker processes. The rest is shown plain. JSON is coloured by a small
scanner here, at any size. Prose with no Markdown in it is plain_text.py's.

What the page shows and how it is laid out is html.py's (and html_parts.py's); this
module only turns one text into one fragment of HTML.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import orjson
from markdown_it import MarkdownIt
from markdown_it.token import Token

# Pygments ships no type information (types-Pygments is not a dependency)
from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexer import Lexer  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]

from jsonl_session.export.plain_text import plain_html

HIGHLIGHT_LIMIT = 16 * 1024  # a longer block is shown plain
HIGHLIGHT_BUDGET = 512 * 1024  # characters of code highlighted per page
_REL = "noopener noreferrer nofollow"
_FORMATTER = HtmlFormatter(nowrap=True)
_JSON_TOKEN = re.compile(  # a string's characters in runs: one step a run, not a character
    r'(?P<str>"[^"\\\n]*(?:\\.[^"\\\n]*)*")(?P<key>\s*:)?'
    r"|(?P<num>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(?P<word>true|false|null)"
)


def escape(text: str) -> str:
    """Escaped for anywhere in a page, attribute values included (html.escape's
    replacements, without its call: this runs several times for every entry). Most
    texts hold none of the five characters: ``in`` finds that out faster than five
    replacements do, ten times on a long text."""
    if (
        "&" not in text
        and "<" not in text
        and ">" not in text
        and '"' not in text
        and "'" not in text
    ):
        return text
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#x27;")
    )


def escape_text(text: str) -> str:
    """Escaped for the content of an element (quotes left as they are: smaller)."""
    if "&" not in text and "<" not in text and ">" not in text:
        return text
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Markup:
    """Renders the texts of one page, keeping count of the code it highlighted."""

    def __init__(self, budget: int = HIGHLIGHT_BUDGET) -> None:
        self.budget = budget
        self._md = MarkdownIt("js-default", {"html": False, "breaks": True, "linkify": False})
        self._md.options["highlight"] = self._fence
        self._md.add_render_rule("link_open", _link_open)
        self._md.add_render_rule("image", _image)

    def markdown(self, text: str) -> str:
        """Markdown as HTML, raw HTML escaped, fenced code highlighted."""
        plain = plain_html(text)  # most prose: the same HTML, without the parser
        if plain is not None:
            return plain
        rendered: str = self._md.render(text)
        return rendered

    def code(self, code: str, language: str = "", *, path: str = "") -> str:
        """A ``<pre>`` of ``code`` highlighted as ``language`` (a Pygments name or
        alias) or, without one, by the file name ``path``; plain when neither is
        known, when the block is long, or when the page's budget is spent."""
        lexer = None
        if len(code) <= HIGHLIGHT_LIMIT <= self.budget:
            lexer = _lexer_by_name(language.lower()) if language else None
            if lexer is None and path:
                lexer = _lexer_for_extension(_extension(path))
        if lexer is None:
            return f'<pre class="code">{escape_text(code)}</pre>'
        self.budget -= len(code)
        body: str = highlight(code, lexer, _FORMATTER)
        if not code.endswith("\n"):  # Pygments ends the text with a newline
            body = body.removesuffix("\n")
        return f'<pre class="code hl">{body}</pre>'

    @property
    def spent(self) -> bool:
        """Nothing more is highlighted on this page."""
        return self.budget < HIGHLIGHT_LIMIT

    def _fence(self, code: str, language: str, _attrs: str) -> str:
        return self.code(code, language)


def json_html(text: str) -> str:
    """JSON text (as json.dumps writes it) in a ``<pre>``, keys, strings, numbers and
    literals coloured with the classes Pygments uses."""
    # Escaped first, whole: escaping adds no quote, backslash, digit or literal, so
    # the tokens found are the escaped tokens
    return '<pre class="code hl json">' + _JSON_TOKEN.sub(_json_span, escape_text(text)) + "</pre>"


def flat_json_html(value: dict[Any, Any]) -> str | None:
    """`json_html` of ``value`` written as format/walk.py's `dumps_indented` writes
    it, for an object of texts (most tool calls' arguments), straight from the object:
    None for anything else (an empty object, another value in it, a lone surrogate)."""
    if not value:
        return None
    members = []
    dumps = orjson.dumps
    try:
        for key, item in value.items():
            if key.__class__ is not str or item.__class__ is not str:
                return None
            # each text as orjson writes it (dumps_indented's way for such an object),
            # escaped, is the string token json_html finds there
            said_key, said = escape_text(dumps(key).decode()), escape_text(dumps(item).decode())
            members.append(f'<span class="nt">{said_key}</span>: <span class="s2">{said}</span>')
    except orjson.JSONEncodeError:
        return None
    return '<pre class="code hl json">{\n  ' + ",\n  ".join(members) + "\n}</pre>"


def _json_span(match: re.Match[str]) -> str:
    if match["str"] is not None:
        if match["key"]:
            return f'<span class="nt">{match["str"]}</span>{match["key"]}'
        return f'<span class="s2">{match["str"]}</span>'
    css = "mi" if match["num"] is not None else "kc"
    return f'<span class="{css}">{match[0]}</span>'


def diff_html(old: str, new: str) -> str:
    """The change from ``old`` to ``new`` as a unified diff, lines marked + and -."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3)
    out = []
    for line in list(lines)[2:]:  # no ---/+++ header: the file is named elsewhere
        css = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")
        text = escape_text(line)
        out.append(f'<span class="{css}">{text}</span>' if css else text)
    return '<pre class="code diff">' + "\n".join(out) + "</pre>"


def highlight_css(scope: str = ".hl") -> str:
    """The stylesheet for highlighted code: a light style, and a dark one when the
    reader's system prefers it."""
    light = HtmlFormatter(style="default").get_style_defs(scope)
    dark = HtmlFormatter(style="github-dark").get_style_defs(scope)
    return f"{_rules_only(light)}\n@media (prefers-color-scheme: dark){{{_rules_only(dark)}}}"


def _rules_only(css: str) -> str:
    # the token rules; Pygments' own pre/background lines are replaced by the page's
    keep = [
        line.split(" /*", 1)[0].replace(" { ", "{").replace("; ", ";").replace(" }", "}")
        for line in css.splitlines()
        if line.strip() and not line.startswith(("pre ", "td.", "span.", ".hl  {", ".hl {"))
    ]
    return "\n".join(keep)


def _extension(path: str) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


@lru_cache(maxsize=256)
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


# The files coding sessions read and write most, by extension, with the lexer Pygments'
# `get_lexer_for_filename` picks for each (a test holds each to that lexer): that
# function first matches the name against the file patterns of every lexer, compiling
# them all, which took 45 ms of the first file a page highlights. Other extensions go
# that way.
COMMON_EXTENSIONS = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript",
    "cjs": "javascript", "ts": "typescript", "tsx": "tsx", "jsx": "jsx", "json": "json",
    "md": "markdown", "sh": "bash", "bash": "bash", "zsh": "bash", "go": "go", "rs": "rust",
    "java": "java", "kt": "kotlin", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp",
    "hpp": "cpp", "cs": "csharp", "rb": "ruby", "php": "php", "swift": "swift",
    "scala": "scala", "yaml": "yaml", "yml": "yaml", "toml": "toml", "ini": "ini",
    "cfg": "ini", "html": "html", "htm": "html", "css": "css", "scss": "scss",
    "xml": "xml", "sql": "tsql", "lua": "lua", "dart": "dart", "ex": "elixir",
    "exs": "elixir", "hs": "haskell", "ml": "ocaml", "vim": "vim", "txt": "text",
    "rst": "restructuredtext", "tex": "tex", "mk": "make", "proto": "protobuf",
    "graphql": "graphql", "diff": "diff", "patch": "diff", "ps1": "powershell",
    "bat": "batch", "cmake": "cmake", "zig": "zig", "jl": "julia",
}  # fmt: skip


@lru_cache(maxsize=256)
def _lexer_for_extension(extension: str) -> Lexer | None:
    if not extension:
        return None
    common = COMMON_EXTENSIONS.get(extension)
    if common is not None:
        return _lexer_by_name(common)
    try:
        return get_lexer_for_filename(f"file.{extension}", stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _link_open(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", _REL)
    text: str = renderer.renderToken(tokens, idx, options, env)
    return text


def _image(renderer: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    if src.startswith("data:image/"):
        return f'<img src="{escape(src)}" alt="{escape(alt)}">'
    # a remote image would be fetched when the page opens: a link instead
    return f'<a href="{escape(src)}" rel="{_REL}">[image: {escape(alt or src)}]</a>'
