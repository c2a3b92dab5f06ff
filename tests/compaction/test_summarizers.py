"""The model-backed summarizers and `compact` with them: the real ``anthropic`` and
``openai`` SDK clients talk to the loopback stub (stub_api.py), which checks every
request against the API's rules and answers with the texts a test scripts. Sessions
are real files in tmp_path; the CLI runs as a real child process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from builders import summarizer_assistant as assistant
from builders import summarizer_result as result
from builders import summarizer_said as said
from builders import summarizer_user as user
from builders import tool_call as call
from helpers_write import entry_dicts
from locations import FIXTURES
from stub_api import (
    ANTHROPIC_INVALID_REQUEST,
    ANTHROPIC_SERVER_ERROR,
    OPENAI_INVALID_REQUEST,
    OPENAI_SERVER_ERROR,
    REPLY_TEXT,
    Recorded,
    ScriptedError,
    StubApi,
)

from jsonl_session import Session
from jsonl_session.compaction import (
    AnthropicSummarizer,
    CompactionSettings,
    ExtractiveSummarizer,
    OpenAISummarizer,
    SummaryTask,
    choose_summarizer,
    compact,
    output_budget,
    plan_for,
    prompt_for,
)
from jsonl_session.compaction.execute import SPLIT_TURN_HEADING
from jsonl_session.compaction.prompts import SYSTEM_PROMPT, TOOL_OUTPUT_CHARS
from jsonl_session.errors import CompactionError
from jsonl_session.tokens import estimate_tokens

ANTHROPIC_MODEL = "claude-test"
OPENAI_MODEL = "gpt-test"
MESSAGES = "/v1/messages"
CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
RESERVE = 10_000  # budgets: history 8000, turn prefix 5000
KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")


# --- sessions (messages from builders.py) ------------------------------------------------


def new_session(folder: Path) -> Session:
    return Session.create(cwd=folder, session_dir=folder, fsync="never")


def add_turns(session: Session, first: int, count: int) -> list[str]:
    """``count`` question/answer turns numbered from ``first``; the entry ids."""
    ids = []
    for n in range(first, first + count):
        ids.append(session.append_message(user(f"Question {n}: " + "why " * 100)))
        ids.append(session.append_message(said(f"Answer {n}: " + "because " * 60)))
    return ids


def keep_last_turn(session: Session) -> int:
    """keep_recent_tokens that keeps exactly the last question and answer, so the cut
    is at that question (a user message: no split turn)."""
    *_, question, answer = session.build_context().messages
    return estimate_tokens(question) + estimate_tokens(answer)


def chat_session(folder: Path, turns: int = 4) -> tuple[Session, CompactionSettings, str]:
    """A session of plain turns, settings that cut before the last turn, and the id of
    the last question (the first kept entry)."""
    session = new_session(folder)
    ids = add_turns(session, 1, turns)
    keep = keep_last_turn(session)
    return session, CompactionSettings(reserve_tokens=RESERVE, keep_recent_tokens=keep), ids[-2]


def split_turn_session(folder: Path) -> tuple[Session, CompactionSettings, dict[str, str]]:
    """An earlier turn, then a long turn whose tool calls read src/config.py and edit
    src/app.py; settings that cut inside the long turn, at its last assistant message.
    The last assistant message reports totalTokens 4321."""
    session = new_session(folder)
    ids = {"q1": session.append_message(user("Question 1: what does the app do?"))}
    ids["a1"] = session.append_message(said("It serves the todo API. " * 20))
    ids["q2"] = session.append_message(user("Make the port configurable."))
    session.append_message(assistant([call("toolu_1", "read", path="src/config.py")]))
    session.append_message(result("toolu_1", "read", "PORT = 8080\n" * 40))
    session.append_message(assistant([call("toolu_2", "edit", path="src/app.py", oldText="a")]))
    session.append_message(result("toolu_2", "edit", "Successfully replaced text."))
    final = said("Done: the port now comes from PORT. " * 10, total_tokens=4321)
    ids["last"] = session.append_message(final)
    keep = estimate_tokens(final)
    return session, CompactionSettings(reserve_tokens=RESERVE, keep_recent_tokens=keep), ids


# --- reading what the stub received --------------------------------------------------------


def anthropic_prompt(request: Recorded) -> str:
    """The text of the single user message of a summarizer's Messages request."""
    (message,) = request.body["messages"]
    assert message["role"] == "user"
    (block,) = message["content"]
    assert block["type"] == "text"
    text = block["text"]
    assert isinstance(text, str)
    return text


