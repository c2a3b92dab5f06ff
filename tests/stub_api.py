"""A loopback stand-in for the Anthropic and OpenAI HTTP APIs that is strict about requests.

The real SDK clients are pointed at it through ``base_url`` (Anthropic without ``/v1``,
OpenAI with it). It answers

- ``POST /v1/messages`` and ``POST /v1/messages/count_tokens`` (Anthropic Messages),
- ``POST /v1/chat/completions`` (OpenAI Chat Completions),
- ``POST /v1/responses`` and ``POST /v1/responses/input_tokens`` (OpenAI Responses),

with the smallest bodies each SDK parses into its response types. Before answering it
checks the request body against the API's rules (the ``check_*`` functions, usable on
their own without HTTP). A request that breaks a rule gets a 400 in the API's error
shape, naming every reason, and each reason is recorded as a `Violation` so the test
that sent it can fail even if the SDK error was swallowed somewhere.

Rules are the documented ones a real request trips over (role order, block types
allowed per role, tool call / result pairing and unique ids, JSON-string arguments,
image encodings, no fields the API does not know, no trailing whitespace at the end of
a final assistant turn, ``stream`` and ``stream_options`` where each API takes them),
plus two that are stricter than the APIs on purpose: two Anthropic messages of one role
in a row (the API would merge them; our adapters must merge them themselves, visibly)
and a Chat Completions conversation that does not start with the user. Reasons start
with a location such as ``messages[3].content[0]``.

A test can also script the answers. `StubApi.reply_with` queues replies, each a text or
a `Reply`, taken in order by the successful replies of the three model endpoints
(``REPLY_TEXT`` when the queue is empty). A `Reply` may hold text, thinking with its
signature, redacted thinking, tool calls (`ToolCall`), a stop reason and `Usage` (cache
reads and writes too); each API answers it in its own shape (Anthropic ``thinking``,
``redacted_thinking`` and ``tool_use`` blocks; Chat Completions ``tool_calls``, without
the thinking; Responses ``reasoning``, ``message`` and ``function_call`` items), with
ids made in its style where the script gives none. A request with ``"stream": true`` is
answered with the API's server-sent events instead (``text/event-stream``, written event
by event, the connection closed at the end), which stub_stream.py cuts from that same
reply, so the SDKs' stream helpers end with what ``create`` would have returned.

`StubApi.fail_next` makes the next well-formed request(s) to one endpoint, or only those
sent with a given label, fail with a `ScriptedError`: an HTTP status and a body in the
API's own error shape (`anthropic_error`, `openai_error`, or a ready-made one such as
`ANTHROPIC_PROMPT_TOO_LONG` or `OPENAI_RATE_LIMITED`), as JSON even when the request
asked to stream. A request that breaks a rule is answered with its violation as before
and uses up nothing scripted. `StubApi.pending` names what was scripted and never used.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from stub_stream import anthropic_events, chat_chunks, responses_events

LABEL_HEADER = "x-stub-label"
"""Send this header (``extra_headers``) to tag the violations a request causes."""

REPLY_TEXT = "ok"

# --- shared ------------------------------------------------------------------------

IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_MAGIC = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_DATA_URL = re.compile(r"^data:(?P<media>[a-z]+/[a-z0-9.+-]+);base64,(?P<data>.*)$", re.DOTALL)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def _extra_keys(obj: dict[str, Any], allowed: set[str], where: str, out: list[str]) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        out.append(f"{where}: Extra inputs are not permitted: {', '.join(extra)}")


def _image_bytes(data: Any, media_type: str, where: str, out: list[str]) -> None:
    """Base64 that decodes, to bytes that look like ``media_type``."""
    if not isinstance(data, str) or not data:
        out.append(f"{where}: image data must be a non-empty base64 string")
        return
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        out.append(f"{where}: image data is not valid base64")
        return
    if media_type in _MAGIC and not raw.startswith(_MAGIC[media_type]):
        out.append(f"{where}: image does not match the provided media type {media_type}")


def _json_object_string(value: Any, where: str, out: list[str]) -> None:
    """Tool call arguments: a string holding a JSON object."""
    if not isinstance(value, str):
        out.append(
            f"{where}: arguments must be a string of JSON, not {type(value).__name__} {value!r:.60}"
        )
        return
    try:
        parsed = json.loads(value)
    except ValueError:
        out.append(f"{where}: arguments are not valid JSON: {value!r:.60}")
        return
    if not isinstance(parsed, dict):
        out.append(f"{where}: arguments must be a JSON object, not {type(parsed).__name__}")


def _list_of_dicts(value: Any, where: str, out: list[str]) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        out.append(f"{where}: must be a list")
        return []
    items = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            items.append(item)
        else:
            out.append(f"{where}[{i}]: must be an object")
    return items


def _require_model(body: dict[str, Any], out: list[str]) -> None:
    if _blank(body.get("model")):
        out.append("model: a non-empty string is required")


def _stream_fields(body: dict[str, Any], options: set[str] | None, out: list[str]) -> None:
    """``stream`` a boolean. ``options``: the keys of the API's ``stream_options`` (None:
    it has none), an object of booleans allowed only when ``stream`` is true."""
    if "stream" in body and not isinstance(body["stream"], bool):
        out.append(f"stream: must be a boolean, not {body['stream']!r:.60}")
    if options is None or body.get("stream_options") is None:
        return
    if body.get("stream") is not True:
        out.append(
            "stream_options: The 'stream_options' parameter is only allowed when 'stream' "
            "is enabled."
        )
    stream_options = body["stream_options"]
    if not isinstance(stream_options, dict):
        out.append("stream_options: must be an object")
        return
    _extra_keys(stream_options, options, "stream_options", out)
    for key in sorted(options & set(stream_options)):
        if not isinstance(stream_options[key], bool):
            out.append(f"stream_options.{key}: must be a boolean")


def _counting(body: dict[str, Any], out: list[str]) -> None:
    """The counting endpoints answer at once: they take no ``stream``."""
    for key in ("stream", "stream_options"):
        if key in body:
            out.append(f"{key}: Extra inputs are not permitted (counting does not stream)")


# --- error replies ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScriptedError:
    """An error reply: the HTTP status and the JSON body, in one API's error shape.

    ``retry`` is sent as the ``x-should-retry`` header, which both SDKs obey: False
    (the default) makes a client with retries left fail at once, so a test does not
    wait out the SDK's back-off."""

    status: int
    body: dict[str, Any]
    retry: bool = False

    @property
    def message(self) -> str:
        error = self.body.get("error")
        return str(error.get("message", "")) if isinstance(error, dict) else ""


