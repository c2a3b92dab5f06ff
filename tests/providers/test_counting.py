"""Exact token counts through the providers' counting endpoints, with the real SDK
clients against the loopback stub (which counts request bytes / 4)."""

from __future__ import annotations

import anthropic
import openai
from locations import FIXTURES
from stub_api import StubApi

from jsonl_session import Session
from jsonl_session.providers.counting import count_tokens_anthropic, count_tokens_openai

FIXTURE = FIXTURES / "tool-calls.jsonl"


def test_anthropic_counts_the_request_the_adapter_builds(
    stub_api: StubApi, claude: anthropic.Anthropic
) -> None:
    context = Session.open(FIXTURE).build_context()
    counted = count_tokens_anthropic(claude, "claude-test", context, system="Be brief.")
    assert counted > 0
    assert stub_api.take_violations() == []


def test_openai_counts_the_responses_input_the_adapter_builds(
    stub_api: StubApi, gpt: openai.OpenAI
) -> None:
    context = Session.open(FIXTURE).build_context()
    small = count_tokens_openai(gpt, "gpt-test", context.messages[:1])
    full = count_tokens_openai(gpt, "gpt-test", context, instructions="Be brief.")
    assert full > small > 0
    assert stub_api.take_violations() == []
