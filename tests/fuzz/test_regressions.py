"""Each kind of input the fuzzing found a foreign exception on, kept small: every read
path must now succeed on it or raise our own error naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzkit import run_read_paths

HEADER = (
    b'{"type":"session","version":3,"id":"s1","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}\n'
)
USER = b'{"type":"message","id":"u1","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n'  # noqa: E501
DEEP = b'{"a":' * 3_000 + b"1" + b"}" * 3_000


def assistant(fields: bytes) -> bytes:
    return (
        b'{"type":"message","id":"a1","parentId":"u1","timestamp":"2024-01-01T00:00:02.000Z",'
        b'"message":{"role":"assistant","content":[{"type":"text","text":"ok"}],' + fields + b"}}\n"
    )


CASES = {
    "usage totals past a double": HEADER
    + USER
    + assistant(
        b'"usage":{"input":1e400,"output":100000000000000000000000000000,"cost":{"total":1e400}},"timestamp":2'
    ),
    "assistant content that is a number": HEADER
    + USER
    + assistant(b'"timestamp":2').replace(b'[{"type":"text","text":"ok"}]', b"42"),
    "a provider and role nested deep": HEADER
    + USER
    + assistant(b'"provider":' + DEEP + b',"model":' + DEEP + b',"timestamp":2'),
    "a message role that is an object": HEADER + USER.replace(b'"role":"user"', b'"role":' + DEEP),
    "a header with no id and a deep version": (
        b'{"type":"session","version":' + DEEP + b',"timestamp":"x","cwd":"/w"}\n' + USER
    ),
    "a thinking level and label that are objects": HEADER
    + USER
    + b'{"type":"thinking_level_change","id":"t1","parentId":"u1",'
    b'"timestamp":"2024-01-01T00:00:03.000Z","thinkingLevel":'
    + DEEP
    + b"}\n"
    + b'{"type":"label","id":"l1","parentId":"t1",'
    b'"timestamp":"2024-01-01T00:00:04.000Z","targetId":"u1","label":' + DEEP + b"}\n",
    "an entry time past a double, written as an integer": HEADER
    + USER
    + b'{"type":"branch_summary","id":"b1","parentId":"u1","timestamp":1'
    + b"0" * 400
    + b',"fromId":"u1","summary":"s"}\n',
    "a message whose role is a number, shown by the MCP server": HEADER
    + USER.replace(b'"role":"user"', b'"role":5').replace(b'"id":"u1"', b'"id":"\\ud83d"'),
    "a lone surrogate where the value check reads a string": HEADER
    + USER.replace(b'"content":"hi"', b'"content":[{"type":"text","text":"\\ud83d"}]'),
    "an image whose data holds a lone surrogate": HEADER
    + USER.replace(
        b'"content":"hi"',
        b'"content":[{"type":"image","data":"\\ud83dAAAA","mimeType":"image/png"}]',
    ),
    "a version 1 file whose session id holds a lone surrogate": (
        b'{"type":"session","id":"\\ud83d","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/w"}\n'
        b'{"type":"message","timestamp":"2024-01-01T00:00:01.000Z",'
        b'"message":{"role":"user","content":"hi","timestamp":1}}\n'
    ),
    "thinking nested deep": HEADER
    + USER
    + assistant(b'"timestamp":2').replace(
        b'[{"type":"text","text":"ok"}]', b'[{"type":"thinking","thinking":' + DEEP + b"}]"
    ),
    "a shell command's output nested deep": HEADER
    + USER
    + b'{"type":"message","id":"b1","parentId":"u1","timestamp":"2024-01-01T00:00:02.000Z",'
    b'"message":{"role":"bashExecution","command":"ls","output":' + DEEP + b',"exitCode":0,'
    b'"cancelled":false,"truncated":false,"timestamp":2}}\n',
    "a system message declaring tools nested deep": HEADER
    + b'{"type":"message","id":"s0","parentId":null,"timestamp":"2024-01-01T00:00:00.500Z",'
    b'"message":{"role":"system","content":"be brief","toolsAdded":[{"a":' + DEEP + b"},"
    b'{"name":'
    + DEEP
    + b'}],"timestamp":1}}\n'
    + USER.replace(b'"parentId":null', b'"parentId":"s0"'),
    "a Claude Code line whose type is a list": (
        b'{"type":["user"],"uuid":"x","sessionId":"s","message":{"role":"user","content":"hi"}}\n'
        b'{"type":"user","uuid":"y","sessionId":"s","parentUuid":null,"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}\n'
    ),
    "a Codex rollout with odd types": (
        b'{"timestamp":"2025-01-01T00:00:00Z","type":{"a":1},"payload":{}}\n'
        b'{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"c1","timestamp":"2025-01-01T00:00:00Z","cwd":"/w"}}\n'
        b'{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"reasoning","summary":1.5,"content":7}}\n'
        b'{"timestamp":"2025-01-01T00:00:02Z","type":"event_msg","payload":{"type":["x"]}}\n'
        b'{"timestamp":"2025-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":1e400}}}}\n'
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_case_the_fuzzing_found_is_read_safely(name: str, tmp_path: Path) -> None:
    outcome = run_read_paths(CASES[name], tmp_path / "sessions", tmp_path / "cache")
    assert outcome.unexpected == []
    assert outcome.unnamed == []
    assert not outcome.wrote
    assert not outcome.cache_disagreed
