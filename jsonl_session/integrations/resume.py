"""Continuing a session with a real model: one turn is the user's prompt appended, the
context sent (the transcript's own system prompt and tools), the reply streamed and
appended. What `jsonl-session resume` runs.

Owns choosing the provider, model and client (keys as the summarizers take them:
``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``, base URLs from the options or the SDKs'
``*_BASE_URL``), the request per API, and the recovery: a context overflow compacts
(a summary by the same provider and model) and sends once more. A reply that calls
tools is recorded and returned with its calls; nothing here runs a tool. Requests are
providers/anthropic.py's and openai.py's; replies in are providers/streams.py's;
compaction is compaction/'s. The SDKs are imported only when a turn is taken.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from jsonl_session.compaction.execute import CompactionResult, compact
from jsonl_session.compaction.loop import is_context_overflow
from jsonl_session.compaction.summarizers import (
    ANTHROPIC_KEY_VARIABLE,
    OPENAI_KEY_VARIABLE,
    AnthropicSummarizer,
    OpenAISummarizer,
    Summarizer,
)
from jsonl_session.errors import CompactionError, ModelCallError
from jsonl_session.format.ids import now_ms
from jsonl_session.messages import tool_calls
from jsonl_session.providers.anthropic import to_anthropic
from jsonl_session.providers.openai import to_openai_chat, to_openai_responses
from jsonl_session.providers.streams import OnDelta, from_reply

if TYPE_CHECKING:
    from jsonl_session.context import SessionContext
    from jsonl_session.session.facade import Session

Provider = Literal["anthropic", "openai"]
OpenAIApi = Literal["responses", "chat"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai")
DEFAULT_MAX_TOKENS = 8192


@dataclass(frozen=True, slots=True)
class Turn:
    """What one turn added: the prompt's entry (None when no prompt was given), the
    reply's entry and message, the tool calls it made (not run), and the compaction
    an overflow caused, if one did."""

    prompt_id: str | None
    reply_id: str
    reply: dict[str, Any]
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    compaction: CompactionResult | None = None

    @property
    def text(self) -> str:
        return "".join(
            str(b.get("text", ""))
            for b in self.reply.get("content") or ()
            if b.get("type") == "text"
        )


@dataclass
class ModelTarget:
    """The provider, model and client a session continues with."""

    provider: Provider
    model: str
    client: Any
    api: OpenAIApi = "responses"
    max_tokens: int = DEFAULT_MAX_TOKENS


def target_for(
    session: Session,
    *,
    provider: str | None = None,
    model: str | None = None,
    api: OpenAIApi = "responses",
    api_key: str | None = None,
    base_url: str | None = None,
    client: Any = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> ModelTarget:
    """The target: the given provider and model, else the session's own (the model
    its context was last set to), with a client made from the key. Raises ModelCallError
    before anything is written when the provider, model or key is missing."""
    recorded = session.build_context().model or {}
    if provider is None:
        provider = recorded.get("provider") if recorded.get("provider") in PROVIDERS else None
        if provider is None:
            provider = _provider_with_key()
    if provider not in PROVIDERS:
        raise ModelCallError(f"provider must be one of {', '.join(PROVIDERS)}, not {provider!r}")
    if model is None:
        model_id = recorded.get("modelId")
        if recorded.get("provider") == provider and isinstance(model_id, str) and model_id:
            model = model_id
        else:
            raise ModelCallError(
                f"which {provider} model? the session's last model is "
                f"{_described(recorded)}; give one with --model"
            )
    if api not in ("responses", "chat"):
        raise ModelCallError(f"api must be 'responses' or 'chat', not {api!r}")
    if client is None:
        client = _client(provider, api_key, base_url)
    return ModelTarget(provider, model, client, api, max_tokens)


def _provider_with_key() -> Provider:
    for provider, variable in (
        ("anthropic", ANTHROPIC_KEY_VARIABLE),
        ("openai", OPENAI_KEY_VARIABLE),
    ):
        if os.environ.get(variable):
            return provider  # type: ignore[return-value]
    raise ModelCallError(
        "which provider? the session names none this command talks to; give --provider "
        f"anthropic or openai (with {ANTHROPIC_KEY_VARIABLE} or {OPENAI_KEY_VARIABLE} set)"
    )


def _described(model: dict[str, Any]) -> str:
    if not model:
        return "not recorded"
    return f"{model.get('provider', '?')}/{model.get('modelId', '?')}"


def _client(provider: str, api_key: str | None, base_url: str | None) -> Any:
    variable = ANTHROPIC_KEY_VARIABLE if provider == "anthropic" else OPENAI_KEY_VARIABLE
    key = api_key or os.environ.get(variable)
    if not key:
        raise ModelCallError(f"no API key for {provider}: set {variable}")
    if provider == "anthropic":
        import anthropic

        return anthropic.Anthropic(api_key=key, base_url=base_url)
    import openai

    return openai.OpenAI(api_key=key, base_url=base_url)


def summarizer_for(target: ModelTarget) -> Summarizer:
    """The summarizer an overflow compacts with: the same provider, model and client."""
    if target.provider == "anthropic":
        return AnthropicSummarizer(target.model, client=target.client)
    return OpenAISummarizer(target.model, api=target.api, client=target.client)


def send(
    target: ModelTarget, context: SessionContext | list[dict[str, Any]], on_delta: OnDelta | None
) -> dict[str, Any]:
    """One streamed request for ``context``; the reply as pi's assistant message."""
    started = now_ms()
    options: dict[str, Any] = {"model": target.model, "timestamp": started}
    if target.provider == "anthropic":
        request = to_anthropic(context).kwargs
        stream = target.client.messages.create(
            model=target.model, max_tokens=target.max_tokens, stream=True, **request
        )
        return _streamed(stream, on_delta, options)
    if target.api == "chat":
        request = to_openai_chat(context).kwargs
        stream = target.client.chat.completions.create(
            model=target.model,
            max_completion_tokens=target.max_tokens,
            stream=True,
            stream_options={"include_usage": True},
            **request,
        )
        return _streamed(stream, on_delta, options)
    request = to_openai_responses(context, model=target.model).kwargs
    stream = target.client.responses.create(
        model=target.model, max_output_tokens=target.max_tokens, stream=True, **request
    )
    return _streamed(stream, on_delta, options)


