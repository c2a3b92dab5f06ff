"""What the adapters share: the request type they return, the neutral tool shape
they accept, and `history_of`, a context's messages through history.py's
`prepare_history`. No API-specific rules here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.context import SessionContext
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
    """Tools given as ToolSpec or as dicts in pi's shape ({name, description, parameters})."""
    specs: list[ToolSpec] = []
    for tool in tools or ():
        if isinstance(tool, ToolSpec):
            specs.append(tool)
        else:
            specs.append(
                ToolSpec(
                    name=str(tool["name"]),
                    description=str(tool.get("description", "")),
                    parameters=dict(tool.get("parameters") or {"type": "object", "properties": {}}),
                )
            )
    return specs


ContextLike = SessionContext | Sequence[dict[str, Any]]


def history_of(context: ContextLike) -> History:
    """Plain-role, repaired messages of a built context (or of a list of messages)."""
    messages = context.messages if isinstance(context, SessionContext) else context
    return prepare_history(list(messages))
