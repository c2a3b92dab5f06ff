"""Exact token counts from the providers' own counting endpoints, for callers who
pass a client: Anthropic's ``messages.count_tokens`` and OpenAI's
``responses.input_tokens.count``. The request is the one the adapters build, so
the count is of exactly what would be sent. Estimates without a client are
tokens.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from jsonl_session.providers.anthropic import to_anthropic
from jsonl_session.providers.common import ContextLike, ToolSpec

if TYPE_CHECKING:
    import anthropic
    import openai


def count_tokens_anthropic(
    client: anthropic.Anthropic,
    model: str,
    context: ContextLike,
    system: str | None = None,
    tools: Sequence[ToolSpec | dict[str, Any]] | None = None,
) -> int:
    """Input tokens Anthropic counts for this context (network call through ``client``)."""
    request = to_anthropic(context, system=system, tools=tools)
    return int(client.messages.count_tokens(model=model, **request.kwargs).input_tokens)


def count_tokens_openai(
    client: openai.OpenAI,
    model: str,
    context: ContextLike,
    instructions: str | None = None,
    tools: Sequence[ToolSpec | dict[str, Any]] | None = None,
) -> int:
    """Input tokens OpenAI counts for this context as a Responses API input."""
    from jsonl_session.providers.openai import to_openai_responses

    request = to_openai_responses(context, instructions=instructions, tools=tools)
    return int(client.responses.input_tokens.count(model=model, **request.kwargs).input_tokens)
