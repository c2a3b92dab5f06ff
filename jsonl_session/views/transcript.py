"""Readable views of entries: what each entry *says* in a transcript or an export.

Owns `view_entry`: a heading and a list of parts (text, thinking, tool calls,
outputs, images, notes) for any entry, redacted on the way when asked. The branch
structure as runs is runs.py's; the plain-text transcript for ``git diff`` is
textconv.py's; the Markdown, HTML and JSON exports are export/'s; secrets are
redact.py's; one-line summaries are describe.py's. Nothing here reads files or writes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.model import LEAF_MARKER_TYPE, PRUNE_MARKER_TYPE
from jsonl_session.format.walk import as_text, dumps_indented
from jsonl_session.views.describe import one_line
from jsonl_session.views.redact import Redactor

PartKind = Literal[
    "text", "thinking", "tool-call", "output", "command", "image", "error", "note", "json"
]


class Part:
    """One piece of an entry: ``text`` is what is shown (already redacted);
    ``title`` names it (a tool name, "details"), ``ref`` is a tool call's id; images
    carry ``mime``. A text the redactor rebuilt is held in its `pieces` until
    someone asks for it whole."""

    __slots__ = ("_pieces", "kind", "mime", "ref", "text", "title")
    text: str  # (unset while the text is held in pieces: `__getattr__` joins them)

    def __init__(
        self,
        kind: PartKind,
        text: str | list[str],
        title: str = "",
        mime: str = "",
        ref: str = "",
    ) -> None:
        self.kind, self.title, self.mime, self.ref = kind, title, mime, ref
        if isinstance(text, str):
            self.text, self._pieces = text, None
        elif len(text) == 1:
            self.text, self._pieces = text[0], None
        else:
            self._pieces = text

    def __getattr__(self, name: str) -> str:
        # only for an attribute not set: the text, held in pieces (joined once)
        if name == "text" and self._pieces is not None:
            self.text = "".join(self._pieces)
            return self.text
        raise AttributeError(name)

    @property
    def pieces(self) -> list[str]:
        """The text in pieces (see `Redactor.text_pieces`): a renderer that writes
        them one by one never copies a huge text into a join."""
        return self._pieces if self._pieces is not None else [self.text]

    def retyped(self, kind: PartKind, title: str = "") -> Part:
        """This part's text as a part of another kind (pieces stay pieces)."""
        return Part(kind, self.text if self._pieces is None else self._pieces, title)

    @property
    def size(self) -> int:
        """The text's length, in characters (its pieces are not joined for it)."""
        return len(self.text) if self._pieces is None else sum(map(len, self._pieces))

    def _key(self) -> tuple[str, str, str, str, str]:
        return (self.kind, self.text, self.title, self.mime, self.ref)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Part) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Part{self._key()!r}"


@dataclass(slots=True)
class EntryView:
    """What an entry says, ready for any renderer. ``kind`` is a stable class name
    (user, assistant, tool-result, bash, custom, summary, note, unknown); a note
    is a small one-line entry (model change, label, name, extension state).
    ``answers``: the id of the tool call a tool result answers."""

    entry: StoredEntry
    kind: str
    heading: str
    detail: str = ""
    parts: list[Part] = field(default_factory=list)
    answers: str = ""

    @property
    def is_note(self) -> bool:
        return self.kind == "note"

    def summary(self, width: int = 72) -> str:
        """One line: the heading and the start of the first text."""
        first = next((p.text for p in self.parts if p.kind != "image" and p.text), "")
        text = one_line(first, width) if first else ""
        return f"{self.heading}: {text}" if text else self.heading


def dump_json(value: Any, *, indent: bool = True) -> str:
    """``value`` as JSON: indented (format/walk.py's `dumps_indented`), or on one line
    as ``json.dumps`` writes it (a space after each comma and colon, text unescaped)."""
    if indent:
        return dumps_indented(value)
    if value.__class__ is dict:  # most values: a tool call's arguments
        flat = _flat_object(value)
        if flat is not None:
            return flat
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except RecursionError:  # nested deeper than Python recurses: still shown
        return dumps_indented(value)


