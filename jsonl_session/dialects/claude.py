"""Reading a Claude Code transcript as a pi session, without writing to it.

Claude Code's lines form a tree by ``uuid`` / ``parentUuid``; the entries keep those
uuids as ids, so reading (or converting) twice gives the same ids. What becomes what:

- the header: ``sessionId``, the first line's time and ``cwd``;
- the name: a ``session_info`` first in the file, from the titles (``custom-title``,
  else ``agent-name``, else the latest ``ai-title`` or ``summary``);
- an assistant reply, written one content block per line with one ``message.id``, is
  one pi assistant message (text, thinking with its signature, redacted thinking,
  tool calls) with the last line's usage and stop reason (``end_turn`` → ``stop``,
  ``tool_use`` → ``toolUse``, ``max_tokens`` → ``length``, none → from its blocks);
- a user line: its ``tool_result`` blocks as ``toolResult`` messages (the line's
  ``toolUseResult`` as ``details``), its other blocks as a user message; a line
  marked ``isMeta`` (text Claude Code adds) as a hidden ``custom_message``;
- a ``compact_boundary`` and the ``isCompactSummary`` line after it: a retain-none
  compaction hanging where the boundary's ``logicalParentUuid`` says;
- other ``system`` lines: ``custom`` entries (kept, never in the context);
- ``progress`` and ``attachment`` lines are left out, their children hung from the
  nearest entry kept above them; bookkeeping lines (snapshots, queue operations,
  last prompts, links, permission modes) are not entries.

Sub-agent lines (``isSidechain``, as older versions wrote them into the main file)
form trees of their own after the main conversation, and a leaf marker (SPEC 9.2)
keeps the main conversation's last entry the session's leaf.
Lines not understood are reported as problems, never a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jsonl_session.dialects import claude_shapes as shapes
from jsonl_session.dialects.building import (
    NO_LINE,
    ForeignTranscript,
    SourceLine,
    first_look,
    source_lines,
    value_at,
)
from jsonl_session.format.ids import timestamp_to_ms
from jsonl_session.format.model import LEAF_MARKER_TYPE
from jsonl_session.format.walk import as_text
from jsonl_session.storage.loader import LoadedFile

API = "anthropic-messages"


HOLD_VALUES_BYTES = 8 << 20
"""A transcript shorter than this is decoded once, its lines' values held between
the two passes; a longer one is looked at briefly first (`shapes.Sorted`) and each kept
line decoded in the second pass: the values of every line take five to six times
the transcript's bytes (3 GB for one of 640 MB), and a short one is read faster."""


def read_claude(data: bytes, path: Path | None) -> LoadedFile:
    """The transcript in ``data`` as a LoadedFile of pi entries (see the module docstring)."""
    reader = _Reader(ForeignTranscript("claude", path, len(data)), data)
    last = None
    for last in source_lines(data, None if reader.held else _SORTING):
        reader.sort(last)
    reader.build()
    if last is not None:
        reader.out.last_line = last.number if last.terminated else last.number - 1
    return reader.out.loaded(reader.header(), data)


_SORTING = first_look(shapes.Sorted)


@dataclass(slots=True)
class _Pending:
    """An assistant reply being gathered from its lines."""

    line: SourceLine
    entry_id: str
    parent: str | None
    message_id: str
    stamp: str
    message: dict[str, Any]
    blocks: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Boundary:
    line: SourceLine
    uuid: str
    parent: str | None
    stamp: str
    tokens: Any
    kept_from: str | None  # the first message a partial compaction keeps


