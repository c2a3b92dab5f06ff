"""What the adapters share: the request type they return, the neutral tool shape
they accept, the prompt and tools a request carries, and `history_of`, a context's
messages through history.py's `prepare_history`. No API-specific rules here.

By default a request carries the transcript's own prompt and tools: its system
messages (pi 1.5) replayed, as pi sends them to an API without mid-conversation
system messages. A caller's ``system`` / ``tools`` replace them (an empty one sends
none). Tools may be given in pi's, Anthropic's or OpenAI's shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.context import SessionContext
from jsonl_session.format.tools import tool_declaration
from jsonl_session.messages import current_system_message, current_tools, system_message_text
from jsonl_session.providers.history import History, Repair, prepare_history


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """Keyword arguments for an SDK call, and the history repairs made to build them.

    Pass ``kwargs`` with the caller's own model and limits, e.g.
    ``client.messages.create(model=..., max_tokens=..., **request.kwargs)``.
    """

    kwargs: dict[str, Any]
    repairs: list[Repair] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as pi describes one: a name, a description, JSON Schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


def tool_specs(tools: Sequence[ToolSpec | dict[str, Any]] | None) -> list[ToolSpec]:
    """Tools given as ToolSpec or as dicts in pi's shape ({name, description,
    parameters}), Anthropic's (``input_schema``) or OpenAI's (Chat Completions'
    ``{"type": "function", "function": {...}}`` or Responses')."""
    specs: list[ToolSpec] = []
    for tool in tools or ():
        if isinstance(tool, ToolSpec):
            specs.append(tool)
        else:
            declared = tool_declaration(tool)
            parameters = declared["parameters"] or {"type": "object", "properties": {}}
            specs.append(ToolSpec(declared["name"], declared["description"], dict(parameters)))
    return specs


ContextLike = SessionContext | Sequence[dict[str, Any]]


def prompt_and_tools(
    context: ContextLike, system: str | None, tools: Sequence[ToolSpec | dict[str, Any]] | None
) -> tuple[str | None, list[ToolSpec]]:
    """The system prompt and tools a request carries: the caller's, or else the ones
    the transcript's system messages declare."""
    messages = context.messages if isinstance(context, SessionContext) else context
    if system is None:
        system = system_message_text(current_system_message(messages)) or None
    return system, tool_specs(current_tools(messages) if tools is None else tools)


def history_of(context: ContextLike) -> History:
    """Plain-role, repaired messages of a built context (or of a list of messages)."""
    messages = context.messages if isinstance(context, SessionContext) else context
    return prepare_history(list(messages))
