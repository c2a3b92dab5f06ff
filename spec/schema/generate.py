"""Write spec/schema/session.schema.json from the typed model in jsonl_session.format.model,
and the same text to jsonl_session/format/session.schema.json, the copy the wheel ships
(jsonl_session.schema_path() finds it).

The schema describes one line of a session file: the header, one of the nine entry
types, or an entry of a type this version does not know (which readers keep). Agent
messages and content blocks are reachable through ``$defs``. The text is written
with sorted keys, an indent of 2 and a trailing newline, so it only changes when the
model does.

    python spec/schema/generate.py          # write both files
    python spec/schema/generate.py --check  # exit 1 if either file on disk differs
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TARGET = HERE / "session.schema.json"
PACKAGED = HERE.parent.parent / "jsonl_session" / "format" / "session.schema.json"
TARGETS = (TARGET, PACKAGED)
REF_TEMPLATE = "#/$defs/{name}"
GENERATE_COMMAND = "python spec/schema/generate.py"

try:
    import msgspec

    from jsonl_session.format import model
except ImportError:  # run from a checkout without the package installed
    sys.path.insert(0, str(HERE.parent.parent))
    import msgspec

    from jsonl_session.format import model


def build_schema() -> dict[str, Any]:
    """The schema as a dict: a line is a header, a known entry, or another entry.

    Everything comes from the model except the two open ends the format keeps:
    entries of unknown types (OtherEntry) and messages of unknown roles
    (OtherMessage), whose names are excluded using the model's lists of known ones.
    """
    (header, entries, messages), components = msgspec.json.schema_components(
        [model.SessionHeader, model.SessionEntry, model.AgentMessage],
        ref_template=REF_TEMPLATE,
    )
    defs: dict[str, Any] = dict(components)
    defs["SessionEntry"] = {
        "description": "One of the nine entry types of format version 3.",
        **entries,
    }
    defs["AgentMessage"] = {
        "description": "The message of a `message` entry, tagged on `role`.",
        **messages,
    }
    defs["OtherMessage"] = {
        "title": "OtherMessage",
        "description": (
            "A message whose role this version does not know (extensions may add "
            "roles). Readers keep it and pass it into the model context unchanged."
        ),
        "type": "object",
        "properties": {"role": {"type": "string", "not": {"enum": sorted(model.KNOWN_ROLES)}}},
        "required": ["role"],
    }
    defs["MessageEntry"]["properties"]["message"] = {
        "anyOf": [
            {"$ref": REF_TEMPLATE.format(name="AgentMessage")},
            {"$ref": REF_TEMPLATE.format(name="OtherMessage")},
        ]
    }
    defs["OtherEntry"] = {
        "title": "OtherEntry",
        "description": (
            "An entry of a type this version does not know. Readers keep its line "
            "as it is, place it in the tree by id and parentId, and leave it out of "
            "the model context."
        ),
        "type": "object",
        "properties": {
            "type": {
                "type": "string",
                "not": {"enum": sorted(model.KNOWN_ENTRY_TYPES | {"session"})},
            },
            "id": {"type": "string"},
            "parentId": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "timestamp": {"type": "string"},
        },
        "required": ["type", "id"],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "jsonl-session line",
        "description": (
            "One line of a session file in format version 3 (pi coding agent 0.73.x): "
            "the header on line 1, an entry on every later line. Generated from "
            f"jsonl_session.format.model by `{GENERATE_COMMAND}`; spec/SPEC.md is the "
            "normative text. Unknown keys are allowed everywhere and must be kept."
        ),
        "anyOf": [
            header,
            {"$ref": REF_TEMPLATE.format(name="SessionEntry")},
            {"$ref": REF_TEMPLATE.format(name="OtherEntry")},
        ],
        "$defs": defs,
    }


def render() -> str:
    """The exact text of the schema file."""
    schema = _clean_descriptions(build_schema())
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _clean_descriptions(node: Any) -> Any:
    """Descriptions (the model's docstrings) with their indentation removed as
    ``inspect.cleandoc`` does: Python 3.13 strips it when compiling, earlier versions
    keep it, and the text must not depend on the Python that generates it."""
    if isinstance(node, dict):
        return {
            key: inspect.cleandoc(value)
            if key == "description" and isinstance(value, str)
            else _clean_descriptions(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_clean_descriptions(item) for item in node]
    return node


def main(argv: list[str] | None = None, target: Path | None = None) -> int:
    """Write (or with ``--check``, compare) ``target``, by default both TARGETS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the file on disk differs from the generated text",
    )
    args = parser.parse_args(argv)
    targets: Sequence[Path] = TARGETS if target is None else (target,)
    text = render()
    if args.check:
        stale = [
            t for t in targets if (t.read_text(encoding="utf-8") if t.exists() else None) != text
        ]
        for path in stale:
            print(
                f"{path} differs from what jsonl_session.format.model generates; "
                f"run `{GENERATE_COMMAND}`",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path in targets:
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