def anthropic_error(status: int, kind: str, message: str) -> ScriptedError:
    """Anthropic's shape: ``{"type": "error", "error": {"type": kind, "message": ...}}``."""
    return ScriptedError(status, {"type": "error", "error": {"type": kind, "message": message}})


def openai_error(
    status: int,
    message: str,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> ScriptedError:
    """OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""
    error = {"message": message, "type": kind, "param": param, "code": code}
    return ScriptedError(status, {"error": error})


ANTHROPIC_PROMPT_TOO_LONG = anthropic_error(
    400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
)
ANTHROPIC_REQUEST_TOO_LARGE = anthropic_error(
    413, "request_too_large", "Request exceeds the maximum size"
)
ANTHROPIC_RATE_LIMITED = anthropic_error(
    429,
    "rate_limit_error",
    "This request would exceed the rate limit for your organization of 30,000 input "
    "tokens per minute. Please try again later.",
)
ANTHROPIC_INVALID_REQUEST = anthropic_error(
    400,
    "invalid_request_error",
    "max_tokens: 200000 > 64000, which is the maximum allowed number of output tokens",
)
ANTHROPIC_SERVER_ERROR = anthropic_error(500, "api_error", "Internal server error")

OPENAI_CHAT_CONTEXT_LENGTH_EXCEEDED = openai_error(
    400,
    "This model's maximum context length is 128000 tokens. However, your messages "
    "resulted in 130000 tokens.",
    param="messages",
    code="context_length_exceeded",
)
OPENAI_RESPONSES_CONTEXT_WINDOW_EXCEEDED = openai_error(
    400,
    "Your input exceeds the context window of this model. Please adjust your input and try again.",
    param="input",
    code="context_length_exceeded",
)
OPENAI_RATE_LIMITED = openai_error(
    429,
    "Rate limit reached for gpt-5-mini on tokens per min (TPM): Limit 30000, Used 29000, "
    "Requested 2000. Please try again in 2s.",
    kind="tokens",
    code="rate_limit_exceeded",
)
OPENAI_INVALID_REQUEST = openai_error(
    400,
    "Unsupported value: 'reasoning.effort' does not support 'extreme' with this model.",
    param="reasoning.effort",
    code="unsupported_value",
)
OPENAI_SERVER_ERROR = openai_error(
    500,
    "The server had an error while processing your request. Sorry about that!",
    kind="server_error",
)


# --- Anthropic Messages ---------------------------------------------------------------

_A_BLOCK_KEYS: dict[str, set[str]] = {
    "text": {"type", "text", "cache_control", "citations"},
    "image": {"type", "source", "cache_control"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
    "tool_use": {"type", "id", "name", "input", "cache_control"},
}
_A_ROLE_BLOCKS = {
    "user": {"text", "image", "tool_result"},
    "assistant": {"text", "thinking", "redacted_thinking", "tool_use"},
}
_A_TOOL_RESULT_BLOCKS = {"text", "image"}


def check_anthropic_messages(body: Any, *, count_tokens: bool = False) -> list[str]:
    """The reasons the Messages API (or its count_tokens twin) would reject ``body``."""
    if not isinstance(body, dict):
        return ["body: must be a JSON object"]
    out: list[str] = []
    _require_model(body, out)
    if count_tokens:
        if "max_tokens" in body:
            out.append("max_tokens: Extra inputs are not permitted (count_tokens takes none)")
        _counting(body, out)
    else:
        _stream_fields(body, None, out)
        limit = body.get("max_tokens")
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            out.append("max_tokens: an integer of at least 1 is required")
    if "system" in body:
        _anthropic_system(body["system"], out)
    if "tools" in body:
        _anthropic_tools(body["tools"], out)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        out.append("messages: a non-empty list is required")
        return out
    for i, message in enumerate(messages):
        _anthropic_message(message, f"messages[{i}]", out)
    if any(not isinstance(m, dict) for m in messages):
        return out
    roles = [m.get("role") for m in messages]
    if roles[0] != "user":
        out.append(f"messages[0]: the first message must use the user role, not {roles[0]!r}")
    for i in range(1, len(roles)):
        if roles[i] == roles[i - 1]:
            out.append(
                f"messages[{i}]: a second {roles[i]} message in a row "
                "(consecutive messages of one role must be merged)"
            )
    _anthropic_tool_pairing(messages, out)
    _anthropic_final_assistant(messages[-1], len(messages) - 1, out)
    return out


def _anthropic_system(system: Any, out: list[str]) -> None:
    if isinstance(system, str):
        return
    if not isinstance(system, list):
        out.append("system: must be a string or a list of text blocks")
        return
    for i, block in enumerate(system):
        where = f"system[{i}]"
        if not isinstance(block, dict) or block.get("type") != "text":
            out.append(f"{where}: system blocks must be text blocks")
            continue
        _extra_keys(block, _A_BLOCK_KEYS["text"], where, out)
        if _blank(block.get("text")):
            out.append(f"{where}: text content blocks must contain non-whitespace text")


def _anthropic_tools(tools: Any, out: list[str]) -> None:
    names: Counter[str] = Counter()
    for i, tool in enumerate(_list_of_dicts(tools, "tools", out)):
        where = f"tools[{i}]"
        _extra_keys(
            tool, {"name", "description", "input_schema", "cache_control", "type"}, where, out
        )
        name = tool.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            out.append(f"{where}.name: must match ^[a-zA-Z0-9_-]{{1,64}}$, got {name!r}")
        else:
            names[name] += 1
        if "description" in tool and not _is_str(tool["description"]):
            out.append(f"{where}.description: must be a string")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            out.append(f"{where}.input_schema: a JSON Schema object with type 'object' is required")
    for name, count in names.items():
        if count > 1:
            out.append(f"tools: tool names must be unique, {name!r} appears {count} times")


def _anthropic_message(message: Any, where: str, out: list[str]) -> None:
    if not isinstance(message, dict):
        out.append(f"{where}: must be an object")
        return
    _extra_keys(message, {"role", "content"}, where, out)
    role = message.get("role")
    if role not in _A_ROLE_BLOCKS:
        out.append(f"{where}.role: must be 'user' or 'assistant', not {role!r}")
        return
    content = message.get("content")
    if isinstance(content, str):
        if not content.strip():
            out.append(f"{where}.content: text content must contain non-whitespace text")
        return
    if not isinstance(content, list) or not content:
        out.append(f"{where}.content: a non-empty string or list of blocks is required")
        return
    for j, block in enumerate(content):
        _anthropic_block(block, role, f"{where}.content[{j}]", out)


def _anthropic_block(block: Any, role: str, where: str, out: list[str]) -> None:
    if not isinstance(block, dict):
        out.append(f"{where}: must be an object")
        return
    kind = block.get("type")
    if kind not in _A_ROLE_BLOCKS[role]:
        out.append(f"{where}: block type {kind!r} is not allowed in a {role} message")
        return
    _extra_keys(block, _A_BLOCK_KEYS[kind], where, out)
    if kind == "text":
        if _blank(block.get("text")):
            out.append(f"{where}: text content blocks must contain non-whitespace text")
    elif kind == "image":
        _anthropic_image(block, where, out)
    elif kind == "thinking":
        if not _is_str(block.get("thinking")):
            out.append(f"{where}.thinking: a string is required")
        if _blank(block.get("signature")):
            out.append(f"{where}.signature: a thinking block needs its non-empty signature")
    elif kind == "redacted_thinking":
        if _blank(block.get("data")):
            out.append(f"{where}.data: a redacted_thinking block needs its non-empty data")
    elif kind == "tool_use":
        call_id = block.get("id")
        if not isinstance(call_id, str) or not _ID.match(call_id):
            out.append(f"{where}.id: must match ^[a-zA-Z0-9_-]+$, got {call_id!r}")
        if _blank(block.get("name")):
            out.append(f"{where}.name: a non-empty string is required")
        if not isinstance(block.get("input"), dict):
            out.append(f"{where}.input: must be an object, not {block.get('input')!r:.60}")
    elif kind == "tool_result":
        use_id = block.get("tool_use_id")
        if not isinstance(use_id, str) or not _ID.match(use_id):
            out.append(f"{where}.tool_use_id: must match ^[a-zA-Z0-9_-]+$, got {use_id!r}")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            out.append(f"{where}.is_error: must be a boolean")
        content = block.get("content")
        if content is None or isinstance(content, str):
            return
        if not isinstance(content, list):
            out.append(f"{where}.content: must be a string or a list of blocks")
            return
        for k, inner in enumerate(content):
            inner_where = f"{where}.content[{k}]"
            if not isinstance(inner, dict) or inner.get("type") not in _A_TOOL_RESULT_BLOCKS:
                kind_inner = inner.get("type") if isinstance(inner, dict) else inner
                out.append(
                    f"{inner_where}: block type {kind_inner!r} is not allowed in a tool_result"
                )
                continue
            _anthropic_block(inner, "user", inner_where, out)


def _anthropic_image(block: dict[str, Any], where: str, out: list[str]) -> None:
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        out.append(f"{where}.source: a base64 source is required")
        return
    _extra_keys(source, {"type", "media_type", "data"}, f"{where}.source", out)
    media = source.get("media_type")
    if media not in IMAGE_MEDIA_TYPES:
        out.append(f"{where}.source.media_type: must be one of {IMAGE_MEDIA_TYPES}, not {media!r}")
        return
    _image_bytes(source.get("data"), media, f"{where}.source.data", out)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _anthropic_tool_pairing(messages: list[dict[str, Any]], out: list[str]) -> None:
    seen_calls: set[Any] = set()
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        if message.get("role") == "assistant":
            ids = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            for call_id in ids:
                if call_id in seen_calls:
                    out.append(f"messages[{i}]: tool_use ids must be unique, {call_id!r} repeats")
                seen_calls.add(call_id)
            if not ids:
                continue
            following = messages[i + 1] if i + 1 < len(messages) else None
            answered = set()
            if following is not None and following.get("role") == "user":
                answered = {
                    b.get("tool_use_id")
                    for b in _blocks(following)
                    if b.get("type") == "tool_result"
                }
            missing = [c for c in ids if c not in answered]
            if missing:
                out.append(
                    f"messages[{i}]: tool_use ids were found without tool_result blocks "
                    f"immediately after: {', '.join(map(str, missing))}"
                )
        elif message.get("role") == "user":
            previous = messages[i - 1] if i > 0 else None
            offered: set[Any] = set()
            if previous is not None and previous.get("role") == "assistant":
                offered = {b.get("id") for b in _blocks(previous) if b.get("type") == "tool_use"}
            kinds = [b.get("type") for b in blocks]
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            if results and kinds[: len(results)] != ["tool_result"] * len(results):
                out.append(
                    f"messages[{i}]: tool_result blocks must come first in the user message, "
                    "before any other content"
                )
            for use_id, count in Counter(results).items():
                if use_id not in offered:
                    out.append(
                        f"messages[{i}]: unexpected tool_use_id found in tool_result blocks: "
                        f"{use_id} (each tool_result needs a matching tool_use in the "
                        "previous message)"
                    )
                if count > 1:
                    out.append(f"messages[{i}]: more than one tool_result for {use_id}")


def _anthropic_final_assistant(message: dict[str, Any], index: int, out: list[str]) -> None:
    if message.get("role") != "assistant":
        return
    content = message.get("content")
    text = content if isinstance(content, str) else None
    last = content[-1] if isinstance(content, list) and content else None
    if isinstance(last, dict) and last.get("type") == "text":
        text = last.get("text")
    if isinstance(text, str) and text != text.rstrip():
        out.append(
            f"messages[{index}]: final assistant content cannot end with trailing whitespace"
        )


# --- OpenAI Chat Completions ------------------------------------------------------------

_CHAT_KEYS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "tool_calls", "refusal", "audio"},
    "tool": {"role", "content", "tool_call_id"},
}


def check_openai_chat(body: Any) -> list[str]:
    """The reasons Chat Completions would reject ``body``."""
    if not isinstance(body, dict):
        return ["body: must be a JSON object"]
    out: list[str] = []
    _require_model(body, out)
    _stream_fields(body, {"include_usage", "include_obfuscation"}, out)
    if "tools" in body:
        _chat_tools(body["tools"], out)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        out.append("messages: a non-empty list is required")
        return out
    for i, message in enumerate(messages):
        _chat_message(message, f"messages[{i}]", out)
    if any(not isinstance(m, dict) for m in messages):
        return out
    conversation = [
        (i, m) for i, m in enumerate(messages) if m.get("role") not in ("system", "developer")
    ]
    if conversation and conversation[0][1].get("role") != "user":
        i, first = conversation[0]
        out.append(
            f"messages[{i}]: the first message after the system messages must use the user "
            f"role, not {first.get('role')!r}"
        )
    _chat_tool_pairing(messages, out)
    return out


def _chat_tools(tools: Any, out: list[str]) -> None:
    for i, tool in enumerate(_list_of_dicts(tools, "tools", out)):
        where = f"tools[{i}]"
        _extra_keys(tool, {"type", "function"}, where, out)
        if tool.get("type") != "function":
            out.append(f"{where}.type: must be 'function'")
        function = tool.get("function")
        if not isinstance(function, dict):
            out.append(f"{where}.function: an object is required")
            continue
        _extra_keys(
            function, {"name", "description", "parameters", "strict"}, f"{where}.function", out
        )
        name = function.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            out.append(f"{where}.function.name: must match ^[a-zA-Z0-9_-]{{1,64}}$, got {name!r}")
        if "parameters" in function and not isinstance(function["parameters"], dict):
            out.append(f"{where}.function.parameters: must be a JSON Schema object")


def _chat_parts(content: Any, allowed: set[str], where: str, out: list[str]) -> None:
    if not isinstance(content, list) or not content:
        out.append(f"{where}: a non-empty string or list of content parts is required")
        return
    for j, part in enumerate(content):
        part_where = f"{where}[{j}]"
        if not isinstance(part, dict):
            out.append(f"{part_where}: must be an object")
            continue
        kind = part.get("type")
        if kind not in allowed:
            out.append(f"{part_where}: content part type {kind!r} is not allowed here")
            continue
        if kind == "text":
            _extra_keys(part, {"type", "text"}, part_where, out)
            if not _is_str(part.get("text")):
                out.append(f"{part_where}.text: a string is required")
        elif kind == "refusal":
            _extra_keys(part, {"type", "refusal"}, part_where, out)
            if not _is_str(part.get("refusal")):
                out.append(f"{part_where}.refusal: a string is required")
        elif kind == "image_url":
            _extra_keys(part, {"type", "image_url"}, part_where, out)
            image = part.get("image_url")
            if not isinstance(image, dict):
                out.append(f"{part_where}.image_url: an object with a url is required")
                continue
            _extra_keys(image, {"url", "detail"}, f"{part_where}.image_url", out)
            if image.get("detail", "auto") not in ("auto", "low", "high"):
                out.append(f"{part_where}.image_url.detail: must be auto, low or high")
            _image_url(image.get("url"), f"{part_where}.image_url.url", out)


def _image_url(url: Any, where: str, out: list[str]) -> None:
    if not isinstance(url, str):
        out.append(f"{where}: a string is required")
        return
    if url.startswith(("http://", "https://")):
        return
    match = _DATA_URL.match(url)
    if match is None:
        out.append(f"{where}: must be an http(s) URL or a data:<media type>;base64, URL")
        return
    media = match["media"]
    if media not in IMAGE_MEDIA_TYPES:
        out.append(f"{where}: unsupported image media type {media!r}")
        return
    _image_bytes(match["data"], media, where, out)


def _chat_message(message: Any, where: str, out: list[str]) -> None:
    if not isinstance(message, dict):
        out.append(f"{where}: must be an object")
        return
    role = message.get("role")
    if role not in _CHAT_KEYS:
        out.append(f"{where}.role: must be one of {sorted(_CHAT_KEYS)}, not {role!r}")
        return
    _extra_keys(message, _CHAT_KEYS[role], where, out)
    content = message.get("content")
    if role in ("system", "developer"):
        if not isinstance(content, str):
            _chat_parts(content, {"text"}, f"{where}.content", out)
    elif role == "user":
        if not isinstance(content, str):
            _chat_parts(content, {"text", "image_url"}, f"{where}.content", out)
    elif role == "tool":
        if _blank(message.get("tool_call_id")):
            out.append(f"{where}.tool_call_id: a non-empty string is required")
        if not isinstance(content, str):
            _chat_parts(content, {"text"}, f"{where}.content", out)
    else:  # assistant
        calls = message.get("tool_calls")
        if "tool_calls" in message:
            if not isinstance(calls, list) or not calls:
                out.append(f"{where}.tool_calls: must be a non-empty list when present")
            else:
                for k, call in enumerate(calls):
                    _chat_tool_call(call, f"{where}.tool_calls[{k}]", out)
        if content is None:
            if not calls:
                out.append(f"{where}: an assistant message needs content or tool_calls")
        elif not isinstance(content, str):
            _chat_parts(content, {"text", "refusal"}, f"{where}.content", out)


def _chat_tool_call(call: Any, where: str, out: list[str]) -> None:
    if not isinstance(call, dict):
        out.append(f"{where}: must be an object")
        return
    _extra_keys(call, {"id", "type", "function"}, where, out)
    if _blank(call.get("id")):
        out.append(f"{where}.id: a non-empty string is required")
    if call.get("type") != "function":
        out.append(f"{where}.type: must be 'function'")
    function = call.get("function")
    if not isinstance(function, dict):
        out.append(f"{where}.function: an object with name and arguments is required")
        return
    _extra_keys(function, {"name", "arguments"}, f"{where}.function", out)
    if _blank(function.get("name")):
        out.append(f"{where}.function.name: a non-empty string is required")
    _json_object_string(function.get("arguments"), f"{where}.function.arguments", out)


def _chat_tool_pairing(messages: list[dict[str, Any]], out: list[str]) -> None:
    open_calls: dict[Any, int] = {}  # ids of the last assistant's calls not yet answered
    answerable: set[Any] = set()  # ids a tool message may answer right now
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in open_calls:
                del open_calls[call_id]
            elif call_id in answerable:
                out.append(f"messages[{i}]: a second tool message for tool_call_id {call_id}")
            else:
                out.append(
                    f"messages[{i}]: messages with role 'tool' must be a response to a "
                    f"preceding message with 'tool_calls' (no call {call_id})"
                )
            continue
        _close_chat_calls(open_calls, out)
        answerable = set()
        if role == "assistant" and isinstance(message.get("tool_calls"), list):
            for call in message["tool_calls"]:
                call_id = call.get("id") if isinstance(call, dict) else None
                if call_id in answerable:
                    out.append(f"messages[{i}]: tool_call ids must be unique, {call_id!r} repeats")
                open_calls[call_id] = i
                answerable.add(call_id)
    _close_chat_calls(open_calls, out)


def _close_chat_calls(open_calls: dict[Any, int], out: list[str]) -> None:
    for call_id, index in open_calls.items():
        out.append(
            f"messages[{index}]: an assistant message with 'tool_calls' must be followed by "
            f"tool messages responding to each 'tool_call_id'; none for {call_id}"
        )
    open_calls.clear()


# --- OpenAI Responses --------------------------------------------------------------------

_R_PART_KEYS = {
    "input_text": {"type", "text"},
    "input_image": {"type", "image_url", "file_id", "detail"},
    "output_text": {"type", "text", "annotations", "logprobs"},
    "refusal": {"type", "refusal"},
}
_R_ROLE_PARTS = {
    "user": {"input_text", "input_image"},
    "system": {"input_text"},
    "developer": {"input_text"},
    "assistant": {"output_text", "refusal"},
}
_R_ITEM_KEYS = {
    "message": {"type", "role", "content", "id", "status", "phase"},
    "function_call": {"type", "call_id", "name", "arguments", "id", "status"},
    "function_call_output": {"type", "call_id", "output", "id", "status"},
    "reasoning": {"type", "id", "summary", "encrypted_content", "content", "status"},
}


def check_openai_responses(body: Any, *, input_tokens: bool = False) -> list[str]:
    """The reasons the Responses API (or its input_tokens count) would reject ``body``."""
    if not isinstance(body, dict):
        return ["body: must be a JSON object"]
    out: list[str] = []
    if not input_tokens or "model" in body:
        _require_model(body, out)
    if input_tokens:
        _counting(body, out)
    else:
        _stream_fields(body, {"include_obfuscation"}, out)
    if body.get("instructions") is not None and not _is_str(body["instructions"]):
        out.append("instructions: must be a string")
    if "tools" in body:
        _responses_tools(body["tools"], out)
    items = body.get("input")
    if isinstance(items, str):
        return out
    if not isinstance(items, list):
        out.append("input: must be a string or a list of items")
        return out
    for i, item in enumerate(items):
        _responses_item(item, f"input[{i}]", out)
    _responses_pairing([item for item in items if isinstance(item, dict)], out)
    return out


def _responses_tools(tools: Any, out: list[str]) -> None:
    for i, tool in enumerate(_list_of_dicts(tools, "tools", out)):
        where = f"tools[{i}]"
        if tool.get("type") != "function":
            out.append(f"{where}.type: must be 'function'")
            continue
        _extra_keys(tool, {"type", "name", "description", "parameters", "strict"}, where, out)
        name = tool.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            out.append(f"{where}.name: must match ^[a-zA-Z0-9_-]{{1,64}}$, got {name!r}")
        if not isinstance(tool.get("parameters"), dict):
            out.append(f"{where}.parameters: a JSON Schema object is required")
        if "strict" not in tool or tool["strict"] not in (True, False, None):
            out.append(f"{where}.strict: required (true, false or null)")


def _responses_item(item: Any, where: str, out: list[str]) -> None:
    if not isinstance(item, dict):
        out.append(f"{where}: must be an object")
        return
    kind = item.get("type", "message" if "role" in item else None)
    if kind not in _R_ITEM_KEYS:
        out.append(f"{where}.type: unknown input item type {kind!r}")
        return
    _extra_keys(item, _R_ITEM_KEYS[kind], where, out)
    if kind == "message":
        _responses_message(item, where, out)
    elif kind == "function_call":
        if _blank(item.get("call_id")):
            out.append(f"{where}.call_id: a non-empty string is required")
        if _blank(item.get("name")):
            out.append(f"{where}.name: a non-empty string is required")
        if "id" in item and not str(item["id"]).startswith("fc"):
            out.append(f"{where}.id: expected an ID that begins with 'fc', got {item['id']!r}")
        _json_object_string(item.get("arguments"), f"{where}.arguments", out)
    elif kind == "function_call_output":
        if _blank(item.get("call_id")):
            out.append(f"{where}.call_id: a non-empty string is required")
        output = item.get("output")
        if not isinstance(output, str):
            _responses_parts(output, {"input_text", "input_image"}, f"{where}.output", out)
    else:  # reasoning
        if not str(item.get("id", "")).startswith("rs"):
            out.append(f"{where}.id: a reasoning item needs its id (beginning with 'rs')")
        if not isinstance(item.get("summary"), list):
            out.append(f"{where}.summary: a list is required")


def _responses_message(item: dict[str, Any], where: str, out: list[str]) -> None:
    role = item.get("role")
    if role not in _R_ROLE_PARTS:
        out.append(f"{where}.role: must be one of {sorted(_R_ROLE_PARTS)}, not {role!r}")
        return
    if "id" in item and not str(item["id"]).startswith("msg"):
        out.append(f"{where}.id: expected an ID that begins with 'msg', got {item['id']!r}")
    if item.get("status", "completed") not in ("completed", "incomplete", "in_progress"):
        out.append(f"{where}.status: must be completed, incomplete or in_progress")
    content = item.get("content")
    if isinstance(content, str):
        return
    _responses_parts(content, _R_ROLE_PARTS[role], f"{where}.content", out)


def _responses_parts(content: Any, allowed: set[str], where: str, out: list[str]) -> None:
    if not isinstance(content, list) or not content:
        out.append(f"{where}: a non-empty string or list of content parts is required")
        return
    for j, part in enumerate(content):
        part_where = f"{where}[{j}]"
        if not isinstance(part, dict):
            out.append(f"{part_where}: must be an object")
            continue
        kind = part.get("type")
        if kind not in allowed:
            out.append(
                f"{part_where}.type: invalid value {kind!r}; supported here: {sorted(allowed)}"
            )
            continue
        _extra_keys(part, _R_PART_KEYS[kind], part_where, out)
        if kind in ("input_text", "output_text"):
            if not _is_str(part.get("text")):
                out.append(f"{part_where}.text: a string is required")
            if kind == "output_text" and not isinstance(part.get("annotations", []), list):
                out.append(f"{part_where}.annotations: must be a list")
        elif kind == "refusal":
            if not _is_str(part.get("refusal")):
                out.append(f"{part_where}.refusal: a string is required")
        else:  # input_image
            if part.get("detail") not in ("auto", "low", "high", "original"):
                out.append(f"{part_where}.detail: required, one of auto, low, high, original")
            if part.get("image_url") is None and part.get("file_id") is None:
                out.append(f"{part_where}: an image_url or a file_id is required")
            elif part.get("image_url") is not None:
                _image_url(part.get("image_url"), f"{part_where}.image_url", out)


def _responses_pairing(items: list[dict[str, Any]], out: list[str]) -> None:
    calls: dict[Any, int] = {}
    outputs: Counter[Any] = Counter()
    for i, item in enumerate(items):
        kind = item.get("type")
        call_id = item.get("call_id")
        if kind == "function_call":
            if call_id in calls:
                out.append(
                    f"input[{i}]: function_call call_ids must be unique, {call_id!r} repeats"
                )
            calls.setdefault(call_id, i)
        elif kind == "function_call_output":
            if call_id not in calls:
                out.append(
                    f"input[{i}]: No tool call found for function call output with call_id "
                    f"{call_id}"
                )
            outputs[call_id] += 1
            if outputs[call_id] == 2:
                out.append(f"input[{i}]: a second function_call_output for call_id {call_id}")
    for call_id, index in calls.items():
        if outputs[call_id] == 0:
            out.append(f"input[{index}]: No tool output found for function call {call_id}")


# --- scripted replies ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call of a scripted `Reply`. Without an ``id`` one is made in each API's
    style (Anthropic ``toolu_…``, Chat Completions ``call_…``, Responses ``call_…`` in an
    item whose id is ``fc_…``); a given ``id`` is the call id in every API."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """The token counts of a scripted `Reply`, each token counted once: ``input`` is
    the input neither read from the cache nor written to it.

    Anthropic reports them as they are (``input_tokens``, ``cache_read_input_tokens``,
    ``cache_creation_input_tokens``, ``output_tokens``). OpenAI's input total includes
    the cached part: ``prompt_tokens`` / ``input_tokens`` = input + cache_read +
    cache_write, with ``cached_tokens`` = cache_read and ``cache_write_tokens`` =
    cache_write. ``reasoning`` is the part of ``output`` spent thinking (OpenAI's
    ``reasoning_tokens``; Anthropic's ``output_tokens_details.thinking_tokens``, sent
    only when not 0). ``input`` or ``output`` None: estimated as for any reply, from the
    size of the request body and of the reply."""

    input: int | None = None
    output: int | None = None
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    def __post_init__(self) -> None:
        for name in ("input", "output", "cache_read", "cache_write", "reasoning"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(f"usage {name} must be a count of at least 0, not {value!r}")


# The stop reasons a Reply may name, in any API's words: Anthropic's stop_reason, Chat
# Completions' finish_reason, and the Responses incomplete_details.reason (None: status
# completed).
_STOP_REASONS: dict[str, tuple[str, str, str | None]] = {
    "end_turn": ("end_turn", "stop", None),
    "stop": ("end_turn", "stop", None),
    "tool_use": ("tool_use", "tool_calls", None),
    "tool_calls": ("tool_use", "tool_calls", None),
    "max_tokens": ("max_tokens", "length", "max_output_tokens"),
    "length": ("max_tokens", "length", "max_output_tokens"),
    "max_output_tokens": ("max_tokens", "length", "max_output_tokens"),
    "refusal": ("refusal", "content_filter", "content_filter"),
    "content_filter": ("refusal", "content_filter", "content_filter"),
    "pause_turn": ("pause_turn", "stop", None),
    "model_context_window_exceeded": (
        "model_context_window_exceeded",
        "length",
        "max_output_tokens",
    ),
}


@dataclass(frozen=True, slots=True)
class Reply:
    """A scripted model reply (`StubApi.reply_with`), answered in the shape of whichever
    of the three model endpoints takes it, streamed or whole.

    - ``text``: the visible text (None: no text block / message item; Chat's content is
      then null beside tool calls, else "").
    - ``thinking`` and ``signature``: an Anthropic ``thinking`` block, a Responses
      ``reasoning`` item whose summary is the text and whose ``encrypted_content`` is
      the signature; Chat Completions has no thinking and leaves it out. A signature
      is made from the text when none is given.
    - ``redacted_thinking``: the data of an Anthropic ``redacted_thinking`` block (the
      OpenAI APIs leave it out).
    - ``tool_calls``: `ToolCall` objects, after the text. With any, the stop reason is
      ``tool_use`` / ``tool_calls``.
    - ``stop_reason``: overrides that, in any API's words (a key of ``_STOP_REASONS``:
      ``max_tokens``, ``length``, ``refusal``, ...); one the Responses API reports as
      ``incomplete`` makes the response incomplete (streamed: ``response.incomplete``
      instead of ``response.completed``).
    - ``usage``: a `Usage`; None estimates it.

    Anthropic's blocks come in the order thinking, redacted thinking, text, tool uses;
    Responses items in the order reasoning, message, function calls. The stub does not
    check that the request asked for thinking or reasoning summaries."""

    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    redacted_thinking: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    stop_reason: str | None = None
    usage: Usage | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        if self.thinking is None:
            if self.signature is not None:
                raise ValueError("a signature needs the thinking it signs")
        elif self.signature is None:
            made = base64.b64encode(f"stub signature of {self.thinking}".encode()).decode()
            object.__setattr__(self, "signature", made)
        elif not self.signature:
            raise ValueError("a thinking signature must not be empty")
        if self.redacted_thinking is not None and not self.redacted_thinking:
            raise ValueError("redacted thinking needs its data")
        if self.stop_reason is not None and self.stop_reason not in _STOP_REASONS:
            raise ValueError(f"unknown stop reason {self.stop_reason!r}: {sorted(_STOP_REASONS)}")
        ids = [call.id for call in self.tool_calls if call.id is not None]
        if len(ids) != len(set(ids)):
            raise ValueError(f"tool call ids repeat: {ids}")
        for call in self.tool_calls:
            if not isinstance(call, ToolCall):
                raise TypeError(f"tool_calls takes ToolCall objects, not {call!r}")
            if not _TOOL_NAME.match(call.name):
                raise ValueError(f"tool name {call.name!r} breaks ^[a-zA-Z0-9_-]{{1,64}}$")
            if call.id is not None and not _ID.match(call.id):
                raise ValueError(f"tool call id {call.id!r} breaks ^[a-zA-Z0-9_-]+$")
            json.dumps(call.arguments)  # must be JSON

    def describe(self) -> str:
        """``text 'ok'`` for a reply of text only, else its repr."""
        return f"text {self.text!r}" if self == Reply(text=self.text) else repr(self)


# --- replies the SDKs parse ---------------------------------------------------------------


def _estimate(raw: bytes) -> int:
    return max(1, len(raw) // 4)


def _made_id(prefix: str, serial: int, index: int = 0) -> str:
    """An id of the stub's own: unique for each reply (``serial``) and call (``index``)."""
    return f"{prefix}stub{serial:06d}{index:02d}"


