"""The pydantic-ai conversation store on session files: a real agent (a local
FunctionModel, no network) records its turns in a pi session file, a new store picks
the conversation up after a restart, and the file reads as a pi session."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers_cli import invoke
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import ConversationConflict
from pydantic_ai.exceptions import PydanticAIDeprecationWarning, UserError
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from jsonl_session import Session, SessionFileConversationStore
from jsonl_session.integrations.pydantic_ai_log import append_save, record_of
from jsonl_session.integrations.pydantic_ai_messages import PAYLOAD_KEY, to_pi

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks for the weather tool when the user mentions weather, else says how many
    messages it was sent (so a test sees the history reach the model)."""
    last = messages[-1]
    asked = [p for p in last.parts if isinstance(p, UserPromptPart)]
    if asked and "weather" in str(asked[-1].content):
        call = ToolCallPart("weather", {"city": "Paris"}, tool_call_id="call_1")
        return ModelResponse(parts=[TextPart("Let me check."), call])
    return ModelResponse(parts=[TextPart(f"I have seen {len(messages)} messages.")])


def weather_agent() -> Agent[None, str]:
    agent = Agent(
        FunctionModel(reply, model_name="local-model"),
        system_prompt="Be brief.",
        instructions="Answer in English.",
    )

    @agent.tool_plain
    def weather(city: str) -> str:
        return f"Sunny in {city}."

    return agent


async def turn(store: SessionFileConversationStore, conversation_id: str, prompt: str) -> Any:
    """One turn as an app runs it: load (or start), run, save."""
    conversation = await store.load(conversation_id) or Conversation(
        conversation_id=conversation_id
    )
    result = await weather_agent().run(prompt, conversation=conversation)
    await store.save(result)
    return result


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def two_turns(folder: Path) -> Any:
    """A conversation 'chat' of two turns (the first calls a tool), each turn by a
    store of its own, as after a restart; the second turn's result."""
    run(turn(SessionFileConversationStore(folder), "chat", "What's the weather?"))
    return run(turn(SessionFileConversationStore(folder), "chat", "Thanks!"))


def session_of(folder: Path, conversation_id: str) -> Session:
    path = SessionFileConversationStore(folder).path_for(conversation_id)
    assert path is not None
    return Session.open(path)


def roles(session: Session) -> list[str]:
    return [message["role"] for message in session.build_context().messages]


class TestAnAgentRecordsEveryTurn:
    def test_a_restarted_store_continues_the_conversation_with_its_history(
        self, folder: Path, two_turns: Any
    ) -> None:
        # the model was sent the whole first turn (4 messages) and the new prompt
        assert two_turns.output == "I have seen 5 messages."
        loaded = run(SessionFileConversationStore(folder).load("chat"))
        assert loaded is not None
        assert loaded.messages == two_turns.all_messages()
        assert loaded.usage == two_turns.conversation.usage
        assert loaded.usage.requests == 3 and loaded.usage.tool_calls == 1

    def test_the_file_is_a_pi_session_whose_context_is_the_conversation(
        self, folder: Path, two_turns: Any
    ) -> None:
        session = session_of(folder, "chat")
        assert session.id == "chat" and session.problems == []
        assert roles(session) == [
            "system",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant",
        ]
        system, _, call, result, *_ = session.build_context().messages
        assert session.system_prompt() == "Be brief.\n\nAnswer in English."
        assert system["sections"] == {"instructions": "Answer in English."}
        assert call["content"][1] == {
            "type": "toolCall",
            "id": "call_1",
            "name": "weather",
            "arguments": {"city": "Paris"},
        }
        assert (call["model"], call["stopReason"]) == ("local-model", "toolUse")
        assert call["usage"]["totalTokens"] > 0
        assert result["toolName"] == "weather" and result["isError"] is False
        assert result["content"] == [{"type": "text", "text": "Sunny in Paris."}]

    def test_the_cli_shows_the_file(self, folder: Path, two_turns: Any) -> None:
        path = session_of(folder, "chat").path
        code, out, _ = invoke("context", path)
        assert code == 0
        assert "What's the weather?" in out and "I have seen 5 messages." in out
        code, out, _ = invoke("tree", path, "--full")  # every entry, none folded
        assert code == 0 and "toolResult: weather" in out
        code, out, _ = invoke("show", path)
        assert code == 0 and "chat" in out

    def test_a_paused_run_keeps_its_deferred_tool_requests(self, folder: Path) -> None:
        def ask(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[ToolCallPart("delete", {"path": "a.txt"}, "c9")])

        agent = Agent(FunctionModel(ask), output_type=[str, DeferredToolRequests])

        @agent.tool_plain(requires_approval=True)
        def delete(path: str) -> str:
            return "deleted"

        store = SessionFileConversationStore(folder)
        result = run(agent.run("Delete a.txt", conversation=Conversation(conversation_id="ask")))
        run(store.save(result))
        loaded = run(SessionFileConversationStore(folder).load("ask"))
        assert loaded is not None and loaded.deferred_tool_requests is not None
        assert loaded.deferred_tool_requests == result.conversation.deferred_tool_requests


