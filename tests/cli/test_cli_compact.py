"""`compact` and `branch --summarize` from the command line, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers_cli import invoke
from helpers_compaction import noisy_session, work_session

from jsonl_session import DEFAULT_COMPACTION_SETTINGS, Session

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


@pytest.fixture(autouse=True)
def no_api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


class TestCompactHelp:
    def test_help_gives_the_library_defaults_for_the_token_options(self) -> None:
        code, out, _ = invoke("compact", "--help")
        flat = " ".join(out.replace("│", " ").split())
        assert code == 0
        assert f"default: pi's, {DEFAULT_COMPACTION_SETTINGS.keep_recent_tokens}." in flat
        assert f"default: pi's, {DEFAULT_COMPACTION_SETTINGS.reserve_tokens}." in flat


class TestCompactDryRun:
    def test_prints_the_plan_as_json_and_writes_nothing(self, tmp_path: Path) -> None:
        path = work_session(tmp_path).path
        before = (path.read_bytes(), path.stat().st_mtime_ns)
        code, out, _ = invoke(
            "compact", path, "--keep-recent-tokens", "3000", "--dry-run", "--json"
        )
        assert code == 0
        plan = json.loads(out)
        for key in ("firstKeptEntryId", "isSplitTurn", "tokensBefore", "readFiles"):
            assert key in plan
        assert plan["modifiedFiles"] == ["src/export.py"]
        ids = [e.id for e in Session.open(path).branch_path()]
        assert plan["summarize"] == ids[: len(plan["summarize"])]
        assert plan["keep"] == ids[ids.index(plan["firstKeptEntryId"]) :]
        assert (path.read_bytes(), path.stat().st_mtime_ns) == before

    def test_prints_a_readable_plan(self, tmp_path: Path) -> None:
        path = work_session(tmp_path).path
        code, out, _ = invoke("compact", path, "--keep-recent-tokens", "3000", "--dry-run")
        assert code == 0
        assert "summarize" in out and "files modified" in out and "src/export.py" in out


class TestCompact:
    def test_offline_appends_a_compaction_and_shows_before_and_after(self, tmp_path: Path) -> None:
        path = work_session(tmp_path).path
        code, out, _ = invoke("compact", path, "--keep-recent-tokens", "3000")
        assert code == 0, out
        last = json.loads(path.read_bytes().splitlines()[-1])
        assert last["type"] == "compaction"
        assert f"appended compaction {last['id']} (offline)" in out
        assert "compactionSummary" in out and "total" in out

    def test_json_reports_the_entry_and_the_figures(self, tmp_path: Path) -> None:
        path = work_session(tmp_path).path
        code, out, _ = invoke(
            "compact", path, "--keep-recent-tokens", "3000", "--json", "--instructions", "exporter"
        )
        assert code == 0
        report = json.loads(out)
        assert report["summarizer"] == "offline"
        assert report["tokensAfter"] < report["estimatedBefore"]
        assert "## Requested Focus" in report["summary"]
        assert report["modelTokens"]["after"]["compactionSummary"] > 0

    def test_nothing_to_compact_is_one_line_and_exit_1(self, tmp_path: Path) -> None:
        path = work_session(tmp_path, turns=1).path
        code, _, err = invoke("compact", path)
        assert code == 1
        assert err.count("\n") == 1 and "nothing to compact" in err

    def test_an_llm_summarizer_without_a_key_names_the_variable(self, tmp_path: Path) -> None:
        path = work_session(tmp_path).path
        before = path.read_bytes()
        code, _, err = invoke(
            "compact", path, "--keep-recent-tokens", "3000", "--summarizer", "openai"
        )
        assert code == 1
        assert "OPENAI_API_KEY" in err and "--summarizer offline" in err
        assert path.read_bytes() == before

    def test_prune_appends_a_prune_entry(self, tmp_path: Path) -> None:
        path = noisy_session(tmp_path, turns=40).path
        code, out, _ = invoke("compact", path, "--prune", "--json")
        assert code == 0
        report = json.loads(out)
        assert len(report["entryIds"]) > 0 and report["tokensAfter"] < report["tokensBefore"]
        last = json.loads(path.read_bytes().splitlines()[-1])
        assert last["customType"] == "jsonl-session/prune"

    def test_prune_dry_run_writes_nothing(self, tmp_path: Path) -> None:
        path = noisy_session(tmp_path, turns=4).path
        before = path.read_bytes()
        code, out, _ = invoke("compact", path, "--prune", "--dry-run")
        assert code == 0 and "would prune 0 tool outputs" in out
        assert path.read_bytes() == before

    def test_works_offline_as_a_real_process_without_any_key(self, tmp_path: Path) -> None:
        path = work_session(tmp_path).path
        env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "jsonl_session",
                "compact",
                str(path),
                "--keep-recent-tokens",
                "3000",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "(offline)" in done.stdout


class TestBranchSummarize:
    def test_appends_a_branch_summary_at_the_entry(self, tmp_path: Path) -> None:
        session = work_session(tmp_path, turns=2)
        target = session.branch_path()[1].id
        code, out, _ = invoke("branch", session.path, target[:6], "--summarize", "--json")
        assert code == 0, out
        report = json.loads(out)
        assert report["targetId"] == target and report["summarizer"] == "offline"
        last = json.loads(session.path.read_bytes().splitlines()[-1])
        assert last["type"] == "branch_summary" and last["parentId"] == target
        assert Session.open(session.path).leaf_id == last["id"]


class TestContextAfterPruning:
    def test_no_prune_shows_pis_view_with_the_whole_outputs(self, tmp_path: Path) -> None:
        path = noisy_session(tmp_path, turns=40).path
        assert invoke("compact", path, "--prune")[0] == 0
        _, pruned, _ = invoke("context", path, "--json")
        _, whole, _ = invoke("context", path, "--json", "--no-prune")
        first = next(m for m in json.loads(pruned)["messages"] if m["role"] == "toolResult")
        assert "was pruned from the context" in first["content"][0]["text"]
        first = next(m for m in json.loads(whole)["messages"] if m["role"] == "toolResult")
        assert first["content"][0]["text"] == "0" * 4000


class TestOptionsThatDoNotApply:
    def test_prune_with_summary_options_is_refused(self, tmp_path: Path) -> None:
        path = noisy_session(tmp_path, turns=4).path
        code, _, err = invoke("compact", path, "--prune", "--instructions", "x")
        assert code == 2 and "--prune writes no summary" in err

    def test_an_unknown_summarizer_is_refused_even_on_a_dry_run(self, tmp_path: Path) -> None:
        path = work_session(tmp_path).path
        args = ("--keep-recent-tokens", "3000", "--dry-run", "--summarizer", "gemini")
        code, _, err = invoke("compact", path, *args)
        assert code == 2 and "unknown summarizer 'gemini'" in err

    def test_branch_summary_options_need_summarize(self, tmp_path: Path) -> None:
        session = work_session(tmp_path, turns=2)
        target = session.branch_path()[1].id
        code, _, err = invoke("branch", session.path, target, "--instructions", "x")
        assert code == 2 and "go with --summarize" in err
