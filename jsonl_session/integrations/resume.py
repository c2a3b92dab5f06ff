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
from jsonl_session.extras import needs_extra
from jsonl_session.format.ids import now_ms
from jsonl_session.messages import tool_calls
from jsonl_session.providers.accumulate import OnDelta
from jsonl_session.providers.anthropic import to_anthropic
from jsonl_session.providers.openai import to_openai_chat, to_openai_responses
from jsonl_session.providers.streams import from_reply, partial_reply

if TYPE_CHECKING:
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
    if provider == "anthropic":
        with needs_extra("anthropic", "the anthropic provider"):
            import anthropic
        return anthropic.Anthropic(api_key=_key(provider, api_key, variable), base_url=base_url)
    with needs_extra("openai", "the openai provider"):
        import openai
    return openai.OpenAI(api_key=_key(provider, api_key, variable), base_url=base_url)


def _key(provider: str, given: str | None, variable: str) -> str:
    key = given or os.environ.get(variable)
    if not key:
        raise ModelCallError(f"no API key for {provider}: set {variable}")
    return key


def summarizer_for(target: ModelTarget) -> Summarizer:
    """The summarizer an overflow compacts with: the same provider, model and client."""
    if target.provider == "anthropic":
        return AnthropicSummarizer(target.model, client=target.client)
    return OpenAISummarizer(target.model, api=target.api, client=target.client)


def open_stream(target: ModelTarget, messages: list[dict[str, Any]]) -> Any:
    """Send ``messages`` (a context's, perhaps with a prompt not yet written) as one
    streamed request; the SDK's stream, once the API has taken the request."""
    if target.provider == "anthropic":
        request = to_anthropic(messages, model=target.model).kwargs
        return target.client.messages.create(
            model=target.model, max_tokens=target.max_tokens, stream=True, **request
        )
    if target.api == "chat":
        request = to_openai_chat(messages).kwargs
        return target.client.chat.completions.create(
            model=target.model,
            max_completion_tokens=target.max_tokens,
            stream=True,
            stream_options={"include_usage": True},
            **request,
        )
    request = to_openai_responses(messages, model=target.model).kwargs
    return target.client.responses.create(
        model=target.model, max_output_tokens=target.max_tokens, stream=True, **request
    )


class _Turn:
    """One turn's state: the prompt not yet written, the compaction made, if any."""

    def __init__(
        self,
        session: Session,
        target: ModelTarget,
        asked: dict[str, Any] | None,
        summarizer: Summarizer | None,
        on_compaction: Callable[[CompactionResult], None] | None,
    ) -> None:
        self.session, self.target, self.asked = session, target, asked
        self.summarizer = summarizer
        self.on_compaction = on_compaction
        self.compaction: CompactionResult | None = None

    def start(self) -> Any:
        """The stream; on an overflow, compact and ask once more."""
        try:
            return open_stream(self.target, self.messages())
        except Exception as exc:
            if not is_context_overflow(exc):
                raise _refused(self.target, exc) from exc
            self.compact(exc)
        try:
            return open_stream(self.target, self.messages())
        except Exception as again:
            raise _refused(self.target, again) from again

    def messages(self) -> list[dict[str, Any]]:
        pending = [self.asked] if self.asked is not None else []
        return [*self.session.build_context().messages, *pending]

    def compact(self, overflow: BaseException | str) -> None:
        try:
            self.compaction = compact(self.session, self.summarizer or summarizer_for(self.target))
        except CompactionError as failure:
            reason = f"the context overflowed and could not be compacted: {failure}"
            if isinstance(overflow, BaseException):
                raise ModelCallError(reason) from overflow
            raise ModelCallError(reason) from None
        if self.on_compaction is not None:
            self.on_compaction(self.compaction)


def _read(
    session: Session, stream: Any, target: ModelTarget, on_delta: OnDelta | None, started: int
) -> dict[str, Any]:
    """The streamed reply; if the stream breaks, what came is appended, then the error
    raised (SDK and connection errors as ModelCallError)."""
    try:
        return from_reply(stream, on_delta=on_delta, model=target.model, timestamp=started)
    except BaseException as error:
        partial = partial_reply(error)
        if partial is not None:
            session.append_message(partial)
        if isinstance(error, Exception):
            raise _refused(target, error) from error
        raise
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
    """Send the context with ``prompt`` (None: the context as it is) and append the
    reply. Nothing is written until the API has taken the request: then the prompt (and,
    for a model other than the session's, a model_change first, as pi records a switch),
    then the reply, even one cut short (stop reason error or aborted, before the error
    is raised). A context overflow, refused or reported in the stream, compacts the
    session and asks once more. A reply that failed calls no tools."""
    if prompt is not None and not prompt.strip():
        raise ModelCallError("the prompt is empty")
    started = now_ms()
    asked = None
    if prompt is not None:
        asked = {
            "role": "user",
            "content": [{"type": "text", "text": prompt}],
            "timestamp": started,
        }
    recorded = session.build_context().model or {}
    switched = (recorded.get("provider"), recorded.get("modelId")) != (
        target.provider,
        target.model,
    )
    turn = _Turn(session, target, asked, summarizer, on_compaction)
    stream = turn.start()
    if switched:
        session.append_model_change(target.provider, target.model)
    prompt_id = session.append_message(asked) if asked is not None else None
    turn.asked = None  # written: the context holds it from here on
    reply = _read(session, stream, target, on_delta, started)
    overflowed = is_context_overflow(str(reply.get("errorMessage") or ""))
    if reply.get("stopReason") == "error" and overflowed and turn.compaction is None:
        # the API took the request and said in the stream that it was too long
        turn.compact(str(reply.get("errorMessage")))
        reply = _read(session, turn.start(), target, on_delta, now_ms())
    reply_id = session.append_message(reply)
    failed = reply.get("stopReason") in ("error", "aborted")
    return Turn(prompt_id, reply_id, reply, [] if failed else tool_calls(reply), turn.compaction)


def _refused(target: ModelTarget, exc: Exception) -> Exception:
    """SDK and connection errors as ModelCallError (one line, with the status)."""
    if isinstance(exc, ModelCallError):
        return exc
    status = getattr(exc, "status_code", None)
    sdk = type(exc).__module__.startswith(("anthropic", "openai", "httpx"))
    if status is None and not sdk:
        return exc
    where = f" (HTTP {status})" if status else ""
    return ModelCallError(f"{target.provider} refused the request{where}: {exc}")
