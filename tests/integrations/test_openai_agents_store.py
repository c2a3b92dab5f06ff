"""The openai-agents session store on a pi session file: the SDK's real `Runner`, with a
model served by the loopback stub, records its turns in the file, pops one, goes on, and
a new store on the file (a restart) gives the same history; and the store's own
add/get/pop/clear over hand-made Responses items."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import agents
import openai
import pytest
from stub_api import Reply, StubApi, ToolCall

from jsonl_session import LEAF_MARKER_TYPE, AgentsSessionFile, JsonlSessionError, Session
from jsonl_session.integrations import openai_agents_items
from jsonl_session.integrations.openai_agents_store import ITEM_TYPE

T = TypeVar("T")
MODEL = "stub-model"
IMAGE = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def shown(items: list[Any]) -> list[str]:
    """Each item in a few words, to compare histories at a glance."""
    out = []
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            content = item["content"]
            texts = [content] if isinstance(content, str) else [p["text"] for p in content]
            out.append(f"{item['role']}: {' '.join(texts)}")
        elif kind == "function_call":
            out.append(f"call {item['name']} {json.loads(item['arguments'])}")
        elif kind == "function_call_output":
            out.append(f"output {item['output']}")
        else:
            out.append(kind)
    return out


def roles(path: Path) -> list[str]:
    return [message["role"] for message in Session.open(path).build_context().messages]


def store(path: Path, **options: Any) -> AgentsSessionFile:
    return AgentsSessionFile(path, model=MODEL, cwd=path.parent, **options)


# --- items as the SDK gives them -------------------------------------------------------


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def reasoning(n: int) -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": f"thought {n}"}]
    return {"id": f"rs_{n}", "type": "reasoning", "summary": summary, "encrypted_content": "e=="}


def said(n: int, text: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [part],
    }


def call(n: int, name: str = "read") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{n}",
        "call_id": f"call_{n}",
        "name": name,
        "arguments": '{"path": "a.txt"}',
        "status": "completed",
    }


def output(n: int, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": f"call_{n}", "output": text}


WEB_SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "weather"},
}


# --- the Runner on the stub -------------------------------------------------------------


@agents.function_tool
def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


async def turns(stub: StubApi, session: AgentsSessionFile, streamed: bool) -> list[Any]:
    """Three turns of an agent with a tool on ``session``, popping its last item after
    the second; each turn's final output, and the popped item."""
    agents.set_tracing_disabled(True)
    async with openai.AsyncOpenAI(
        api_key="test", base_url=stub.url + "/v1", max_retries=0
    ) as client:
        model = agents.OpenAIResponsesModel(model=MODEL, openai_client=client)
        agent = agents.Agent(name="reader", instructions="Be brief.", tools=[read], model=model)

        async def turn(prompt: str) -> Any:
            if not streamed:
                return (await agents.Runner.run(agent, prompt, session=session)).final_output
            result = agents.Runner.run_streamed(agent, prompt, session=session)
            async for _ in result.stream_events():
                pass
            return result.final_output

        first = await turn("Read a.txt.")
        second = await turn("Thanks.")
        popped = await session.pop_item()
        third = await turn("Bye.")
        return [first, second, popped, third]


