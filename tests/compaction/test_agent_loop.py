"""The agent-loop helpers (compaction/loop.py) with the real SDK clients against the
loopback stub (stub_api.py): the errors the SDKs raise for the stub's overflow bodies,
compacting and retrying once after an overflow, and compacting after a turn when the
window fills up. Sessions are real files in tmp_path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from builders import loop_said as said
from builders import loop_user as user
from helpers_write import entry_dicts
from stub_api import (
    ANTHROPIC_INVALID_REQUEST,
    ANTHROPIC_PROMPT_TOO_LONG,
    ANTHROPIC_RATE_LIMITED,
    ANTHROPIC_REQUEST_TOO_LARGE,
    ANTHROPIC_SERVER_ERROR,
    LABEL_HEADER,
    OPENAI_CHAT_CONTEXT_LENGTH_EXCEEDED,
    OPENAI_INVALID_REQUEST,
    OPENAI_RATE_LIMITED,
    OPENAI_RESPONSES_CONTEXT_WINDOW_EXCEEDED,
    OPENAI_SERVER_ERROR,
    Recorded,
    ScriptedError,
    StubApi,
)

from jsonl_session import Session
from jsonl_session.compaction import (
    AnthropicSummarizer,
    CompactionSettings,
    OpenAISummarizer,
    Summarizer,
    auto_compact,
    call_with_overflow_recovery,
    context_tokens,
    is_context_overflow,
)
from jsonl_session.compaction.prompts import SYSTEM_PROMPT
from jsonl_session.context import SessionContext
from jsonl_session.errors import CompactionError
from jsonl_session.providers.anthropic import to_anthropic
from jsonl_session.providers.openai import to_openai_chat, to_openai_responses
from jsonl_session.tokens import estimate_tokens

ANTHROPIC_MODEL = "claude-test"
OPENAI_MODEL = "gpt-test"
AGENT_SYSTEM = "You are a coding agent."
AGENT = {LABEL_HEADER: "agent"}  # the agent's requests carry this label; summaries do not
RESERVE = 10_000
SUMMARY_OPENING = "Earlier parts of this conversation were condensed into the summary below."
NEW_PROMPT = "Now add a test for the port setting."


# --- sessions ---------------------------------------------------------------------------------


def turns_session(folder: Path, turns: int = 4, last_total_tokens: int = 15) -> Session:
    session = Session.create(cwd=folder, session_dir=folder, fsync="never")
    for n in range(1, turns + 1):
        session.append_message(user(f"Question {n}: " + "why " * 100))
        total = last_total_tokens if n == turns else 15
        session.append_message(said(f"Answer {n}: " + "because " * 60, total))
    return session


def waiting_session(folder: Path) -> tuple[Session, CompactionSettings]:
    """Four turns and a new prompt the agent is about to send; settings that keep the
    last turn and the prompt."""
    session = turns_session(folder)
    session.append_message(user(NEW_PROMPT))
    *_, question, answer, prompt = session.build_context().messages
    keep = sum(estimate_tokens(m) for m in (question, answer, prompt))
    return session, CompactionSettings(reserve_tokens=RESERVE, keep_recent_tokens=keep)


def compactions(path: Path) -> list[dict[str, Any]]:
    return [e for e in entry_dicts(path) if e["type"] == "compaction"]


# --- the three APIs as an agent would call them -------------------------------------------------


@dataclass(frozen=True)
class Api:
    """One API: the agent's call, the summarizer for it, its endpoint and its errors."""

    name: str
    path: str
    overflow: ScriptedError
    rate_limited: ScriptedError
    invalid: ScriptedError
    server_error: ScriptedError
    send: Callable[[Any, SessionContext], str]
    summarizer: Callable[[Any], Summarizer]
    turns: Callable[[dict[str, Any]], list[dict[str, Any]]]  # the conversation in a body
    first_text: Callable[[dict[str, Any]], str]
    is_summary_request: Callable[[dict[str, Any]], bool]


