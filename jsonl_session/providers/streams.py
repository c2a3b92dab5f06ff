"""SDK replies in, whole or streamed: the public ``from_anthropic``, ``from_openai_chat``,
``from_openai_responses`` and ``from_reply`` (any of them), and their async twins.

Each takes the SDK's final object (or a dict of it), or a stream: the raw event iterator
``create(..., stream=True)`` returns, or the ``stream()`` helper inside its ``with``
block (``MessageStream``, ``ChatCompletionStream``, ``ResponseStream``), or any iterable
of events or their dicts. A stream is consumed here and accumulated into the reply the
API would have returned whole; replies.py maps that to pi's assistant message, so a
streamed reply is stored exactly as the same reply unstreamed. ``on_delta(kind, text)``
is called as text (``"text"``), thinking (``"thinking"``) and tool-call arguments
(``"toolCall"``) arrive, so a caller can show them while they stream.

The helpers' own derived events (Anthropic's ``text``, the Chat helper's
``content.delta``, …) are skipped, and once a helper is drained its own final reply
is taken (so a helper the caller already read from still gives the whole reply). A
raw stream that was read from before it was handed over is refused: what it would
give is not the reply. A stream that ends before its last event gives a message with
stop reason ``aborted``; one that raises (a dropped connection, Ctrl-C) raises, with
the reply so far, stop reason ``error`` or ``aborted``, as `partial_reply(exc)`.
What each event means is accumulate.py's. No SDK is imported.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, Iterable
from typing import Any

from jsonl_session.errors import EntryValidationError
from jsonl_session.format.walk import as_text
from jsonl_session.providers.accumulate import ACCUMULATORS, FINAL, Accumulator, OnDelta
from jsonl_session.providers.reply_parts import plain

PARTIAL_ATTRIBUTE = "partial_reply"
_FINAL_GETTERS = {
    "get_final_message": "anthropic",
    "get_final_completion": "openai-chat",
    "get_final_response": "openai-responses",
}


def partial_reply(error: BaseException) -> dict[str, Any] | None:
    """The reply a stream had given when it raised ``error`` (None if it had not
    started), as pi's assistant message with stop reason ``error`` or ``aborted``."""
    partial = getattr(error, PARTIAL_ATTRIBUTE, None)
    return partial if isinstance(partial, dict) else None


def _is_stream(reply: Any) -> bool:
    if isinstance(reply, dict | str | bytes) or hasattr(reply, "model_dump"):
        return False
    return isinstance(reply, Iterable | AsyncIterable)


class _Consumer:
    """Feeds a stream's events to the accumulator of its API, one event at a time."""

    def __init__(
        self, api: str | None, on_delta: OnDelta | None, options: dict[str, Any], reply: Any
    ) -> None:
        self.helper_api = _helper_api(reply)
        self.api = self.helper_api or api
        self.on_delta = on_delta
        self.options = {k: v for k, v in options.items() if v is not None}
        self.acc: Accumulator | None = None

    def feed(self, raw_event: Any) -> None:
        event = plain(raw_event, "a stream event")
        if self.acc is None:
            kind = as_text(event.get("type") or "")
            self.acc = ACCUMULATORS[self.api or _api_of_event(event)](self.on_delta)
            # a helper the caller read from is fine: its own final reply is taken
            starts = self.acc.first_events if self.helper_api is None else ()
            if starts and kind not in starts:
                raise EntryValidationError(
                    f"the stream starts with a {kind!r} event, not {self.acc.first_events[0]!r}: "
                    "it was read from before it was handed over; hand over the whole stream "
                    "(or the SDK's stream() helper, whose final reply is taken)"
                )
        self.acc.feed(event)

    def keep_partial(self, error: BaseException) -> None:
        if self.acc is None:
            return
        message = self.acc.message(**self.options)
        interrupted = isinstance(error, KeyboardInterrupt | GeneratorExit | asyncio.CancelledError)
        message["stopReason"] = "aborted" if interrupted else "error"
        message["errorMessage"] = str(error) or type(error).__name__
        with contextlib.suppress(AttributeError, TypeError):  # a type taking no attributes
            setattr(error, PARTIAL_ATTRIBUTE, message)

    def result(self, reply: Any) -> dict[str, Any]:
        if self.helper_api is not None and (self.acc is None or self.acc.finished):
            whole = _helper_final(reply)
            if whole is not None:
                return FINAL[self.helper_api](plain(whole, "a final reply"), **self.options)
        if self.acc is None:
            raise EntryValidationError("the stream held no events: was it read to its end before?")
        message = self.acc.message(**self.options)
        if not self.acc.finished:
            message["stopReason"] = "aborted"
            message.setdefault("errorMessage", "the stream ended before the reply was complete")
        return message


def _helper_api(reply: Any) -> str | None:
    """The API of an SDK ``stream()`` helper (None for anything else)."""
    for getter, api in _FINAL_GETTERS.items():
        if callable(getattr(reply, getter, None)):
            return api
    return None


