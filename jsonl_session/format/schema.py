"""Where the JSON Schema of a session line is: ``session.schema.json`` beside this
module, shipped in the wheel as package data. It is generated from model.py by
``python spec/schema/generate.py``, which writes this copy and spec/schema/'s (the
one the spec links to); a test keeps the two identical. Nothing here reads it.
"""

from __future__ import annotations

from pathlib import Path

SCHEMA_FILE_NAME = "session.schema.json"


def schema_path() -> Path:
    """The installed JSON Schema (draft 2020-12) describing one line of a session file:
    the header, one of the entry types, or an entry of a type this version does not
    know. Open it with ``json.loads(schema_path().read_text())``."""
    return Path(__file__).with_name(SCHEMA_FILE_NAME)
