"""The `compact` screen gives one "tokens before" figure, named as an estimate, the
same in the plan, the table and the last line; --json keeps both figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from builders import compaction_assistant as assistant
from helpers_cli import invoke
from helpers_compaction import work_session


@pytest.fixture(autouse=True)
def no_api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def session_with_usage(tmp_path: Path) -> Path:
    """A session whose last reply reports 90,000 tokens of usage: pi's recorded
    figure is far from the estimate of the messages."""
    session = work_session(tmp_path)
    reply = assistant("All modules checked.")
    reply["usage"] = {**reply["usage"], "input": 90_000, "totalTokens": 90_000}
    session.append_message(reply)
    return session.path


class TestTheTokensBeforeFigure:
    def test_the_screen_shows_one_estimated_figure(self, tmp_path: Path) -> None:
        path = session_with_usage(tmp_path)
        code, out, _ = invoke("compact", path, "--keep-recent-tokens", "3000")
        assert code == 0
        plan_figure = re.search(r"tokens before\s+([\d,]+) \(estimated\)", out)
        total = re.search(r"total\s+([\d,]+)\s+[\d,]+", out)
        last = re.search(r"\): ([\d,]+) → [\d,]+ tokens sent to the model \(estimated\)", out)
        assert plan_figure and total and last
        assert plan_figure.group(1) == total.group(1) == last.group(1)
        assert "90,0" not in out

    def test_the_dry_run_shows_the_same_figure(self, tmp_path: Path) -> None:
        path = session_with_usage(tmp_path)
        _, dry, _ = invoke("compact", path, "--keep-recent-tokens", "3000", "--dry-run")
        _, done, _ = invoke("compact", path, "--keep-recent-tokens", "3000")
        figure = re.compile(r"tokens before\s+([\d,]+) \(estimated\)")
        found_dry, found_done = figure.search(dry), figure.search(done)
        assert found_dry and found_done and found_dry.group(1) == found_done.group(1)

    def test_json_keeps_the_recorded_and_the_estimated_figure(self, tmp_path: Path) -> None:
        path = session_with_usage(tmp_path)
        code, out, _ = invoke("compact", path, "--keep-recent-tokens", "3000", "--json")
        report = json.loads(out)
        assert code == 0 and report["tokensBefore"] >= 90_000 > report["estimatedBefore"]
        last = json.loads(path.read_bytes().splitlines()[-1])
        assert last["tokensBefore"] == report["tokensBefore"]  # pi's figure, in the entry