class TestARunnerRecordsItsTurns:
    @pytest.fixture(params=[False, True], ids=["run", "run_streamed"])
    def ran(self, request: Any, stub_api: StubApi, tmp_path: Path) -> tuple[Path, list[Any], str]:
        """The file, each turn's output and the popped item, the store's session id."""
        path = tmp_path / "chat.jsonl"
        tool_call = ToolCall("read", {"path": "a.txt"}, id="call_read_1")
        stub_api.reply_with(
            Reply(thinking="Read it first.", tool_calls=[tool_call]),
            Reply(text="It says hi."),
            Reply(text="You are welcome."),
            Reply(text="Goodbye."),
        )
        first = store(path)
        outcome = run(turns(stub_api, first, request.param))
        assert stub_api.take_violations() == []
        return path, outcome, first.session_id

    def test_the_requests_carry_the_history_without_the_popped_item(
        self, ran: tuple[Path, list[Any], str], stub_api: StubApi
    ) -> None:
        _, (first, second, popped, third), _ = ran
        assert (first, second, third) == ("It says hi.", "You are welcome.", "Goodbye.")
        assert shown([popped]) == ["assistant: You are welcome."]
        sent = [shown(r.body["input"]) for r in stub_api.requests_to("/v1/responses")]
        turn_one = [
            "user: Read a.txt.",
            "reasoning",
            "call read {'path': 'a.txt'}",
            "output contents of a.txt",
            "assistant: It says hi.",
        ]
        assert sent == [
            ["user: Read a.txt."],
            turn_one[:4],
            [*turn_one, "user: Thanks."],
            [*turn_one, "user: Thanks.", "user: Bye."],
        ]
        # the reasoning item goes back as the SDK itself sent it; the call under its ids
        requests = stub_api.requests_to("/v1/responses")
        sdk_sent, replayed = requests[1].body["input"], requests[2].body["input"]
        assert replayed[1] == sdk_sent[1] and replayed[1]["encrypted_content"]
        assert (replayed[2]["call_id"], replayed[2]["id"]) == ("call_read_1", sdk_sent[2]["id"])

    def test_the_file_is_a_pi_session_with_the_turns_and_the_pop_kept(
        self, ran: tuple[Path, list[Any], str]
    ) -> None:
        path, _, _ = ran
        session = Session.open(path)
        assert session.problems == []
        assert roles(path) == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "user",
            "assistant",
        ]
        tool_turn, result = session.build_context().messages[1:3]
        assert [b["type"] for b in tool_turn["content"]] == ["thinking", "toolCall"]
        assert (tool_turn["model"], tool_turn["stopReason"]) == (MODEL, "toolUse")
        assert tool_turn["api"] == "openai-responses" and tool_turn["usage"]["totalTokens"] == 0
        assert result["toolCallId"] == tool_turn["content"][1]["id"]
        assert result["toolName"] == "read"
        # the popped reply is still in the file, off the branch, behind a leaf marker
        texts = [json.dumps(e.data()) for e in session.entries]
        assert sum("You are welcome." in text for text in texts) == 1
        assert sum(e.is_leaf_marker for e in session.entries) == 1

    def test_a_new_store_on_the_file_gives_the_same_items(
        self, ran: tuple[Path, list[Any], str], stub_api: StubApi
    ) -> None:
        path, _, first_id = ran
        restarted = store(path)
        assert restarted.session_id == first_id
        items = run(restarted.get_items())
        assert shown(items)[-2:] == ["user: Bye.", "assistant: Goodbye."]
        last_request = stub_api.requests_to("/v1/responses")[-1].body["input"]
        assert items[:-2] == last_request[:-1]  # the history as the model was sent it


class TestAChatCompletionsModel:
    def test_the_sdks_placeholder_ids_stay_out_of_the_file(
        self, stub_api: StubApi, tmp_path: Path
    ) -> None:
        path = tmp_path / "chat.jsonl"
        tool_call = ToolCall("read", {"path": "a.txt"}, id="call_read_1")
        stub_api.reply_with(Reply(tool_calls=[tool_call]), Reply(text="It says hi."))

        async def chat() -> None:
            agents.set_tracing_disabled(True)
            async with openai.AsyncOpenAI(
                api_key="test", base_url=stub_api.url + "/v1", max_retries=0
            ) as client:
                model = agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
                agent = agents.Agent(name="reader", tools=[read], model=model)
                await agents.Runner.run(agent, "Read a.txt.", session=store(path))

        run(chat())
        assert stub_api.take_violations() == []
        assert b"__fake_id__" not in path.read_bytes()
        _, calling, result, said = Session.open(path).build_context().messages
        assert calling["content"][0]["id"] == result["toolCallId"] == "call_read_1"
        assert said["content"] == [{"type": "text", "text": "It says hi."}]


# --- the store's own operations -------------------------------------------------------------


