"""Exports (Markdown, HTML, JSON) and redaction: the library first, then the command
through Typer's runner and once as a real subprocess. Sessions are real files:
fixtures copied into tmp_path, or sessions written with the library. What the HTML
page shows is tested in test_html.py, the page in a browser in test_html_browser.py."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

import pytest
from builders import assistant_message, user_message
from builders import export_tool_call as tool_call
from builders import export_tool_result as tool_result
from helpers_cli import invoke
from locations import copy_fixture

from jsonl_session import Session, SessionTreeError, SessionWriteError
from jsonl_session.export import (
    export_json,
    export_markdown,
    export_session,
    write_export,
)
from jsonl_session.views.redact import Redactor, redact_text

WELL_FORMED = [
    "linear", "tool-calls", "images", "branching", "branch-summary", "compaction-one",
    "compaction-two", "labels", "named", "custom-entries", "bash-execution",
    "model-thinking", "fork-child", "v1", "v2-hook-message",
]  # fmt: skip
READABLE_DAMAGED = [
    "damaged-bad-middle-line", "damaged-dangling-parent", "damaged-duplicate-id",
    "damaged-header-no-version", "damaged-newer-version", "damaged-null-line",
    "damaged-torn-tail",
]  # fmt: skip


def open_fixture(tmp_path: Path, name: str) -> Session:
    return Session.open(copy_fixture(tmp_path, name))


def new_session(tmp_path: Path) -> Session:
    return Session.create(cwd="/work/project", session_dir=tmp_path, fsync="never")


def reopen(session: Session) -> Session:
    """The session as a reader sees it on disk (written even without an assistant reply)."""
    session.flush()
    return Session.open(session.path)


class TagBalance(HTMLParser):
    """Every opened element is closed, in order; external resources are collected."""

    VOID: ClassVar[set[str]] = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.references: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "action", "poster") and value is not None:
                self.references.append(value)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def parse_html(text: str) -> TagBalance:
    parser = TagBalance()
    parser.feed(text)
    parser.close()
    return parser


class TestMarkdown:
    def test_the_title_is_the_first_user_message_and_the_facts_follow(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "tool-calls")).text
        assert text.startswith("# The test `todos.test.ts > completes a todo` fails. Fix it.\n")
        assert "- **session:** 01973605-fabf-7fa7-a60a-ab641bbf3f13" in text
        assert "- **cwd:** /home/dev/projects/todo-api" in text
        assert "- **created:** 2025-06-03T13:40:51.031Z" in text
        assert "- **model:** anthropic/claude-sonnet-4-5" in text

    def test_the_title_is_the_session_name_when_there_is_one(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "named")).text
        assert text.startswith("# Flaky date test: UTC vs local time\n")

    def test_tool_calls_show_arguments_and_results_in_fences(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "tool-calls")).text
        assert "**Tool call** `read` · `toolu_01GGrQZ9tvRTPmFBHOr2Bgxd`" in text
        assert '```json\n{\n  "path": "test/todos.test.ts"\n}\n```' in text
        assert "### Tool result · read" in text
        assert '```\nimport { describe, it, expect } from "vitest";' in text

    def test_thinking_is_marked_as_thinking(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "tool-calls")).text
        assert "> **Thinking**\n>\n> Read the failing test first, then the route." in text

    def test_model_and_thinking_level_changes_are_small_notes(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "tool-calls")).text
        assert "*model → anthropic/claude-sonnet-4-5* · `c2025a91`" in text
        assert "*thinking level → medium* · `1d2d2f88`" in text

    def test_long_outputs_are_kept_whole(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("dump the log"))
        s.append_message(tool_call("bash", {"command": "cat big.log"}, "call_1"))
        big = "\n".join(f"line {i} of the log" for i in range(5000))
        s.append_message(tool_result("bash", big, "call_1"))
        text = export_markdown(reopen(s)).text
        assert big in text

    def test_bash_executions_show_the_command_output_and_exit_code(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "bash-execution")).text
        assert "### Shell command · exit code 1" in text
        assert "```sh\n$ npx madge --circular src\n```" in text
        assert "1) routes/todos.ts > db.ts > routes/todos.ts" in text
        assert "not sent to the model" in text

    def test_compaction_and_branch_summaries_are_shown_as_such(self, tmp_path: Path) -> None:
        compacted = export_markdown(open_fixture(tmp_path, "compaction-one")).text
        assert "### Compaction summary · replaces the history before" in compacted
        summarized = export_markdown(open_fixture(tmp_path, "branch-summary")).text
        assert "### Branch summary · of the branch left at root" in summarized

    def test_labels_appear_next_to_the_entries_they_mark(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "labels")).text
        assert "`47171339` · 2025-06-11T08:06:15.386Z · label **checkpoint: validation**" in text
        assert "label **max-length**" in text
        assert "**start**" not in text  # cleared later in the file
        assert "validation-added" not in text  # replaced by a later label

    def test_custom_messages_extension_state_and_unknown_entries_are_shown(
        self, tmp_path: Path
    ) -> None:
        text = export_markdown(open_fixture(tmp_path, "custom-entries")).text
        assert "### Custom message · todo-ext/plan" in text
        assert "*extension state (todo-ext/state)*" in text
        assert "### bookmark (unknown entry type)" in text
        assert "*not displayed to the user*" in text

    def test_the_active_path_leaves_other_branches_out(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "branching")).text
        assert "Actually, use cursor pagination." in text
        assert "Offset, it is simpler." not in text
        assert "active leaf moved here" not in text  # leaf markers are folded away

    def test_leaf_exports_the_path_to_that_entry(self, tmp_path: Path) -> None:
        session = open_fixture(tmp_path, "branching")
        text = export_markdown(session, leaf_id="d1479ab1").text
        assert "Make the default limit 50 instead." in text
        assert "Actually, use cursor pagination." not in text
        assert "- **exported:** the path to d1479ab1" in text

    def test_all_branches_gives_an_outline_and_every_branch(self, tmp_path: Path) -> None:
        text = export_markdown(open_fixture(tmp_path, "branching"), all_branches=True).text
        outline = text.split("## Branches\n", 1)[1].split("\n## ", 1)[0]
        assert "- **1** `0afda538` User: Add pagination to GET /todos." in outline
        assert "    - **1.1.2** `c102d351` User: Make the default limit 50 instead." in outline
        assert "  - **1.2** `7e693f8c`" in outline and "**active** · leaf" in outline
        for heading in ("## Branch 1", "## Branch 1.1 · from 1bea2219"):
            assert heading + "\n" in text
        assert "## Branch 1.2 · from 1bea2219 · active" in text
        assert text.count(" · active\n") == 1 and outline.count("**active**") == 1
        for words in ("Offset, it is simpler.", "Add a `Link` header too.", "cursor pagination"):
            assert words in text

    def test_a_fence_is_longer_than_any_backtick_run_inside(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("show the readme"))
        s.append_message(tool_call("read", {"path": "README.md"}, "call_1"))
        s.append_message(tool_result("read", "intro\n```sh\nmake\n```\n", "call_1"))
        text = export_markdown(reopen(s)).text
        assert "````\nintro\n```sh\nmake\n```\n````" in text


class TestJson:
    def test_entries_are_as_in_the_file(self, tmp_path: Path) -> None:
        path = copy_fixture(tmp_path, "custom-entries")
        document = json.loads(export_json(Session.open(path)).text)
        lines = path.read_text().splitlines()
        assert document["header"] == json.loads(lines[0])
        assert document["entries"] == [json.loads(line) for line in lines[1:]]
        assert document["leafId"] == "c2eb87ab"

    def test_the_tree_holds_every_entry_once_nested_only_where_it_branches(
        self, tmp_path: Path
    ) -> None:
        session = open_fixture(tmp_path, "branching")
        document = json.loads(export_json(session).text)
        seen: list[str] = []
        runs = list(document["tree"])
        while runs:
            run = runs.pop()
            seen += [node["id"] for node in run["entries"]]
            runs += run["branches"]
        assert sorted(seen) == sorted(e.id for e in session.entries)
        (root,) = document["tree"]
        assert [n["id"] for n in root["entries"]] == ["0afda538", "1bea2219"]
        assert [b["from"] for b in root["branches"]] == ["1bea2219", "1bea2219", "1bea2219"]
        active = [n["id"] for n in root["entries"] if n.get("active")]
        assert active == ["0afda538", "1bea2219"]

    def test_labels_and_roles_are_on_the_tree_nodes(self, tmp_path: Path) -> None:
        document = json.loads(export_json(open_fixture(tmp_path, "labels")).text)
        nodes = {n["id"]: n for n in document["tree"][0]["entries"]}
        assert nodes["47171339"]["label"] == "checkpoint: validation"
        assert nodes["47171339"]["role"] == "assistant"
        assert document["labels"] == {
            "47171339": "checkpoint: validation",
            "157b1137": "max-length",
        }

    def test_a_long_session_does_not_nest_deeply(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        for i in range(600):
            s.append_message(user_message(f"question {i}"))
            s.append_message(assistant_message(f"answer {i}"))
        document = json.loads(export_json(reopen(s)).text)
        (root,) = document["tree"]
        assert len(root["entries"]) == 1200 and root["branches"] == []


class TestEveryFixture:
    @pytest.mark.parametrize("name", WELL_FORMED + READABLE_DAMAGED)
    @pytest.mark.parametrize("fmt", ["markdown", "html", "json"])
    def test_every_readable_fixture_exports_in_every_format(
        self, tmp_path: Path, name: str, fmt: Any
    ) -> None:
        session = open_fixture(tmp_path, name)
        for all_branches in (False, True):
            result = export_session(session, fmt, all_branches=all_branches, redact=True)
            assert result.text.strip()
            assert result.redactions == {}, "ordinary session text is not a secret"
            if fmt == "json":
                assert len(json.loads(result.text)["entries"]) == len(session.entries)
            if fmt == "html":
                assert parse_html(result.text).errors == []

    def test_a_cycle_stops_the_path_export_but_not_the_all_branches_one(
        self, tmp_path: Path
    ) -> None:
        session = open_fixture(tmp_path, "damaged-cycle")
        with pytest.raises(SessionTreeError):
            export_markdown(session)
        text = export_markdown(session, all_branches=True).text
        assert all(f"`{e.id}`" in text for e in session.entries)


def planted_session(tmp_path: Path) -> Session:
    """One path with a known set of secrets in every kind of text an export shows."""
    s = new_session(tmp_path)
    anthropic = "sk-ant-api03-" + "Ab1" * 30
    first = s.append_message(
        user_message(f"Use {anthropic} and password=hunter2x; my id is c2025a91.")
    )
    command = "curl -H 'Authorization: Bearer abc123def456ghi789' https://api.example.com"
    token = "ghp_" + "a1B2" * 9
    s.append_message(tool_call("bash", {"command": command, "env": {"GITHUB_TOKEN": token}}, "c1"))
    pem = "\n".join(
        [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjEAAAAA",
            "-----END OPENSSH PRIVATE KEY-----",
        ]
    )
    aws_secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY" + "A1b2C3d4e5"  # 40 characters
    output = f"AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {aws_secret}\n{pem}"
    s.append_message(tool_result("bash", output, "c1"))
    s.append_message(
        {
            "role": "bashExecution",
            "command": "psql postgres://app:s3cr3tpass@db/app",
            "output": "xoxb-123456789012-abcdefghijkl",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1_700_000_002_000,
        }
    )
    s.append_message(assistant_message("Stripe key sk_live_abcdefghijklmnop1234 is live."))
    s.append_compaction("Google key AIzaSyA1234567890abcdefghijklmnopqrstuv used.", first, 100)
    s.append_custom_message("note", "HF token hf_abcdefghijklmnopqrstuvwxyz123456")
    s.append_label(first, "glpat-abcdefghij1234567890")
    return reopen(s)


PLANTED = {
    "anthropic-key": 1,
    "aws-access-key": 1,
    "aws-secret-key": 1,
    "bearer-token": 1,
    "github-token": 1,
    "gitlab-token": 1,
    "google-api-key": 1,
    "huggingface-token": 1,
    "password": 1,
    "private-key": 1,
    "slack-token": 1,
    "stripe-key": 1,
    "url-password": 1,
}
PLANTED_VALUES = [
    "sk-ant-api03-", "hunter2x", "abc123def456ghi789", "ghp_", "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI", "b3BlbnNzaC1rZXktdjEAAAAA", "s3cr3tpass", "xoxb-", "sk_live_", "AIzaSy",
    "hf_abc", "glpat-",
]  # fmt: skip


class TestRedaction:
    @pytest.mark.parametrize("fmt", ["markdown", "html", "json"])
    def test_a_planted_set_is_replaced_and_counted_exactly(self, tmp_path: Path, fmt: Any) -> None:
        session = planted_session(tmp_path)
        for all_branches in (False, True):
            result = export_session(session, fmt, redact=True, all_branches=all_branches)
            assert result.redactions == PLANTED
            assert result.redacted == 13
            for value in PLANTED_VALUES:
                assert value not in result.text, value
            assert "c2025a91" in result.text and "[REDACTED:anthropic-key]" in result.text

    def test_without_redact_the_text_is_unchanged_and_nothing_is_counted(
        self, tmp_path: Path
    ) -> None:
        result = export_markdown(planted_session(tmp_path))
        assert result.redactions == {} and "hunter2x" in result.text

    def test_pairs_keep_the_key_and_replace_the_value(self) -> None:
        text, counts = redact_text(
            'password=hunter2 DB_PASSWORD="a b c" {"api_key": "q1w2e3r4"} token: t0k3n'
        )
        assert text == (
            'password=[REDACTED:password] DB_PASSWORD="[REDACTED:password]" '
            '{"api_key": "[REDACTED:api-key]"} token: [REDACTED:token]'
        )
        assert counts == {"api-key": 1, "password": 2, "token": 1}

    @pytest.mark.parametrize(
        ("text", "kind"),
        [
            ("sk-proj-abcDEF1234567890ghijklmnopQRST", "openai-key"),
            ("sk-" + "a1" * 24, "openai-key"),
            ("github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789", "github-token"),
            ("gho_" + "x9" * 18, "github-token"),
            ("rk_live_abcdefghijklmnop1234", "stripe-key"),
            ("ASIAY34FZKBOKMUTVV7A", "aws-access-key"),
            ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n", "private-key"),
            ("https://deploy:Zx9vQ2@git.example.com/repo.git", "url-password"),
            ("passwd: s3cret!", "password"),
        ],
    )
    def test_each_kind_of_secret_is_recognised(self, text: str, kind: str) -> None:
        redacted, counts = redact_text(f"before {text} after")
        assert counts == {kind: 1}
        assert f"[REDACTED:{kind}]" in redacted and redacted.startswith("before ")

    @pytest.mark.parametrize(
        "text",
        [
            "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39, entry c2025a91",
            "session 01973605-fabf-7fa7-a60a-ab641bbf3f13",
            "a risk-management-framework-for-everything and task-oriented-design",
            "Bearer tokens expire; use Bearer authentication. The password is hashed.",
            "def login(password: str, token: Optional[str] = None) -> None:",
            "self.password = config.password; token = os.environ['TOKEN']; token = get_token()",
            "export TOKEN=$GITHUB_TOKEN; password: ${DB_PASS}; http://user:${PW}@host",
            "max_tokens=4096 token_count=5 secrets.token_hex(16) PWD=/home/dev",
            "Use `hf_hub_download` and the `sk-learn` style; AKIA alone; ghp_short",
        ],
    )
    def test_ordinary_words_code_and_hex_ids_are_not_secrets(self, text: str) -> None:
        assert redact_text(text) == (text, {})

    def test_image_data_is_never_changed(self) -> None:
        block = {"type": "image", "data": "AKIAIOSFODNN7EXAMPLE", "mimeType": "image/png"}
        redactor = Redactor()
        assert redactor.value({"content": [block]}) == {"content": [block]}
        assert redactor.total == 0


class TestWriting:
    def test_an_existing_file_is_kept_unless_forced(self, tmp_path: Path) -> None:
        target = tmp_path / "out.md"
        target.write_text("mine")
        with pytest.raises(SessionWriteError, match="already exists; use --force"):
            write_export("new", target)
        assert target.read_text() == "mine"
        write_export("new", target, force=True)
        assert target.read_text() == "new"

    def test_the_session_itself_is_never_written_over(self, tmp_path: Path) -> None:
        path = copy_fixture(tmp_path, "linear")
        before = path.read_bytes()
        link = tmp_path / "link.jsonl"
        link.symlink_to(path)
        for target in (path, link):
            with pytest.raises(SessionWriteError, match="is the session being exported"):
                write_export("x", target, force=True, source=path)
        assert path.read_bytes() == before


class TestCli:
    def test_export_prints_markdown_by_default(self, tmp_path: Path) -> None:
        code, out, err = invoke("export", copy_fixture(tmp_path, "linear"))
        assert code == 0 and out.startswith("# ") and err == ""

    def test_output_goes_to_a_new_file_and_an_existing_one_needs_force(
        self, tmp_path: Path
    ) -> None:
        path = copy_fixture(tmp_path, "tool-calls")
        target = tmp_path / "page.html"
        code, out, err = invoke("export", path, "--format", "html", "-o", target)
        assert code == 0 and out == "" and target.read_text().startswith("<!DOCTYPE html>")
        code, _, err = invoke("export", path, "--format", "json", "-o", target)
        assert code == 1 and "already exists; use --force" in err
        assert invoke("export", path, "--format", "json", "-o", target, "--force")[0] == 0
        assert json.loads(target.read_text())["leafId"] == "20cabc71"

    def test_force_never_writes_over_the_session(self, tmp_path: Path) -> None:
        path = copy_fixture(tmp_path, "linear")
        before = path.read_bytes()
        code, _, err = invoke("export", path, "-o", path, "--force")
        assert code == 1 and "is the session being exported" in err
        assert path.read_bytes() == before

    def test_redact_says_how_many_secrets_it_replaced(self, tmp_path: Path) -> None:
        path = planted_session(tmp_path).path
        code, out, err = invoke("export", path, "--redact")
        assert code == 0 and "hunter2x" not in out
        assert err.startswith("redacted 13 secrets (anthropic-key 1, aws-access-key 1,")
        code, _, err = invoke("export", copy_fixture(tmp_path, "linear"), "--redact")
        assert err.strip() == "redacted 0 secrets"

    def test_leaf_takes_a_unique_prefix_and_an_unknown_one_is_one_line(
        self, tmp_path: Path
    ) -> None:
        path = copy_fixture(tmp_path, "branching")
        code, out, _ = invoke("export", path, "--leaf", "d1479")
        assert code == 0 and "Make the default limit 50 instead." in out
        code, out, err = invoke("export", path, "--leaf", "zzzz")
        assert code == 1 and out == "" and err.count("\n") == 1 and "no entry" in err

    def test_export_runs_as_a_real_subprocess(self, tmp_path: Path) -> None:
        path = copy_fixture(tmp_path, "images")
        target = tmp_path / "images.html"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "jsonl_session",
                "export",
                str(path),
                "-f",
                "html",
                "--all-branches",
                "-o",
                str(target),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "data:image/png;base64," in target.read_text()