def send_anthropic(client: anthropic.Anthropic, context: SessionContext) -> str:
    request = to_anthropic(context, system=AGENT_SYSTEM)
    reply = client.messages.create(
        model=ANTHROPIC_MODEL, max_tokens=1024, extra_headers=AGENT, **request.kwargs
    )
    return "".join(block.text for block in reply.content if block.type == "text")


def send_chat(client: openai.OpenAI, context: SessionContext) -> str:
    request = to_openai_chat(context, system=AGENT_SYSTEM)
    reply = client.chat.completions.create(
        model=OPENAI_MODEL, extra_headers=AGENT, **request.kwargs
    )
    return reply.choices[0].message.content or ""


def send_responses(client: openai.OpenAI, context: SessionContext) -> str:
    request = to_openai_responses(context, instructions=AGENT_SYSTEM)
    reply = client.responses.create(model=OPENAI_MODEL, extra_headers=AGENT, **request.kwargs)
    return str(reply.output_text)


def _text(content: Any) -> str:
    return content if isinstance(content, str) else str(content[0]["text"])


ANTHROPIC = Api(
    "anthropic",
    "/v1/messages",
    ANTHROPIC_PROMPT_TOO_LONG,
    ANTHROPIC_RATE_LIMITED,
    ANTHROPIC_INVALID_REQUEST,
    ANTHROPIC_SERVER_ERROR,
    send_anthropic,
    lambda client: AnthropicSummarizer(ANTHROPIC_MODEL, client=client),
    lambda body: list(body["messages"]),
    lambda body: _text(body["messages"][0]["content"]),
    lambda body: body.get("system") == SYSTEM_PROMPT,
)
CHAT = Api(
    "openai-chat",
    "/v1/chat/completions",
    OPENAI_CHAT_CONTEXT_LENGTH_EXCEEDED,
    OPENAI_RATE_LIMITED,
    OPENAI_INVALID_REQUEST,
    OPENAI_SERVER_ERROR,
    send_chat,
    lambda client: OpenAISummarizer(OPENAI_MODEL, api="chat", client=client),
    lambda body: [m for m in body["messages"] if m["role"] != "system"],
    lambda body: _text(body["messages"][1]["content"]),
    lambda body: body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT},
)
RESPONSES = Api(
    "openai-responses",
    "/v1/responses",
    OPENAI_RESPONSES_CONTEXT_WINDOW_EXCEEDED,
    OPENAI_RATE_LIMITED,
    OPENAI_INVALID_REQUEST,
    OPENAI_SERVER_ERROR,
    send_responses,
    lambda client: OpenAISummarizer(OPENAI_MODEL, client=client),
    lambda body: list(body["input"]),
    lambda body: _text(body["input"][0]["content"]),
    lambda body: body.get("instructions") == SYSTEM_PROMPT,
)
APIS = [ANTHROPIC, CHAT, RESPONSES]


@pytest.fixture(params=APIS, ids=[api.name for api in APIS])
def api(request: pytest.FixtureRequest) -> Api:
    chosen: Api = request.param
    return chosen


@pytest.fixture
def client(api: Api, claude: anthropic.Anthropic, gpt: openai.OpenAI) -> Any:
    return claude if api is ANTHROPIC else gpt


def assert_clean(stub: StubApi) -> None:
    violations = stub.take_violations()
    assert not violations, "\n".join(map(str, violations))
    assert stub.pending() == []


def agent_requests(stub: StubApi) -> list[Recorded]:
    return [r for r in stub.requests if r.label == "agent"]


# --- recognising an overflow ---------------------------------------------------------------------


def raised(stub: StubApi, api: Api, client: Any, error: ScriptedError) -> Exception:
    """The exception the real SDK raises when the stub answers ``error``."""
    stub.fail_next(api.path, error)
    context = SessionContext([user("hello")])
    with pytest.raises(Exception) as caught:
        api.send(client, context)
    assert getattr(caught.value, "status_code", None) == error.status
    assert_clean(stub)
    return caught.value