class TestItemsGoInAsPiMessagesAndComeBack:
    def test_a_turn_with_a_tool_comes_back_as_the_model_sent_it(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        items = [user("Read a.txt."), reasoning(1), call(1), output(1, "hi"), said(2, "Hi.")]
        run(store(path).add_items(items))
        assert roles(path) == ["user", "assistant", "toolResult", "assistant"]
        back = run(store(path).get_items())
        assert back[1] == reasoning(1)
        assert back[2] == {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "read",
            "arguments": '{"path":"a.txt"}',
        }
        assert back[3] == output(1, "hi")
        assert back[4]["id"] == "msg_2" and back[4]["content"][0]["text"] == "Hi."

    def test_output_items_of_one_run_are_one_assistant_message(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        run(store(path).add_items([user("Go."), reasoning(1), said(1, "Reading."), call(1)]))
        (message,) = [m for m in Session.open(path).build_context().messages[1:]]
        assert [b["type"] for b in message["content"]] == ["thinking", "text", "toolCall"]
        assert message["content"][2]["id"] == "call_1|fc_1"

    def test_a_tool_output_answers_the_call_stored_before_it(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("Go."), call(1, "first"), call(2, "second")]))
        run(s.add_items([output(2, "two"), output(1, "one")]))
        results = Session.open(path).build_context().messages[2:]
        assert [(r["toolCallId"], r["toolName"]) for r in results] == [
            ("call_2|fc_2", "second"),
            ("call_1|fc_1", "first"),
        ]

    def test_developer_and_system_messages_come_back_in_their_places(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        developer = {"role": "developer", "content": "Use metric units."}
        items = [user("Hi."), said(1, "Hello."), developer, user("Weather?")]
        run(store(path).add_items(items))
        session = Session.open(path)
        assert session.system_prompt() == "Use metric units."
        assert shown(run(store(path).get_items())) == [
            "user: Hi.",
            "assistant: Hello.",
            "developer: Use metric units.",
            "user: Weather?",
        ]

    def test_images_as_data_urls_are_pi_image_blocks(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        url = f"data:image/png;base64,{IMAGE}"
        parts = [
            {"type": "input_text", "text": "What is this?"},
            {"type": "input_image", "image_url": url, "detail": "auto"},
        ]
        run(store(path).add_items([{"role": "user", "content": parts}]))
        (message,) = Session.open(path).build_context().messages
        assert message["content"][1] == {"type": "image", "data": IMAGE, "mimeType": "image/png"}
        (back,) = run(store(path).get_items())
        assert back["content"][1] == {"type": "input_image", "image_url": url, "detail": "auto"}

    def test_hosted_tool_calls_are_custom_entries_replayed_where_they_were(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "s.jsonl"
        items = [user("Weather?"), reasoning(1), WEB_SEARCH, reasoning(2), said(1, "Sunny.")]
        run(store(path).add_items(items))
        session = Session.open(path)
        kept = [e for e in session.entries if e.custom_type == ITEM_TYPE]
        assert [e.data()["data"]["item"] for e in kept] == [WEB_SEARCH]
        assert roles(path) == ["user", "assistant"]  # not in pi's context
        assert shown(run(store(path).get_items())) == [
            "user: Weather?",
            "reasoning",
            "web_search_call",
            "reasoning",
            "assistant: Sunny.",
        ]

    def test_a_message_with_parts_pi_has_no_shape_for_is_kept_whole(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        parts = [
            {"type": "input_text", "text": "Summarize this."},
            {"type": "input_file", "file_id": "file-1"},
        ]
        message = {"type": "message", "role": "user", "content": parts}
        run(store(path).add_items([message, said(1, "Done.")]))
        assert roles(path) == ["assistant"]
        assert run(store(path).get_items())[0] == message

    def test_an_output_with_parts_pi_has_no_shape_for_keeps_them_in_details(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "s.jsonl"
        parts = [
            {"type": "input_text", "text": "see file"},
            {"type": "input_file", "file_id": "file-1"},
        ]
        result = {"type": "function_call_output", "call_id": "call_1", "output": parts}
        run(store(path).add_items([user("Go."), call(1), result]))
        tool_result = Session.open(path).build_context().messages[2]
        assert tool_result["content"] == [{"type": "text", "text": "see file"}]
        assert tool_result["details"] == {"openaiOutput": parts}

    def test_replies_recorded_for_another_model_come_back_as_text_and_calls(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "s.jsonl"
        run(store(path).add_items([user("Go."), reasoning(1), said(1, "Done.")]))
        other = AgentsSessionFile(path, model="another-model")
        back = run(other.get_items())
        assert shown(back) == ["user: Go.", "assistant: Done."]
        assert "id" not in back[1]


class TestLimits:
    @pytest.fixture
    def filled(self, tmp_path: Path) -> Path:
        path = tmp_path / "s.jsonl"
        items = [user("One."), said(1, "Two."), user("Three."), said(2, "Four.")]
        run(store(path).add_items(items))
        return path

    def test_a_limit_gives_the_newest_items_oldest_first(self, filled: Path) -> None:
        assert shown(run(store(filled).get_items(2))) == ["user: Three.", "assistant: Four."]
        assert len(run(store(filled).get_items(10))) == 4

    def test_a_limit_of_zero_gives_nothing(self, filled: Path) -> None:
        assert run(store(filled).get_items(0)) == []

    def test_the_settings_limit_counts_when_no_limit_is_given(self, filled: Path) -> None:
        limited = store(filled, session_settings=agents.SessionSettings(limit=1))
        assert shown(run(limited.get_items())) == ["assistant: Four."]
        assert len(run(limited.get_items(3))) == 3


class TestPop:
    def test_pop_returns_the_newest_item_and_a_restart_sees_it_gone(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("One."), said(1, "Two."), user("Three.")]))
        assert shown([run(s.pop_item())]) == ["user: Three."]
        assert shown(run(s.get_items())) == ["user: One.", "assistant: Two."]
        assert shown(run(store(path).get_items())) == ["user: One.", "assistant: Two."]
        assert len(Session.open(path).entries) == 4  # three messages and a leaf marker

    def test_the_next_item_after_a_pop_continues_from_the_new_leaf(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("One."), said(1, "Two.")]))
        run(s.pop_item())
        run(s.add_items([said(2, "Deux.")]))
        assert shown(run(store(path).get_items())) == ["user: One.", "assistant: Deux."]

    def test_a_model_turn_pops_as_a_whole_giving_its_last_item(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("Go."), reasoning(1), call(1), output(1, "hi")]))
        assert run(s.pop_item()) == output(1, "hi")
        popped = run(s.pop_item())
        assert popped is not None and popped["call_id"] == "call_1"
        assert shown(run(s.get_items())) == ["user: Go."]

    def test_a_kept_item_pops_as_itself(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("Weather?"), reasoning(1), WEB_SEARCH, said(1, "Sunny.")]))
        assert run(s.pop_item()) == WEB_SEARCH
        assert shown(run(s.get_items())) == ["user: Weather?", "reasoning", "assistant: Sunny."]

    def test_pop_passes_over_entries_that_give_no_item(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("One."), said(1, "Two.")]))
        s.session.append_label(s.session.leaf_id or "", "checked")
        assert shown([run(s.pop_item())]) == ["assistant: Two."]
        assert shown(run(s.get_items())) == ["user: One."]

    def test_popping_the_first_item_empties_the_history_for_good(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("One.")]))
        assert shown([run(s.pop_item())]) == ["user: One."]
        assert run(s.pop_item()) is None
        assert run(s.get_items()) == [] and run(store(path).get_items()) == []

    def test_an_empty_store_pops_nothing(self, tmp_path: Path) -> None:
        assert run(store(tmp_path / "s.jsonl").pop_item()) is None


