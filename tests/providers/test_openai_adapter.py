"""The OpenAI adapters: contexts from real session files become Chat Completions
messages and Responses input items of the exact shapes those APIs take."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from builders import assistant_calling as calling
from builders import assistant_message, user_message
from builders import image_block as image
from builders import openai_result as result
from builders import text_block as text
from builders import tool_call as call
from locations import FIXTURES

from jsonl_session import Session
from jsonl_session.providers.common import ToolSpec
from jsonl_session.providers.history import NO_RESULT_TEXT
from jsonl_session.providers.openai import to_openai_chat, to_openai_responses
from jsonl_session.providers.openai_common import EMPTY_RESULT_TEXT, api_call_id

WELL_FORMED = [
    "linear",
    "tool-calls",
    "images",
    "branching",
    "branch-summary",
    "compaction-one",
    "compaction-two",
    "labels",
    "named",
    "custom-entries",
    "bash-execution",
    "model-thinking",
    "fork-child",
    "v1",
    "v2-hook-message",
]
ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
READ_TOOL = ToolSpec(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def fixture(name: str) -> Session:
    return Session.open(FIXTURES / f"{name}.jsonl")


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def written(tmp_path: Path, *messages: dict[str, Any]) -> Session:
    """A real session file holding these messages, reopened from disk."""
    session = Session.create("/work/project", path=tmp_path / "s.jsonl")
    for message in messages:
        session.append_message(message)
    session.flush()
    return Session.open(session.path)


# --- what the APIs require, checked on every output -----------------------------------


def check_chat(messages: list[dict[str, Any]]) -> None:
    """Fail on anything Chat Completions would refuse."""
    open_calls: list[str] = []
    for position, message in enumerate(messages):
        role = message["role"]
        if open_calls and role != "tool":
            pytest.fail(f"calls {open_calls} unanswered before message {position}")
        if role in ("system", "developer"):
            assert position == 0 and isinstance(message["content"], str)
        elif role == "user":
            content = message["content"]
            assert content, f"empty user message at {position}"
            if isinstance(content, list):
                for part in content:
                    if part["type"] == "text":
                        assert isinstance(part["text"], str) and part["text"]
                    else:
                        assert part["type"] == "image_url"
                        assert part["image_url"]["url"].startswith("data:image/")
        elif role == "assistant":
            calls = message.get("tool_calls", [])
            assert message["content"] or calls, f"empty assistant message at {position}"
            assert message["content"] is None or isinstance(message["content"], str)
            for tool_call in calls:
                assert tool_call["type"] == "function" and ID_RE.match(tool_call["id"])
                assert isinstance(json.loads(tool_call["function"]["arguments"]), dict)
            open_calls = [c["id"] for c in calls]
        elif role == "tool":
            assert message["tool_call_id"] in open_calls, f"unexpected result at {position}"
            assert isinstance(message["content"], str) and message["content"]
            open_calls.remove(message["tool_call_id"])
        else:
            pytest.fail(f"unknown role {role}")
    assert not open_calls, f"calls {open_calls} never answered"


def check_responses(items: list[dict[str, Any]]) -> None:
    """Fail on anything the Responses API would refuse."""
    open_calls: list[str] = []
    for position, item in enumerate(items):
        kind = item["type"]
        if open_calls and kind not in ("function_call", "function_call_output"):
            pytest.fail(f"calls {open_calls} unanswered before item {position}")
        if kind == "message":
            assert item["content"], f"empty message at {position}"
            allowed = {"user": {"input_text", "input_image"}, "assistant": {"output_text"}}
            for part in item["content"]:
                assert part["type"] in allowed[item["role"]]
                if part["type"] == "input_image":
                    assert part["image_url"].startswith("data:image/")
                    assert part["detail"] == "auto"
                else:
                    assert isinstance(part["text"], str) and part["text"]
        elif kind == "function_call":
            assert ID_RE.match(item["call_id"]) and item["name"]
            assert isinstance(json.loads(item["arguments"]), dict)
            open_calls.append(item["call_id"])
        elif kind == "function_call_output":
            assert item["call_id"] in open_calls, f"unexpected output at {position}"
            assert isinstance(item["output"], str) and item["output"]
            open_calls.remove(item["call_id"])
        else:
            pytest.fail(f"unknown item type {kind}")
    assert not open_calls, f"calls {open_calls} never answered"


@pytest.mark.parametrize("name", WELL_FORMED)
def test_every_leaf_of_every_fixture_gives_requests_both_apis_accept(name: str) -> None:
    session = fixture(name)
    leaves = [entry.id for entry in session.entries]
    for leaf in leaves:
        context = session.build_context(leaf)
        if not context.messages:
            continue
        chat = to_openai_chat(context, "You are terse.", [READ_TOOL])
        check_chat(chat.kwargs["messages"])
        responses = to_openai_responses(context, "You are terse.", [READ_TOOL])
        check_responses(responses.kwargs["input"])
        assert chat.repairs == responses.repairs


# --- Chat Completions --------------------------------------------------------------------


class TestChat:
    def test_the_system_prompt_comes_first_as_a_system_message(self) -> None:
        request = to_openai_chat(fixture("tool-calls").build_context(), "Be brief.")
        assert request.kwargs["messages"][0] == {"role": "system", "content": "Be brief."}
        assert request.kwargs["messages"][1]["role"] == "user"

    def test_the_system_prompt_can_be_a_developer_message(self) -> None:
        context = fixture("linear").build_context()
        request = to_openai_chat(context, "Be brief.", system_role="developer")
        assert request.kwargs["messages"][0] == {"role": "developer", "content": "Be brief."}

    def test_an_unknown_system_role_is_refused(self) -> None:
        with pytest.raises(ValueError, match="system_role"):
            to_openai_chat([user_message()], "x", system_role="assistant")  # type: ignore[arg-type]

    def test_without_a_system_prompt_the_user_speaks_first_and_no_tools_key_is_sent(
        self,
    ) -> None:
        request = to_openai_chat(fixture("linear").build_context())
        assert request.kwargs["messages"][0]["role"] == "user"
        assert set(request.kwargs) == {"messages"}
        assert set(to_openai_chat([user_message()], tools=[]).kwargs) == {"messages"}

    def test_tool_call_arguments_are_compact_json_that_loads_back_to_the_recorded_dict(
        self,
    ) -> None:
        context = fixture("tool-calls").build_context()
        recorded = {
            block["id"]: block["arguments"]
            for m in context.messages
            if m["role"] == "assistant"
            for block in m["content"]
            if block["type"] == "toolCall"
        }
        sent = {
            c["id"]: c["function"]["arguments"]
            for m in to_openai_chat(context).kwargs["messages"]
            for c in m.get("tool_calls", [])
        }
        assert len(recorded) == 7 and sent.keys() == recorded.keys()
        for call_id, arguments in sent.items():
            assert isinstance(arguments, str)
            assert json.loads(arguments) == recorded[call_id]
            assert arguments == compact(recorded[call_id])

    def test_two_calls_in_one_turn_are_answered_by_two_tool_messages_right_after(
        self,
    ) -> None:
        messages = to_openai_chat(fixture("tool-calls").build_context()).kwargs["messages"]
        turn = next(i for i, m in enumerate(messages) if len(m.get("tool_calls", [])) == 2)
        ids = [c["id"] for c in messages[turn]["tool_calls"]]
        assert messages[turn]["content"] is None
        assert [(m["role"], m["tool_call_id"]) for m in messages[turn + 1 : turn + 3]] == [
            ("tool", ids[0]),
            ("tool", ids[1]),
        ]
        assert messages[turn + 1]["content"] == (
            "41:  const { completed } = req.body;\n44:  todo.completed = completed;\n"
        )

    def test_assistant_text_is_a_string_and_thinking_is_left_out(self) -> None:
        context = fixture("linear").build_context()
        messages = to_openai_chat(context).kwargs["messages"]
        first_answer = messages[1]
        assert first_answer["role"] == "assistant" and isinstance(first_answer["content"], str)
        assert first_answer["content"].startswith("It calls `db.update(id, patch)`")
        assert "behaviour" not in json.dumps(messages)  # the thinking block's words
        assert "tool_calls" not in first_answer

    def test_text_and_a_call_in_one_message_keep_both(self) -> None:
        messages = to_openai_chat(fixture("tool-calls").build_context()).kwargs["messages"]
        assert messages[1]["content"] == "Let me look at the test."
        assert [c["function"]["name"] for c in messages[1]["tool_calls"]] == ["read"]

    def test_string_user_content_stays_a_string_and_blocks_become_parts(self) -> None:
        messages = to_openai_chat(fixture("linear").build_context()).kwargs["messages"]
        assert messages[2] == {"role": "user", "content": "Is that a bug or intended?"}
        assert messages[0]["content"] == [
            {
                "type": "text",
                "text": "What does the `PATCH /todos/:id` route do when the id is unknown?",
            }
        ]

    def test_user_images_become_data_url_parts(self) -> None:
        context = fixture("images").build_context()
        recorded = context.messages[0]["content"][1]
        messages = to_openai_chat(context).kwargs["messages"]
        assert messages[0]["content"][1] == {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{recorded['data']}"},
        }
        image_only = messages[-2]
        assert [p["type"] for p in image_only["content"]] == ["image_url"]

    def test_an_image_in_a_tool_result_follows_in_a_user_message_after_the_result(
        self,
    ) -> None:
        context = fixture("images").build_context()
        logo = context.messages[4]["content"][1]["data"]
        messages = to_openai_chat(context).kwargs["messages"]
        tool = next(m for m in messages if m["role"] == "tool")
        after = messages[messages.index(tool) + 1]
        assert tool["content"] == (
            "Read image file [image/png]\n\n"
            "[The result also held 1 image, attached in the next user message.]"
        )
        assert after["role"] == "user"
        assert after["content"] == [
            {
                "type": "text",
                "text": "Images from the result of tool call "
                "toolu_01i1eXPwS5mlfZEeAt25N56E (read):",
            },
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{logo}"}},
        ]

    def test_images_from_several_results_come_after_all_results_of_the_turn(
        self, tmp_path: Path
    ) -> None:
        session = written(
            tmp_path,
            user_message("look at both"),
            calling(call("c1", path="a.png"), call("c2", path="b.png")),
            result("c1", image("AAAA")),
            result("c2", image("BBBB", "image/jpeg"), image("CCCC")),
            assistant_message("both seen"),
        )
        request = to_openai_chat(session.build_context())
        messages = request.kwargs["messages"]
        check_chat(messages)
        assert [m["role"] for m in messages] == [
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "assistant",
        ]
        assert messages[2]["content"] == (
            "[The result also held 1 image, attached in the next user message.]"
        )
        assert "2 images" in messages[3]["content"]
        urls = [p["image_url"]["url"] for p in messages[4]["content"] if p["type"] == "image_url"]
        assert urls == [
            "data:image/png;base64,AAAA",
            "data:image/jpeg;base64,BBBB",
            "data:image/png;base64,CCCC",
        ]
        assert request.repairs == []

    def test_tools_are_function_tools_from_specs_or_dicts(self) -> None:
        as_dict = {"name": "bash", "description": "Run a command"}
        request = to_openai_chat([user_message()], tools=[READ_TOOL, as_dict])
        assert request.kwargs["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "read",
                    "description": "Read a file",
                    "parameters": READ_TOOL.parameters,
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "bash",
                    "description": "Run a command",
                    "parameters": {"type": "object", "properties": {}},
                },
            },
        ]

    def test_consecutive_user_messages_are_kept_apart(self) -> None:
        request = to_openai_chat([user_message("one"), user_message("two")])
        assert request.kwargs["messages"] == [
            {"role": "user", "content": "one"},
            {"role": "user", "content": "two"},
        ]


# --- synthetic messages and repair (the same for both APIs) -----------------------------


class TestSyntheticAndRepair:
    def test_a_compaction_summary_becomes_user_text_in_tags(self) -> None:
        messages = to_openai_chat(fixture("compaction-two").build_context()).kwargs["messages"]
        (part,) = messages[0]["content"]
        assert messages[0]["role"] == "user"
        assert "<conversation-summary>\n## Goal\nMigrate the project to ESM." in part["text"]
        assert part["text"].endswith("</conversation-summary>")

    def test_a_branch_summary_becomes_user_text_in_tags(self) -> None:
        items = to_openai_responses(fixture("branch-summary").build_context()).kwargs["input"]
        first = items[0]
        assert first["role"] == "user"
        assert "<branch-summary>\nEarlier conversation (abandoned)" in first["content"][0]["text"]

    def test_shell_commands_become_user_text_and_an_excluded_one_is_dropped_and_reported(
        self,
    ) -> None:
        request = to_openai_chat(fixture("bash-execution").build_context())
        texts = [
            m["content"][0]["text"]
            for m in request.kwargs["messages"]
            if m["role"] == "user" and "shell command" in m["content"][0]["text"]
        ]
        assert len(texts) == 4
        assert texts[0].startswith("The user ran this shell command: `npx madge --circular src`")
        assert not any("git status" in t for t in texts)
        assert [(r.kind, r.index) for r in request.repairs] == [("excluded-command-dropped", 3)]

    def test_custom_messages_become_user_messages_with_text_and_images(self) -> None:
        request = to_openai_chat(fixture("custom-entries").build_context())
        messages = request.kwargs["messages"]
        assert messages[1] == {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "Current plan:\n1. add users table\n2. hash passwords\n"
                    "3. JWT middleware",
                }
            ],
        }
        screenshot = next(m for m in messages if "The login page now:" in json.dumps(m))
        assert [p["type"] for p in screenshot["content"]] == ["text", "image_url"]
        assert screenshot["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")

    def test_history_repairs_are_reported_and_a_missing_result_gets_a_tool_message(
        self, tmp_path: Path
    ) -> None:
        aborted = assistant_message("")
        aborted["content"] = []
        aborted["stopReason"] = "aborted"
        session = written(
            tmp_path,
            user_message("go"),
            calling(call("c1", path="a.py"), call("c2", path="b.py")),
            result("c1", text("a")),
            result("ghost", text("who")),
            user_message("again"),
            aborted,
            user_message("once more"),
        )
        chat = to_openai_chat(session.build_context())
        assert [(r.kind, r.index) for r in chat.repairs] == [
            ("orphan-tool-result-dropped", 3),
            ("missing-tool-result-added", 4),
            ("empty-assistant-dropped", 5),
        ]
        messages = chat.kwargs["messages"]
        check_chat(messages)
        assert messages[3] == {"role": "tool", "tool_call_id": "c2", "content": NO_RESULT_TEXT}
        assert [m["role"] for m in messages[4:]] == ["user", "user"]
        responses = to_openai_responses(session.build_context())
        assert responses.repairs == chat.repairs
        assert {"type": "function_call_output", "call_id": "c2", "output": NO_RESULT_TEXT} in (
            responses.kwargs["input"]
        )

    def test_an_assistant_message_with_only_thinking_is_dropped_and_reported(self) -> None:
        thinking_only = assistant_message()
        thinking_only["content"] = [
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "s"}
        ]
        context = [user_message("q"), thinking_only, user_message("well?")]
        for request in (to_openai_chat(context), to_openai_responses(context)):
            assert [r.to_dict() for r in request.repairs] == [
                {
                    "kind": "empty-assistant-dropped",
                    "index": 1,
                    "detail": "assistant message with only thinking, "
                    "which OpenAI APIs do not take back",
                }
            ]
        assert [m["role"] for m in to_openai_chat(context).kwargs["messages"]] == ["user", "user"]

    def test_thinking_next_to_a_call_is_left_out_without_a_report(self) -> None:
        context = [user_message("q"), calling(call("c1", path="x"), thinking="plan"), result("c1")]
        request = to_openai_chat(context)
        assert request.repairs == []
        assert "plan" not in json.dumps(request.kwargs)
        assert request.kwargs["messages"][2]["content"] == EMPTY_RESULT_TEXT

    def test_long_or_composite_ids_are_replaced_the_same_way_for_call_and_result(self) -> None:
        composite = "call_Qx7|fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f"
        context = [user_message("q"), calling(call(composite, path="x")), result(composite)]
        chat = to_openai_chat(context).kwargs["messages"]
        sent = chat[1]["tool_calls"][0]["id"]
        assert ID_RE.match(sent) and sent == chat[2]["tool_call_id"] == api_call_id(composite)
        items = to_openai_responses(context).kwargs["input"]
        # Responses takes back the call id of pi's "call_id|item id" pair, as pi sends it
        assert items[1]["call_id"] == items[2]["call_id"] == "call_Qx7"
        assert api_call_id("toolu_01GGrQZ9tvRTPmFBHOr2Bgxd") == "toolu_01GGrQZ9tvRTPmFBHOr2Bgxd"

    def test_arguments_that_are_not_an_object_are_sent_as_an_empty_object(self) -> None:
        broken = call("c1")
        broken["arguments"] = "{not json"
        as_text = call("c2")
        as_text["arguments"] = '{"path": "a.py"}'
        context = [user_message("q"), calling(broken, as_text), result("c1"), result("c2")]
        sent = [
            c["function"]["arguments"]
            for c in to_openai_chat(context).kwargs["messages"][1]["tool_calls"]
        ]
        assert sent == ["{}", '{"path":"a.py"}']

    def test_the_context_is_not_changed(self) -> None:
        context = fixture("images").build_context()
        before = copy.deepcopy(context.messages)
        to_openai_chat(context, "s", [READ_TOOL])
        to_openai_responses(context, "s", [READ_TOOL])
        assert context.messages == before


# --- Responses ---------------------------------------------------------------------------


class TestResponses:
    def test_instructions_and_tools_are_top_level_and_only_when_given(self) -> None:
        request = to_openai_responses(fixture("linear").build_context(), "Be brief.", [READ_TOOL])
        assert request.kwargs["instructions"] == "Be brief."
        assert request.kwargs["tools"] == [
            {
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": READ_TOOL.parameters,
                "strict": False,
            }
        ]
        assert all(item.get("role") != "system" for item in request.kwargs["input"])
        assert set(to_openai_responses([user_message()]).kwargs) == {"input"}

    def test_user_and_assistant_messages_are_message_items(self) -> None:
        items = to_openai_responses(fixture("linear").build_context()).kwargs["input"]
        assert items[2] == {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Is that a bug or intended?"}],
        }
        assert items[3]["type"] == "message" and items[3]["role"] == "assistant"
        (part,) = items[3]["content"]
        assert part["type"] == "output_text" and part["annotations"] == []
        assert part["text"].startswith("A bug: `GET /todos/:id`")
        assert "behaviour" not in json.dumps(items)  # thinking left out

    def test_calls_and_results_are_function_call_items_with_json_arguments(self) -> None:
        context = fixture("tool-calls").build_context()
        items = to_openai_responses(context).kwargs["input"]
        assert [i["type"] for i in items[:5]] == [
            "message",
            "message",
            "function_call",
            "function_call_output",
            "function_call",
        ]
        assert items[1]["content"][0]["text"] == "Let me look at the test."
        recorded = context.messages[1]["content"][2]
        assert items[2] == {
            "type": "function_call",
            "call_id": recorded["id"],
            "name": "read",
            "arguments": compact(recorded["arguments"]),
        }
        assert json.loads(items[2]["arguments"]) == recorded["arguments"]
        assert items[3]["call_id"] == recorded["id"]
        assert items[3]["output"].startswith('import { describe, it, expect } from "vitest";')

    def test_images_become_input_images_with_data_urls(self) -> None:
        context = fixture("images").build_context()
        items = to_openai_responses(context).kwargs["input"]
        assert items[0]["content"][1] == {
            "type": "input_image",
            "image_url": f"data:image/png;base64,{context.messages[0]['content'][1]['data']}",
            "detail": "auto",
        }
        output = next(i for i in items if i["type"] == "function_call_output")
        after = items[items.index(output) + 1]
        assert "attached in the next user message" in output["output"]
        assert after["role"] == "user"
        assert [p["type"] for p in after["content"]] == ["input_text", "input_image"]
