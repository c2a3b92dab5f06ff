"""The Anthropic adapter: a context as messages.create keyword arguments."""

from __future__ import annotations

import itertools
import json

from builders import anthropic_tool_result as tool_result
from builders import assistant_with, user_message
from locations import FIXTURES

from jsonl_session import Session
from jsonl_session.providers.anthropic import CONTINUATION_TEXT, to_anthropic

TEXT = {"type": "text", "text": "done"}


class TestShape:
    def test_the_system_prompt_is_top_level_and_tools_carry_their_schema(self) -> None:
        tool = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}
        request = to_anthropic([user_message("hi")], system="Be brief.", tools=[tool])
        assert request.kwargs["system"] == "Be brief."
        assert request.kwargs["tools"] == [
            {"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}
        ]
        assert request.kwargs["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]}
        ]

    def test_tool_calls_become_tool_use_and_results_tool_result_in_a_user_turn(self) -> None:
        call = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "a"}}
        request = to_anthropic(
            [user_message("go"), assistant_with(call), tool_result("toolu_1", TEXT, error=True)]
        )
        _, assistant, results = request.kwargs["messages"]
        assert assistant["content"] == [
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}}
        ]
        assert results == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [TEXT],
                    "is_error": True,
                }
            ],
        }

    def test_images_become_base64_image_blocks(self) -> None:
        image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        message = {
            "role": "user",
            "content": [{"type": "text", "text": "see"}, image],
            "timestamp": 1,
        }
        (turn,) = to_anthropic([message]).kwargs["messages"]
        assert turn["content"][1] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        }


class TestThinking:
    def test_signed_thinking_from_this_api_keeps_its_signature(self) -> None:
        thinking = {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"}
        request = to_anthropic([user_message("q"), assistant_with(thinking, TEXT)])
        assert request.kwargs["messages"][1]["content"][0] == {
            "type": "thinking",
            "thinking": "hmm",
            "signature": "sig",
        }

    def test_redacted_thinking_is_sent_back_as_its_opaque_data(self) -> None:
        redacted = {
            "type": "thinking",
            "thinking": "x",
            "thinkingSignature": "opaque",
            "redacted": True,
        }
        request = to_anthropic([user_message("q"), assistant_with(redacted, TEXT)])
        assert request.kwargs["messages"][1]["content"][0] == {
            "type": "redacted_thinking",
            "data": "opaque",
        }

    def test_unsigned_or_foreign_thinking_becomes_text(self) -> None:
        unsigned = {"type": "thinking", "thinking": "plan"}
        foreign = {"type": "thinking", "thinking": "idea", "thinkingSignature": "s"}
        request = to_anthropic(
            [
                user_message("q"),
                assistant_with(unsigned, TEXT),
                user_message("q2"),
                assistant_with(foreign, TEXT, api="openai-responses"),
            ]
        )
        assert request.kwargs["messages"][1]["content"][0] == {"type": "text", "text": "plan"}
        assert request.kwargs["messages"][3]["content"][0] == {"type": "text", "text": "idea"}

    def test_a_turn_with_only_foreign_redacted_thinking_is_dropped_and_reported(self) -> None:
        redacted = {"type": "thinking", "thinking": "x", "thinkingSignature": "o", "redacted": True}
        request = to_anthropic(
            [
                user_message("q"),
                assistant_with(redacted, api="openai-responses"),
                user_message("q2"),
            ]
        )
        assert [m["role"] for m in request.kwargs["messages"]] == ["user"]
        assert [(r.kind, r.index) for r in request.repairs] == [("unsendable-message-dropped", 1)]


class TestTurns:
    def test_consecutive_user_messages_are_merged_results_first(self) -> None:
        call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
        request = to_anthropic(
            [
                user_message("go"),
                assistant_with(call),
                tool_result("c1", TEXT),
                user_message("next"),
            ]
        )
        last = request.kwargs["messages"][-1]
        assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
        assert len(request.kwargs["messages"]) == 3

    def test_a_history_starting_with_the_model_gets_a_user_turn_first(self) -> None:
        request = to_anthropic([assistant_with(TEXT)])
        first = request.kwargs["messages"][0]
        assert first == {"role": "user", "content": [{"type": "text", "text": CONTINUATION_TEXT}]}
        assert [r.kind for r in request.repairs] == ["placeholder-user-added"]

    def test_foreign_tool_ids_are_made_to_fit_and_stay_paired(self) -> None:
        long_id = "fc_" + "a" * 80 + "|item.1"
        call = {"type": "toolCall", "id": long_id, "name": "read", "arguments": {}}
        request = to_anthropic(
            [
                user_message("go"),
                assistant_with(call, api="openai-responses"),
                tool_result(long_id, TEXT),
            ]
        )
        use = request.kwargs["messages"][1]["content"][0]
        result = request.kwargs["messages"][2]["content"][0]
        assert use["id"] == result["tool_use_id"]
        assert len(use["id"]) <= 64 and all(c.isalnum() or c in "_-" for c in use["id"])


class TestFixtures:
    def test_every_fixture_leaf_gives_alternating_turns_starting_with_the_user(self) -> None:
        checked = 0
        for path in sorted(FIXTURES.glob("*.jsonl")):
            if path.stem.startswith("damaged"):
                continue
            session = Session.open(path)
            for entry in session.entries:
                messages = to_anthropic(session.build_context(entry.id)).kwargs["messages"]
                if not messages:
                    continue
                roles = [m["role"] for m in messages]
                assert roles[0] == "user", path.name
                assert all(a != b for a, b in itertools.pairwise(roles)), path.name
                json.dumps(messages)  # plain JSON all the way down
                checked += 1
        assert checked > 100


def test_a_final_assistant_turn_loses_its_trailing_whitespace_and_says_so() -> None:
    request = to_anthropic([user_message("q"), assistant_with({"type": "text", "text": "Sure, "})])
    assert request.kwargs["messages"][-1]["content"][-1]["text"] == "Sure,"
    assert [r.kind for r in request.repairs] == ["trailing-whitespace-trimmed"]


def test_thinking_signed_by_another_provider_on_the_same_api_is_not_sent_as_signed() -> None:
    # pi uses the anthropic-messages api for other providers' compatible endpoints too.
    thinking = {"type": "thinking", "thinking": "plan", "thinkingSignature": "mm-sig"}
    redacted = {"type": "thinking", "thinking": "x", "thinkingSignature": "o", "redacted": True}
    foreign = assistant_with(thinking, redacted, TEXT)
    foreign["provider"] = "minimax"
    request = to_anthropic([user_message("q"), foreign])
    assert request.kwargs["messages"][1]["content"] == [{"type": "text", "text": "plan"}, TEXT]