class TestIsContextOverflow:
    @pytest.mark.parametrize(
        ("chosen", "error", "kind"),
        [
            (ANTHROPIC, ANTHROPIC_PROMPT_TOO_LONG, anthropic.BadRequestError),
            (ANTHROPIC, ANTHROPIC_REQUEST_TOO_LARGE, anthropic.RequestTooLargeError),
            (CHAT, OPENAI_CHAT_CONTEXT_LENGTH_EXCEEDED, openai.BadRequestError),
            (RESPONSES, OPENAI_RESPONSES_CONTEXT_WINDOW_EXCEEDED, openai.BadRequestError),
        ],
        ids=["anthropic-prompt-too-long", "anthropic-413", "chat", "responses"],
    )
    def test_the_sdk_errors_for_an_overflow_are_recognised(
        self,
        stub_api: StubApi,
        claude: anthropic.Anthropic,
        gpt: openai.OpenAI,
        chosen: Api,
        error: ScriptedError,
        kind: type[Exception],
    ) -> None:
        exc = raised(stub_api, chosen, claude if chosen is ANTHROPIC else gpt, error)
        assert type(exc) is kind
        assert is_context_overflow(exc)
        assert is_context_overflow(str(exc))  # the message alone says so too

    @pytest.mark.parametrize(
        ("chosen", "error", "kind"),
        [
            (ANTHROPIC, ANTHROPIC_RATE_LIMITED, anthropic.RateLimitError),
            (CHAT, OPENAI_RATE_LIMITED, openai.RateLimitError),
            (RESPONSES, OPENAI_RATE_LIMITED, openai.RateLimitError),
            (ANTHROPIC, ANTHROPIC_INVALID_REQUEST, anthropic.BadRequestError),
            (CHAT, OPENAI_INVALID_REQUEST, openai.BadRequestError),
            (ANTHROPIC, ANTHROPIC_SERVER_ERROR, anthropic.InternalServerError),
            (RESPONSES, OPENAI_SERVER_ERROR, openai.InternalServerError),
        ],
        ids=[
            "anthropic-429",
            "chat-429",
            "responses-429",
            "anthropic-400",
            "chat-400",
            "anthropic-500",
            "responses-500",
        ],
    )
    def test_rate_limits_and_other_errors_are_not_overflows(
        self,
        stub_api: StubApi,
        claude: anthropic.Anthropic,
        gpt: openai.OpenAI,
        chosen: Api,
        error: ScriptedError,
        kind: type[Exception],
    ) -> None:
        exc = raised(stub_api, chosen, claude if chosen is ANTHROPIC else gpt, error)
        assert type(exc) is kind
        assert not is_context_overflow(exc)
        assert not is_context_overflow(str(exc))

    def test_a_rate_limit_that_talks_about_tokens_is_still_not_an_overflow(
        self, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        wordy = ScriptedError(
            429,
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "Too many input tokens per minute: wait before sending more",
                },
            },
        )
        exc = raised(stub_api, ANTHROPIC, claude, wordy)
        assert is_context_overflow(wordy.message)  # the words alone would count
        assert not is_context_overflow(exc)  # the 429 says otherwise


# --- compact and retry once ---------------------------------------------------------------------