class _Reader:
    def __init__(self, out: ForeignTranscript, data: bytes) -> None:
        self.out = out
        self.data = data  # the transcript: a kept line without its value is decoded again
        self.held = len(data) < HOLD_VALUES_BYTES  # (the lines keep their values)
        # the lines of the conversation and of sub-agents (their values let go in a
        # long transcript: HOLD_VALUES_BYTES)
        self.chain: list[SourceLine] = []
        self.side: list[SourceLine] = []
        self.titles: dict[str, str] = {}
        self.first: dict[str, Any] = {}
        self.alias: dict[str, str | None] = {}  # a source uuid -> the entry that stands for it
        self.tool_names: dict[str, str] = {}
        self.pending: _Pending | None = None
        self.boundary: _Boundary | None = None  # a compact boundary waiting for its summary
        self.in_side = False  # building the sub-agent lines of the main file

    # --- pass 1: sort the lines -----------------------------------------------------------

    def sort(self, line: SourceLine) -> None:
        value = line.value
        if not isinstance(value, dict):
            self.out.not_an_object(line)
            return
        kind = value.get("type")
        if not self.first and isinstance(value.get("sessionId"), str):
            self.first = value if self.held else value_at(self.data, line)  # (read whole)
        if not isinstance(kind, str):
            kind = None
        if kind in shapes.CHAIN_TYPES and isinstance(value.get("uuid"), str):
            kept = line if self.held else line.kept()
            (self.side if value.get("isSidechain") is True else self.chain).append(kept)
        elif kind in shapes.BOOKKEEPING_TYPES:
            self.title(kind, value)
            if kind not in ("custom-title", "ai-title", "agent-name"):
                self.out.leave_out(f"{kind} lines")
        else:
            self.out.problem(
                line, f"a Claude Code line of unknown type {as_text(kind, 40)}; skipped"
            )

    def title(self, kind: str, value: dict[str, Any]) -> None:
        """Note a title line; the latest of each kind wins (a summary counts as an
        ai-title, as older versions wrote them)."""
        key = {
            "custom-title": "customTitle",
            "agent-name": "agentName",
            "ai-title": "aiTitle",
            "summary": "summary",
        }.get(kind)
        text = value.get(key) if key else None
        if isinstance(text, str) and text.strip():
            self.titles["ai-title" if kind == "summary" else kind] = text.strip()

    def header(self) -> dict[str, Any]:
        first = self.first
        out: dict[str, Any] = {"id": as_text(first.get("sessionId") or "")}
        out["timestamp"] = shapes.as_text(first.get("timestamp"))
        out["cwd"] = shapes.as_text(first.get("cwd"))
        return out

    # --- pass 2: build the entries ---------------------------------------------------------

    def build(self) -> None:
        """The entries, from the lines `sort` kept (`value_of` each)."""
        ranked = ("custom-title", "agent-name", "ai-title")
        name = next((self.titles[k] for k in ranked if k in self.titles), None)
        for line in self.chain:
            self.line(line, self.value_of(line))
        self.flush()
        self.close_boundary()
        main_leaf = self.out.entries[-1].id if self.out.entries else None
        self.in_side = True
        for line in self.side:
            self.line(line, self.value_of(line))
        self.flush()
        self.in_side = False
        if self.side and main_leaf is not None:
            self.keep_leaf(main_leaf)
        if name is not None:
            self.name(name)

    def value_of(self, line: SourceLine) -> Any:
        """A kept line's value: held, or decoded again (see HOLD_VALUES_BYTES)."""
        return line.value if line.value is not None else value_at(self.data, line)

    def keep_leaf(self, leaf: str) -> None:
        """Sub-agent lines come after the main conversation; a leaf marker (ours, see
        SPEC 9.2) keeps the main conversation's last entry the session's leaf."""
        stamp = self.out.entries[-1].timestamp
        marker = {"type": "custom", "id": "leaf", "parentId": leaf, "timestamp": stamp}
        marker["customType"] = LEAF_MARKER_TYPE
        while marker["id"] in self.out.ids:
            marker["id"] = f"{marker['id']}-"
        self.out.add(replace(NO_LINE, number=self.out.last_line), marker)

    def name(self, name: str) -> None:
        """A session_info entry first in the file, carrying the title; it is a root of
        its own, so the leaf and every path stay as they are."""
        line = self.out.entries[0] if self.out.entries else None
        stamp = line.timestamp if line is not None else str(self.first.get("timestamp") or "")
        entry = {
            "type": "session_info",
            "id": "title",
            "parentId": None,
            "timestamp": stamp,
            "name": name,
        }
        while entry["id"] in self.out.ids:
            entry["id"] = f"{entry['id']}-"
        self.out.add(NO_LINE, entry)
        self.out.entries.insert(0, self.out.entries.pop())

    def parent_of(self, value: dict[str, Any]) -> str | None:
        parent = value.get("parentUuid")
        if value.get("type") == "system" and value.get("subtype") == "compact_boundary":
            parent = value.get("logicalParentUuid") or parent
        seen = 0
        while isinstance(parent, str) and parent in self.alias and seen < 10_000:
            parent = self.alias[parent]
            seen += 1
        return parent if isinstance(parent, str) else None

    def line(self, line: SourceLine, value: dict[str, Any]) -> None:
        uuid, kind = value["uuid"], value.get("type")
        parent = self.parent_of(value)
        message = shapes.as_object(value.get("message"))
        if kind == "assistant" and self.join(value, parent, message):
            return
        self.flush()
        if not (kind == "user" and value.get("isCompactSummary") is True):
            self.close_boundary()
        if kind in ("progress", "attachment"):
            self.alias[uuid] = parent
            self.out.leave_out(f"{kind} lines")
        elif kind == "assistant":
            self.start_reply(line, value, parent, message)
        elif kind == "user":
            self.user(line, value, parent, message)
        elif kind == "system":
            self.system(line, value, parent)

    # assistant replies

    def join(self, value: dict[str, Any], parent: str | None, message: dict[str, Any]) -> bool:
        """Add the line to the reply being gathered when it continues it."""
        pending = self.pending
        if pending is None or message.get("id") != pending.message_id or parent != pending.entry_id:
            return False
        pending.blocks.extend(shapes.assistant_blocks(message.get("content"), self.tool_names))
        pending.message = message
        self.alias[value["uuid"]] = pending.entry_id
        return True

    def start_reply(
        self, line: SourceLine, value: dict[str, Any], parent: str | None, message: dict[str, Any]
    ) -> None:
        stamp = shapes.as_text(value.get("timestamp"))
        message_id = shapes.as_text(message.get("id")) or value["uuid"]
        self.pending = _Pending(line, value["uuid"], parent, message_id, stamp, message)
        self.pending.blocks.extend(shapes.assistant_blocks(message.get("content"), self.tool_names))

    def flush(self) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        last = pending.message
        reply: dict[str, Any] = {
            "role": "assistant",
            "content": pending.blocks,
            "api": API,
            "provider": "anthropic",
        }
        if isinstance(last.get("model"), str):
            reply["model"] = last["model"]
        usage = last.get("usage")
        if isinstance(usage, dict):
            reply["usage"] = shapes.usage_of(usage)
        stop = last.get("stop_reason")
        calls = any(b.get("type") == "toolCall" for b in pending.blocks)
        inferred = "toolUse" if calls else "stop"
        reply["stopReason"] = (
            shapes.STOP_REASONS.get(stop, inferred) if isinstance(stop, str) else inferred
        )
        if pending.message_id != pending.entry_id:
            reply["responseId"] = pending.message_id
        reply["timestamp"] = timestamp_to_ms(pending.stamp) or 0
        self.add(
            pending.line,
            pending.entry_id,
            pending.parent,
            pending.stamp,
            {"type": "message", "message": reply},
        )

    # user lines

    def user(
        self, line: SourceLine, value: dict[str, Any], parent: str | None, message: dict[str, Any]
    ) -> None:
        uuid = value["uuid"]
        stamp = shapes.as_text(value.get("timestamp"))
        ms = timestamp_to_ms(stamp) or 0
        content = message.get("content")
        if value.get("isCompactSummary") is True and self.boundary is not None:
            self.summary(value, content)
            return
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        produced: list[str] = []
        at = parent
        for block in results:
            call_id = as_text(block.get("tool_use_id") or "")
            result: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": self.tool_names.get(call_id, ""),
                "content": shapes.user_blocks(block.get("content")),
            }
            if "toolUseResult" in value:
                result["details"] = value["toolUseResult"]
            result["isError"] = block.get("is_error") is True
            result["timestamp"] = ms
            entry_id = uuid if not produced else f"{uuid}.{len(produced)}"
            at = self.add(line, entry_id, at, stamp, {"type": "message", "message": result})
            produced.append(at)
        rest: Any = content if isinstance(content, str) else [b for b in blocks if b not in results]
        if rest:
            shown: Any = rest if isinstance(rest, str) else shapes.user_blocks(rest)
            if value.get("isMeta") is True:
                entry = {"type": "custom_message", "customType": "claude/meta", "content": shown}
                entry["display"] = False
            else:
                entry = {"type": "message", "message": {"role": "user", "content": shown}}
                entry["message"]["timestamp"] = ms
            entry_id = uuid if not produced else f"{uuid}.{len(produced)}"
            produced.append(self.add(line, entry_id, at, stamp, entry))
        if not produced:
            self.alias[uuid] = parent  # nothing to keep: its children hang above it
        elif produced[-1] != uuid:
            self.alias[uuid] = produced[-1]

    # system lines and compactions

    def system(self, line: SourceLine, value: dict[str, Any], parent: str | None) -> None:
        stamp = shapes.as_text(value.get("timestamp"))
        if value.get("subtype") == "compact_boundary":
            metadata = shapes.as_object(value.get("compactMetadata"))
            tokens, kept = metadata.get("preTokens"), shapes.first_kept(metadata)
            self.boundary = _Boundary(line, value["uuid"], parent, stamp, tokens, kept)
            return
        data = {key: value[key] for key in ("subtype", "content", "level") if key in value}
        entry = {"type": "custom", "customType": "claude/system", "data": data}
        self.add(line, value["uuid"], parent, stamp, entry)

    def summary(self, value: dict[str, Any], content: Any) -> None:
        """The summary line after a boundary: the compaction is complete."""
        if isinstance(content, str):
            text = content
        else:
            parts = shapes.user_blocks(content)
            text = "\n\n".join(
                as_text(b.get("text") or "") for b in parts if b.get("type") == "text"
            )
        boundary = self.close_boundary(text)
        if boundary is not None:
            self.alias[value["uuid"]] = boundary

    def close_boundary(self, summary: str = "") -> str | None:
        """Keep the waiting boundary as a compaction (with no summary when none
        followed it); returns its id. It keeps nothing from before it, unless Claude
        Code kept a recent segment: then it keeps from the segment's first message,
        which pi's compaction does for the entries between it and the boundary."""
        boundary, self.boundary = self.boundary, None
        if boundary is None:
            return None
        kept = boundary.uuid
        if boundary.kept_from is not None:
            found = self.parent_of({"parentUuid": boundary.kept_from})
            kept = found if found is not None and found in self.out.ids else kept
        entry = {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": kept,
            "tokensBefore": boundary.tokens if isinstance(boundary.tokens, int) else 0,
            "fromHook": False,
        }
        return self.add(boundary.line, boundary.uuid, boundary.parent, boundary.stamp, entry)

    # building

    def add(
        self,
        line: SourceLine,
        entry_id: str,
        parent: str | None,
        stamp: str,
        fields: dict[str, Any],
    ) -> str:
        kind = fields.pop("type")
        entry = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": stamp, **fields}
        if self.in_side:
            entry["isSidechain"] = True  # pi keeps unknown fields; converting back uses it
        self.out.add(line, entry)
        return entry_id
