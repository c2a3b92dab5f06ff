"""Redaction when a session is written: ``Session.create(..., redact=True)``,
``Session.open(..., redact=True)`` or a `Redactor` passed in. Every entry appended has
its secrets replaced before its line is built (the bytes on disk are checked), the
structure of each entry stays as built, reads never redact, and forks and copies
write redacted copies. The CLI commands that write (fork, convert, compact, branch
--summarize, label, name, edit, resume) take --redact.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import assistant_message, tool_call_block
from builders import export_tool_result as tool_result
from helpers_cli import invoke
from locations import ROOT
from stub_api import StubApi

from jsonl_session import Redactor, Session, convert

sys.path.insert(0, str(ROOT / "benchmarks"))
from redaction_corpus import secret_cases
from redaction_forms import leaked

KEY = "sk-ant-api03-" + "Wq7Zr2Lp9Xv4Tn6B" * 6 + "AA"
TOKEN = "ghp_" + "Fh3Jk8Lq2Wr5Ty7Ui9Op" + "Zx1Cv4Bn6Mm0As"
SECRETS = (KEY, TOKEN, "hunter2x9")


def assistant_calling_bash(command: str, call: str = "c1") -> dict[str, object]:
    block = tool_call_block(call, "bash", {"command": command, "password": "hunter2x9"})
    return {**assistant_message(""), "content": [block], "stopReason": "toolUse"}


def fill(session: Session) -> None:
    """One of each kind of text an entry holds, each with a secret in it."""
    session.append_system_message(f"Deploy with {KEY}.", tools_added=[{"name": "bash"}])
    session.append_model_change("anthropic", "claude-test")
    session.append_message({"role": "user", "content": f"use {TOKEN} to push", "timestamp": 1})
    thinking = {"type": "thinking", "thinking": f"the key {KEY}", "thinkingSignature": "c2ln"}
    said = {"type": "thinking", "thinking": "nothing secret here", "thinkingSignature": "b2s="}
    session.append_message({**assistant_message(""), "content": [said, thinking]})
    session.append_message(assistant_calling_bash(f"export ANTHROPIC_API_KEY={KEY}"))
    result = tool_result("bash", f"GITHUB_TOKEN={TOKEN}", "c1")
    session.append_message({**result, "details": {"stdout": f"token: {TOKEN}"}})
    first = session.leaf_id
    assert first is not None
    session.append_custom_message("note", f"remember {TOKEN}", details={"key": KEY})
    session.append_custom("state", {"password": "hunter2x9"})
    session.append_label(first, f"the one with {TOKEN}")
    session.append_session_info(f"deploy {KEY}")
    session.append_compaction(f"The user gave {TOKEN}; the key is {KEY}.", first, 1000)
    session.branch_with_summary(first, f"Tried {KEY} on the branch left.")


def assert_clean(path: Path) -> bytes:
    raw = path.read_bytes()
    for secret in SECRETS:
        assert secret.encode() not in raw, secret
    return raw


class TestWritingARedactedSession:
    def test_no_secret_of_any_entry_reaches_the_file(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path, redact=True, fsync="never")
        fill(session)
        raw = assert_clean(session.path)
        assert b"[REDACTED:anthropic-key]" in raw and b"[REDACTED:github-token]" in raw
        assert session.redactor is not None and session.redactor.total >= 12
        reopened = Session.open(session.path)
        assert [e.id for e in reopened.entries] == [e.id for e in session.entries]
        assert reopened.problems == []
        assert reopened.name == "deploy [REDACTED:anthropic-key]"
        user = next(e for e in reopened.entries if e.role == "user")
        assert user.data()["message"]["content"] == "use [REDACTED:github-token] to push"

    def test_every_corpus_secret_appended_is_redacted_on_disk(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path, redact=True, fsync="never")
        cases = secret_cases()
        for case in cases:
            session.append_message({"role": "user", "content": case.text, "timestamp": 1})
        raw = session.path.read_text(encoding="utf-8")
        decoded = "\n".join(json.loads(line)["message"]["content"] for line in raw.splitlines()[1:])
        assert [c.kind for c in cases if c.secret and leaked(c.secret, decoded)] == []
        assert [c.kind for c in cases if c.secret and leaked(c.secret, raw)] == []

    def test_the_structure_of_each_entry_stays_as_built(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path, redact=True, fsync="never")
        session.append_message({"role": "user", "content": f"use {KEY}", "timestamp": 1})
        session.append_message(assistant_calling_bash("ls", call="toolu_01" + "Ab9" * 8))
        lines = [json.loads(line) for line in session.path.read_text().splitlines()]
        call = lines[2]["message"]["content"][0]
        assert call["id"] == "toolu_01" + "Ab9" * 8 and call["arguments"]["command"] == "ls"
        assert lines[2]["parentId"] == lines[1]["id"] and lines[1]["parentId"] is None
        assert list(lines[1]) == ["type", "id", "parentId", "timestamp", "message"]

    def test_a_thinking_block_whose_text_changed_loses_its_signature(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path, redact=True, fsync="never")
        fill(session)
        said, thinking = next(
            e.data()["message"]["content"]
            for e in Session.open(session.path).entries
            if e.role == "assistant" and e.data()["message"]["content"][0]["type"] == "thinking"
        )
        assert said["thinking"] == "nothing secret here" and said["thinkingSignature"] == "b2s="
        assert thinking == {"type": "thinking", "thinking": "the key [REDACTED:anthropic-key]"}

    def test_what_a_session_without_the_option_writes_is_unchanged(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path, fsync="never")
        fill(session)
        assert session.redactor is None
        assert KEY.encode() in session.path.read_bytes()


class TestOpening:
    def test_reads_never_redact_and_only_new_entries_are(self, tmp_path: Path) -> None:
        plain = Session.create(cwd=tmp_path, session_dir=tmp_path, fsync="never")
        plain.append_message({"role": "user", "content": f"old {KEY}", "timestamp": 1})
        before = plain.path.read_bytes()
        session = Session.open(plain.path, redact=True)
        assert session.path.read_bytes() == before
        assert KEY in session.build_context().messages[0]["content"]
        session.append_message({"role": "user", "content": f"new {TOKEN}", "timestamp": 2})
        raw = session.path.read_bytes()
        assert raw.startswith(before) and TOKEN.encode() not in raw[len(before) :]

    def test_a_redactor_passed_in_counts_what_every_session_given_it_replaced(
        self, tmp_path: Path
    ) -> None:
        redactor = Redactor()
        for name in ("a", "b"):
            session = Session.create(cwd=tmp_path, path=tmp_path / f"{name}.jsonl", redact=redactor)
            session.append_message({"role": "user", "content": f"{KEY} {TOKEN}", "timestamp": 1})
            assert session.redactor is redactor
        assert redactor.summary() == {"anthropic-key": 2, "github-token": 2}

    def test_a_disabled_redactor_redacts_nothing(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path, redact=Redactor(False))
        session.append_message({"role": "user", "content": KEY, "timestamp": 1})
        assert session.redactor is None and KEY.encode() in session.path.read_bytes()


class TestForks:
    @pytest.fixture
    def plain(self, tmp_path: Path) -> Session:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path / "src", fsync="never")
        fill(session)
        return session

    def test_a_redacted_fork_holds_no_secret_and_the_source_is_untouched(
        self, plain: Session, tmp_path: Path
    ) -> None:
        before = plain.path.read_bytes()
        forked = plain.fork(path=tmp_path / "fork.jsonl", redact=True)
        assert_clean(forked.path)
        assert plain.path.read_bytes() == before
        assert len(forked.entries) == len(plain.branch_path()) + len(forked.labels)
        forked.append_message({"role": "user", "content": f"again {TOKEN}", "timestamp": 9})
        assert_clean(forked.path)

    def test_a_fork_of_a_redacting_session_redacts_unless_told_not_to(
        self, plain: Session, tmp_path: Path
    ) -> None:
        redacting = Session.open(plain.path, redact=True)
        assert_clean(redacting.fork(path=tmp_path / "one.jsonl").path)
        copy = redacting.fork(path=tmp_path / "two.jsonl", redact=False)
        assert KEY.encode() in copy.path.read_bytes() and copy.redactor is None

    def test_a_whole_copy_for_another_folder_can_be_redacted(
        self, plain: Session, tmp_path: Path
    ) -> None:
        copy = Session.fork_from(plain.path, tmp_path / "elsewhere", tmp_path / "to", redact=True)
        assert_clean(copy.path)
        assert len(copy.entries) == len(plain.entries)

    @pytest.mark.parametrize("agent", ["pi", "claude", "codex"])
    def test_a_conversion_can_be_redacted(self, plain: Session, tmp_path: Path, agent: str) -> None:
        done = convert(plain, agent, tmp_path / f"out-{agent}.jsonl", redact=True)
        assert_clean(done.path)
        assert (
            convert(plain, agent, tmp_path / f"plain-{agent}.jsonl")
            .path.read_bytes()
            .count(KEY.encode())
        )


class TestCommandLine:
    @pytest.fixture
    def path(self, tmp_path: Path) -> Path:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path / "src", fsync="never")
        fill(session)
        return session.path

    def test_fork_redact_writes_a_redacted_copy_and_says_how_much(
        self, path: Path, tmp_path: Path
    ) -> None:
        target = tmp_path / "fork.jsonl"
        code, out, err = invoke("fork", path, "-o", target, "--redact")
        assert code == 0 and out.strip() == str(target)
        assert err.startswith("redacted ") and "anthropic-key" in err
        assert_clean(target)
        assert KEY.encode() in path.read_bytes()

    def test_fork_to_another_agent_with_redact(self, path: Path, tmp_path: Path) -> None:
        target = tmp_path / "claude.jsonl"
        code, _, err = invoke("fork", path, "--to", "claude", "-o", target, "--redact")
        assert code == 0, err
        assert_clean(target)

    @pytest.mark.parametrize("agent", ["pi", "codex"])
    def test_convert_redact(self, path: Path, tmp_path: Path, agent: str) -> None:
        target = tmp_path / f"{agent}.jsonl"
        code, _, err = invoke("convert", path, "--to", agent, "-o", target, "--redact")
        assert code == 0, err
        assert_clean(target) and "redacted " in err

    def test_compact_redact_writes_the_summary_redacted(self, tmp_path: Path) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path, fsync="never")
        for turn in range(6):
            session.append_message(
                {
                    "role": "user",
                    "content": f"Deploy with {KEY} now, step {turn}. " * 40,
                    "timestamp": turn,
                }
            )
            session.append_message(assistant_message(f"Done step {turn} with {TOKEN}. " * 40))
        before = session.path.read_bytes()
        code, _, err = invoke(
            "compact", session.path, "--summarizer", "offline", "--keep-recent-tokens", "100",
            "--redact",
        )  # fmt: skip
        assert code == 0, err
        raw = session.path.read_bytes()
        assert raw.startswith(before)
        added = raw[len(before) :]
        assert b'"type":"compaction"' in added
        assert KEY.encode() not in added and TOKEN.encode() not in added

    def test_label_name_edit_and_branch_take_redact(self, path: Path) -> None:
        entry = Session.open(path).entries[2].id
        before = path.read_bytes()
        assert invoke("label", path, entry, f"uses {TOKEN}", "--redact")[0] == 0
        assert invoke("name", path, f"with {KEY}", "--redact")[0] == 0
        code, _, err = invoke("edit", path, entry, "--replace", f"now {TOKEN}", "--redact")
        assert code == 0, err
        code, _, err = invoke(
            "branch", path, entry, "--summarize", "--summarizer", "offline", "--redact"
        )
        assert code == 0, err
        added = path.read_bytes()[len(before) :]
        assert KEY.encode() not in added and TOKEN.encode() not in added
        assert added.count(b"[REDACTED:") >= 3

    def test_resume_redact_writes_the_prompt_and_the_reply_redacted(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        session = Session.create(cwd=tmp_path, session_dir=tmp_path, fsync="never")
        session.append_model_change("anthropic", "claude-test")
        session.append_message({"role": "user", "content": "Hello", "timestamp": 1})
        session.append_message(assistant_message("Hi."))
        before = session.path.read_bytes()
        stub_api.reply_with(f"Set GITHUB_TOKEN={TOKEN} and rerun.")
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
        env |= {"ANTHROPIC_BASE_URL": stub_api.url, "ANTHROPIC_API_KEY": "test-key"}
        command = [sys.executable, "-m", "jsonl_session", "resume", str(session.path)]
        done = subprocess.run(
            [*command, f"my key is {KEY}", "--redact"],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert TOKEN in done.stdout  # shown as it streamed; written redacted
        added = session.path.read_bytes()[len(before) :]
        assert b"my key is [REDACTED:anthropic-key]" in added
        assert b"GITHUB_TOKEN=[REDACTED:github-token]" in added
        assert KEY.encode() not in added and TOKEN.encode() not in added
        assert "redacted 2 secrets" in done.stderr

    def test_every_command_that_writes_text_has_redact(self) -> None:
        for command in ("resume", "convert", "fork", "compact", "branch", "label", "name", "edit",
                        "export"):  # fmt: skip
            code, out, _ = invoke(command, "--help")
            assert code == 0 and "--redact" in out, command
