"""Reading a Codex rollout file as a pi session, without writing to it.

A rollout is linear: each line is ``{timestamp, type, payload}`` (files before
September 2025 wrote the payloads bare after a bare session-meta line). What becomes
what, in file order, each entry the child of the one before:

- the first ``session_meta`` is the header (id, time, cwd; the thread it was forked
  or spawned from as ``parentSession``); its instructions and dynamic tools become a
  pi system message;
- ``turn_context``: a ``model_change`` when the model changes, a
  ``thinking_level_change`` when the reasoning effort does;
- ``response_item``: a user message; an injected instruction or environment message
  (user role, recognised by its markers) or a developer message as a hidden
  ``custom_message`` (in the model's context, not the user's words); the items of
  one model reply (reasoning, assistant text, function, custom-tool and shell calls)
  as one assistant message, its reasoning as thinking whose signature is the
  reasoning item; each call's output as a ``toolResult``; other items as ``custom``
  entries (kept, not in the context);
- ``event_msg``: ``token_count`` gives the reply before it its usage;
  ``thread_rolled_back`` moves the chain back before the last N user turns, so what
  follows is a branch beside them; the events that repeat response items are skipped;
- ``compacted``: a retain-none compaction with the summary, then the rest of its
  replacement history (the summary message itself left out).

Lines and types not understood are reported as problems, never a crash. Ids are
derived from line numbers, so reading the file again gives the same ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jsonl_session.dialects import codex_shapes as shapes
from jsonl_session.dialects.building import ForeignTranscript, SourceLine, source_lines
from jsonl_session.format.ids import timestamp_to_ms
from jsonl_session.format.walk import as_text, items_of
from jsonl_session.storage.loader import LoadedFile

_NEWER_TYPES = frozenset(
    {
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "world_state",
        "token_usage_record",
        "security_risk_score",
        "retained_context",
        "realtime_item",
    }
)
# (start, end) markers of the messages Codex injects with the user role (case-insensitive)
_SKIPPED_EVENTS = frozenset(
    {
        "user_message",
        "agent_message",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "task_started",
        "task_complete",
        "turn_started",
        "turn_complete",
        "context_compacted",
        "item_completed",
    }
)
API = "openai-responses"


def read_codex(data: bytes, path: Path | None) -> LoadedFile:
    """The rollout in ``data`` as a LoadedFile of pi entries (see the module docstring)."""
    reader = _Reader(ForeignTranscript("codex", path, len(data)))
    last = None
    for last in source_lines(data):
        reader.line(last)
    reader.flush()
    if last is not None:
        reader.out.last_line = last.number if last.terminated else last.number - 1
    return reader.out.loaded(reader.header, data)


class _Reader:
    def __init__(self, out: ForeignTranscript) -> None:
        self.out = out
        self.header: dict[str, Any] = {}
        self.leaf: str | None = None
        self.parents: dict[str, str | None] = {}
        self.turns: list[str] = []  # the user messages on the current chain
        self.provider = "openai"
        self.model: str | None = None
        self.effort: str | None = None
        self.reply: dict[str, Any] | None = None  # the assistant message being gathered
        self.reply_line: SourceLine | None = None
        self.last_reply: int | None = None  # index in out.entries of the last reply kept
        self.tool_names: dict[str, str] = {}
        self.system: dict[str, Any] | None = None  # the instructions, carried by compactions
        self.made: dict[int, int] = {}  # how many entries each source line gave so far

    # --- lines -------------------------------------------------------------------------

    def line(self, line: SourceLine) -> None:
        value = line.value
        if not isinstance(value, dict):
            self.out.not_an_object(line)
            return
        kind, payload = value.get("type"), value.get("payload")
        stamp = value.get("timestamp")
        if "payload" not in value:  # before September 2025: bare items after a bare meta
            kind, payload = shapes.legacy_line(value, first=not self.header)
        if not isinstance(payload, dict):
            if kind not in ("state",):
                self.out.problem(
                    line, f"a line of type {as_text(kind, 40)} without a payload object"
                )
            return
        stamp = stamp if isinstance(stamp, str) else payload.get("timestamp")
        self.stamp = stamp if isinstance(stamp, str) else self.header.get("timestamp", "")
        if kind == "session_meta":
            self.session_meta(line, payload)
        elif kind == "turn_context":
            self.turn_context(line, payload)
        elif kind == "response_item":
            self.item(line, payload)
        elif kind == "event_msg":
            self.event(line, payload)
        elif kind == "compacted":
            self.compacted(line, payload)
        elif isinstance(kind, str) and kind in _NEWER_TYPES:
            self.keep(line, f"codex/{kind}", payload)
        else:
            self.out.problem(line, f"a rollout line of unknown type {as_text(kind, 40)}; skipped")

    def session_meta(self, line: SourceLine, meta: dict[str, Any]) -> None:
        if self.header:  # forks and sub-agents copy other threads' meta lines
            self.out.leave_out("session_meta lines after the first")
            return
        self.header = {"id": as_text(meta.get("id") or ""), "timestamp": self.stamp}
        if isinstance(meta.get("timestamp"), str):
            self.header["timestamp"] = meta["timestamp"]
        self.header["cwd"] = meta.get("cwd") if isinstance(meta.get("cwd"), str) else ""
        parent = meta.get("forked_from_id") or meta.get("parent_thread_id") or shapes.spawner(meta)
        if isinstance(parent, str) and parent:
            self.header["parentSession"] = parent
        if isinstance(meta.get("model_provider"), str):
            self.provider = meta["model_provider"]
        instructions = meta.get("base_instructions") or meta.get("instructions")
        if isinstance(instructions, dict):
            instructions = instructions.get("text")
        tools = [
            shapes.tool_of(spec)
            for spec in items_of(meta.get("dynamic_tools"))
            if isinstance(spec, dict)
        ]
        if (isinstance(instructions, str) and instructions) or tools:
            system: dict[str, Any] = {"role": "system", "content": instructions or ""}
            if tools:
                system["toolsAdded"] = tools
            system["timestamp"] = self.ms()
            self.system = system
            self.add(line, {"type": "message", "message": system})

    def turn_context(self, line: SourceLine, context: dict[str, Any]) -> None:
        model, effort = context.get("model"), context.get("effort")
        if isinstance(model, str) and model != self.model:
            self.flush()
            self.model = model
            self.add(line, {"type": "model_change", "provider": self.provider, "modelId": model})
        if isinstance(effort, str) and effort != self.effort:
            self.flush()
            self.effort = effort
            self.add(line, {"type": "thinking_level_change", "thinkingLevel": effort})

    # --- response items ---------------------------------------------------------------------

    def item(self, line: SourceLine, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message":
            self.message(line, item)
        elif kind == "reasoning":
            texts = [s.get("text") for s in items_of(item.get("summary")) if isinstance(s, dict)]
            texts += [c.get("text") for c in items_of(item.get("content")) if isinstance(c, dict)]
            thinking = "\n\n".join(t for t in texts if isinstance(t, str))
            block = {
                "type": "thinking",
                "thinking": thinking,
                "thinkingSignature": shapes.compact_json(item),
            }
            self.gather(line, block)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            self.gather(line, self.call(item))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.flush()
            call_id = as_text(item.get("call_id") or "")
            result = {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": self.tool_names.get(call_id, ""),
                "content": shapes.output_blocks(item.get("output")),
                "isError": False,
                "timestamp": self.ms(),
            }
            self.add(line, {"type": "message", "message": result})
        elif isinstance(kind, str):  # web searches, snapshots, newer items: kept aside
            self.keep(line, f"codex/{kind}", item)
        else:
            self.out.problem(line, "a response item without a type; skipped")

    def message(self, line: SourceLine, item: dict[str, Any]) -> None:
        role = item.get("role")
        blocks = shapes.content_blocks(item.get("content"))
        if role == "assistant":
            for block in blocks:
                self.gather(line, block)
            return
        self.flush()
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        if role == "user" and not any(shapes.is_injected(t) for t in texts):
            blocks = [shapes.without_prefix(b) for b in blocks]
            entry_id = self.add(
                line,
                {
                    "type": "message",
                    "message": {"role": "user", "content": blocks, "timestamp": self.ms()},
                },
            )
            self.turns.append(entry_id)
            return
        custom_type = "codex/context" if role == "user" else f"codex/{as_text(role, 40)}"
        self.add(
            line,
            {
                "type": "custom_message",
                "customType": custom_type,
                "content": blocks,
                "display": False,
            },
        )

    def call(self, item: dict[str, Any]) -> dict[str, Any]:
        kind = item["type"]
        call_id = as_text(item.get("call_id") or item.get("id") or "")
        if kind == "function_call":
            name, arguments = (
                as_text(item.get("name") or ""),
                shapes.arguments_of(item.get("arguments")),
            )
        elif kind == "custom_tool_call":
            name, arguments = as_text(item.get("name") or ""), {"input": item.get("input")}
        else:
            name, arguments = (
                "local_shell",
                item.get("action") if isinstance(item.get("action"), dict) else {},
            )
        self.tool_names[call_id] = name
        return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}

    def gather(self, line: SourceLine, block: dict[str, Any]) -> None:
        """Add a block to the reply being gathered (starting one if none is)."""
        if self.reply is None:
            self.reply = {"role": "assistant", "content": [], "api": API, "provider": self.provider}
            if self.model is not None:
                self.reply["model"] = self.model
            self.reply_line = line
            self.reply_stamp = self.stamp
        self.reply["content"].append(block)

    def flush(self) -> None:
        """Keep the reply gathered so far as one assistant message."""
        if self.reply is None or self.reply_line is None:
            return
        reply, self.reply = self.reply, None
        calls = any(b.get("type") == "toolCall" for b in reply["content"])
        reply["stopReason"] = "toolUse" if calls else "stop"
        reply["timestamp"] = timestamp_to_ms(self.reply_stamp) or 0
        stamp, self.stamp = self.stamp, self.reply_stamp
        self.add(self.reply_line, {"type": "message", "message": reply})
        self.stamp = stamp
        self.last_reply = len(self.out.entries) - 1

    # --- events and compactions ----------------------------------------------------------------

    def event(self, line: SourceLine, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "token_count":
            self.usage(event.get("info"))
        elif kind == "thread_rolled_back":
            self.flush()
            count = event.get("num_turns")
            if isinstance(count, int) and 0 < count <= len(self.turns):
                first = self.turns[-count]
                del self.turns[-count:]
                self.leaf = self.parents[first]
        elif isinstance(kind, str) and kind in _SKIPPED_EVENTS:
            self.out.leave_out(f"{kind} events (repeat other lines)")
        elif isinstance(kind, str):
            self.keep(line, f"codex/event/{kind}", event)
        else:
            self.out.problem(line, "an event without a type; skipped")

    def usage(self, info: Any) -> None:
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        if not isinstance(last, dict):
            return
        usage = shapes.usage_of(last)
        if self.reply is not None:
            self.reply["usage"] = usage
        elif self.last_reply is not None:
            entry = self.out.entries[self.last_reply].data()
            if "usage" not in entry["message"]:
                entry["message"]["usage"] = usage
                self.out.replace(self.last_reply, entry)

    def compacted(self, line: SourceLine, compacted: dict[str, Any]) -> None:
        self.flush()
        summary = compacted.get("message")
        summary = summary if isinstance(summary, str) else ""
        entry_id = self.next_id(line)
        compaction: dict[str, Any] = {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": entry_id,  # retain-none: the history is replaced
            "tokensBefore": 0,
            "fromHook": False,
        }
        if self.system is not None:  # Codex sends its instructions after a compaction too
            compaction["systemMessage"] = self.system
        self.add(line, compaction, entry_id)
        self.turns.clear()
        for item in items_of(compacted.get("replacement_history")):
            if not isinstance(item, dict):
                continue
            texts = [
                b.get("text")
                for b in shapes.content_blocks(item.get("content"))
                if b.get("type") == "text"
            ]
            if item.get("type") == "message" and summary and summary in texts:
                continue  # the summary is the compaction's own
            self.item(line, item)
        self.flush()

    # --- building -------------------------------------------------------------------------------

    def keep(self, line: SourceLine, custom_type: str, data: dict[str, Any]) -> None:
        """An item pi has no entry for: a custom entry, kept but never in the context."""
        self.flush()
        self.add(line, {"type": "custom", "customType": custom_type, "data": data})

    def next_id(self, line: SourceLine) -> str:
        """The id of the next entry made from ``line``: its number and how many came
        from it before (8 hex digits, as pi's ids)."""
        made = self.made.get(line.number, 0)
        entry_id = f"{line.number & 0xFFFFFF:06x}{made & 0xFF:02x}"
        while entry_id in self.out.ids:  # past 16M lines or 256 entries from one line
            made += 1
            entry_id = f"{line.number & 0xFFFFFF:06x}{made & 0xFF:02x}-{made >> 8}"
        return entry_id

    def add(self, line: SourceLine, fields: dict[str, Any], entry_id: str | None = None) -> str:
        entry_id = entry_id or self.next_id(line)
        self.made[line.number] = self.made.get(line.number, 0) + 1
        kind = fields.pop("type")
        entry = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": self.stamp}
        entry.update(fields)
        self.out.add(line, entry)
        self.parents[entry_id] = self.leaf
        self.leaf = entry_id
        return entry_id

    def ms(self) -> int:
        return timestamp_to_ms(self.stamp) or 0
