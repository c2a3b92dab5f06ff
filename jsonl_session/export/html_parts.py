"""The pieces inside an entry of the HTML export: text, thinking, tool calls and
their outputs, shell commands, images, errors and data.

Owns `PartRenderer`, which turns an EntryView's parts (views/transcript.py) into HTML
and remembers the tool calls of the entries it rendered, so a tool result can say
which call it answers and highlight a file it read by the file's name (which entry's
calls a result looks in is html_calls.py's). Text is Markdown, thinking is folded,
tool calls are ``<details>`` with their arguments as pretty JSON (an edit's change as
a diff, a written file highlighted), long outputs folded. Text is turned into HTML by
markup.py; the entry around the parts is html.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from jsonl_session.export.markup import (
    HIGHLIGHT_BUDGET,
    Markup,
    diff_html,
    escape,
    escape_text,
    json_html,
)
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import as_text, loads_text
from jsonl_session.views.describe import one_line
from jsonl_session.views.transcript import EntryView, Part

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
OPEN_OUTPUT_LINES = 8  # outputs this short are shown open
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_MAIN_ARGUMENTS = ("command", "path", "file_path", "pattern", "query", "url", "name")


@dataclass(frozen=True, slots=True)
class CallSeen:
    """What a tool result shows of the call it answers: the tool, its main argument
    (80 characters), the file it read. Kept small: a page remembers every call."""

    name: str
    main: str
    path: str


class PartRenderer:
    """Renders parts; the tool calls of the last `REMEMBERED` entries rendered are
    remembered (by the entry's line number, which no other entry has) for the
    results that follow them."""

    REMEMBERED = 1024
    """Entries whose calls are kept: results follow their calls closely, and a call
    forgotten is read again (html_calls.py). As many as a worker's slice holds
    (views/slices.py's `SLICE_ENTRIES`), so a worker forgets none of its slice's."""

    def __init__(self, budget: int = HIGHLIGHT_BUDGET) -> None:
        self.calls: dict[int, dict[str, CallSeen]] = {}
        self.markup = Markup(budget)

    def parts(self, view: EntryView, call: CallSeen | None = None) -> list[str]:
        """The parts of ``view`` in pieces (joined, its HTML; a long output's text
        several of them, never joined); ``call`` is the call a tool result answers."""
        made: dict[str, CallSeen] = {}
        pieces: list[str] = []
        for part in view.parts:
            html = self.part(part, call, made)
            if isinstance(html, str):
                pieces.append(html)
            else:
                pieces += html
        if made:
            self.remember(view.entry.line, made)
        return pieces

    def remember(self, line: int, made: dict[str, CallSeen]) -> None:
        """The calls the entry at ``line`` made, kept for the results that follow."""
        self.calls[line] = made
        if len(self.calls) > self.REMEMBERED:
            del self.calls[next(iter(self.calls))]  # the oldest

    def part(
        self, part: Part, call: CallSeen | None = None, made: dict[str, CallSeen] | None = None
    ) -> str | list[str]:
        """One part (a long output in pieces); a tool call's is added to ``made``."""
        kind = part.kind
        if kind == "text":
            return self.text(part.text)
        if kind == "thinking":
            return self.thinking(part.text)
        if kind == "tool-call":
            return self._tool_call(part, made)
        if kind == "output":
            return self._output(part, call)
        if kind == "command":
            return f'<pre class="command">$ {escape_text(_plain(part.text))}</pre>'
        if kind == "image":
            return image_html(part)
        if kind == "error":
            return f'<p class="error">{escape(part.text)}</p>'
        if kind == "note":
            return f'<p class="stop">{escape(part.text)}</p>'
        return folded(escape(part.title or "data"), json_html(part.text), "data")

    def text(self, text: str) -> str:
        """A text, its Markdown rendered."""
        return f'<div class="md">{self.markup.markdown(text)}</div>'

    def thinking(self, text: str) -> str:
        """A model's thinking, folded under how many words it holds."""
        words = len(text.split())
        body = f'<div class="md">{self.markup.markdown(text)}</div>'
        return folded(f"Thinking · {words} words", body, "thinking")

    def _tool_call(self, part: Part, made: dict[str, CallSeen] | None) -> str:
        args = arguments_of(part.text)
        return self.tool_call(part.title, part.ref, args, json_html(part.text), made)

    def tool_call(
        self,
        name: str,
        ref: str,
        args: dict[str, Any],
        as_json: str,
        made: dict[str, CallSeen] | None,
    ) -> str:
        """A call to tool ``name`` with its arguments ``args`` (as the JSON of
        ``as_json`` gives them back), shown as ``as_json`` (`json_html`); it is added
        to ``made`` by its id ``ref``."""
        main = main_argument(args)
        if ref and made is not None:
            made[ref] = CallSeen(name, _narrowed(main, 80), _path_of(args))
        summary = f'<span class="name">{escape(name)}</span>'
        summary += f' <code class="arg">{escape(main)}</code>' if main else ""
        shown = self._file_view(name, args)
        body = shown + folded("arguments (JSON)", as_json, "data") if shown else as_json
        said_ref = f' <span class="count">{escape(ref)}</span>' if ref else ""
        return folded(summary + said_ref, body, "tool")

    def _output(self, part: Part, call: CallSeen | None) -> str | list[str]:
        return self.output(part.title == "error", call, part.size, part.pieces)

    def output(
        self, error: bool, call: CallSeen | None, size: int, pieces: list[str]
    ) -> str | list[str]:
        """A tool's output, the text of ``pieces`` (``size`` characters in all), under
        the call it answers (a file it read is highlighted by the file's name)."""
        what = '<span class="is-error">Error output</span>' if error else "Output"
        path = ""
        if call is not None and call.name == "read" and not error:
            path = call.path
        if not path and size > LONG_OUTPUT:
            return _long_output(pieces, what)
        text = _plain(pieces[0] if len(pieces) == 1 else "".join(pieces)).removesuffix("\n")
        if not text:
            return '<p class="stop">(no output)</p>'
        lines = text.count("\n") + 1
        body = (
            self.markup.code(text, path=path)
            if path
            else f'<pre class="out">{escape_text(text)}</pre>'
        )
        first = "" if lines <= OPEN_OUTPUT_LINES else f" · {escape(one_line(text, 90))}"
        plural = "line" if lines == 1 else "lines"
        summary = f"{what} · {lines} {plural}{first}"
        return folded(summary, body, "output", open_=lines <= OPEN_OUTPUT_LINES)

    def _file_view(self, tool: str, args: dict[str, Any]) -> str:
        """An edit as a diff, a written file's content highlighted; "" for other calls."""
        path = str(args.get("path") or args.get("file_path") or "")
        if tool == "write" and isinstance(args.get("content"), str):
            return self.markup.code(args["content"], path=path)
        if tool != "edit":
            return ""
        edits = args.get("edits")
        changes = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else []
        changes += [args] if "oldText" in args else []
        diffs = [
            diff_html(change["oldText"], change["newText"])
            for change in changes
            if isinstance(change.get("oldText"), str) and isinstance(change.get("newText"), str)
        ]
        return "".join(diffs)


LONG_OUTPUT = 1 << 20
"""An output of more characters than this (none highlighted) is escaped a stretch of
that many at a time and its pieces are not joined: copies of hundreds of MB of a text
holding one emoji (four bytes a character) cost more than the rest of its page."""


def _long_output(pieces: list[str], what: str) -> list[str]:
    """`PartRenderer._output` of a long output that is not highlighted, in pieces."""
    if any("\x1b" in piece for piece in pieces):  # colour codes (may span pieces)
        pieces = [_plain("".join(pieces))]
    starts = [(piece, start) for piece in pieces for start in range(0, len(piece), LONG_OUTPUT)]
    last = len(starts) - 1  # (an empty piece has none)
    lines = sum(piece.count("\n") for piece in pieces) + 1
    escaped: list[str] = []
    for index, (piece, start) in enumerate(starts):
        stretch = piece[start : start + LONG_OUTPUT]
        if index == last and stretch.endswith("\n"):  # (removesuffix: the last newline)
            stretch = stretch[:-1]
            lines -= 1
        escaped.append(escape_text(stretch))  # (the stretch let go at once, if escaped)
    if not any(escaped):
        return ['<p class="stop">(no output)</p>']
    first = "" if lines <= OPEN_OUTPUT_LINES else f" · {escape(_one_line_of(pieces, 90))}"
    plural = "line" if lines == 1 else "lines"
    opened = " open" if lines <= OPEN_OUTPUT_LINES else ""
    head = f'<details class="output"{opened}><summary>{what} · {lines} {plural}{first}</summary>'
    return [head, '<pre class="out">', *escaped, "</pre></details>"]


def _one_line_of(stretches: list[str], width: int) -> str:
    """`one_line` of the stretches joined, reading only their start when that says
    enough (as one_line reads the text's)."""
    start: list[str] = []
    wanted = 2 * width + 64  # what one_line reads of a text first
    for stretch in stretches:
        start.append(stretch[:wanted])
        wanted -= len(start[-1])
        if wanted <= 0:
            break
    words = " ".join("".join(start).split())
    if len(words) > width > 0:
        return words[: width - 1] + "…"
    return one_line("".join(stretches), width)


def calls_made(view: EntryView) -> dict[str, CallSeen]:
    """The calls of ``view`` by id, as `PartRenderer.parts` remembers them."""
    calls = [p for p in view.parts if p.kind == "tool-call" and p.ref]
    return {p.ref: call_seen(p, arguments_of(p.text)) for p in calls}


def call_seen(part: Part, args: dict[str, Any]) -> CallSeen:
    return CallSeen(part.title, main_argument(args, 80), _path_of(args))


def _narrowed(line: str, width: int) -> str:
    """`one_line` of a text at ``width``, from its `one_line` at a greater width
    (``line``): both are the text's words joined, cut where they are too long."""
    return line if len(line) <= width else line[: width - 1] + "…"


def _path_of(args: dict[str, Any]) -> str:
    """The file a call reads or writes, as its result shows it."""
    return as_text(args.get("path") or args.get("file_path") or "")


def arguments_of(written: str) -> dict[str, Any]:
    """A call's arguments as their JSON (``written``) reads back; {} when they are
    not an object."""
    try:
        arguments = loads_text(written)
    except ValueError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


def main_argument(args: dict[str, Any], width: int = 100) -> str:
    """The argument that says what a call does (its command, path, pattern...)."""
    for key in _MAIN_ARGUMENTS:
        if isinstance(args.get(key), str) and args[key].strip():
            return one_line(args[key], width)
    first = next((v for v in args.values() if isinstance(v, str) and v.strip()), "")
    return one_line(first, width) if first else ""


def image_html(part: Part) -> str:
    if part.mime in IMAGE_TYPES and _BASE64.fullmatch(part.text):
        src = f"data:{part.mime};base64,{part.text}"
        return f'<img class="image" alt="image ({escape(part.mime)})" src="{src}">'
    return f'<p class="stop">[image: {escape(part.mime or "unknown type")}]</p>'


def _plain(text: str) -> str:
    """Terminal colour codes removed."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def folded(summary: str, body: str, css: str, *, open_: bool = False) -> str:
    opened = " open" if open_ else ""
    return f'<details class="{css}"{opened}><summary>{summary}</summary>{body}</details>'


def entry_meta(labels: dict[str, str], entry: StoredEntry) -> tuple[str, str]:
    """An entry's anchor (``e-<id>``) and its meta line's end: its time, its id as
    a link to itself, its label."""
    anchor = escape(f"e-{entry.id}")
    ident = f'<a class="id mono" href="#{anchor}" title="link to this entry">{escape(entry.id)}</a>'
    label = labels.get(entry.id)
    chip = f'<span class="label">{escape(label)}</span>' if label else ""
    return anchor, _time(entry.timestamp) + ident + chip


def _time(timestamp: str) -> str:
    if not timestamp:
        return ""
    shown = timestamp.replace("T", " ").split(".")[0].removesuffix("Z")
    return f'<time datetime="{escape(timestamp)}" title="UTC">{escape(shown)}</time>'
