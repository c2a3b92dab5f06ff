"""Exact token counts through the providers' counting endpoints, with the real SDK
clients against the loopback stub (which counts request bytes / 4)."""

from __future__ import annotations

from pathlib import Path

import anthropic
import openai
from stub_api import StubApi

from jsonl_session import Session
from jsonl_session.providers.counting import count_tokens_anthropic, count_tokens_openai

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "tool-calls.jsonl"


def test_anthropic_counts_the_request_the_adapter_builds(stub_api: StubApi) -> None:
    context = Session.open(FIXTURE).build_context()
    with anthropic.Anthropic(api_key="test", base_url=stub_api.url, max_retries=0) as client:
        counted = count_tokens_anthropic(client, "claude-test", context, system="Be brief.")
    assert counted > 0
    assert stub_api.take_violations() == []


def test_openai_counts_the_responses_input_the_adapter_builds(stub_api: StubApi) -> None:
    context = Session.open(FIXTURE).build_context()
    with openai.OpenAI(api_key="test", base_url=stub_api.url + "/v1", max_retries=0) as client:
        small = count_tokens_openai(client, "gpt-test", context.messages[:1])
        full = count_tokens_openai(client, "gpt-test", context, instructions="Be brief.")
    assert full > small > 0
    assert stub_api.take_violations() == []
