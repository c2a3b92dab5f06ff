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

    def parts(self, view: EntryView, call: CallSeen | None = None) -> str:
        """The parts of ``view``; ``call`` is the call a tool result answers."""
        made: dict[str, CallSeen] = {}
        text = "".join(self.part(part, call, made) for part in view.parts)
        if made:
            self.calls[view.entry.line] = made
            if len(self.calls) > self.REMEMBERED:
                del self.calls[next(iter(self.calls))]  # the oldest
        return text

    def part(
        self, part: Part, call: CallSeen | None = None, made: dict[str, CallSeen] | None = None
    ) -> str:
        """One part; a tool call's is added to ``made`` (by its id)."""
        kind = part.kind
        if kind == "text":
            return f'<div class="md">{self.markup.markdown(part.text)}</div>'
        if kind == "thinking":
            words = len(part.text.split())
            body = f'<div class="md">{self.markup.markdown(part.text)}</div>'
            return _details(f"Thinking · {words} words", body, "thinking")
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
        return _details(escape(part.title or "data"), json_html(part.text), "data")

    def _tool_call(self, part: Part, made: dict[str, CallSeen] | None) -> str:
        args = _arguments(part)
        if part.ref and made is not None:
            made[part.ref] = call_seen(part, args)
        main = main_argument(args)
        summary = f'<span class="name">{escape(part.title)}</span>'
        summary += f' <code class="arg">{escape(main)}</code>' if main else ""
        as_json = json_html(part.text)
        shown = self._file_view(part.title, args)
        body = shown + _details("arguments (JSON)", as_json, "data") if shown else as_json
        ref = f' <span class="count">{escape(part.ref)}</span>' if part.ref else ""
        return _details(summary + ref, body, "tool")

    def _output(self, part: Part, call: CallSeen | None) -> str:
        text = _plain(part.text).removesuffix("\n")
        if not text:
            return '<p class="stop">(no output)</p>'
        lines = text.count("\n") + 1
        error = part.title == "error"
        what = '<span class="is-error">Error output</span>' if error else "Output"
        path = ""
        if call is not None and call.name == "read" and not error:
            path = call.path
        body = (
            self.markup.code(text, path=path)
            if path
            else f'<pre class="out">{escape_text(text)}</pre>'
        )
        first = "" if lines <= OPEN_OUTPUT_LINES else f" · {escape(one_line(text, 90))}"
        plural = "line" if lines == 1 else "lines"
        summary = f"{what} · {lines} {plural}{first}"
        return _details(summary, body, "output", open_=lines <= OPEN_OUTPUT_LINES)

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


def calls_made(view: EntryView) -> dict[str, CallSeen]:
    """The calls of ``view`` by id, as `PartRenderer.parts` remembers them."""
    return {
        p.ref: call_seen(p, _arguments(p)) for p in view.parts if p.kind == "tool-call" and p.ref
    }


def call_seen(part: Part, args: dict[str, Any]) -> CallSeen:
    path = as_text(args.get("path") or args.get("file_path") or "")
    return CallSeen(part.title, main_argument(args, 80), path)


def _arguments(part: Part) -> dict[str, Any]:
    try:
        arguments = loads_text(part.text)
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


def _details(summary: str, body: str, css: str, *, open_: bool = False) -> str:
    opened = " open" if open_ else ""
    return f'<details class="{css}"{opened}><summary>{summary}</summary>{body}</details>'