class TestClear:
    def test_clear_starts_a_new_root_and_keeps_the_old_entries(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("One."), said(1, "Two.")]))
        run(s.clear_session())
        assert run(s.get_items()) == [] and run(store(path).get_items()) == []
        run(s.add_items([user("Again.")]))
        session = Session.open(path)
        assert session.get(session.leaf_id or "") is not None
        assert session.branch_path()[0].parent_id is None
        assert len(session.roots()) == 3  # the old turn, the marker, the new turn
        assert [e.custom_type for e in session.roots()][1] == LEAF_MARKER_TYPE
        assert shown(run(store(path).get_items())) == ["user: Again."]

    def test_clearing_an_empty_store_writes_nothing(self, tmp_path: Path) -> None:
        s = store(tmp_path / "s.jsonl")
        run(s.clear_session())
        assert s.session.entries == []


class TestOthersWritingToTheFile:
    def test_two_stores_on_one_file_see_and_continue_each_others_items(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "s.jsonl"
        a = store(path)
        run(a.add_items([user("A1."), said(1, "a1")]))
        b = store(path)
        run(a.add_items([user("A2.")]))
        assert shown(run(b.get_items())) == ["user: A1.", "assistant: a1", "user: A2."]
        run(b.add_items([user("B1.")]))
        session = Session.open(path)
        a2, b1 = session.entries[-2:]
        assert b1.parent_id == a2.id
        assert shown(run(a.get_items()))[-2:] == ["user: A2.", "user: B1."]
        assert shown([run(a.pop_item())]) == ["user: B1."]
        assert shown(run(b.get_items()))[-1] == "user: A2."

    def test_a_turn_pi_appends_meanwhile_is_shown_and_continued_after(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        s = store(path)
        run(s.add_items([user("One."), said(1, "Uno.")]))
        pi = Session.open(path)  # another program on the file, as pi would be
        pi.append_message({"role": "user", "content": "From pi.", "timestamp": 1})
        pi_reply = {
            "role": "assistant",
            "content": [{"type": "text", "text": "Pi says hi."}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude",
            "usage": {},
            "stopReason": "stop",
            "timestamp": 2,
        }
        pi_said = pi.append_message(pi_reply)
        assert shown(run(s.get_items()))[2:] == ["user: From pi.", "assistant: Pi says hi."]
        run(s.add_items([user("Two.")]))
        session = Session.open(path)
        assert session.entries[-1].parent_id == pi_said
        assert roles(path) == ["user", "assistant", "user", "assistant", "user"]


class TestNothingWaitsForAUserMessage:
    def test_items_that_are_no_user_or_assistant_message_are_written_at_once(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "s.jsonl"
        first = store(path)
        developer = {"role": "developer", "content": "Use metric units."}
        attached = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_file", "file_id": "file-1"}],
        }
        run(first.add_items([developer, attached]))
        restarted = store(path)
        assert restarted.session_id == first.session_id
        assert shown([run(restarted.get_items())[0]]) == ["developer: Use metric units."]
        assert run(restarted.get_items())[1] == attached

    def test_a_store_on_a_new_path_writes_the_file_so_a_restart_keeps_its_id(
        self, tmp_path: Path
    ) -> None:
        first = store(tmp_path / "s.jsonl")
        assert store(tmp_path / "s.jsonl").session_id == first.session_id

    def test_without_a_path_the_first_items_write_the_file(self, tmp_path: Path) -> None:
        s = AgentsSessionFile(model=MODEL, cwd=tmp_path, session_dir=tmp_path / "sessions")
        assert not s.path.exists()
        run(s.add_items([{"role": "system", "content": "Be brief."}]))
        assert Session.open(s.path).system_prompt() == "Be brief."


class TestLongHistories:
    def converted(self, tmp_path: Path, turns: int, monkeypatch: pytest.MonkeyPatch) -> int:
        """How many messages get_items and pop_item have the converter read, for a
        history of ``turns`` turns each with a hosted tool call."""
        path = tmp_path / f"{turns}.jsonl"
        s = store(path, fsync="never")
        items: list[Any] = []
        for n in range(turns):
            items += [user(f"Question {n}?"), {**WEB_SEARCH, "id": f"ws_{n}"}, said(n, f"A{n}.")]
        run(s.add_items(items))
        read: list[int] = []
        real = openai_agents_items.to_openai_responses

        def counting(messages: list[Any], **options: Any) -> Any:
            read.append(len(messages))
            return real(messages, **options)

        monkeypatch.setattr(openai_agents_items, "to_openai_responses", counting)
        assert len(run(s.get_items())) == 3 * turns
        popped = [run(s.pop_item()), run(s.pop_item())]  # the kept item, then the reply
        assert shown(popped) == ["web_search_call", f"assistant: A{turns - 1}."]
        monkeypatch.undo()
        return sum(read)

    def test_four_times_the_turns_cost_about_four_times_the_conversions(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        short = self.converted(tmp_path, 100, monkeypatch)
        long = self.converted(tmp_path, 400, monkeypatch)
        assert long <= 5 * short  # each prefix converted again: sixteen times
        assert long <= 10 * 2 * 400  # a few passes over the 800 messages

    def test_the_places_counted_per_turn_agree_with_converting_every_prefix(self) -> None:
        def calling(*ids: int, text: str = "") -> dict[str, Any]:
            blocks = [{"type": "text", "text": text}] if text else []
            blocks += [
                {"type": "toolCall", "id": f"call_{n}|fc_{n}", "name": "read", "arguments": {}}
                for n in ids
            ]
            reply = {"api": "openai-responses", "provider": "openai", "model": MODEL}
            return {"role": "assistant", "content": blocks, **reply, "stopReason": "toolUse"}

        def result(n: int, *images: dict[str, Any]) -> dict[str, Any]:
            content = [{"type": "text", "text": "out"}, *images]
            return {"role": "toolResult", "toolCallId": f"call_{n}|fc_{n}", "content": content}

        image = {"type": "image", "data": IMAGE, "mimeType": "image/png"}
        thinking_only = {**calling(), "content": [{"type": "thinking", "thinking": "hm"}]}
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": "Go."},
            calling(1, 2, text="Reading."),
            result(1, image),
            {"role": "system", "content": "Be brief."},  # inside the turn: closes nothing
            result(2),
            calling(3),  # no result: answered "no result" when the next message closes it
            thinking_only,
            {"role": "user", "content": ""},
            {"role": "bashExecution", "command": "ls", "output": "", "excludeFromContext": True},
            result(3),  # too late: dropped
            {"role": "compactionSummary", "summary": "Earlier.", "tokensBefore": 1},
            calling(1),  # a call id used before
            result(1, image, image),
            {"role": "user", "content": [image]},
        ]
        base = openai_agents_items.convert(messages, MODEL)
        count = openai_agents_items._counter(messages, base, MODEL)
        for k in range(len(messages) + 1):
            prefix = openai_agents_items.convert(messages[:k], MODEL)
            assert count(k) == len(openai_agents_items.settled(prefix)), k


class TestTheStore:
    def test_it_meets_the_sdk_session_protocol(self, tmp_path: Path) -> None:
        s = store(tmp_path / "s.jsonl")
        assert isinstance(s, agents.memory.Session)
        assert s.session_id == s.session.id and s.path == tmp_path / "s.jsonl"

    def test_without_a_path_a_new_file_goes_to_the_session_folder(self, tmp_path: Path) -> None:
        s = AgentsSessionFile(model=MODEL, cwd=tmp_path, session_dir=tmp_path / "sessions")
        run(s.add_items([user("Hi.")]))
        assert s.path.parent == tmp_path / "sessions" and s.session_id in s.path.name
        assert Session.open(s.path).cwd == str(tmp_path)

    def test_a_model_name_is_required(self, tmp_path: Path) -> None:
        with pytest.raises(JsonlSessionError, match="model"):
            AgentsSessionFile(tmp_path / "s.jsonl", model="")

    def test_without_the_sdk_the_error_names_the_extra(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(sys.modules, "agents.memory", None)
        with pytest.raises(JsonlSessionError, match=r"jsonl-session\[openai-agents\]"):
            store(tmp_path / "s.jsonl")
