"""Writing a session as a Codex rollout: one branch (Codex threads are linear), as the
context the model sees at its leaf, so ``codex resume`` continues from there.

The rollout opens with a ``session_meta`` (the session's id when it is a UUID, else
one derived from it; the system prompt as base instructions) and a
``turn_context`` (model and reasoning effort, again whenever they change). A user
message is a user ``message`` item and a ``user_message`` event (Codex shows the
events); an assistant message its reasoning (thinking recorded by Codex or the
Responses API keeps its item), text (an ``agent_message`` event too) and
``function_call`` items, and a ``token_count`` event from its usage; a tool result a
``function_call_output``; a compaction's summary a ``compacted`` line whose
replacement history holds it; custom messages and branch summaries user messages
of their own. What Codex has no line for is left out and counted.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from jsonl_session.dialects.to_claude import session_uuid
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.walk import as_text, dumps_text, items_of, loads_text
from jsonl_session.messages import current_system_message, system_message_text
from jsonl_session.session.facade import Session
from jsonl_session.storage import paths

ORIGINATOR = "jsonl-session"


def codex_file(
    session: Session, leaf_id: str | None = None
) -> tuple[list[bytes], Counter[str], Path]:
    """The rollout's lines, what was left out, and where Codex keeps it."""
    context = session.build_context(leaf_id)
    thread = session_uuid(str(session.header_data.get("id") or ""))
    stamp = str(session.header_data.get("timestamp") or "")
    writer = _Writer(stamp)
    system = current_system_message(context.messages)
    meta: dict[str, Any] = {
        "id": thread,
        "timestamp": stamp,
        "cwd": session.cwd,
        "originator": ORIGINATOR,
        "cli_version": "0",
        "source": "cli",
        "model_provider": "openai",
    }
    prompt = system_message_text(system)
    if prompt:
        meta["base_instructions"] = {"text": prompt}
    writer.line("session_meta", meta)
    model = context.model.get("modelId") if isinstance(context.model, dict) else None
    writer.turn_context(session.cwd, str(model or ""), context.thinking_level)
    for message in context.messages:
        writer.message(message)
    left = writer.left_out
    off_branch = len(session.entries) - len(session.branch_path(leaf_id))
    if off_branch > 0:
        left["entries on other branches (a Codex thread is one branch)"] += off_branch
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else datetime.now()
        local = moment.astimezone()
    except (ValueError, OverflowError):  # a header time that is no time only names the file
        local = datetime.now().astimezone()
    name = f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{thread}.jsonl"
    target = paths.codex_sessions_root() / local.strftime("%Y/%m/%d") / name
    return writer.lines, left, target


class _Writer:
    def __init__(self, stamp: str) -> None:
        self.stamp = stamp
        self.lines: list[bytes] = []
        self.left_out: Counter[str] = Counter()

    def line(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append(dumps({"timestamp": self.stamp, "type": kind, "payload": payload}))

    def turn_context(self, cwd: str, model: str, effort: str) -> None:
        context: dict[str, Any] = {
            "cwd": cwd,
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write", "network_access": False},
            "model": model,
            "summary": "auto",
        }
        if effort and effort != "off":
            context["effort"] = effort
        self.line("turn_context", context)

    def message(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        stamp = message.get("timestamp")
        if isinstance(stamp, int | float) and stamp > 0:
            self.stamp = (
                datetime.fromtimestamp(stamp / 1000).astimezone().isoformat(timespec="milliseconds")
            )
        if role == "user":
            self.user(message.get("content"))
        elif role == "assistant":
            self.assistant(message)
        elif role == "toolResult":
            output = _text(message.get("content")) or "(no output)"
            self.line(
                "response_item",
                {
                    "type": "function_call_output",
                    "call_id": as_text(message.get("toolCallId") or ""),
                    "output": output,
                },
            )
        elif role in ("custom", "branchSummary"):
            self.user(
                message.get("summary") if role == "branchSummary" else message.get("content"),
                event=False,
            )
        elif role == "compactionSummary":
            summary = as_text(message.get("summary") or "")
            item = {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": summary}],
            }
            self.line("compacted", {"message": summary, "replacement_history": [item]})
        elif role == "bashExecution":
            command, output = message.get("command", ""), message.get("output", "")
            text = f"<user_shell_command>{command}\n{output}</user_shell_command>"
            self.user(text, event=False)
        elif role != "system":
            self.left_out[f"{role} messages"] += 1

    def user(self, content: Any, *, event: bool = True) -> None:
        parts: list[dict[str, Any]] = []
        for block in (
            [{"type": "text", "text": content}] if isinstance(content, str) else content or ()
        ):
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append({"type": "input_text", "text": as_text(block.get("text") or "")})
            elif isinstance(block, dict) and block.get("type") == "image":
                url = (
                    f"data:{block.get('mimeType') or 'image/png'};base64,{block.get('data') or ''}"
                )
                parts.append({"type": "input_image", "image_url": url})
        if not parts:
            return
        self.line("response_item", {"type": "message", "role": "user", "content": parts})
        if event:
            text = "\n".join(p["text"] for p in parts if p["type"] == "input_text")
            self.line("event_msg", {"type": "user_message", "message": text, "images": []})

    def assistant(self, message: dict[str, Any]) -> None:
        texts: list[str] = []
        for block in items_of(message.get("content")):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "thinking":
                self.reasoning(block)
            elif kind == "text":
                texts.append(as_text(block.get("text") or ""))
            elif kind == "toolCall":
                self.flush_text(texts)
                arguments = (
                    block.get("arguments") if isinstance(block.get("arguments"), dict) else {}
                )
                call = {
                    "type": "function_call",
                    "name": as_text(block.get("name") or ""),
                    "arguments": dumps_text(arguments),
                    "call_id": as_text(block.get("id") or ""),
                }
                self.line("response_item", call)
        self.flush_text(texts)
        usage = message.get("usage")
        if isinstance(usage, dict):
            self.line(
                "event_msg",
                {"type": "token_count", "info": _token_info(usage), "rate_limits": None},
            )

    def flush_text(self, texts: list[str]) -> None:
        if not texts:
            return
        text = "\n\n".join(texts)
        texts.clear()
        self.line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text}],
            },
        )
        self.line("event_msg", {"type": "agent_message", "message": text})

    def reasoning(self, block: dict[str, Any]) -> None:
        signature = block.get("thinkingSignature")
        try:
            item = loads_text(signature) if isinstance(signature, str) else None
        except ValueError:
            item = None
        if isinstance(item, dict) and item.get("type") == "reasoning":
            self.line("response_item", item)  # Codex's (or the Responses API's) own item
            return
        summary = [{"type": "summary_text", "text": as_text(block.get("thinking") or "")}]
        self.line("response_item", {"type": "reasoning", "summary": summary, "content": None})
        if signature:
            self.left_out["thinking signatures of other providers"] += 1


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        as_text(b.get("text") or "")
        for b in content or ()
        if isinstance(b, dict) and b.get("type") == "text"
    )


def _token_info(usage: dict[str, Any]) -> dict[str, Any]:
    def number(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, int | float) else 0

    cached = number("cacheRead")
    last = {
        "input_tokens": number("input") + cached,
        "cached_input_tokens": cached,
        "output_tokens": number("output"),
        "reasoning_output_tokens": 0,
        "total_tokens": number("input") + cached + number("output"),
    }
    return {"total_token_usage": last, "last_token_usage": last, "model_context_window": None}