@dataclass(frozen=True, slots=True)
class _Counts:
    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int


def _counts(reply: Reply, raw: bytes) -> _Counts:
    usage = reply.usage or Usage()
    written = "".join(
        [reply.text or "", reply.thinking or ""]
        + [json.dumps(call.arguments) for call in reply.tool_calls]
    )
    return _Counts(
        input=_estimate(raw) if usage.input is None else usage.input,
        output=max(1, len(written) // 4) if usage.output is None else usage.output,
        cache_read=usage.cache_read,
        cache_write=usage.cache_write,
        reasoning=usage.reasoning,
    )


def _stop(reply: Reply) -> tuple[str, str, str | None]:
    if reply.stop_reason is not None:
        return _STOP_REASONS[reply.stop_reason]
    return _STOP_REASONS["tool_use" if reply.tool_calls else "end_turn"]


def _anthropic_reply(body: dict[str, Any], raw: bytes, reply: Reply, serial: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.thinking is not None:
        content.append(
            {"type": "thinking", "thinking": reply.thinking, "signature": reply.signature}
        )
    if reply.redacted_thinking is not None:
        content.append({"type": "redacted_thinking", "data": reply.redacted_thinking})
    if reply.text is not None:
        content.append({"type": "text", "text": reply.text})
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or _made_id("toolu_", serial, index)
        arguments = json.loads(json.dumps(call.arguments))
        content.append({"type": "tool_use", "id": call_id, "name": call.name, "input": arguments})
    counts = _counts(reply, raw)
    usage: dict[str, Any] = {
        "input_tokens": counts.input,
        "cache_creation_input_tokens": counts.cache_write,
        "cache_read_input_tokens": counts.cache_read,
        "output_tokens": counts.output,
    }
    if counts.reasoning:
        usage["output_tokens_details"] = {"thinking_tokens": counts.reasoning}
    return {
        "id": _made_id("msg_", serial),
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": _stop(reply)[0],
        "stop_sequence": None,
        "usage": usage,
    }


def _chat_reply(body: dict[str, Any], raw: bytes, reply: Reply, serial: int) -> dict[str, Any]:
    counts = _counts(reply, raw)
    prompt = counts.input + counts.cache_read + counts.cache_write
    content = reply.text
    if content is None and not reply.tool_calls:
        content = ""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id or _made_id("call_", serial, index),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    return {
        "id": _made_id("chatcmpl-", serial),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _stop(reply)[1],
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": counts.output,
            "total_tokens": prompt + counts.output,
            "prompt_tokens_details": {
                "cached_tokens": counts.cache_read,
                "cache_write_tokens": counts.cache_write,
            },
            "completion_tokens_details": {"reasoning_tokens": counts.reasoning},
        },
    }


def _responses_reply(body: dict[str, Any], raw: bytes, reply: Reply, serial: int) -> dict[str, Any]:
    counts = _counts(reply, raw)
    incomplete = _stop(reply)[2]
    status = "completed" if incomplete is None else "incomplete"
    output: list[dict[str, Any]] = []
    if reply.thinking is not None:
        summary = [{"type": "summary_text", "text": reply.thinking}] if reply.thinking else []
        output.append(
            {
                "type": "reasoning",
                "id": _made_id("rs_", serial),
                "summary": summary,
                "encrypted_content": reply.signature,
            }
        )
    if reply.text is not None:
        output.append(
            {
                "type": "message",
                "id": _made_id("msg_", serial),
                "status": status,
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}
                ],
            }
        )
    for index, call in enumerate(reply.tool_calls):
        output.append(
            {
                "type": "function_call",
                "id": _made_id("fc_", serial, index),
                "call_id": call.id or _made_id("call_", serial, index),
                "name": call.name,
                "arguments": json.dumps(call.arguments),
                "status": "completed",
            }
        )
    prompt = counts.input + counts.cache_read + counts.cache_write
    now = int(time.time())
    return {
        "id": _made_id("resp_", serial),
        "object": "response",
        "created_at": now,
        "completed_at": now if incomplete is None else None,
        "status": status,
        "model": body.get("model"),
        "instructions": body.get("instructions"),
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "error": None,
        "incomplete_details": None if incomplete is None else {"reason": incomplete},
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {
                "cached_tokens": counts.cache_read,
                "cache_write_tokens": counts.cache_write,
            },
            "output_tokens": counts.output,
            "output_tokens_details": {"reasoning_tokens": counts.reasoning},
            "total_tokens": prompt + counts.output,
        },
    }