class TestCallWithOverflowRecovery:
    def test_an_overflow_compacts_and_the_retry_sends_the_shorter_context(
        self, tmp_path: Path, stub_api: StubApi, api: Api, client: Any
    ) -> None:
        session, settings = waiting_session(tmp_path)
        contexts: list[SessionContext] = []

        def call(context: SessionContext) -> str:
            contexts.append(context)
            return api.send(client, context)

        stub_api.fail_next(api.path, api.overflow, label="agent")
        stub_api.reply_with("SUMMARY: turns 1-3 about why.", "Here is the test.")
        answer = call_with_overflow_recovery(session, call, api.summarizer(client), settings)
        assert answer == "Here is the test."
        (entry,) = compactions(session.path)
        assert entry["summary"] == "SUMMARY: turns 1-3 about why."
        requests = stub_api.requests
        assert [r.path for r in requests] == [api.path] * 3
        first, summary, second = requests
        assert (first.label, summary.label, second.label) == ("agent", "", "agent")
        assert api.is_summary_request(summary.body)
        assert not api.is_summary_request(first.body) and not api.is_summary_request(second.body)
        before, after = api.turns(first.body), api.turns(second.body)
        assert len(after) < len(before)
        assert api.first_text(second.body).startswith(
            f"{SUMMARY_OPENING}\n<conversation-summary>\nSUMMARY: turns 1-3 about why.\n"
        )
        assert api.first_text(first.body).startswith("Question 1:")
        assert NEW_PROMPT in str(after[-1])
        assert "Question 4:" in str(after) and "Question 3:" not in str(after)
        assert [c.messages[0]["role"] for c in contexts] == ["user", "compactionSummary"]
        assert_clean(stub_api)

    def test_a_second_overflow_propagates_after_one_compaction(
        self, tmp_path: Path, stub_api: StubApi, api: Api, client: Any
    ) -> None:
        session, settings = waiting_session(tmp_path)
        stub_api.fail_next(api.path, api.overflow, times=2, label="agent")
        stub_api.reply_with("SUMMARY that was not enough.")
        with pytest.raises(Exception) as caught:
            call_with_overflow_recovery(
                session, lambda c: api.send(client, c), api.summarizer(client), settings
            )
        assert type(caught.value).__module__.split(".")[0] in ("anthropic", "openai")
        assert getattr(caught.value, "status_code", None) == api.overflow.status
        assert is_context_overflow(caught.value)
        (entry,) = compactions(session.path)
        assert entry["summary"] == "SUMMARY that was not enough."
        assert len(agent_requests(stub_api)) == 2
        assert len(stub_api.requests) == 3
        assert_clean(stub_api)

    @pytest.mark.parametrize("which", ["rate_limited", "invalid", "server_error"])
    def test_an_error_that_is_not_an_overflow_propagates_without_compacting(
        self, tmp_path: Path, stub_api: StubApi, api: Api, client: Any, which: str
    ) -> None:
        session, settings = waiting_session(tmp_path)
        before = session.path.read_bytes()
        error: ScriptedError = getattr(api, which)
        stub_api.fail_next(api.path, error, label="agent")
        with pytest.raises(Exception) as caught:
            call_with_overflow_recovery(
                session, lambda c: api.send(client, c), api.summarizer(client), settings
            )
        assert getattr(caught.value, "status_code", None) == error.status
        assert error.message in str(caught.value)
        assert session.path.read_bytes() == before
        assert len(stub_api.requests) == 1
        assert_clean(stub_api)

    def test_a_call_that_succeeds_is_returned_without_compacting(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session, settings = waiting_session(tmp_path)
        before = session.path.read_bytes()
        stub_api.reply_with("first try")
        answer = call_with_overflow_recovery(
            session, lambda c: send_anthropic(claude, c), ANTHROPIC.summarizer(claude), settings
        )
        assert answer == "first try"
        assert session.path.read_bytes() == before
        assert len(stub_api.requests) == 1
        assert_clean(stub_api)

    def test_a_failed_compaction_is_a_compaction_error_caused_by_the_overflow(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session, settings = waiting_session(tmp_path)
        before = session.path.read_bytes()
        stub_api.fail_next("/v1/messages", ANTHROPIC_PROMPT_TOO_LONG, label="agent")
        stub_api.fail_next("/v1/messages", ANTHROPIC_SERVER_ERROR)  # the summary request
        with pytest.raises(CompactionError) as caught:
            call_with_overflow_recovery(
                session,
                lambda c: send_anthropic(claude, c),
                ANTHROPIC.summarizer(claude),
                settings,
            )
        message = str(caught.value)
        assert message.startswith("the context overflowed and could not be compacted: ")
        assert "anthropic summarizer failed (HTTP 500)" in message
        assert isinstance(caught.value.__cause__, anthropic.BadRequestError)
        assert "prompt is too long" in str(caught.value.__cause__)
        assert session.path.read_bytes() == before
        assert len(stub_api.requests) == 2
        assert_clean(stub_api)


# --- compacting after a turn ----------------------------------------------------------------------


class TestAutoCompact:
    # The session's context is exactly 9000 tokens (the last assistant's usage), so with
    # the reserve of 10,000 a window of 19,000 leaves the reserve free and 18,999 does not.

    def test_the_context_is_measured_from_the_last_usage(self, tmp_path: Path) -> None:
        assert context_tokens(turns_session(tmp_path, last_total_tokens=9000)) == 9000

    def test_below_the_threshold_nothing_is_sent_or_written(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session = turns_session(tmp_path, last_total_tokens=9000)
        before = session.path.read_bytes()
        settings = CompactionSettings(reserve_tokens=RESERVE, keep_recent_tokens=100)
        found = auto_compact(session, 19_000, ANTHROPIC.summarizer(claude), settings)
        assert found is None
        assert session.path.read_bytes() == before
        assert stub_api.requests == []

    def test_above_the_threshold_a_compaction_is_appended_and_returned(
        self, tmp_path: Path, stub_api: StubApi, gpt: openai.OpenAI
    ) -> None:
        session = turns_session(tmp_path, last_total_tokens=9000)
        *_, question, answer = session.build_context().messages
        keep = estimate_tokens(question) + estimate_tokens(answer)
        settings = CompactionSettings(reserve_tokens=RESERVE, keep_recent_tokens=keep)
        stub_api.reply_with("AUTO SUMMARY of turns 1-3")
        found = auto_compact(session, 18_999, RESPONSES.summarizer(gpt), settings)
        assert found is not None
        (entry,) = compactions(session.path)
        assert entry_dicts(session.path)[-1] == entry
        assert found.entry_id == entry["id"]
        assert found.summary == entry["summary"] == "AUTO SUMMARY of turns 1-3"
        assert found.summarizer == "openai"
        assert entry["tokensBefore"] == found.tokens_before == 9000
        assert found.tokens_after < found.estimated_before
        (request,) = stub_api.requests_to("/v1/responses")
        assert request.body["max_output_tokens"] == 8000
        assert "Question 3:" in str(request.body["input"])
        assert "Question 4:" not in str(request.body["input"])
        messages = Session.open(session.path).build_context().messages
        assert [m["role"] for m in messages] == ["compactionSummary", "user", "assistant"]
        assert_clean(stub_api)

    def test_above_the_threshold_with_everything_recent_nothing_is_written(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session = turns_session(tmp_path, last_total_tokens=9000)
        before = session.path.read_bytes()
        settings = CompactionSettings(reserve_tokens=RESERVE, keep_recent_tokens=1_000_000)
        assert auto_compact(session, 18_999, ANTHROPIC.summarizer(claude), settings) is None
        assert session.path.read_bytes() == before
        assert stub_api.requests == []

    def test_disabled_settings_never_compact(
        self, tmp_path: Path, stub_api: StubApi, claude: anthropic.Anthropic
    ) -> None:
        session = turns_session(tmp_path, last_total_tokens=9000)
        before = session.path.read_bytes()
        settings = CompactionSettings(enabled=False, reserve_tokens=RESERVE, keep_recent_tokens=1)
        assert auto_compact(session, 1_000, ANTHROPIC.summarizer(claude), settings) is None
        assert session.path.read_bytes() == before
        assert stub_api.requests == []


def test_anthropics_input_plus_max_tokens_message_is_an_overflow() -> None:
    text = (
        "input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, "
        "decrease input length or `max_tokens` and try again"
    )
    assert is_context_overflow(text)


def test_an_exception_that_is_not_an_http_error_is_never_an_overflow() -> None:
    assert not is_context_overflow(ValueError("maximum context length must be an int"))
