"""The history every provider adapter starts from: plain roles, and repair that is
deterministic, idempotent and always reported."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import assistant_message, user_message
from builders import history_assistant_calling as assistant_calling
from builders import history_result as result
from hypothesis import given, settings
from hypothesis import strategies as st

from jsonl_session.messages import tool_calls
from jsonl_session.providers.history import NO_RESULT_TEXT, prepare_history


class TestPlainRoles:
    def test_summaries_become_user_text_wrapped_in_tags(self) -> None:
        history = prepare_history(
            [
                {
                    "role": "compactionSummary",
                    "summary": "we fixed x",
                    "tokensBefore": 9,
                    "timestamp": 1,
                },
                {"role": "branchSummary", "summary": "tried y", "fromId": "a", "timestamp": 2},
            ]
        )
        texts = [m["content"][0]["text"] for m in history.messages]
        assert "<conversation-summary>\nwe fixed x\n</conversation-summary>" in texts[0]
        assert "<branch-summary>\ntried y\n</branch-summary>" in texts[1]
        assert [m["role"] for m in history.messages] == ["user", "user"]
        assert history.repairs == []

    def test_a_custom_message_becomes_a_user_message_with_its_blocks(self) -> None:
        image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        history = prepare_history(
            [
                {
                    "role": "custom",
                    "customType": "x",
                    "content": "note",
                    "display": True,
                    "timestamp": 1,
                },
                {
                    "role": "custom",
                    "customType": "x",
                    "content": [image],
                    "display": False,
                    "timestamp": 2,
                },
            ]
        )
        assert history.messages[0]["content"] == [{"type": "text", "text": "note"}]
        assert history.messages[1]["content"] == [image]

    def test_a_shell_command_is_told_with_its_output_and_status(self) -> None:
        (message,) = prepare_history(
            [
                {
                    "role": "bashExecution",
                    "command": "make",
                    "output": "boom",
                    "exitCode": 2,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": 1,
                }
            ]
        ).messages
        text = message["content"][0]["text"]
        assert "`make`" in text and "boom" in text and "status 2" in text

    def test_a_command_excluded_from_context_is_left_out_and_reported(self) -> None:
        history = prepare_history(
            [
                user_message("hi"),
                {
                    "role": "bashExecution",
                    "command": "ls",
                    "output": "",
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "excludeFromContext": True,
                    "timestamp": 1,
                },
            ]
        )
        assert len(history.messages) == 1
        assert [(r.kind, r.index) for r in history.repairs] == [("excluded-command-dropped", 1)]


class TestRepair:
    def test_a_tool_call_without_a_result_gets_a_synthetic_error_result(self) -> None:
        history = prepare_history(
            [user_message("go"), assistant_calling("c1", "c2"), result("c1"), user_message("next")]
        )
        roles = [(m["role"], m.get("toolCallId")) for m in history.messages]
        assert roles == [
            ("user", None),
            ("assistant", None),
            ("toolResult", "c1"),
            ("toolResult", "c2"),
            ("user", None),
        ]
        synthetic = history.messages[3]
        assert synthetic["isError"] is True and synthetic["content"][0]["text"] == NO_RESULT_TEXT
        assert [(r.kind, r.index) for r in history.repairs] == [("missing-tool-result-added", 3)]

    def test_a_call_at_the_very_end_gets_its_result_too(self) -> None:
        history = prepare_history([user_message("go"), assistant_calling("c1")])
        assert history.messages[-1]["toolCallId"] == "c1"

    def test_a_result_with_no_call_is_dropped(self) -> None:
        history = prepare_history([user_message("go"), result("ghost"), assistant_message("hi")])
        assert [m["role"] for m in history.messages] == ["user", "assistant"]
        assert [(r.kind, r.index) for r in history.repairs] == [("orphan-tool-result-dropped", 1)]

    def test_a_second_result_for_one_call_is_dropped(self) -> None:
        history = prepare_history(
            [user_message("go"), assistant_calling("c1"), result("c1"), result("c1", "again")]
        )
        assert [m.get("toolCallId") for m in history.messages] == [None, None, "c1"]
        assert history.repairs[0].kind == "duplicate-tool-result-dropped"

    def test_an_empty_aborted_assistant_message_is_dropped(self) -> None:
        aborted = assistant_message("")
        aborted["content"] = []
        aborted["stopReason"] = "aborted"
        history = prepare_history([user_message("go"), aborted, user_message("again")])
        assert [m["role"] for m in history.messages] == ["user", "user"]
        assert "aborted" in history.repairs[0].detail

    @pytest.mark.parametrize("reason", ["aborted", "error"])
    def test_a_turn_that_failed_is_not_replayed_even_with_content(self, reason: str) -> None:
        partial = assistant_calling("c1")
        partial["stopReason"] = reason
        history = prepare_history(
            [user_message("go"), partial, result("c1"), user_message("again")]
        )
        assert [m["role"] for m in history.messages] == ["user", "user"]
        assert [r.kind for r in history.repairs] == [
            "failed-turn-dropped",
            "orphan-tool-result-dropped",
        ]

    def test_the_input_is_not_changed(self) -> None:
        messages = [user_message("go"), assistant_calling("c1"), result("ghost")]
        before = copy.deepcopy(messages)
        prepare_history(messages)
        assert messages == before


# --- properties ------------------------------------------------------------------------

ids = st.sampled_from(["c1", "c2", "c3"])
messages = st.one_of(
    st.builds(lambda t: user_message(t), st.sampled_from(["a", "", " "])),
    st.builds(
        lambda i, s: assistant_calling(*i, stop=s),
        st.lists(ids, max_size=2, unique=True),
        st.sampled_from(["toolUse", "aborted", "error", "stop"]),
    ),
    st.builds(lambda t: assistant_message(t), st.sampled_from(["x", ""])),
    st.builds(result, ids),
    st.just(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "x",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "excludeFromContext": True,
            "timestamp": 1,
        }
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(messages, max_size=12))
def test_repair_is_idempotent_and_leaves_every_call_answered_right_after_it(
    history_in: list[dict[str, Any]],
) -> None:
    once = prepare_history(history_in)
    twice = prepare_history(once.messages)
    assert twice.messages == once.messages
    assert twice.repairs == []
    assert len(once.sources) == len(once.messages)
    assert once.sources == sorted(once.sources)
    out = once.messages
    for position, message in enumerate(out):
        assert message["role"] in ("user", "assistant", "toolResult")
        if message["role"] == "assistant":
            expected = [c["id"] for c in tool_calls(message)]
            following = [
                m.get("toolCallId") for m in out[position + 1 : position + 1 + len(expected)]
            ]
            assert sorted(following) == sorted(expected)
        if message["role"] == "toolResult":
            before = out[position - 1]
            assert before["role"] in ("assistant", "toolResult")


class TestReusedToolCallIds:
    def test_an_id_used_in_an_earlier_turn_is_renamed_with_its_result(self) -> None:
        history = prepare_history(
            [
                user_message("go"),
                assistant_calling("call_0"),
                result("call_0", "first"),
                assistant_calling("call_0"),
                result("call_0", "second"),
            ]
        )
        calls = [tool_calls(m)[0]["id"] for m in history.messages if m["role"] == "assistant"]
        results = [m["toolCallId"] for m in history.messages if m["role"] == "toolResult"]
        assert calls == ["call_0", "call_0_2"] and results == ["call_0", "call_0_2"]
        assert [(r.kind, r.index) for r in history.repairs] == [("tool-call-id-renamed", 3)]
        assert all(
            "_writtenId" not in b
            for m in history.messages
            for b in m.get("content", [])
            if isinstance(b, dict)
        )


class TestNormalizing:
    def test_a_lone_surrogate_becomes_a_replacement_character_and_is_reported(self) -> None:
        history = prepare_history([user_message("face \ud83d cut")])
        assert history.messages[0]["content"] == "face \ufffd cut"
        assert [r.kind for r in history.repairs] == ["lone-surrogate-replaced"]

    def test_arguments_written_as_json_text_are_parsed_and_reported(self) -> None:
        message = assistant_calling("c1")
        message["content"][0]["arguments"] = '{"path": "a.txt"}'
        history = prepare_history([user_message("go"), message, result("c1")])
        assert tool_calls(history.messages[1])[0]["arguments"] == {"path": "a.txt"}
        assert [r.kind for r in history.repairs] == ["tool-arguments-replaced"]

    def test_arguments_that_are_not_an_object_become_empty(self) -> None:
        message = assistant_calling("c1")
        message["content"][0]["arguments"] = ["a"]
        history = prepare_history([user_message("go"), message, result("c1")])
        assert tool_calls(history.messages[1])[0]["arguments"] == {}
        assert "sent as {}" in history.repairs[0].detail
