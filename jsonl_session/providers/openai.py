"""OpenAI adapters: from a built context to keyword arguments for the Chat
Completions API (``client.chat.completions.create``) and the Responses API
(``client.responses.create``). Pure functions, no network; the caller adds the
model and its own limits.

Both start from common.py's `history_of` (plain roles, normalizing and repair, see
history.py) and return every repair it made in ``ProviderRequest.repairs``. What
this module decides on top of that, the same way for both APIs:

- **Thinking is left out.** Neither API takes back thinking recorded by another
  provider, and OpenAI's own reasoning items cannot be replayed from what a
  session stores. Dropping a thinking block is not reported (it happens on every
  thinking turn), but an assistant message that had *only* thinking is dropped
  as a whole and reported as ``empty-assistant-dropped``; a user message with
  neither text nor an image (only blocks these APIs have no shape for) is
  dropped and reported as ``empty-message-dropped``.
- **Images in tool results move.** A tool result is sent as text; when it held
  images, a short note says so and the images follow, after all results of
  that turn, in one user message that names the tool call they came from. The
  model still sees every image, so this is not reported.
- **No merging.** Both APIs accept consecutive messages of one role, so messages
  keep their boundaries; the only order rule (results right after their call)
  is already met by the repaired history. An assistant message's text blocks
  are joined by blank lines and sent before its tool calls.
- **Tool call ids** go out unchanged when they are 1-40 characters of
  ``[A-Za-z0-9_-]``; any other id (e.g. pi's ``call_…|fc_…`` pairs) is replaced
  by ``call_`` and a hash of it, the same for the call and its result.
- **Arguments** are sent as compact JSON text of the call's ``arguments`` object
  (a string holding a JSON object is re-encoded); anything else is sent as ``{}``.
- A tool result with neither text nor images is sent as ``(no output)``.

An empty context gives an empty message list; the APIs refuse that, so callers
adapt a context with at least one message. The pieces of these rules both APIs share
(the prepared history, ids, arguments, data URLs, a result's text) are
openai_common.py's; this module lays out each API's messages and items.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Literal

from jsonl_session.format.walk import as_text, loads_text
from jsonl_session.messages import content_blocks, image_blocks, nonblank_texts, tool_calls
from jsonl_session.providers.common import ContextLike, ProviderRequest, ToolSpec, prompt_and_tools
from jsonl_session.providers.openai_common import (
    api_call_id,
    arguments_json,
    data_url,
    images_label,
    prepared,
    result_text,
)

SystemRole = Literal["system", "developer"]
RESPONSES_API = "openai-responses"
Tools = Sequence[ToolSpec | dict[str, Any]] | None


# --- Chat Completions -------------------------------------------------------------


def to_openai_chat(
    context: ContextLike,
    system: str | None = None,
    tools: Tools = None,
    *,
    system_role: SystemRole = "system",
) -> ProviderRequest:
    """Keyword arguments for ``client.chat.completions.create(model=..., **kwargs)``:
    ``messages`` (the system prompt first, as a ``system`` or ``developer``
    message) and ``tools`` when there are any: by default the transcript's prompt and
    tools (see common.prompt_and_tools)."""
    if system_role not in ("system", "developer"):
        raise ValueError(f"system_role must be 'system' or 'developer', not {system_role!r}")
    system, specs = prompt_and_tools(context, system, tools)
    messages, repairs = prepared(context)
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": system_role, "content": system})
    held: list[dict[str, Any]] = []  # tool results with images, sent after the turn
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            out.append(_chat_tool_result(message))
            if image_blocks(message.get("content")):
                held.append(message)
            continue
        _flush_chat_images(out, held)
        if role == "user":
            out.append(_chat_user(message))
        else:
            out.append(_chat_assistant(message))
    _flush_chat_images(out, held)
    kwargs: dict[str, Any] = {"messages": out}
    if specs:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": s.name,
                    "description": s.description,
                    "parameters": s.parameters,
                },
            }
            for s in specs
        ]
    return ProviderRequest(kwargs, repairs)


def _chat_user(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str):
        return {"role": "user", "content": content}
    parts: list[dict[str, Any]] = []
    for block in content_blocks(content):
        if block.get("type") == "text" and block.get("text"):
            parts.append({"type": "text", "text": as_text(block["text"])})
        elif block.get("type") == "image":
            parts.append(_chat_image(block))
    return {"role": "user", "content": parts}


def _chat_assistant(message: dict[str, Any]) -> dict[str, Any]:
    text = "\n\n".join(nonblank_texts(message.get("content")))
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = tool_calls(message)
    if calls:
        out["tool_calls"] = [
            {
                "id": api_call_id(call.get("id")),
                "type": "function",
                "function": {
                    "name": as_text(call.get("name", "")),
                    "arguments": arguments_json(call.get("arguments")),
                },
            }
            for call in calls
        ]
    return out


def _chat_tool_result(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": api_call_id(message.get("toolCallId")),
        "content": result_text(message),
    }


def _chat_image(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": data_url(block)}}


def _flush_chat_images(out: list[dict[str, Any]], held: list[dict[str, Any]]) -> None:
    if not held:
        return
    parts: list[dict[str, Any]] = []
    for message in held:
        parts.append({"type": "text", "text": images_label(message)})
        parts.extend(_chat_image(b) for b in image_blocks(message.get("content")))
    out.append({"role": "user", "content": parts})
    held.clear()


# --- Responses --------------------------------------------------------------------


def to_openai_responses(
    context: ContextLike,
    instructions: str | None = None,
    tools: Tools = None,
    *,
    model: str | None = None,
    provider: str = "openai",
) -> ProviderRequest:
    """Keyword arguments for ``client.responses.create(model=..., **kwargs)``:
    ``input`` items, and ``instructions`` and ``tools`` when there are any: by default
    the transcript's prompt and tools (see common.prompt_and_tools).

    Replies this API gave (``api`` ``openai-responses`` from ``provider``, and from
    ``model`` when it is given) are replayed as the items the model sent: their
    reasoning items (kept as the thinking's signature), message items under their ids,
    function calls under their call and item ids, as pi does. Other replies follow the
    module's rules."""
    instructions, specs = prompt_and_tools(context, instructions, tools)
    messages, repairs = prepared(context)
    sent_id = _responses_call_ids(messages)
    items: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": sent_id(message.get("toolCallId")),
                    "output": result_text(message),
                }
            )
            if image_blocks(message.get("content")):
                held.append(message)
            continue
        _flush_responses_images(items, held)
        if role == "user":
            items.append(_responses_user(message))
        elif _replayable(message, provider, model):
            items.extend(_responses_replay(message, sent_id))
        else:
            items.extend(_responses_assistant(message, sent_id))
    _flush_responses_images(items, held)
    kwargs: dict[str, Any] = {"input": items}
    if instructions:
        kwargs["instructions"] = instructions
    if specs:
        kwargs["tools"] = [
            {
                "type": "function",
                "name": s.name,
                "description": s.description,
                "parameters": s.parameters,
                "strict": False,  # the schema is the caller's; strict mode needs one shape
            }
            for s in specs
        ]
    return ProviderRequest(kwargs, repairs)