def summary_requests(stub: StubApi) -> list[Recorded]:
    requests = stub.requests
    assert all(r.path == MESSAGES for r in requests), [r.path for r in requests]
    return requests


def assert_clean(stub: StubApi) -> None:
    violations = stub.take_violations()
    assert not violations, "\n".join(map(str, violations))
    assert stub.pending() == []


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


def fixture_task(kind: Any = "history") -> SummaryTask:
    messages = Session.open(FIXTURES / "tool-calls.jsonl").build_context().messages
    return SummaryTask(kind, messages, output_budget(kind, RESERVE))


FIXTURE_USER_LINE = "[user]\nThe test `todos.test.ts > completes a todo` fails. Fix it."
FIXTURE_CALL_LINE = '[assistant calls]\nread(path="test/todos.test.ts")'


# --- one request per summary, in each API's shape -------------------------------------------


class TestTheRequestEachSummarizerSends:
    def test_anthropic_sends_one_messages_request_with_the_budget_system_prompt_and_transcript(
        self, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        stub_api.reply_with("## Goal\nFix the todo test.")
        task = fixture_task()
        summary = AnthropicSummarizer(ANTHROPIC_MODEL, client=claude).summarize(task)
        assert summary == "## Goal\nFix the todo test."
        (request,) = stub_api.requests
        assert request.path == MESSAGES
        body = request.body
        assert set(body) == {"model", "max_tokens", "system", "messages"}
        assert body["model"] == ANTHROPIC_MODEL
        assert body["max_tokens"] == output_budget("history", RESERVE) == 8000
        assert body["system"] == SYSTEM_PROMPT
        prompt = anthropic_prompt(request)
        assert prompt == prompt_for(task)
        assert prompt.startswith("<session-record>\n" + FIXTURE_USER_LINE)
        assert FIXTURE_CALL_LINE in prompt
        assert "<earlier-summary>" not in prompt
        assert_clean(stub_api)

    def test_openai_chat_sends_max_completion_tokens_and_a_system_message(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with("chat summary")
        task = fixture_task("turn_prefix")
        summary = OpenAISummarizer(OPENAI_MODEL, api="chat", client=gpt).summarize(task)
        assert summary == "chat summary"
        (request,) = stub_api.requests
        assert request.path == CHAT
        body = request.body
        assert set(body) == {"model", "max_completion_tokens", "messages"}
        assert body["model"] == OPENAI_MODEL
        assert body["max_completion_tokens"] == output_budget("turn_prefix", RESERVE) == 5000
        system, prompt = body["messages"]
        assert system == {"role": "system", "content": SYSTEM_PROMPT}
        assert prompt["role"] == "user"
        assert prompt["content"] == [{"type": "text", "text": prompt_for(task)}]
        assert FIXTURE_USER_LINE in prompt["content"][0]["text"]
        assert "first part of one long turn" in prompt["content"][0]["text"]
        assert_clean(stub_api)

    def test_openai_responses_sends_max_output_tokens_and_instructions(
        self, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        stub_api.reply_with("responses summary")
        task = fixture_task("branch")
        summary = OpenAISummarizer(OPENAI_MODEL, client=gpt).summarize(task)
        assert summary == "responses summary"
        (request,) = stub_api.requests
        assert request.path == RESPONSES
        body = request.body
        assert set(body) == {"model", "max_output_tokens", "instructions", "input"}
        assert body["model"] == OPENAI_MODEL
        assert body["max_output_tokens"] == output_budget("branch", RESERVE) == 2500
        assert body["instructions"] == SYSTEM_PROMPT
        (item,) = body["input"]
        assert item["role"] == "user"
        assert item["content"] == [{"type": "input_text", "text": prompt_for(task)}]
        assert FIXTURE_CALL_LINE in item["content"][0]["text"]
        assert_clean(stub_api)

    def test_a_summarizer_built_from_the_environment_uses_the_key_and_base_url(
        self, stub_api: StubApi, monkeypatch: pytest.MonkeyPatch, no_keys: None
    ) -> None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-from-env")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", stub_api.url)
        stub_api.reply_with("from the environment")
        chosen = choose_summarizer("auto", ANTHROPIC_MODEL)
        assert isinstance(chosen, AnthropicSummarizer)
        assert chosen.summarize(fixture_task()) == "from the environment"
        (request,) = stub_api.requests_to(MESSAGES)
        assert request.body["model"] == ANTHROPIC_MODEL
        assert_clean(stub_api)


# --- what compact asks and writes --------------------------------------------------------------


class TestCompactWithAModel:
    def test_the_history_request_carries_the_summarized_messages_and_the_history_budget(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session, settings, first_kept = chat_session(tmp_path)
        stub_api.reply_with("SUMMARY OF TURNS 1-3")
        result = compact(session, AnthropicSummarizer(ANTHROPIC_MODEL, client=claude), settings)
        (request,) = summary_requests(stub_api)
        assert request.body["max_tokens"] == 8000
        prompt = anthropic_prompt(request)
        for n in (1, 2, 3):
            assert f"[user]\nQuestion {n}: why why" in prompt
            assert f"[assistant]\nAnswer {n}: because" in prompt
        assert "Question 4" not in prompt  # kept word for word, not summarized
        assert result.summary == "SUMMARY OF TURNS 1-3"
        assert result.plan.first_kept_entry_id == first_kept
        assert result.summarizer == "anthropic"
        assert_clean(stub_api)

    def test_a_second_compaction_sends_the_first_summary_as_the_earlier_summary(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session, settings, _ = chat_session(tmp_path)
        summarizer = AnthropicSummarizer(ANTHROPIC_MODEL, client=claude)
        stub_api.reply_with("FIRST SUMMARY: turns 1-3", "SECOND SUMMARY: turns 1-6")
        compact(session, summarizer, settings)
        add_turns(session, 5, 3)
        second = compact(session, summarizer, settings)
        first_request, second_request = summary_requests(stub_api)
        first_prompt = anthropic_prompt(first_request)
        second_prompt = anthropic_prompt(second_request)
        assert "<earlier-summary>" not in first_prompt
        assert "already summarized" not in first_prompt
        assert "<earlier-summary>\nFIRST SUMMARY: turns 1-3\n</earlier-summary>" in second_prompt
        assert "already summarized" in second_prompt
        assert "Question 4" in second_prompt and "Question 6" in second_prompt
        assert "Question 3" not in second_prompt  # only in the earlier summary now
        assert second.summary == "SECOND SUMMARY: turns 1-6"
        assert_clean(stub_api)

    def test_a_huge_tool_output_reaches_the_model_clipped(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        output = "".join(f"line {n:05d}\n" for n in range(5000))[:50_000]
        session = new_session(tmp_path)
        session.append_message(user("Show me the log."))
        session.append_message(assistant([call("toolu_log", "bash", command="cat app.log")]))
        session.append_message(result("toolu_log", "bash", output))
        session.append_message(said("The log is long."))
        add_turns(session, 2, 1)
        keep = keep_last_turn(session)
        settings = CompactionSettings(reserve_tokens=RESERVE, keep_recent_tokens=keep)
        compact(session, AnthropicSummarizer(ANTHROPIC_MODEL, client=claude), settings)
        prompt = anthropic_prompt(*summary_requests(stub_api))
        assert f"[bash output]\n{output[:TOOL_OUTPUT_CHARS]}\n" in prompt
        assert f"[... {50_000 - TOOL_OUTPUT_CHARS} more characters not shown]" in prompt
        assert output[TOOL_OUTPUT_CHARS : TOOL_OUTPUT_CHARS + 40] not in prompt
        assert "line 04545" not in prompt  # the output's last line
        assert output not in prompt
        assert len(prompt) < 10_000
        assert_clean(stub_api)

    def test_a_split_turn_sends_the_history_and_the_turn_prefix_with_the_smaller_budget(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session, settings, ids = split_turn_session(tmp_path)
        plan = plan_for(session, settings)
        assert plan.is_split_turn and plan.first_kept_entry_id == ids["last"]
        stub_api.reply_with("HISTORY PART", "PREFIX PART")
        result = compact(session, AnthropicSummarizer(ANTHROPIC_MODEL, client=claude), settings)
        history, prefix = summary_requests(stub_api)
        assert history.body["max_tokens"] == 8000
        assert prefix.body["max_tokens"] == 5000
        history_prompt, prefix_prompt = anthropic_prompt(history), anthropic_prompt(prefix)
        assert "Question 1: what does the app do?" in history_prompt
        assert "Make the port configurable." not in history_prompt
        assert "[user]\nMake the port configurable." in prefix_prompt
        assert 'read(path="src/config.py")' in prefix_prompt
        assert "Question 1" not in prefix_prompt
        assert "first part of one long turn" in prefix_prompt
        assert result.summary.startswith(
            f"HISTORY PART\n\n---\n\n{SPLIT_TURN_HEADING}\n\nPREFIX PART\n\n<read-files>"
        )
        assert_clean(stub_api)

    def test_custom_instructions_reach_every_prompt(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session, settings, _ = split_turn_session(tmp_path)
        summarizer = AnthropicSummarizer(ANTHROPIC_MODEL, client=claude)
        compact(session, summarizer, settings, instructions="  Keep every port number.  ")
        prompts = [anthropic_prompt(r) for r in summary_requests(stub_api)]
        assert len(prompts) == 2
        for prompt in prompts:
            assert prompt.endswith("The user asks you to also follow this: Keep every port number.")
        assert_clean(stub_api)

    def test_the_compaction_entry_holds_the_model_text_the_file_lists_and_the_figures(
        self, tmp_path: Path, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        session, settings, ids = split_turn_session(tmp_path)
        stub_api.reply_with("History from the model.", "Prefix from the model.")
        result = compact(session, OpenAISummarizer(OPENAI_MODEL, client=gpt), settings)
        *_, entry = entry_dicts(session.path)
        expected = (
            "History from the model.\n\n---\n\n"
            f"{SPLIT_TURN_HEADING}\n\nPrefix from the model."
            "\n\n<read-files>\nsrc/config.py\n</read-files>"
            "\n\n<modified-files>\nsrc/app.py\n</modified-files>"
        )
        assert entry["type"] == "compaction"
        assert entry["id"] == result.entry_id
        assert entry["parentId"] == ids["last"]
        assert entry["summary"] == expected == result.summary
        assert entry["firstKeptEntryId"] == ids["last"]
        assert entry["tokensBefore"] == 4321  # the last assistant's usage
        assert entry["details"] == {"readFiles": ["src/config.py"], "modifiedFiles": ["src/app.py"]}
        assert entry["fromHook"] is False
        reopened = Session.open(session.path).build_context().messages
        assert [m["role"] for m in reopened] == ["compactionSummary", "assistant"]
        assert reopened[0]["summary"] == expected
        assert reopened[1]["content"][0]["text"].startswith("Done: the port")
        assert len(stub_api.requests_to(RESPONSES)) == 2
        assert_clean(stub_api)

    def test_without_tool_calls_the_summary_is_the_model_text_alone(
        self, tmp_path: Path, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        session, settings, first_kept = chat_session(tmp_path)
        stub_api.reply_with("Just the model's words.")
        compact(session, OpenAISummarizer(OPENAI_MODEL, api="chat", client=gpt), settings)
        *_, entry = entry_dicts(session.path)
        assert entry["summary"] == "Just the model's words."
        assert entry["details"] == {"readFiles": [], "modifiedFiles": []}
        assert entry["firstKeptEntryId"] == first_kept
        assert_clean(stub_api)


# --- failures -----------------------------------------------------------------------------------


def anthropic_summarizer(stub: StubApi, client: anthropic.Anthropic) -> AnthropicSummarizer:
    return AnthropicSummarizer(ANTHROPIC_MODEL, client=client)


def anthropic_own_client(stub: StubApi, client: anthropic.Anthropic) -> AnthropicSummarizer:
    """The summarizer builds its client (default retries; the stub says do not retry)."""
    return AnthropicSummarizer(ANTHROPIC_MODEL, api_key="test", base_url=stub.url)


def openai_chat_own_client(stub: StubApi, client: anthropic.Anthropic) -> OpenAISummarizer:
    return OpenAISummarizer(OPENAI_MODEL, api="chat", api_key="test", base_url=stub.url + "/v1")


def openai_responses_own_client(stub: StubApi, client: anthropic.Anthropic) -> OpenAISummarizer:
    return OpenAISummarizer(OPENAI_MODEL, api_key="test", base_url=stub.url + "/v1")


class TestFailures:
    @pytest.mark.parametrize(
        ("make", "path", "error", "provider"),
        [
            (anthropic_summarizer, MESSAGES, ANTHROPIC_SERVER_ERROR, "anthropic"),
            (anthropic_own_client, MESSAGES, ANTHROPIC_INVALID_REQUEST, "anthropic"),
            (anthropic_own_client, MESSAGES, ANTHROPIC_SERVER_ERROR, "anthropic"),
            (openai_chat_own_client, CHAT, OPENAI_SERVER_ERROR, "openai"),
            (openai_responses_own_client, RESPONSES, OPENAI_INVALID_REQUEST, "openai"),
        ],
        ids=["anthropic-500", "anthropic-400", "anthropic-500-own-client", "chat-500", "resp-400"],
    )
    def test_an_api_error_is_a_compaction_error_naming_provider_and_status_and_writes_nothing(
        self,
        tmp_path: Path,
        stub_api: StubApi,
        claude: anthropic.Anthropic,
        make: Any,
        path: str,
        error: ScriptedError,
        provider: str,
    ) -> None:
        session, settings, _ = chat_session(tmp_path)
        before = session.path.read_bytes()
        stub_api.fail_next(path, error)
        with pytest.raises(CompactionError) as caught:
            compact(session, make(stub_api, claude), settings)
        message = str(caught.value)
        assert f"the {provider} summarizer failed (HTTP {error.status})" in message
        assert error.message in message
        assert session.path.read_bytes() == before
        assert Session.open(session.path).entries[-1].type == "message"
        assert len(stub_api.requests) == 1  # no retry
        assert_clean(stub_api)

    def test_a_reply_without_text_is_a_compaction_error_and_writes_nothing(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session, settings, _ = chat_session(tmp_path)
        before = session.path.read_bytes()
        stub_api.reply_with("  \n ")
        with pytest.raises(CompactionError, match="anthropic summarizer returned no text"):
            compact(session, AnthropicSummarizer(ANTHROPIC_MODEL, client=claude), settings)
        assert session.path.read_bytes() == before
        assert_clean(stub_api)

    @pytest.mark.parametrize(
        ("name", "variable"),
        [
            ("anthropic", "ANTHROPIC_API_KEY"),
            ("openai", "OPENAI_API_KEY"),
            ("openai-chat", "OPENAI_API_KEY"),
        ],
    )
    def test_a_missing_key_names_the_variable_and_the_offline_summarizer(
        self, no_keys: None, name: str, variable: str
    ) -> None:
        with pytest.raises(CompactionError) as caught:
            choose_summarizer(name)
        message = str(caught.value)
        assert variable in message
        assert "--summarizer offline" in message
        other = "OPENAI_API_KEY" if variable == "ANTHROPIC_API_KEY" else "ANTHROPIC_API_KEY"
        assert other not in message

    def test_the_summarizer_classes_refuse_to_start_without_a_key(self, no_keys: None) -> None:
        with pytest.raises(CompactionError, match=r"ANTHROPIC_API_KEY.*offline"):
            AnthropicSummarizer()
        with pytest.raises(CompactionError, match=r"OPENAI_API_KEY.*offline"):
            OpenAISummarizer(api="chat")


class TestChoosingASummarizer:
    def test_auto_without_keys_is_the_offline_summarizer(self, no_keys: None) -> None:
        chosen = choose_summarizer("auto")
        assert isinstance(chosen, ExtractiveSummarizer)
        assert chosen.name == "offline"

    def test_auto_with_an_anthropic_key_is_anthropic_even_with_an_openai_key(
        self, no_keys: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        chosen = choose_summarizer("auto", "claude-x")
        assert isinstance(chosen, AnthropicSummarizer)
        assert chosen.model == "claude-x"

    def test_auto_with_only_an_openai_key_is_openai_responses(
        self, no_keys: None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        chosen = choose_summarizer("auto")
        assert isinstance(chosen, OpenAISummarizer)
        assert chosen.api == "responses"

    def test_the_default_anthropic_model_is_not_one_the_sdk_calls_deprecated(
        self, stub_api: StubApi, monkeypatch: pytest.MonkeyPatch, no_keys: None
    ) -> None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", stub_api.url)
        assert choose_summarizer("anthropic").summarize(fixture_task()) == REPLY_TEXT

    def test_an_unknown_name_lists_the_known_ones(self) -> None:
        with pytest.raises(CompactionError, match=r"unknown summarizer 'gemini'.*offline"):
            choose_summarizer("gemini")


# --- the command line, as a child process ---------------------------------------------------------


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    return subprocess.run(
        [sys.executable, "-W", "error", "-m", "jsonl_session", *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def tool_calls_copy(tmp_path: Path) -> Path:
    return Path(shutil.copy(FIXTURES / "tool-calls.jsonl", tmp_path / "tool-calls.jsonl"))


class TestTheCommandLine:
    @pytest.mark.parametrize(
        ("summarizer", "path", "variable", "suffix"),
        [
            ("anthropic", MESSAGES, "ANTHROPIC", ""),
            ("openai", RESPONSES, "OPENAI", "/v1"),
            ("openai-chat", CHAT, "OPENAI", "/v1"),
        ],
    )
    def test_compact_with_a_model_appends_its_summary(
        self,
        tmp_path: Path,
        stub_api: StubApi,
        summarizer: str,
        path: str,
        variable: str,
        suffix: str,
    ) -> None:
        file = tool_calls_copy(tmp_path)
        before = entry_dicts(file)
        stub_api.reply_with(f"History by {summarizer}.", f"Prefix by {summarizer}.")
        env = {f"{variable}_API_KEY": "test", f"{variable}_BASE_URL": stub_api.url + suffix}
        model = "gpt-test" if variable == "OPENAI" else "claude-test"
        done = run_cli(
            [
                *("compact", str(file), "--summarizer", summarizer),
                *("--keep-recent-tokens", "100", "--model", model),
            ],
            env,
        )
        assert done.returncode == 0, done.stderr
        after = entry_dicts(file)
        assert after[: len(before)] == before
        (added,) = after[len(before) :]
        assert added["type"] == "compaction"
        assert added["firstKeptEntryId"] == "a433438c"  # inside the second turn
        assert added["summary"] == (
            f"History by {summarizer}.\n\n---\n\n{SPLIT_TURN_HEADING}\n\n"
            f"Prefix by {summarizer}."
            "\n\n<read-files>\ntest/todos.test.ts\n</read-files>"
            "\n\n<modified-files>\nsrc/routes/todos.ts\n</modified-files>"
        )
        assert f"appended compaction {added['id']} ({summarizer.split('-')[0]})" in done.stdout
        history, prefix = stub_api.requests
        assert history.path == prefix.path == path
        assert history.body["model"] == prefix.body["model"] == model
        assert_clean(stub_api)

    @pytest.mark.parametrize(
        ("summarizer", "variable"),
        [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")],
    )
    def test_compact_without_the_key_fails_with_one_line_naming_it(
        self, tmp_path: Path, stub_api: StubApi, summarizer: str, variable: str
    ) -> None:
        file = tool_calls_copy(tmp_path)
        before = file.read_bytes()
        done = run_cli(
            ["compact", str(file), "--summarizer", summarizer, "--keep-recent-tokens", "100"], {}
        )
        assert done.returncode == 1
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("error: ")
        assert variable in line and "--summarizer offline" in line
        assert done.stdout == ""
        assert file.read_bytes() == before
        assert stub_api.requests == []