def _chat_stream(body: dict[str, Any], reply: dict[str, Any]) -> list[bytes]:
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    return chat_chunks(reply, include_usage=include_usage)


@dataclass(frozen=True, slots=True)
class _Route:
    family: str  # "anthropic" or "openai": which auth header and error shape
    check: Callable[[Any], list[str]]
    reply: Callable[[dict[str, Any], bytes, Reply, int], dict[str, Any]]
    # A model reply, taking a Reply from the reply_with queue: how it streams, from the
    # request body and the whole reply body. None: a count, which neither takes nor streams.
    stream: Callable[[dict[str, Any], dict[str, Any]], list[bytes]] | None = None


ROUTES: dict[str, _Route] = {
    "/v1/messages": _Route(
        "anthropic",
        check_anthropic_messages,
        _anthropic_reply,
        lambda body, reply: anthropic_events(reply),
    ),
    "/v1/messages/count_tokens": _Route(
        "anthropic",
        lambda body: check_anthropic_messages(body, count_tokens=True),
        lambda body, raw, reply, serial: {"input_tokens": _estimate(raw)},
    ),
    "/v1/chat/completions": _Route("openai", check_openai_chat, _chat_reply, _chat_stream),
    "/v1/responses": _Route(
        "openai",
        check_openai_responses,
        _responses_reply,
        lambda body, reply: responses_events(reply),
    ),
    "/v1/responses/input_tokens": _Route(
        "openai",
        lambda body: check_openai_responses(body, input_tokens=True),
        lambda body, raw, reply, serial: {
            "object": "response.input_tokens",
            "input_tokens": _estimate(raw),
        },
    ),
}


