"""Values nested deeper than Python recurses survive every read path.

JSON.parse (pi) reads a line at any depth, so an entry whose tool-result details or
tool-call arguments nest 5,000 or 20,000 levels (the codec alone: 200,000) is an
entry like any other: it is in the tree and the context, and every command and
adapter handles it without a RecursionError. Writes (migration, forks) keep the
value byte for byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import assistant_calling, text_block, tool_call, tool_result, user_message
from helpers_cli import invoke
from hypothesis import given, settings
from hypothesis import strategies as st

from jsonl_session import (
    Session,
    export_session,
    list_sessions,
    search_sessions,
    textconv,
    to_anthropic,
    to_openai_chat,
    to_openai_responses,
)
from jsonl_session.format import deepjson, jsonio

DEPTHS = [5_000, 20_000]
TEXT = st.text(st.characters(blacklist_categories=("Cs",)))  # jsonio escapes lone halves


def nested(depth: int) -> str:
    """JSON text of ``depth`` objects, one inside the other, ending in a string."""
    return '{"a":' * depth + '"deep \\ud83d end"' + "}" * depth


def deep_session(folder: Path, depth: int) -> Path:
    """A session whose tool call arguments and tool result details nest ``depth`` deep
    (written as raw lines, as pi would write them), followed by ordinary entries."""
    session = Session.create(cwd="/work", session_dir=folder)
    session.append_message(user_message("look deep"))
    path = session.path
    deep = nested(depth)
    call = orjson.dumps(assistant_calling(tool_call("call_1", "probe", path="x")))
    call = call.replace(b'{"path":"x"}', b'{"path":"x","tree":' + deep.encode() + b"}")
    result = orjson.dumps(tool_result("call_1", "probe", [text_block("found it")], timestamp=2))
    result = result[:-1] + b',"details":' + deep.encode() + b"}"
    parent = session.leaf_id
    lines = [
        b'{"type":"message","id":"deep0001","parentId":"%s",' % str(parent).encode()
        + b'"timestamp":"2024-01-01T00:00:01.000Z","message":'
        + call
        + b"}\n",
        b'{"type":"message","id":"deep0002","parentId":"deep0001",'
        b'"timestamp":"2024-01-01T00:00:02.000Z","message":' + result + b"}\n",
    ]
    with open(path, "ab") as handle:
        handle.write(b"".join(lines))
    again = Session.open(path, cache=False)
    again.append_message(user_message("after the deep part"))
    return path


@pytest.fixture(params=DEPTHS, ids=[f"depth {d}" for d in DEPTHS])
def deep_file(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return deep_session(tmp_path / "sessions", request.param)


def test_the_recursion_limit_is_python_s_default() -> None:
    assert sys.getrecursionlimit() <= 10_000  # else these tests would prove nothing


class TestReading:
    def test_the_deep_entries_are_in_the_tree_and_the_context(self, deep_file: Path) -> None:
        session = Session.open(deep_file, cache=False)
        assert session.problems == []
        ids = [entry.id for entry in session.entries]
        assert "deep0001" in ids and "deep0002" in ids
        for entry_id in ids:
            session.build_context(entry_id)
        roles = [m["role"] for m in session.build_context().messages]
        assert roles == ["user", "assistant", "toolResult", "user"]

    def test_through_the_cache_too(self, deep_file: Path, tmp_path: Path) -> None:
        cached = Session.open(deep_file, cache=tmp_path / "cache")
        assert [e.id for e in cached.entries] == [
            e.id for e in Session.open(deep_file, cache=False).entries
        ]

    def test_every_provider_adapter_builds_its_request(self, deep_file: Path) -> None:
        context = Session.open(deep_file, cache=False).build_context()
        for adapter in (to_anthropic, to_openai_chat, to_openai_responses):
            request: Any = adapter(context)
            assert request, adapter.__name__

    def test_stats_exports_redaction_search_listing_and_textconv(self, deep_file: Path) -> None:
        session = Session.open(deep_file, cache=False)
        assert session.token_breakdown().stored_tokens > 0
        for fmt in ("markdown", "html", "json"):
            for redact in (False, True):
                assert export_session(session, fmt, redact=redact).text
        assert search_sessions("found", deep_file.parent)
        assert [info.path for info in list_sessions(deep_file.parent)] == [deep_file]
        assert "found it" in textconv(deep_file)

    def test_every_reading_command(self, deep_file: Path) -> None:
        for arguments in (
            ["show", deep_file],
            ["tree", deep_file],
            ["context", deep_file, "--json"],
            ["context", deep_file, "--format", "anthropic", "--json"],
            ["stats", deep_file],
            ["doctor", deep_file],
            ["textconv", deep_file],
            ["export", deep_file, "--format", "json"],
            ["search", "found", deep_file.parent, "--tools"],
        ):
            code, _, err = invoke(*arguments)
            assert code == 0, (arguments, err)


class TestWriting:
    def test_a_fork_keeps_the_deep_lines_byte_for_byte(self, deep_file: Path) -> None:
        session = Session.open(deep_file, cache=False)
        fork = session.fork(session.leaf_id)
        deep_lines = [line for line in deep_file.read_bytes().splitlines() if b"deep0002" in line]
        assert deep_lines[0].split(b'"details":')[1] in fork.path.read_bytes()

    def test_a_version_1_file_with_deep_details_is_migrated_keeping_them(
        self, tmp_path: Path
    ) -> None:
        deep = nested(5_000).encode()
        path = tmp_path / "old.jsonl"
        path.write_bytes(
            b'{"type":"session","id":"s-old","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}\n'
            b'{"type":"message","timestamp":"2024-01-01T00:00:01.000Z",'
            b'"message":{"role":"user","content":"hi","timestamp":1}}\n'
            b'{"type":"custom","customType":"state","timestamp":"2024-01-01T00:00:02.000Z",'
            b'"data":' + deep + b"}\n"
        )
        session = Session.open(path, cache=False)
        assert [e.type for e in session.entries] == ["message", "custom"]
        session.append_message(user_message("now v3"))
        assert deep in path.read_bytes()


class TestTheCodec:
    @pytest.mark.parametrize("depth", [2_000, 200_000])
    def test_deep_text_reads_and_writes_back_the_same(self, depth: int) -> None:
        text = "[" * depth + '1,{"k":[true,null,-2.5e-7]}' + "]" * depth
        value = jsonio.decode_any(text.encode())
        assert jsonio.dumps(value) == text.encode()

    @settings(max_examples=150, deadline=None)
    @given(
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers(-(2**63), 2**64 - 1)
            | st.floats(allow_nan=False, allow_infinity=False)
            | TEXT,
            lambda inner: st.lists(inner) | st.dictionaries(TEXT, inner),
            max_leaves=20,
        )
    )
    def test_the_stack_codec_agrees_with_the_fast_ones(self, value: Any) -> None:
        text = json.dumps(value, ensure_ascii=False)
        assert deepjson.loads(text) == json.loads(text)
        assert deepjson.dumps(jsonio._js_numbers(value)).encode() == jsonio.dumps(value)

    def test_what_json_parse_refuses_is_refused(self) -> None:
        for text in ("[1,]", "[1 2]", '{"a" 1}', "[NaN]", "[1]x", '["\x01"]', "[-]", "{,}"):
            with pytest.raises(deepjson.DeepJsonError):
                deepjson.loads(text)
