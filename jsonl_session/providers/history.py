"""From a built context to a history every provider API accepts: the shared step
before each adapter.

Owns three steps, all pure and deterministic:

- **Plain roles.** The context holds pi's message shapes, some of which no API
  knows: each message goes through messages.py's `plain_message`, which owns the
  wording (`compactionSummary`, `branchSummary`, `custom` and `bashExecution` become
  user text, summaries wrapped in clear tags). A message it leaves out (a
  `bashExecution` marked `excludeFromContext`, an unknown role) is reported here.
- **Normalizing.** Lone surrogates become U+FFFD; tool-call arguments that are not
  an object are parsed from JSON text or become ``{}``; a tool-call id used before
  is renamed, and its results with it.
- **Repair.** A tool call with no result gets a synthetic error result saying
  none was recorded; a result with no matching call is dropped (so is a second
  result for the same call); an assistant turn that ended in ``error`` or
  ``aborted`` is dropped even when it has content, as pi drops it (it may be half a
  reply), and so is any message with no content. Every change is reported as a
  `Repair`, never made silently, and repairing a repaired history changes nothing.

The input is never changed; new dicts are built where something differs. Merging
consecutive messages of one role is API-specific and left to the adapters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jsonl_session.format.walk import as_text, loads_text, map_strings
from jsonl_session.messages import has_substance, plain_message, tool_calls

RepairKind = Literal[
    "excluded-command-dropped",
    "unknown-role-dropped",
    "empty-message-dropped",
    "empty-assistant-dropped",
    "failed-turn-dropped",
    "thinking-dropped",
    "missing-tool-result-added",
    "orphan-tool-result-dropped",
    "duplicate-tool-result-dropped",
    "placeholder-user-added",
    "unsendable-message-dropped",
    "tool-call-id-renamed",
    "tool-arguments-replaced",
    "lone-surrogate-replaced",
    "trailing-whitespace-trimmed",
]

NO_RESULT_TEXT = "No result was recorded for this tool call (the turn ended before it ran)."


@dataclass(frozen=True, slots=True)
class Repair:
    """One change made to the history: what, and at which input message."""

    kind: RepairKind
    index: int
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class History:
    """Messages with only the roles user, assistant and toolResult, and the repairs.

    ``sources[i]`` is the index, in the input, of the message ``messages[i]`` came
    from (for an added tool result: of the message before which it was added).
    """

    messages: list[dict[str, Any]]
    repairs: list[Repair]
    sources: list[int]


def prepare_history(messages: Sequence[dict[str, Any]]) -> History:
    """Plain roles, then repair (see the module docstring)."""
    repairs: list[Repair] = []
    plain: list[tuple[int, dict[str, Any]]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "system":
            continue  # the adapters send the replayed prompt and tools (common.py)
        converted = plain_message(message)
        if converted is None:
            role = message.get("role")
            kind: RepairKind = (
                "excluded-command-dropped" if role == "bashExecution" else "unknown-role-dropped"
            )
            repairs.append(Repair(kind, index, f"{as_text(role, 40)} message left out"))
            continue
        plain.append((index, _normalized(converted, index, repairs)))
    repaired, sources, more = _repair(plain)
    return History(repaired, sorted([*repairs, *more], key=lambda r: r.index), sources)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _normalized(message: dict[str, Any], index: int, repairs: list[Repair]) -> dict[str, Any]:
    """Text the SDKs can encode, and tool-call arguments that are objects.

    pi writes lone surrogates when a cut splits an emoji; no SDK can encode them, so
    they become U+FFFD. Arguments stored as JSON text are parsed; arguments that
    are not an object at all become ``{}``. Each change is reported.
    """
    out: dict[str, Any] = _without_lone_surrogates(message)
    if out is not message:
        repairs.append(
            Repair("lone-surrogate-replaced", index, "half of a character replaced by U+FFFD")
        )
    content = out.get("content")
    if out.get("role") != "assistant" or not isinstance(content, list):
        return out
    blocks: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            arguments = block.get("arguments")
            if not isinstance(arguments, dict):
                fixed = _arguments_object(arguments)
                detail = (
                    f"tool call {as_text(block.get('id'))}: arguments {as_text(arguments, 40)!r}"
                )
                detail += " parsed from JSON text" if fixed else " were not an object; sent as {}"
                repairs.append(Repair("tool-arguments-replaced", index, detail))
                block = {**block, "arguments": fixed}
        blocks.append(block)
    return {**out, "content": blocks} if blocks != content else out


def _arguments_object(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, str):
        try:
            parsed = loads_text(arguments)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` with lone surrogates in its strings replaced; the same object if
    there were none (walked without recursion: a value can nest any depth)."""
    return map_strings(value, _replace_lone_surrogates)