# --- the server ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: the endpoint, the request's label (if sent) and the reason."""

    path: str
    label: str
    reason: str

    def __str__(self) -> str:
        where = f" [{self.label}]" if self.label else ""
        return f"{self.path}{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request as received: endpoint, label and parsed JSON body."""

    path: str
    label: str
    body: Any


@dataclass(frozen=True, slots=True)
class Answer:
    """What `StubApi.handle` answers: a status and either a JSON ``body`` or, for a
    streamed reply, the server-sent ``events`` (already encoded), plus extra headers."""

    status: int
    body: dict[str, Any] | None = None
    events: tuple[bytes, ...] | None = None
    headers: dict[str, str] = field(default_factory=dict)


class StubApi:
    """The server: start with ``with StubApi() as stub`` (or start/stop); ``url`` is its
    base address. Thread-safe records of requests and violations."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self._violations: list[Violation] = []
        self._replies: list[Reply] = []
        self._serials = itertools.count(1)  # numbers the model replies, for their ids
        self._failures: dict[str, list[tuple[str | None, ScriptedError]]] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle
    def start(self) -> StubApi:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.stub = self
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="stub-api"
        )
        thread.start()
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None or thread is None:
            return
        server.shutdown()
        thread.join()
        server.server_close()  # joins the handler threads (block_on_close)

    def __enter__(self) -> StubApi:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: Anthropic's base_url; add ``/v1`` for OpenAI."""
        if self._server is None:
            raise RuntimeError("the stub is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- records
    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    @property
    def violations(self) -> list[Violation]:
        with self._lock:
            return list(self._violations)

    def reset(self) -> None:
        """Forget every request and violation recorded so far, and everything scripted."""
        with self._lock:
            self._requests, self._violations = [], []
            self._replies, self._failures = [], {}

    def take_violations(self) -> list[Violation]:
        """The violations recorded so far, forgetting them."""
        with self._lock:
            taken, self._violations = self._violations, []
        return taken

    def requests_to(self, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.path == path]

    # --- scripting
    def reply_with(self, *replies: str | Reply) -> None:
        """Queue replies, each a text or a `Reply`: each successful reply of
        ``/v1/messages``, ``/v1/chat/completions`` or ``/v1/responses`` takes the next
        one (whichever endpoint it is, streamed or not); once the queue is empty the
        replies are ``REPLY_TEXT``."""
        queued = [Reply(text=r) if isinstance(r, str) else r for r in replies]
        for reply in queued:
            if not isinstance(reply, Reply):
                raise TypeError(f"reply_with takes texts and Reply objects, not {reply!r}")
        with self._lock:
            self._replies.extend(queued)

    def fail_next(
        self, path: str, error: ScriptedError, times: int = 1, *, label: str | None = None
    ) -> None:
        """Answer the next ``times`` well-formed requests to ``path`` with ``error``
        (after the failures already scripted for it). With ``label``, only requests
        sent with that `LABEL_HEADER` count; others pass (or meet a later failure)."""
        if path not in ROUTES:
            raise ValueError(f"the stub has no endpoint {path!r}")
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._failures.setdefault(path, []).extend([(label, error)] * times)

    def pending(self) -> list[str]:
        """What was scripted and not used yet, one description each (empty: all used)."""
        with self._lock:
            left = [f"reply {reply.describe()}" for reply in self._replies]
            for path, errors in self._failures.items():
                left.extend(
                    f"{path}{f' [{label}]' if label else ''}: HTTP {e.status} {e.message!r}"
                    for label, e in errors
                )
        return left

    # --- handling
    def handle(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Answer:
        """The answer to one request, recording it."""
        path = urlsplit(target).path
        label = headers.get(LABEL_HEADER, "")
        route = ROUTES.get(path)
        reasons: list[str] = []
        body: Any = None
        if route is None or method != "POST":
            reasons.append(f"no such endpoint: {method} {path}")
        else:
            if route.family == "anthropic":
                if _blank(headers.get("x-api-key")) and _blank(headers.get("authorization")):
                    reasons.append("no credentials: neither x-api-key nor Authorization is set")
                if _blank(headers.get("anthropic-version")):
                    reasons.append("header anthropic-version is missing")
            elif not headers.get("authorization", "").startswith("Bearer "):
                reasons.append("header Authorization: Bearer is missing")
            try:
                body = json.loads(raw)
            except ValueError as exc:
                reasons.append(f"body is not JSON: {exc}")
            else:
                reasons.extend(route.check(body))
        scripted: ScriptedError | None = None
        reply = Reply(text=REPLY_TEXT)
        serial = 0
        with self._lock:
            self._requests.append(Recorded(path, label, body))
            self._violations.extend(Violation(path, label, r) for r in reasons)
            if not reasons:
                scripted = self._take_failure(path, label)
                if scripted is None and route is not None and route.stream is not None:
                    if self._replies:
                        reply = self._replies.pop(0)
                    serial = next(self._serials)
        if reasons:
            status = 404 if route is None else 400
            message = "; ".join(reasons)
            if route is not None and route.family == "anthropic":
                return Answer(
                    status, anthropic_error(status, "invalid_request_error", message).body
                )
            return Answer(status, openai_error(status, message).body)
        if scripted is not None:
            retry = "true" if scripted.retry else "false"
            return Answer(scripted.status, scripted.body, headers={"x-should-retry": retry})
        assert route is not None
        payload = route.reply(body, raw, reply, serial)
        if route.stream is not None and body.get("stream") is True:
            return Answer(200, events=tuple(route.stream(body, payload)))
        return Answer(200, payload)

    def _take_failure(self, path: str, label: str) -> ScriptedError | None:
        """The first failure scripted for this request, removed (the lock is held)."""
        queue = self._failures.get(path, [])
        for i, (wanted, error) in enumerate(queue):
            if wanted is None or wanted == label:
                del queue[i]
                return error
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True  # server_close waits for every handler thread
    stub: StubApi


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection, so no handler thread outlives its answer,
    # and a stream ends when the connection closes (no Content-Length).
    protocol_version = "HTTP/1.0"
    server: _Server

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        answer = self.server.stub.handle(self.command, self.path, headers, raw)
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.events is None:
            data = json.dumps(answer.body).encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for event in answer.events:  # one write each, so they can arrive one by one
                self.wfile.write(event)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading early: closing its stream is its right

    do_POST = do_GET = do_PUT = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: failures are reported through the recorded violations
