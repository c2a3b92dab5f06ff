"""Summarizers: the one-method protocol and the two model-backed implementations.

A summarizer turns a `SummaryTask` into summary text. `AnthropicSummarizer` and
`OpenAISummarizer` (Chat Completions or Responses) send the prompt through our own
adapters (providers/) with the real SDKs; `choose_summarizer` picks one by name or
from the API keys in the environment, falling back to the offline
`ExtractiveSummarizer` (extractive.py) when no key is set. What to summarize is
planning.py's job; what the model is asked is prompts.py's; writing the result is
execute.py's.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Literal, Protocol, runtime_checkable

from jsonl_session.compaction.extractive import ExtractiveSummarizer
from jsonl_session.compaction.prompts import SYSTEM_PROMPT, SummaryTask, prompt_for
from jsonl_session.errors import CompactionError
from jsonl_session.extras import needs_extra
from jsonl_session.providers.anthropic import to_anthropic
from jsonl_session.providers.openai import to_openai_chat, to_openai_responses

SUMMARIZER_NAMES: tuple[str, ...] = ("auto", "offline", "anthropic", "openai", "openai-chat")
ANTHROPIC_KEY_VARIABLE = "ANTHROPIC_API_KEY"
OPENAI_KEY_VARIABLE = "OPENAI_API_KEY"
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"
DEFAULT_OPENAI_MODEL = "gpt-5.4-mini"


@runtime_checkable
class Summarizer(Protocol):
    """Anything with a ``name`` and ``summarize(task) -> str``."""

    name: str

    def summarize(self, task: SummaryTask) -> str: ...


def _prompt_message(task: SummaryTask) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": prompt_for(task)}]}]


def _api_key(given: str | None, variable: str) -> str:
    key = given or os.environ.get(variable)
    if not key:
        raise CompactionError(
            f"no API key: set {variable}, or use the offline summarizer "
            "(--summarizer offline), which needs no key"
        )
    return key


def _installed(sdk: str) -> bool:
    try:
        return importlib.util.find_spec(sdk) is not None
    except (ImportError, ValueError):  # blocked, or set to None in sys.modules
        return False


def _failed(provider: str, exc: Exception) -> CompactionError:
    status = getattr(exc, "status_code", None)
    where = f" (HTTP {status})" if status else ""
    return CompactionError(f"the {provider} summarizer failed{where}: {exc}")


class AnthropicSummarizer:
    """Summaries from Anthropic's Messages API (``ANTHROPIC_API_KEY``; the SDK also
    reads ``ANTHROPIC_BASE_URL``)."""

    name = "anthropic"

    def __init__(
        self,
        model: str | None = None,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 300.0,
    ) -> None:
        self.model = model or DEFAULT_ANTHROPIC_MODEL
        if client is None:
            with needs_extra("anthropic", "the anthropic summarizer"):
                import anthropic
            key = _api_key(api_key, ANTHROPIC_KEY_VARIABLE)
            client = anthropic.Anthropic(api_key=key, base_url=base_url, timeout=timeout)
        self.client = client

    def summarize(self, task: SummaryTask) -> str:
        with needs_extra("anthropic", "the anthropic summarizer"):
            import anthropic

        request = to_anthropic(_prompt_message(task), system=SYSTEM_PROMPT)
        try:
            response = self.client.messages.create(
                model=self.model, max_tokens=task.max_tokens, **request.kwargs
            )
        except anthropic.APIError as exc:
            raise _failed("anthropic", exc) from exc
        text = "\n".join(
            block.text for block in response.content if getattr(block, "type", "") == "text"
        )
        return _non_empty(text, "anthropic", str(response.stop_reason))


class OpenAISummarizer:
    """Summaries from OpenAI (``OPENAI_API_KEY``; the SDK also reads
    ``OPENAI_BASE_URL``), through Chat Completions (``api="chat"``) or Responses."""

    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        *,
        api: Literal["chat", "responses"] = "responses",
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 300.0,
    ) -> None:
        if api not in ("chat", "responses"):
            raise ValueError(f"api must be 'chat' or 'responses', not {api!r}")
        self.model = model or DEFAULT_OPENAI_MODEL
        self.api = api
        if client is None:
            with needs_extra("openai", "the openai summarizer"):
                import openai
            key = _api_key(api_key, OPENAI_KEY_VARIABLE)
            client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout)
        self.client = client

    def summarize(self, task: SummaryTask) -> str:
        with needs_extra("openai", "the openai summarizer"):
            import openai

        messages = _prompt_message(task)
        try:
            if self.api == "chat":
                chat = to_openai_chat(messages, system=SYSTEM_PROMPT)
                completion = self.client.chat.completions.create(
                    model=self.model, max_completion_tokens=task.max_tokens, **chat.kwargs
                )
                choice = completion.choices[0]
                return _non_empty(choice.message.content or "", "openai", choice.finish_reason)
            request = to_openai_responses(messages, instructions=SYSTEM_PROMPT)
            response = self.client.responses.create(
                model=self.model, max_output_tokens=task.max_tokens, **request.kwargs
            )
        except openai.APIError as exc:
            raise _failed("openai", exc) from exc
        return _non_empty(response.output_text, "openai", str(response.status))


def _non_empty(text: str, provider: str, reason: str) -> str:
    if not text.strip():
        raise CompactionError(f"the {provider} summarizer returned no text (stop: {reason})")
    return text


def choose_summarizer(name: str = "auto", model: str | None = None) -> Summarizer:
    """A summarizer by name. ``auto`` takes Anthropic when ``ANTHROPIC_API_KEY`` is set
    and its SDK installed, else OpenAI when ``OPENAI_API_KEY`` is and its SDK, else the
    offline extractive one. Naming a provider whose SDK is missing is MissingExtra."""
    if name == "auto":
        if os.environ.get(ANTHROPIC_KEY_VARIABLE) and _installed("anthropic"):
            name = "anthropic"
        elif os.environ.get(OPENAI_KEY_VARIABLE) and _installed("openai"):
            name = "openai"
        else:
            name = "offline"
    if name == "offline":
        return ExtractiveSummarizer()
    if name == "anthropic":
        return AnthropicSummarizer(model)
    if name in ("openai", "openai-responses"):
        return OpenAISummarizer(model, api="responses")
    if name == "openai-chat":
        return OpenAISummarizer(model, api="chat")
    known = ", ".join(SUMMARIZER_NAMES)
    raise CompactionError(f"unknown summarizer {name!r}: use one of {known}")