def _responses_user(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    parts: list[dict[str, Any]] = []
    if isinstance(content, str):
        parts.append({"type": "input_text", "text": content})
    for block in content_blocks(content):
        if block.get("type") == "text" and block.get("text"):
            parts.append({"type": "input_text", "text": as_text(block["text"])})
        elif block.get("type") == "image":
            parts.append(_responses_image(block))
    return {"type": "message", "role": "user", "content": parts}


def _responses_assistant(
    message: dict[str, Any], sent_id: Callable[[Any], str]
) -> list[dict[str, Any]]:
    """The text as one assistant message item, then one ``function_call`` item per
    call (the layout the API itself returns, and the one Chat Completions has)."""
    items: list[dict[str, Any]] = []
    text = "\n\n".join(nonblank_texts(message.get("content")))
    if text:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    items.extend(
        {
            "type": "function_call",
            "call_id": sent_id(call.get("id")),
            "name": as_text(call.get("name", "")),
            "arguments": arguments_json(call.get("arguments")),
        }
        for call in tool_calls(message)
    )
    return items


def _replayable(message: dict[str, Any], provider: str, model: str | None) -> bool:
    return (
        message.get("api") == RESPONSES_API
        and message.get("provider") == provider
        and (model is None or model in (message.get("model"), message.get("responseModel")))
    )


def _responses_replay(
    message: dict[str, Any], sent_id: Callable[[Any], str]
) -> list[dict[str, Any]]:
    """A reply of this API as the items it was: block by block, in order."""
    items: list[dict[str, Any]] = []
    for block in content_blocks(message.get("content")):
        kind = block.get("type")
        if kind == "thinking":
            reasoning = _json_object(block.get("thinkingSignature"))
            if reasoning is not None and reasoning.get("type") == "reasoning":
                items.append(reasoning)
        elif kind == "text" and as_text(block.get("text", "")).strip():
            item: dict[str, Any] = {"type": "message", "role": "assistant"}
            signature = _json_object(block.get("textSignature")) or {}
            item_id = signature.get("id") if signature.get("v") == 1 else block.get("textSignature")
            if isinstance(item_id, str) and item_id.startswith("msg"):
                item["id"] = item_id if len(item_id) <= 64 else _short_id("msg_", item_id)
            if signature.get("phase") in ("commentary", "final_answer"):
                item["phase"] = signature["phase"]
            text = as_text(block["text"])
            item["content"] = [{"type": "output_text", "text": text, "annotations": []}]
            if "id" in item:  # an output message item given back needs its status
                item["status"] = "completed"
            items.append(item)
        elif kind == "toolCall":
            raw_id = as_text(block.get("id", ""))
            call: dict[str, Any] = {"type": "function_call"}
            item_id = raw_id.partition("|")[2]
            if item_id.startswith("fc_"):
                call["id"] = item_id
            call["call_id"] = sent_id(raw_id)
            call["name"] = as_text(block.get("name", ""))
            call["arguments"] = arguments_json(block.get("arguments"))
            items.append(call)
    return items


def _json_object(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str) or not text.startswith("{"):
        return None
    try:
        parsed = loads_text(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _short_id(prefix: str, long_id: str) -> str:
    return prefix + hashlib.sha256(long_id.encode()).hexdigest()[:32]


def _responses_call_ids(messages: list[dict[str, Any]]) -> Callable[[Any], str]:
    """The call id sent for each stored tool-call id: of pi's ``call_id|item id`` pairs
    the call id (what the API gave), unless two different stored ids share it (then
    each is sent as `api_call_id` of the whole), so calls and results stay paired."""
    owners: dict[str, set[str]] = {}
    for message in messages:
        for call in tool_calls(message):
            raw = as_text(call.get("id"))
            owners.setdefault(api_call_id(raw.partition("|")[0]), set()).add(raw)

    def sent(raw: Any) -> str:
        text = "" if raw is None else str(raw)
        short = api_call_id(text.partition("|")[0])
        return short if len(owners.get(short, ())) <= 1 else api_call_id(text)

    return sent


def _responses_image(block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "input_image", "image_url": data_url(block), "detail": "auto"}


def _flush_responses_images(items: list[dict[str, Any]], held: list[dict[str, Any]]) -> None:
    if not held:
        return
    parts: list[dict[str, Any]] = []
    for message in held:
        parts.append({"type": "input_text", "text": images_label(message)})
        parts.extend(_responses_image(b) for b in image_blocks(message.get("content")))
    items.append({"type": "message", "role": "user", "content": parts})
    held.clear()