class TestTheLogIsTheTree:
    def test_each_entry_is_the_pi_entry_carrying_its_message_in_the_parent_chain(
        self, folder: Path, two_turns: Any
    ) -> None:
        entries = run(SessionFileConversationStore(folder).load_entries("chat"))
        assert entries is not None and len(entries) == 6
        session = session_of(folder, "chat")
        carriers: list[str] = []
        for entry in session.branch_path():
            message = entry.data().get("message", {})
            if "entry" in message.get(PAYLOAD_KEY, {}):
                carriers.append(message[PAYLOAD_KEY]["entry"])
        assert carriers == [entry.id for entry in entries]
        assert [entry.parent_id for entry in entries] == [None, *carriers[:-1]]
        assert session.leaf_id == session.branch_path()[-1].id  # the head is the leaf

    def test_a_limit_loads_the_last_messages(self, folder: Path, two_turns: Any) -> None:
        loaded = run(SessionFileConversationStore(folder).load("chat", limit=2))
        assert loaded is not None
        assert loaded.messages == two_turns.all_messages()[-2:]

    def test_an_unknown_conversation_is_none(self, folder: Path) -> None:
        assert run(SessionFileConversationStore(folder).load("nobody")) is None

    def test_an_id_ending_like_another_is_another_conversation(self, folder: Path) -> None:
        store = SessionFileConversationStore(folder)
        run(turn(store, "my_chat", "Hello"))
        assert run(store.load("chat")) is None
        run(turn(store, "chat", "Hello"))
        assert store.path_for("chat") != store.path_for("my_chat")

    def test_an_id_pi_cannot_take_is_refused(self, folder: Path) -> None:
        with pytest.raises(UserError, match="pi session id"):
            run(SessionFileConversationStore(folder).load("../escape"))

    def test_a_message_pi_wrote_is_read_back_and_continued(
        self, folder: Path, two_turns: Any
    ) -> None:
        session = session_of(folder, "chat")
        session.append_message({"role": "user", "content": "From pi.", "timestamp": 1})
        result = run(turn(SessionFileConversationStore(folder), "chat", "And now?"))
        pi_request = result.all_messages()[6]
        assert isinstance(pi_request, ModelRequest)
        assert pi_request.parts[0].content == "From pi."  # type: ignore[union-attr]
        assert roles(session_of(folder, "chat"))[-3:] == ["user", "user", "assistant"]


class TestRevisions:
    def test_a_stale_conversation_is_not_saved(self, folder: Path, two_turns: Any) -> None:
        store = SessionFileConversationStore(folder)
        first, second = run(store.load("chat")), run(store.load("chat"))
        assert first is not None and second is not None
        run(store.save(run(weather_agent().run("One", conversation=first))))
        stale = run(weather_agent().run("Two", conversation=second))
        with pytest.raises(ConversationConflict):
            run(store.save(stale))

    def test_a_write_by_another_program_makes_a_loaded_conversation_stale(
        self, folder: Path, two_turns: Any
    ) -> None:
        store = SessionFileConversationStore(folder)
        loaded = run(store.load("chat"))
        assert loaded is not None
        session_of(folder, "chat").append_custom("someone/else", {"note": 1})
        with pytest.raises(ConversationConflict):
            run(store.save(run(weather_agent().run("Late", conversation=loaded))))

    def test_of_two_writers_that_checked_the_same_file_only_one_gets_in(
        self, folder: Path, two_turns: Any
    ) -> None:
        mine = session_of(folder, "chat")
        checked = mine.revision
        session_of(folder, "chat").append_custom("someone/else")  # between check and claim
        record = dataclasses.replace(record_of(mine), revision="mine")
        with pytest.raises(ConversationConflict):
            append_save(mine, record, [], checked=checked)
        assert session_of(folder, "chat").revision == checked + 1  # nothing of ours written

    def test_a_new_conversation_does_not_replace_a_stored_one(
        self, folder: Path, two_turns: Any
    ) -> None:
        store = SessionFileConversationStore(folder)
        fresh = run(weather_agent().run("Hi", conversation=Conversation(conversation_id="chat")))
        with pytest.raises(ConversationConflict):
            run(store.save(fresh))