def _helper_final(reply: Any) -> Any:
    for getter in _FINAL_GETTERS:
        final = getattr(reply, getter, None)
        if callable(final):
            try:
                return final()
            except Exception:  # e.g. the Responses helper on a reply that did not complete
                return None
    return None


def _consume(
    api: str | None, reply: Iterable[Any], on_delta: OnDelta | None, options: dict[str, Any]
) -> dict[str, Any]:
    consumer = _Consumer(api, on_delta, options, reply)
    try:
        for raw_event in reply:
            consumer.feed(raw_event)
    except EntryValidationError:
        raise
    except BaseException as error:
        consumer.keep_partial(error)
        raise
    return consumer.result(reply)


def _api_of_event(event: dict[str, Any]) -> str:
    kind = as_text(event.get("type") or "")
    if kind.startswith(("message_", "content_block_")) or kind in ("ping",):
        return "anthropic"
    if kind == "chunk" or event.get("object") == "chat.completion.chunk" or "choices" in event:
        return "openai-chat"
    if kind.startswith("response.") or kind == "error":
        return "openai-responses"
    raise EntryValidationError(f"not an event of a stream this library reads: type {kind!r}")


def _api_of_reply(data: dict[str, Any]) -> str:
    if "choices" in data:
        return "openai-chat"
    if data.get("object") == "response" or "output" in data:
        return "openai-responses"
    if data.get("type") == "message" and "content" in data:
        return "anthropic"
    raise EntryValidationError(
        "not a reply this library reads: expected an Anthropic Message, an OpenAI "
        "ChatCompletion or Response (or a stream of one), or a pi assistant message"
    )


def _convert(
    api: str | None, reply: Any, on_delta: OnDelta | None, **options: Any
) -> dict[str, Any]:
    if isinstance(reply, AsyncIterable) and not isinstance(reply, Iterable):
        raise EntryValidationError(
            "an async stream: read it with `await afrom_reply(stream)` and append the "
            "message it gives"
        )
    if _is_stream(reply):
        return _consume(api, reply, on_delta, options)
    data = plain(reply, "a reply")
    if api is None:
        if data.get("role") == "assistant" and isinstance(data.get("api"), str):
            return data  # already pi's shape
        api = _api_of_reply(data)
    return FINAL[api](data, **{k: v for k, v in options.items() if v is not None})


def from_anthropic(
    reply: Any,
    *,
    on_delta: OnDelta | None = None,
    provider: str = "anthropic",
    model: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """An Anthropic ``Message``, its dict, or a stream of its events (``create(...,
    stream=True)`` or ``messages.stream()``) as pi's assistant message."""
    options = {"provider": provider, "model": model, "timestamp": timestamp}
    return _convert("anthropic", reply, on_delta, **options)


def from_openai_chat(
    reply: Any,
    *,
    on_delta: OnDelta | None = None,
    provider: str = "openai",
    model: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """A ``ChatCompletion``, its dict, or a stream of chunks (``create(...,
    stream=True)`` or ``chat.completions.stream()``) as pi's assistant message."""
    options = {"provider": provider, "model": model, "timestamp": timestamp}
    return _convert("openai-chat", reply, on_delta, **options)


def from_openai_responses(
    reply: Any,
    *,
    on_delta: OnDelta | None = None,
    provider: str = "openai",
    model: str | None = None,
    timestamp: int | None = None,
) -> dict[str, Any]:
    """A ``Response``, its dict, or a stream of its events (``create(..., stream=True)``
    or ``responses.stream()``) as pi's assistant message."""
    options = {"provider": provider, "model": model, "timestamp": timestamp}
    return _convert("openai-responses", reply, on_delta, **options)


def from_reply(reply: Any, *, on_delta: OnDelta | None = None, **options: Any) -> dict[str, Any]:
    """Any reply the three functions above take, told apart by its shape; a pi
    assistant message is returned as it is. ``options``: provider, model, timestamp."""
    return _convert(None, reply, on_delta, **options)


async def afrom_reply(
    reply: Any, *, on_delta: OnDelta | None = None, **options: Any
) -> dict[str, Any]:
    """`from_reply` for the async clients: an async stream (``AsyncStream``, the async
    ``stream()`` helpers, any async iterable of events) or a final object."""
    if not isinstance(reply, AsyncIterable):
        return from_reply(reply, on_delta=on_delta, **options)
    consumer = _Consumer(None, on_delta, options, reply)
    try:
        async for raw_event in reply:
            consumer.feed(raw_event)
    except EntryValidationError:
        raise
    except BaseException as error:
        consumer.keep_partial(error)
        raise
    if consumer.helper_api is not None and (consumer.acc is None or consumer.acc.finished):
        getter = next(g for g in _FINAL_GETTERS if callable(getattr(reply, g, None)))
        try:
            whole = await getattr(reply, getter)()
        except Exception:  # the reply did not complete: the events decide
            whole = None
        if whole is not None:
            return FINAL[consumer.helper_api](plain(whole, "a final reply"), **consumer.options)
    return consumer.result(None)