def _replace_lone_surrogates(text: str) -> str:
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


def _repair(
    indexed: list[tuple[int, dict[str, Any]]],
) -> tuple[list[dict[str, Any]], list[int], list[Repair]]:
    out: list[dict[str, Any]] = []
    sources: list[int] = []
    repairs: list[Repair] = []
    used: set[str] = set()  # every tool-call id sent so far: ids must be unique
    pending: dict[str, dict[str, Any]] = {}  # open calls of the last assistant turn, by id
    waiting: dict[str, list[str]] = {}  # id as written -> ids sent, not yet answered
    answered: set[str] = set()
    pending_at = -1

    def close_turn(at: int) -> None:
        # Results must directly follow their call: add the missing ones here.
        for call_id, call in pending.items():
            if call_id in answered:
                continue
            out.append(_missing_result(call, out[pending_at].get("timestamp")))
            sources.append(at)
            repairs.append(
                Repair(
                    "missing-tool-result-added",
                    at,
                    f"tool call {call_id} ({as_text(call.get('name'))}) had no result",
                )
            )
        pending.clear()
        waiting.clear()
        answered.clear()

    for index, message in indexed:
        role = message.get("role")
        if role == "toolResult":
            written = as_text(message.get("toolCallId"))
            queue = waiting.get(written)
            if queue:
                call_id = queue.pop(0)
                answered.add(call_id)
                out.append(message if call_id == written else {**message, "toolCallId": call_id})
                sources.append(index)
            elif written in answered or written in waiting:
                repairs.append(
                    Repair("duplicate-tool-result-dropped", index, f"second result for {written}")
                )
            else:
                repairs.append(
                    Repair("orphan-tool-result-dropped", index, f"no tool call {written} before it")
                )
            continue
        close_turn(index)
        if not has_substance(message):
            kind: RepairKind = (
                "empty-assistant-dropped" if role == "assistant" else "empty-message-dropped"
            )
            reason = message.get("stopReason") if role == "assistant" else None
            detail = f"{role} message with no content"
            if reason:
                detail += f" (stopReason {reason})"
            repairs.append(Repair(kind, index, detail))
            continue
        if role == "assistant" and message.get("stopReason") in ("error", "aborted"):
            # pi never replays a turn that failed or was cut off: its content may be
            # half a reply (a call without its arguments, reasoning without output)
            reason = message["stopReason"]
            detail = f"assistant turn ended in {reason}"
            repairs.append(Repair("failed-turn-dropped", index, detail))
            continue
        if role == "assistant":
            message = _unique_call_ids(message, used, index, repairs)
            for call in tool_calls(message):
                call_id = as_text(call.get("id"))
                pending[call_id] = call
                waiting.setdefault(as_text(call.get("_writtenId", call_id)), []).append(call_id)
            message = _without_written_ids(message)
            pending_at = len(out)
        out.append(message)
        sources.append(index)
    close_turn(indexed[-1][0] + 1 if indexed else 0)
    return out, sources, repairs


def _unique_call_ids(
    message: dict[str, Any], used: set[str], index: int, repairs: list[Repair]
) -> dict[str, Any]:
    """The message with every tool-call id unique in the history so far. A renamed
    call keeps the id it was written with under ``_writtenId`` (removed again by
    `_without_written_ids`), so its results can be renamed the same way."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks: list[Any] = []
    changed = False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "toolCall":
            written = as_text(block.get("id"))
            call_id = written
            n = 2
            while call_id in used:
                call_id, n = f"{written}_{n}", n + 1
            used.add(call_id)
            if call_id != written:
                block = {**block, "id": call_id, "_writtenId": written}
                changed = True
                detail = f"tool call id {written} was used before; sent as {call_id}"
                repairs.append(Repair("tool-call-id-renamed", index, detail))
        blocks.append(block)
    return {**message, "content": blocks} if changed else message


def _without_written_ids(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list) or not any(
        isinstance(b, dict) and "_writtenId" in b for b in content
    ):
        return message
    blocks = [
        {k: v for k, v in b.items() if k != "_writtenId"} if isinstance(b, dict) else b
        for b in content
    ]
    return {**message, "content": blocks}


def _missing_result(call: dict[str, Any], timestamp: Any) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call.get("id"),
        "toolName": call.get("name"),
        "content": [{"type": "text", "text": NO_RESULT_TEXT}],
        "isError": True,
        "timestamp": timestamp,
    }