def _streamed(stream: Any, on_delta: OnDelta | None, options: dict[str, Any]) -> dict[str, Any]:
    try:
        return from_reply(stream, on_delta=on_delta, **options)
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()


def take_turn(
    session: Session,
    prompt: str | None,
    target: ModelTarget,
    *,
    on_delta: OnDelta | None = None,
    summarizer: Summarizer | None = None,
    on_compaction: Callable[[CompactionResult], None] | None = None,
) -> Turn:
    """Append ``prompt`` (unless None: then the context is sent as it is), send the
    context, append the reply. On a context overflow, compact and send once more. A
    model other than the session's is recorded first with a model_change, as pi does."""
    if prompt is not None and not prompt.strip():
        raise ModelCallError("the prompt is empty")
    recorded = session.build_context().model or {}
    if (recorded.get("provider"), recorded.get("modelId")) != (target.provider, target.model):
        # pi records a switch of model before the turn that uses it
        session.append_model_change(target.provider, target.model)
    prompt_id = None
    if prompt is not None:
        prompt_id = session.append_message(
            {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": now_ms()}
        )
    compaction = None
    try:
        reply = send(target, session.build_context(), on_delta)
    except Exception as exc:
        if not is_context_overflow(exc):
            raise _refused(target, exc) from exc
        try:
            compaction = compact(session, summarizer or summarizer_for(target))
        except CompactionError as failure:
            raise ModelCallError(
                f"the context overflowed and could not be compacted: {failure}"
            ) from exc
        if on_compaction is not None:
            on_compaction(compaction)
        try:
            reply = send(target, session.build_context(), on_delta)
        except Exception as again:
            raise _refused(target, again) from again
    reply_id = session.append_message(reply)
    return Turn(prompt_id, reply_id, reply, tool_calls(reply), compaction)


def _refused(target: ModelTarget, exc: Exception) -> Exception:
    """SDK errors as ModelCallError (one line, with the status); others unchanged."""
    status = getattr(exc, "status_code", None)
    if status is None and not type(exc).__module__.startswith(("anthropic", "openai")):
        return exc
    where = f" (HTTP {status})" if status else ""
    return ModelCallError(f"{target.provider} refused the request{where}: {exc}")
