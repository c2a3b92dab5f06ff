"""The committed JSON Schema (spec/schema/session.schema.json) and its generator.

The schema is generated from jsonl_session.format.model; these tests keep the committed
file in step with the model and check that it says what spec/SPEC.md says about
required keys. The required keys below are written out from the spec on purpose,
not read from the model, so a change to the model that drops one shows up here.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from locations import ROOT

SCHEMA_DIR = ROOT / "spec" / "schema"
SCHEMA_FILE = SCHEMA_DIR / "session.schema.json"

BASE = ["type", "id", "parentId", "timestamp"]
REQUIRED_BY_ENTRY_TYPE = {
    "message": [*BASE, "message"],
    "thinking_level_change": [*BASE, "thinkingLevel"],
    "model_change": [*BASE, "provider", "modelId"],
    "usage": [*BASE, "kind", "provider", "model", "usage"],
    "compaction": [*BASE, "summary", "firstKeptEntryId", "tokensBefore"],
    "branch_summary": [*BASE, "fromId", "summary"],
    "custom": ["type", "customType", "id", "parentId", "timestamp"],
    "custom_message": [
        "type",
        "customType",
        "content",
        "display",
        "id",
        "parentId",
        "timestamp",
    ],
    "context_edit": [*BASE, "targetId", "replacement"],
    "label": [*BASE, "targetId"],
    "session_info": BASE,
}
OPTIONAL_BY_ENTRY_TYPE = {
    "usage": ["note"],
    "compaction": ["details", "usage", "fromHook", "systemMessage"],
    "branch_summary": ["details", "usage", "fromHook"],
    "custom": ["data"],
    "custom_message": ["details"],
    "label": ["label"],
    "session_info": ["name"],
}
REQUIRED_BY_ROLE = {
    "system": ["role", "timestamp"],
    "user": ["role", "content", "timestamp"],
    "assistant": ["role", "content", "api", "provider", "model", "timestamp"],
    "toolResult": ["role", "toolCallId", "toolName", "content", "timestamp"],
    "bashExecution": ["role", "command", "output", "timestamp"],
    "custom": ["role", "customType", "content", "display", "timestamp"],
}


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "jsonl_session_schema_generate", SCHEMA_DIR / "generate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    return _load_generator()


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def _resolve(schema: dict[str, Any], ref: str) -> dict[str, Any]:
    assert ref.startswith("#/$defs/"), ref
    found: dict[str, Any] = schema["$defs"][ref.removeprefix("#/$defs/")]
    return found


def _by_tag(schema: dict[str, Any], union_name: str) -> dict[str, dict[str, Any]]:
    """The definitions of a tagged union, keyed by their tag value."""
    mapping = schema["$defs"][union_name]["discriminator"]["mapping"]
    return {tag: _resolve(schema, ref) for tag, ref in mapping.items()}


class TestCommittedSchema:
    def test_the_committed_schema_equals_freshly_generated_output(
        self, generator: ModuleType
    ) -> None:
        committed = SCHEMA_FILE.read_text(encoding="utf-8")
        assert committed == generator.render(), (
            f"{SCHEMA_FILE.relative_to(ROOT)} is stale: it differs from what "
            "jsonl_session.format.model generates. Run `python spec/schema/generate.py`."
        )

    def test_the_generated_text_has_sorted_keys_indent_2_and_a_trailing_newline(
        self, generator: ModuleType
    ) -> None:
        text = generator.render()
        assert text.endswith("}\n")
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"

    def test_check_mode_exits_0_when_the_file_on_disk_is_current(
        self, generator: ModuleType, tmp_path: Path
    ) -> None:
        target = tmp_path / "session.schema.json"
        assert generator.main([], target=target) == 0
        assert generator.main(["--check"], target=target) == 0

    def test_check_mode_exits_1_and_names_the_script_when_the_file_differs(
        self, generator: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        target = tmp_path / "session.schema.json"
        target.write_text("{}\n", encoding="utf-8")
        assert generator.main(["--check"], target=target) == 1
        assert "python spec/schema/generate.py" in capsys.readouterr().err
        assert target.read_text(encoding="utf-8") == "{}\n"

    def test_check_mode_exits_1_when_the_file_is_missing(
        self, generator: ModuleType, tmp_path: Path
    ) -> None:
        assert generator.main(["--check"], target=tmp_path / "absent.json") == 1


class TestLines:
    def test_a_line_is_a_header_a_known_entry_or_an_entry_of_another_type(
        self, schema: dict[str, Any]
    ) -> None:
        refs = [branch["$ref"] for branch in schema["anyOf"]]
        assert refs == ["#/$defs/SessionHeader", "#/$defs/SessionEntry", "#/$defs/OtherEntry"]

    def test_the_header_requires_its_type_and_id(self, schema: dict[str, Any]) -> None:
        header = schema["$defs"]["SessionHeader"]
        assert header["required"] == ["type", "id"]
        assert header["properties"]["type"] == {"enum": ["session"]}
        assert {"version", "timestamp", "cwd", "parentSession"} <= set(header["properties"])

    def test_entries_of_unknown_types_are_allowed_but_known_type_names_are_not(
        self, schema: dict[str, Any]
    ) -> None:
        other = schema["$defs"]["OtherEntry"]
        excluded = set(other["properties"]["type"]["not"]["enum"])
        assert excluded == {*REQUIRED_BY_ENTRY_TYPE, "session"}
        assert other["required"] == ["type", "id"]


class TestEntryTypes:
    def test_the_schema_has_exactly_the_eleven_entry_types_of_the_format(
        self, schema: dict[str, Any]
    ) -> None:
        assert set(_by_tag(schema, "SessionEntry")) == set(REQUIRED_BY_ENTRY_TYPE)

    @pytest.mark.parametrize("entry_type", sorted(REQUIRED_BY_ENTRY_TYPE))
    def test_each_entry_type_lists_its_required_keys_in_the_order_they_are_written(
        self, schema: dict[str, Any], entry_type: str
    ) -> None:
        definition = _by_tag(schema, "SessionEntry")[entry_type]
        assert definition["required"] == REQUIRED_BY_ENTRY_TYPE[entry_type]
        assert definition["properties"]["type"] == {"enum": [entry_type]}

    @pytest.mark.parametrize("entry_type", sorted(OPTIONAL_BY_ENTRY_TYPE))
    def test_optional_keys_are_described_but_not_required(
        self, schema: dict[str, Any], entry_type: str
    ) -> None:
        definition = _by_tag(schema, "SessionEntry")[entry_type]
        for key in OPTIONAL_BY_ENTRY_TYPE[entry_type]:
            assert key in definition["properties"], key
            assert key not in definition["required"], key

    def test_compaction_requires_first_kept_entry_id(self, schema: dict[str, Any]) -> None:
        compaction = _by_tag(schema, "SessionEntry")["compaction"]
        assert "firstKeptEntryId" in compaction["required"]
        assert "firstKeptEntryIndex" not in compaction["properties"]

    def test_parent_id_is_a_string_or_null_in_every_entry_type(
        self, schema: dict[str, Any]
    ) -> None:
        for entry_type, definition in _by_tag(schema, "SessionEntry").items():
            assert definition["properties"]["parentId"] == {
                "anyOf": [{"type": "string"}, {"type": "null"}]
            }, entry_type

    def test_unknown_keys_are_not_forbidden_anywhere(self, schema: dict[str, Any]) -> None:
        def walk(node: Any) -> None:
            if isinstance(node, dict):
                assert node.get("additionalProperties", True) is not False
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(schema)


class TestMessages:
    def test_the_message_of_a_message_entry_is_a_known_message_or_another_role(
        self, schema: dict[str, Any]
    ) -> None:
        message = schema["$defs"]["MessageEntry"]["properties"]["message"]
        refs = [branch["$ref"] for branch in message["anyOf"]]
        assert refs == ["#/$defs/AgentMessage", "#/$defs/OtherMessage"]
        excluded = set(schema["$defs"]["OtherMessage"]["properties"]["role"]["not"]["enum"])
        assert excluded == set(REQUIRED_BY_ROLE)

    @pytest.mark.parametrize("role", sorted(REQUIRED_BY_ROLE))
    def test_each_message_role_lists_its_required_keys(
        self, schema: dict[str, Any], role: str
    ) -> None:
        definition = _by_tag(schema, "AgentMessage")[role]
        assert definition["required"] == REQUIRED_BY_ROLE[role]

    def test_message_timestamps_are_integers_and_entry_timestamps_are_strings(
        self, schema: dict[str, Any]
    ) -> None:
        for role, definition in _by_tag(schema, "AgentMessage").items():
            assert definition["properties"]["timestamp"] == {"type": "integer"}, role
        for entry_type, definition in _by_tag(schema, "SessionEntry").items():
            assert definition["properties"]["timestamp"] == {"type": "string"}, entry_type
