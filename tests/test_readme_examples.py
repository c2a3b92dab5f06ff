"""The README's agent loops run as written, against the loopback stub: each records its
turns (a tool call and its result, then the answer) in a session file, and a second run
(a restart) finds that file with `latest_session` and continues it with the history.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from stub_api import Reply, StubApi, ToolCall

from jsonl_session import Session, latest_session

README = Path(__file__).resolve().parents[1] / "README.md"


def loops() -> list[str]:
    """The Python blocks of the README's section on recording an agent's turns."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Recording an agent's turns", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stub_api: StubApi) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "setup.cfg").write_text("[metadata]\nname = demo\n")
    (folder / "README.md").write_text("# demo\nA demo.\n")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("JSONL_SESSION_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub_api.url)
    monkeypatch.setenv("OPENAI_BASE_URL", stub_api.url + "/v1")
    return folder


def run(code: str, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    scope: dict[str, Any] = dict(namespace or {})
    exec(compile(code, str(README), "exec"), scope)
    scope["client"].close()
    return scope


def roles(path: Path) -> list[str]:
    return [m["role"] for m in Session.open(path).build_context().messages]


class TestTheReadmeAgentLoops:
    def test_there_is_one_loop_per_sdk(self) -> None:
        assert [("anthropic" in code, "openai" in code) for code in loops()] == [
            (True, False),
            (False, True),
        ]

    def test_the_anthropic_loop_records_each_turn_and_resumes_after_a_restart(
        self, project: Path, stub_api: StubApi
    ) -> None:
        anthropic_loop = loops()[0]
        stub_api.reply_with(
            Reply(text="Reading it.", tool_calls=[ToolCall("read", {"path": "setup.cfg"})]),
            "It names the package demo.",
        )
        run(anthropic_loop)
        found = latest_session(str(project))
        assert found is not None
        assert roles(found.path) == ["system", "user", "assistant", "toolResult", "assistant"]
        second = stub_api.requests_to("/v1/messages")[1].body
        assert "name = demo" in str(second["messages"][-1]["content"])

        stub_api.reply_with("Still demo.")
        run(anthropic_loop)  # a restart: the loop finds the same file
        assert roles(found.path)[-2:] == ["user", "assistant"]
        assert len(roles(found.path)) == 7
        resumed = stub_api.requests_to("/v1/messages")[2].body
        assert len(resumed["messages"]) == 5 and resumed["system"].startswith("You are")

    def test_the_openai_loop_streams_and_records_each_turn(
        self, project: Path, stub_api: StubApi, capsys: pytest.CaptureFixture[str]
    ) -> None:
        anthropic_loop, openai_loop = loops()
        helpers = anthropic_loop.split("client = ", 1)[0]  # TOOLS and run_tool
        stub_api.reply_with(
            Reply(text="Reading.", tool_calls=[ToolCall("read", {"path": "README.md"})]),
            "A demo.",
        )
        run(openai_loop, run(helpers.replace("import anthropic", ""), {"client": _Nothing()}))
        assert "Reading.A demo." in capsys.readouterr().out
        found = latest_session(str(project))
        assert found is not None
        assert roles(found.path) == ["user", "assistant", "toolResult", "assistant"]
        second = stub_api.requests_to("/v1/responses")[1].body
        outputs = [i for i in second["input"] if i.get("type") == "function_call_output"]
        assert outputs and "A demo." in outputs[0]["output"]


class _Nothing:
    def close(self) -> None:
        pass