RACER = """
import asyncio, sys, pathlib
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import ConversationConflict
from pydantic_ai.messages import ModelRequest, UserPromptPart
from jsonl_session import SessionFileConversationStore

folder, sync = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
me, rounds = sys.argv[3], int(sys.argv[4])
store = SessionFileConversationStore(folder, cwd=folder, fsync="never")
for n in range(rounds):
    (sync / f"{n}.{me}").touch()
    while len(list(sync.glob(f"{n}.*"))) < 2:  # both ready: start together
        pass
    request = ModelRequest(parts=[UserPromptPart(f"hi from {me}")])
    try:
        asyncio.run(store.save(Conversation(conversation_id=f"c{n}", messages=[request])))
        print("saved", flush=True)
    except ConversationConflict:
        print("conflict", flush=True)
"""


class TestTwoProcessesStartingOneConversation:
    def test_never_both_save_it_and_one_file_is_left(self, tmp_path: Path) -> None:
        folder, sync = tmp_path / "sessions", tmp_path / "sync"
        folder.mkdir()
        sync.mkdir()
        rounds = 12
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", RACER, str(folder), str(sync), me, str(rounds)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for me in ("a", "b")
        ]
        said = []
        for racer in racers:
            out, err = racer.communicate(timeout=300)
            assert racer.returncode == 0, err
            said.append(out.split())
        store = SessionFileConversationStore(folder)
        for n, outcomes in enumerate(zip(*said, strict=True)):
            files = list(folder.glob(f"*_c{n}.jsonl"))
            assert outcomes != ("saved", "saved"), (n, [f.name for f in files])
            assert len(files) == outcomes.count("saved"), (n, outcomes)
            loaded = run(store.load(f"c{n}"))
            assert (loaded is not None) == ("saved" in outcomes)

    def test_the_store_that_made_the_file_gives_up_when_another_saved_to_it_first(
        self, folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from jsonl_session.integrations import pydantic_ai_store

        other = SessionFileConversationStore(folder)
        written = pydantic_ai_store.write_new_file

        def then_the_other_saves(*args: Any) -> None:
            written(*args)
            # the other store finds the new file holding only its header, takes it
            # over and saves, before the store that made it opens it again
            request = ModelRequest(parts=[UserPromptPart("from the other")])
            saving = other.save(Conversation(conversation_id="c", messages=[request]))
            beside = threading.Thread(target=asyncio.run, args=(saving,))  # a loop runs here
            beside.start()
            beside.join()

        monkeypatch.setattr(pydantic_ai_store, "write_new_file", then_the_other_saves)
        request = ModelRequest(parts=[UserPromptPart("from the maker")])
        with pytest.raises(ConversationConflict):
            run(
                SessionFileConversationStore(folder).save(
                    Conversation(conversation_id="c", messages=[request])
                )
            )
        text = session_of(folder, "c").path.read_text()
        assert "from the other" in text and "from the maker" not in text

    def test_a_file_found_holding_nothing_is_claimed_only_while_it_still_does(
        self, folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        first = Conversation(
            conversation_id="c", messages=[ModelRequest(parts=[UserPromptPart("first")])]
        )
        run(SessionFileConversationStore(folder).save(first))
        late = SessionFileConversationStore(folder)
        # it looked while the other store's new file held only its header
        monkeypatch.setattr(late, "_open", lambda path: None)
        second = Conversation(
            conversation_id="c", messages=[ModelRequest(parts=[UserPromptPart("Latecomer")])]
        )
        with pytest.raises(ConversationConflict):
            run(late.save(second))
        assert "Latecomer" not in session_of(folder, "c").path.read_text()


class TestForksAndBranches:
    def test_a_fork_is_a_file_of_its_own_holding_the_shared_history(
        self, folder: Path, two_turns: Any
    ) -> None:
        store = SessionFileConversationStore(folder)
        fork = run(store.fork("chat", at=4, new_conversation_id="chat-fork"))
        assert fork.messages == two_turns.all_messages()[:4]
        forked = session_of(folder, "chat-fork")
        assert forked.header.parent_session == str(session_of(folder, "chat").path)
        record = run(store.read_record("chat-fork"))
        assert record is not None and record.forked_from == "chat"
        run(turn(store, "chat-fork", "Another question"))
        assert len(roles(session_of(folder, "chat-fork"))) == 7
        assert len(roles(session_of(folder, "chat"))) == 7  # the source is untouched

    def test_an_empty_fork_is_written_and_loads_empty(self, folder: Path, two_turns: Any) -> None:
        store = SessionFileConversationStore(folder)
        run(store.fork("chat", at=0, new_conversation_id="blank"))
        loaded = run(SessionFileConversationStore(folder).load("blank"))
        assert loaded is not None and loaded.messages == []
        assert session_of(folder, "blank").build_context().messages == []

    def test_a_branch_moves_the_leaf_and_keeps_the_branch_it_left(
        self, folder: Path, two_turns: Any
    ) -> None:
        store = SessionFileConversationStore(folder)
        loaded = run(store.load_entries("chat"))
        assert loaded is not None
        current = run(store.load("chat"))
        assert current is not None
        branched = run(store.branch("chat", at=4, expected_revision=current.revision))
        assert roles(session_of(folder, "chat")) == [
            "system",
            "user",
            "assistant",
            "toolResult",
            "assistant",
        ]
        run(store.save(run(weather_agent().run("Again", conversation=branched))))
        record = run(store.read_record("chat"))
        assert record is not None and record.branches == [loaded[-1].id]
        back = run(
            store.branch("chat", from_entry=loaded[-1].id, expected_revision=record.revision)
        )
        assert back.messages == two_turns.all_messages()


class TestListingAndDeleting:
    def test_conversations_list_newest_first_and_by_scope(self, folder: Path) -> None:
        store = SessionFileConversationStore(folder)
        for name, scope in [("a", "ann"), ("b", "bob"), ("c", "ann")]:
            result = run(weather_agent().run("Hi", conversation=Conversation(conversation_id=name)))
            run(store.save(result, scope=scope))
        listed = run(store.list_conversations())
        assert [record.conversation_id for record in listed] == ["c", "b", "a"]
        assert [r.conversation_id for r in run(store.list_conversations(scope="ann"))] == ["c", "a"]

    def test_delete_removes_the_file(self, folder: Path, two_turns: Any) -> None:
        store = SessionFileConversationStore(folder)
        path = store.path_for("chat")
        run(store.delete("chat"))
        assert path is not None and not path.exists()
        assert run(store.load("chat")) is None


class TestMessageShapes:
    def test_thinking_keeps_its_signature_and_images_become_image_blocks(self) -> None:
        response = ModelResponse(parts=[ThinkingPart("hmm", signature="sig"), TextPart("ok")])
        (assistant,) = to_pi(response, None)
        assert assistant["content"][0] == {
            "type": "thinking",
            "thinking": "hmm",
            "thinkingSignature": "sig",
        }
        assert assistant["stopReason"] == "stop"
        image = BinaryContent(data=b"\x89PNG", media_type="image/png")
        request = ModelRequest(parts=[UserPromptPart(["Look:", image])], instructions=None)
        (user,) = to_pi(request, None)
        assert user["content"] == [
            {"type": "text", "text": "Look:"},
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
        ]

    def test_a_retry_of_a_tool_call_answers_the_call_as_an_error(self) -> None:
        with pytest.warns(PydanticAIDeprecationWarning):  # some code still builds one
            retry = RetryPromptPart("city is required", tool_name="weather", tool_call_id="c1")
            feedback = RetryPromptPart("Answer in one word.")
        answer, said = to_pi(ModelRequest(parts=[retry, feedback]), None)
        assert (answer["role"], answer["toolCallId"], answer["toolName"]) == (
            "toolResult",
            "c1",
            "weather",
        )
        assert answer["isError"] is True
        assert answer["content"][0]["text"].startswith("city is required")
        assert said["role"] == "user" and "Answer in one word." in said["content"][0]["text"]

    @pytest.mark.parametrize(
        ("outcome", "error"),
        [("success", False), ("failed", True), ("denied", True), ("interrupted", True)],
    )
    def test_a_tool_return_is_an_error_unless_the_tool_gave_its_result(
        self, outcome: Any, error: bool
    ) -> None:
        part = ToolReturnPart("weather", "no", tool_call_id="c1", outcome=outcome)
        (result,) = to_pi(ModelRequest(parts=[part]), None)
        assert result["isError"] is error


class TestWithoutPydanticAi:
    def test_importing_the_store_names_the_extra_to_install(self) -> None:
        code = (
            "import sys\n"
            "sys.modules['pydantic_ai'] = None\n"
            "import jsonl_session.integrations.pydantic_ai_store\n"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode != 0
        assert "pip install 'jsonl-session[pydantic-ai]'" in done.stderr