def _flat_object(value: dict[Any, Any]) -> str | None:
    """``json.dumps`` of an object whose values are texts, integers, finite floats,
    booleans or null, each text escaped by orjson (which escapes as ``json.dumps``
    does with ``ensure_ascii=False``, in a fraction of its time: a tool call's
    arguments hold a file's content); None for any other object (a lone surrogate
    orjson refuses included)."""
    said = []
    try:
        for key, item in value.items():
            if key.__class__ is not str:
                return None
            kind = item.__class__
            if kind is str:
                shown = orjson.dumps(item).decode()
            elif kind is int:
                shown = int.__repr__(item)
            elif kind is bool:
                shown = "true" if item else "false"
            elif item is None:
                shown = "null"
            elif kind is float and math.isfinite(item):
                shown = float.__repr__(item)
            else:
                return None
            said.append(f"{orjson.dumps(key).decode()}: {shown}")
    except orjson.JSONEncodeError:
        return None
    return "{" + ", ".join(said) + "}"


def view_entry(
    entry: StoredEntry, redactor: Redactor | None = None, data: dict[str, Any] | None = None
) -> EntryView:
    """The readable view of one entry; every text in it has been through ``redactor``.
    ``data``: the entry's body when the caller has read it already (`StoredEntry.data`)."""
    r = redactor or Redactor(enabled=False)
    if data is None:
        data = entry.data()
    kind = entry.type
    if kind == "message":
        message = data.get("message")
        return _message_view(entry, message if isinstance(message, dict) else {}, r)
    if kind == "model_change":
        model = f"{as_text(data.get('provider'))}/{as_text(data.get('modelId'))}"
        return EntryView(entry, "note", "Model", parts=[Part("note", r.text(f"model → {model}"))])
    if kind == "thinking_level_change":
        level = f"thinking level → {as_text(data.get('thinkingLevel'))}"
        return EntryView(entry, "note", "Thinking level", parts=[Part("note", level)])
    if kind in ("compaction", "branch_summary"):
        return _summary_view(entry, data, r)
    if kind == "custom_message":
        view = EntryView(entry, "custom", "Custom message", r.text(as_text(data.get("customType"))))
        view.parts = _content_parts(data.get("content"), r)
        if data.get("display") is False:
            view.parts.append(Part("note", "not displayed to the user"))
        if data.get("details") is not None:
            view.parts.append(Part("json", dump_json(r.value(data["details"])), "details"))
        return view
    if kind == "custom":
        return _custom_view(entry, data, r)
    if kind == "label":
        target, label = as_text(data.get("targetId")), data.get("label")
        label = as_text(label) if label else label
        text = f"label on {target}: {label}" if label else f"label on {target} cleared"
        return EntryView(entry, "note", "Label", parts=[Part("note", r.text(text))])
    if kind == "session_info":
        name = data.get("name")
        text = f"session named {as_text(name)}" if name else "session name cleared"
        return EntryView(entry, "note", "Session name", parts=[Part("note", r.text(text))])
    body = {k: v for k, v in data.items() if k not in ("type", "id", "parentId", "timestamp")}
    return EntryView(
        entry,
        "unknown",
        f"{kind} (unknown entry type)",
        parts=[Part("json", dump_json(r.value(body)))],
    )


def _message_view(entry: StoredEntry, message: dict[str, Any], r: Redactor) -> EntryView:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        return EntryView(entry, "user", "User", parts=_content_parts(content, r))
    if role == "assistant":
        provider, model_id = (
            as_text(message.get("provider", "?")),
            as_text(message.get("model", "?")),
        )
        model = r.text(f"{provider}/{model_id}")
        view = EntryView(entry, "assistant", "Assistant", model, _content_parts(content, r))
        stop = message.get("stopReason")
        if isinstance(message.get("errorMessage"), str):
            view.parts.append(Part("error", r.text(message["errorMessage"])))
        elif stop in ("error", "aborted", "length"):
            view.parts.append(Part("note", f"stopped: {stop}"))
        return view
    if role == "toolResult":
        name = r.text(as_text(message.get("toolName", "?")))
        view = EntryView(entry, "tool-result", "Tool result", name)
        view.answers = as_text(message.get("toolCallId", ""))
        error = message.get("isError") is True
        if error:
            view.detail += " (error)"
        for part in _content_parts(content, r):
            output = part.kind == "text"
            view.parts.append(part.retyped("output", "error" if error else "") if output else part)
        if not view.parts:
            view.parts.append(Part("output", ""))
        if message.get("details") is not None:
            view.parts.append(Part("json", dump_json(r.value(message["details"])), "details"))
        return view
    if role == "bashExecution":
        return _bash_view(entry, message, r)
    if role == "custom":
        detail = r.text(as_text(message.get("customType")))
        return EntryView(entry, "custom", "Custom message", detail, _content_parts(content, r))
    return EntryView(
        entry,
        "unknown",
        f"Message ({as_text(role, 40)})",
        parts=[Part("json", dump_json(r.value(message)))],
    )


