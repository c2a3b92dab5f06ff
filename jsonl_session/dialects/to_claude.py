"""Writing a session as a Claude Code transcript: every branch, as lines that Claude
Code and our own reader (claude.py) read back to the same messages.

Each entry's uuid is derived from the session id and the entry id (a Claude Code
entry keeps the uuid it had), so writing twice gives the same file. A user message
is a ``user`` line; an assistant message one ``assistant`` line per content block,
all sharing the message id, the last with the usage and stop reason; each tool
result a ``user`` line holding a ``tool_result`` (its ``details`` as
``toolUseResult``); a custom message or a branch summary a ``user`` line marked
``isMeta``; a compaction a ``compact_boundary`` line (what it keeps as its preserved
segment) and the summary line after it;
the session name a ``custom-title`` line. Entries Claude Code has no line for (model
and thinking changes, labels, usage, edits, system prompts, custom entries) are left
out and counted; their children hang from the nearest line kept above them.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from jsonl_session.format.entry import entry_lines
from jsonl_session.format.jsonio import dumps, loads_js, loads_js_general
from jsonl_session.format.walk import as_text, items_of
from jsonl_session.session.facade import Session
from jsonl_session.storage import paths

VERSION = "jsonl-session"
_STOP = {"stop": "end_turn", "toolUse": "tool_use", "length": "max_tokens"}
_NAMESPACE = uuid.UUID("6f1e3c52-8d1f-4c0e-9a57-2b7d0c1e4a91")


def claude_file(session: Session) -> tuple[Iterator[bytes], Counter[str], Path]:
    """The lines of the transcript, made as they are taken (the session's lines read a
    batch at a time: a large one is never held whole); what was left out, counted as
    they are made (whole once they are all taken); and where Claude Code keeps it."""
    writer = _Writer(session)
    target = paths.claude_dir_for(session.cwd or "/") / f"{writer.sid}.jsonl"
    return _lines(session, writer), writer.left_out, target


def _lines(session: Session, writer: _Writer) -> Iterator[bytes]:
    """Each entry read with its numbers as JavaScript holds them (`loads_js`: a float
    with no fraction is an integer, as pi reads it), so that its lines are written by
    orjson alone, as `dumps` writes them, without looking through them for numbers to
    mend; an entry orjson refuses (rare, see `loads_js`) is made again from the same
    numbers read the general way (`loads_js_general`) and written by `dumps`."""
    for entry, raw in entry_lines(session.entries):
        made = (entry.id, entry.parent_id, entry.timestamp, entry.type)
        try:
            writer.entry(*made, loads_js(raw))
        except TypeError:
            writer.take()  # (what it made of the entry before orjson refused)
            writer.fast = False
            writer.entry(*made, loads_js_general(raw))
            writer.fast = True
        yield from writer.take()
    if session.name:
        yield dumps({"type": "custom-title", "customTitle": session.name, "sessionId": writer.sid})


def uuid5(namespace: bytes, name: str) -> str:
    """``str(uuid.uuid5(UUID(bytes=namespace), name))``, without making two UUID
    objects (a fifth of a conversion of every entry)."""
    digest = bytearray(hashlib.sha1(namespace + name.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # the RFC 4122 variant
    x = digest.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def session_uuid(session_id: str) -> str:
    """A Claude Code session id: the pi session's own id when it is a UUID, else one
    derived from it."""
    try:
        return str(uuid.UUID(session_id))
    except ValueError:
        return str(uuid.uuid5(_NAMESPACE, session_id))


class _Writer:
    def __init__(self, session: Session) -> None:
        self.sid = session_uuid(str(session.header_data.get("id") or ""))
        self.namespace = uuid.UUID(self.sid).bytes
        self.fast = True  # lines written by orjson.dumps (see `_lines`)
        self.cwd = session.cwd
        self.lines: list[bytes] = []  # made and not yet taken
        self.left_out: Counter[str] = Counter()
        self.stands_for: dict[str, str | None] = {}  # our entry id -> the last line written for it
        self.sidechain = False

    def take(self) -> list[bytes]:
        """The lines made since the last call."""
        lines, self.lines = self.lines, []
        return lines

    def uuid_of(self, entry_id: str) -> str:
        if len(entry_id) >= 32:  # (fewer hex digits are no UUID: pi's ids are 8)
            try:
                return str(uuid.UUID(entry_id))
            except ValueError:
                pass
        return uuid5(self.namespace, entry_id)

    def parent(self, parent_id: str | None) -> str | None:
        return self.stands_for.get(parent_id) if parent_id is not None else None

    def entry(
        self, entry_id: str, parent_id: str | None, stamp: str, kind: str, data: dict[str, Any]
    ) -> None:
        parent = self.parent(parent_id)
        self.sidechain = data.get("isSidechain") is True  # read from a Claude Code file
        message = data.get("message") if isinstance(data.get("message"), dict) else None
        role = message.get("role") if message is not None else None
        written: str | None
        if kind == "message" and role == "user" and message is not None:
            content = message.get("content")
            written = self.line(
                "user", entry_id, parent, stamp, {"role": "user", "content": _user_content(content)}
            )
        elif kind == "message" and role == "assistant" and message is not None:
            written = self.assistant(entry_id, parent, stamp, message)
        elif kind == "message" and role == "toolResult" and message is not None:
            block = {
                "type": "tool_result",
                "tool_use_id": as_text(message.get("toolCallId") or ""),
                "content": _user_content(message.get("content")),
                "is_error": message.get("isError") is True,
            }
            extra = {"toolUseResult": message["details"]} if "details" in message else {}
            written = self.line(
                "user", entry_id, parent, stamp, {"role": "user", "content": [block]}, **extra
            )
        elif kind == "message" and role == "bashExecution" and message is not None:
            command, output = message.get("command", ""), message.get("output", "")
            text = f"<bash-input>{command}</bash-input>\n<bash-stdout>{output}</bash-stdout>"
            written = self.line("user", entry_id, parent, stamp, {"role": "user", "content": text})
        elif kind in ("custom_message", "branch_summary"):
            shown = data.get("summary") if kind == "branch_summary" else data.get("content")
            if not shown:
                written = self.skip(entry_id, parent, f"empty {kind} entries")
            else:
                written = self.line(
                    "user",
                    entry_id,
                    parent,
                    stamp,
                    {"role": "user", "content": _user_content(shown)},
                    isMeta=True,
                )
        elif kind == "compaction":
            written = self.compaction(entry_id, parent, stamp, data)
        else:
            what = f"{role} messages" if kind == "message" else f"{kind} entries"
            written = self.skip(entry_id, parent, what)
        self.stands_for[entry_id] = written

    def skip(self, entry_id: str, parent: str | None, what: str) -> str | None:
        self.left_out[what] += 1
        return parent

    def line(
        self,
        kind: str,
        entry_id: str,
        parent: str | None,
        stamp: str,
        message: dict[str, Any],
        **extra: Any,
    ) -> str:
        line_uuid = self.uuid_of(entry_id)
        self.write(kind, line_uuid, parent, stamp, {"message": message, **extra})
        return line_uuid

    def write(
        self, kind: str, line_uuid: str, parent: str | None, stamp: str, body: dict[str, Any]
    ) -> None:
        envelope = {
            "parentUuid": parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": VERSION,
            "type": kind,
            **body,
            "uuid": line_uuid,
            "timestamp": stamp,
        }
        self.lines.append(orjson.dumps(envelope) if self.fast else dumps(envelope))

    def assistant(
        self, entry_id: str, parent: str | None, stamp: str, message: dict[str, Any]
    ) -> str | None:
        blocks = [
            b
            for b in (_assistant_block(b) for b in items_of(message.get("content")))
            if b is not None
        ]
        if not blocks:
            return self.skip(entry_id, parent, "assistant messages without content")
        message_id = str(
            message.get("responseId") or f"msg_{self.uuid_of(entry_id).replace('-', '')[:24]}"
        )
        at = parent
        for index, block in enumerate(blocks):
            last = index == len(blocks) - 1
            body: dict[str, Any] = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": as_text(message.get("model") or ""),
                "content": [block],
                "stop_reason": _STOP.get(as_text(message.get("stopReason")), "end_turn")
                if last
                else None,
                "stop_sequence": None,
            }
            if last and isinstance(message.get("usage"), dict):
                body["usage"] = _usage(message["usage"])
            line_uuid = self.uuid_of(entry_id if index == 0 else f"{entry_id}/{index}")
            self.write("assistant", line_uuid, at, stamp, {"message": body})
            at = line_uuid
        return at

    def compaction(
        self, entry_id: str, parent: str | None, stamp: str, data: dict[str, Any]
    ) -> str:
        boundary = self.uuid_of(entry_id)
        tokens = data.get("tokensBefore")
        summary_uuid = self.uuid_of(f"{entry_id}/summary")
        metadata: dict[str, Any] = {
            "trigger": "manual",
            "preTokens": tokens if isinstance(tokens, int) else 0,
        }
        kept = data.get("firstKeptEntryId")
        if isinstance(kept, str) and kept != entry_id and kept in self.stands_for:
            # what pi keeps is Claude Code's preserved segment: from it to the boundary
            head = self.uuid_of(kept)
            metadata["preservedSegment"] = {
                "headUuid": head,
                "anchorUuid": summary_uuid,
                "tailUuid": parent,
            }
        self.write(
            "system",
            boundary,
            None,
            stamp,
            {
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "logicalParentUuid": parent,
                "compactMetadata": metadata,
            },
        )
        message = {"role": "user", "content": as_text(data.get("summary") or "")}
        self.write(
            "user",
            summary_uuid,
            boundary,
            stamp,
            {"message": message, "isCompactSummary": True, "isVisibleInTranscriptOnly": True},
        )
        return summary_uuid


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append({"type": "text", "text": as_text(block.get("text") or "")})
        elif block.get("type") == "image":
            source = {
                "type": "base64",
                "media_type": str(block.get("mimeType") or "image/png"),
                "data": as_text(block.get("data") or ""),
            }
            out.append({"type": "image", "source": source})
    return out


def _assistant_block(block: Any) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": as_text(block.get("text") or "")}
    if kind == "thinking" and block.get("redacted"):
        return {"type": "redacted_thinking", "data": as_text(block.get("thinkingSignature") or "")}
    if kind == "thinking":
        out = {"type": "thinking", "thinking": as_text(block.get("thinking") or "")}
        out["signature"] = as_text(block.get("thinkingSignature") or "")
        return out
    if kind == "toolCall":
        arguments = block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
        return {
            "type": "tool_use",
            "id": as_text(block.get("id") or ""),
            "name": as_text(block.get("name") or ""),
            "input": arguments,
        }
    return None


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    def number(key: str) -> int:
        value = usage.get(key)
        if isinstance(value, float) and not math.isfinite(value):  # (1e400 reads as one)
            return 0
        return int(value) if isinstance(value, int | float) else 0

    return {
        "input_tokens": number("input"),
        "cache_creation_input_tokens": number("cacheWrite"),
        "cache_read_input_tokens": number("cacheRead"),
        "output_tokens": number("output"),
    }
