"""Tool declarations as a transcript holds them (pi 1.5's system messages).

Owns turning a tool definition in any of the shapes people have at hand into pi's
declaration (``name``, ``description``, ``parameters`` as a JSON Schema, and
``constrainedSampling`` when given): pi's own, Anthropic's (``input_schema``), OpenAI
Chat Completions' (``{"type": "function", "function": {...}}``) and OpenAI
Responses' (``{"type": "function", "name", ...}``), as dicts or msgspec structs.
Sending declarations to an API in its shape is providers/'. Pure.
"""

from __future__ import annotations

from typing import Any

import msgspec

from jsonl_session.errors import EntryValidationError
from jsonl_session.format.walk import as_text

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def tool_declaration(tool: Any) -> dict[str, Any]:
    """pi's declaration of ``tool`` (see the module docstring for the shapes read)."""
    data = msgspec.to_builtins(tool) if isinstance(tool, msgspec.Struct) else tool
    if not isinstance(data, dict):
        raise EntryValidationError(f"a tool must be an object, not {as_text(data, 200)}")
    function = data.get("function")
    if data.get("type") == "function" and isinstance(function, dict):
        data = function  # Chat Completions wraps the definition
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise EntryValidationError(f"a tool needs a string 'name': {as_text(data, 200)}")
    parameters = next(
        (data[key] for key in ("parameters", "input_schema", "inputSchema") if key in data),
        EMPTY_PARAMETERS,
    )
    if not isinstance(parameters, dict):
        raise EntryValidationError(f"tool {name!r}: parameters must be a JSON Schema object")
    description = data.get("description")
    declaration: dict[str, Any] = {
        "name": name,
        "description": description if isinstance(description, str) else "",
        "parameters": parameters,
    }
    if "constrainedSampling" in data:
        declaration["constrainedSampling"] = data["constrainedSampling"]
    return declaration


def tool_reference(tool: Any) -> dict[str, str]:
    """``{"name": ...}`` for a tool given by name or as a definition."""
    if isinstance(tool, str):
        return {"name": tool}
    return {"name": tool_declaration(tool)["name"]}