def _bash_view(entry: StoredEntry, message: dict[str, Any], r: Redactor) -> EntryView:
    view = EntryView(entry, "bash", "Shell command")
    view.parts.append(Part("command", r.text(as_text(message.get("command", "")))))
    view.parts.append(Part("output", r.text_pieces(as_text(message.get("output", "")))))
    facts = []
    if message.get("exitCode") is not None:
        facts.append(f"exit code {message['exitCode']}")
    if message.get("cancelled") is True:
        facts.append("cancelled")
    if message.get("truncated") is True:
        where = message.get("fullOutputPath")
        facts.append(f"output truncated (full output in {r.text(where)})" if where else "truncated")
    if message.get("excludeFromContext") is True:
        facts.append("not sent to the model")
    view.detail = ", ".join(facts)
    return view


def _summary_view(entry: StoredEntry, data: dict[str, Any], r: Redactor) -> EntryView:
    if entry.type == "compaction":
        heading = "Compaction summary"
        detail = f"replaces the history before {as_text(data.get('firstKeptEntryId'))}"
        if isinstance(data.get("tokensBefore"), int):
            detail += f" ({data['tokensBefore']} tokens before)"
    else:
        heading, detail = "Branch summary", f"of the branch left at {as_text(data.get('fromId'))}"
    if data.get("fromHook") is True:
        detail += ", made by an extension"
    view = EntryView(
        entry,
        "summary",
        heading,
        detail,
        [Part("text", r.text_pieces(as_text(data.get("summary", ""))))],
    )
    if data.get("details") is not None:
        view.parts.append(Part("json", dump_json(r.value(data["details"])), "details"))
    return view


def _custom_view(entry: StoredEntry, data: dict[str, Any], r: Redactor) -> EntryView:
    custom_type = data.get("customType")
    if custom_type == LEAF_MARKER_TYPE:
        return EntryView(entry, "note", "Leaf", parts=[Part("note", "active leaf moved here")])
    view = EntryView(entry, "note", "Extension state", r.text(as_text(custom_type)))
    if custom_type == PRUNE_MARKER_TYPE:
        ids = data.get("data", {}).get("entryIds") if isinstance(data.get("data"), dict) else None
        count = len(ids) if isinstance(ids, list) else 0
        view.parts.append(Part("note", f"pruned the tool outputs of {count} entries"))
    else:
        view.parts.append(Part("note", f"extension state ({view.detail})"))
    if "data" in data:
        view.parts.append(Part("json", dump_json(r.value(data["data"])), "data"))
    return view


def content_blocks(content: Any) -> list[Any] | None:
    """A message's content as the blocks the views read from it, for a renderer that
    writes common messages without a view: a text as one text block, none for null,
    a list as it is; None for any other value (a view shows it as JSON)."""
    if content.__class__ is str:
        return [{"type": "text", "text": content}]
    if content.__class__ is list:
        return content
    return [] if content is None else None


def _content_parts(content: Any, r: Redactor) -> list[Part]:
    if isinstance(content, str):
        return [Part("text", r.text_pieces(content))]
    if not isinstance(content, list):
        return [] if content is None else [Part("json", dump_json(r.value(content)))]
    parts: list[Part] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(Part("text", r.text_pieces(block["text"])))
        elif kind == "thinking":
            hidden = block.get("redacted") is True
            text = "(thinking redacted by the provider)" if hidden else block.get("thinking", "")
            parts.append(Part("thinking", r.text(as_text(text))))
        elif kind == "toolCall":
            args = dump_json(r.value(block.get("arguments")))
            name, ref = (
                r.text(as_text(block.get("name", "?"))),
                r.text(as_text(block.get("id", ""))),
            )
            parts.append(Part("tool-call", args, name, ref=ref))
        elif kind == "image" and isinstance(block.get("data"), str):
            parts.append(Part("image", block["data"], mime=as_text(block.get("mimeType", ""))))
        else:
            parts.append(Part("json", dump_json(r.value(block))))
    return parts
