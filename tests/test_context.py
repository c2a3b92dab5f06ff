"""Building the model context from a leaf: the path, the model and thinking level,
compaction, custom and summary messages in pi's shapes (key order included),
timestamps in epoch milliseconds, and leaf selection. A property compares every leaf
of random trees against a naive port of pi's buildSessionContext."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import BASE_MS
from builders import read_assistant as assistant
from builders import read_user as user
from helpers_read import (
    entry,
    header,
    iso,
    iso_to_ms,
    marker,
    message,
    ts,
    write_session,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsonl_session import (
    EMPTY_LEAF,
    Session,
    SessionContext,
    SessionTreeError,
    build_context,
    load_entries,
)
from jsonl_session import context as context_module

A, B, C, D, E, F, G, H = (c * 8 for c in "abcdefgh")


def open_lines(tmp_path: Path, *lines: dict[str, Any] | bytes) -> Session:
    return Session.open(write_session(tmp_path / "s.jsonl", [header(), *lines]))


def as_json(value: Any) -> str:
    """JSON text, so comparisons see key order at every level."""
    return json.dumps(value, ensure_ascii=False)


def contents(context: SessionContext) -> list[Any]:
    return [m.get("content", m.get("summary")) for m in context.messages]


# --- a naive reference: pi's buildSessionContext, ported line by line --------------------


def reference_context(entries: list[dict[str, Any]], leaf_id: str | None) -> dict[str, Any]:
    """pi's buildSessionContext over entry dicts (well-formed trees only).

    ``leaf_id`` None means the last entry (pi's ``undefined``); EMPTY_LEAF means
    pi's explicit ``null``.
    """
    by_id = {e["id"]: e for e in entries}
    if leaf_id == EMPTY_LEAF:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    leaf = by_id.get(leaf_id) if leaf_id else None
    if leaf is None:
        leaf = entries[-1] if entries else None
    if leaf is None:
        return {"messages": [], "thinkingLevel": "off", "model": None}
    path: list[dict[str, Any]] = []
    current: dict[str, Any] | None = leaf
    while current is not None:
        path.insert(0, current)
        current = by_id.get(current["parentId"]) if current["parentId"] else None

    thinking = "off"
    model: dict[str, Any] | None = None
    compaction: dict[str, Any] | None = None
    for item in path:
        if item["type"] == "thinking_level_change":
            thinking = item["thinkingLevel"]
        elif item["type"] == "model_change":
            model = {"provider": item["provider"], "modelId": item["modelId"]}
        elif item["type"] == "message" and item["message"]["role"] == "assistant":
            model = {"provider": item["message"]["provider"], "modelId": item["message"]["model"]}
        elif item["type"] == "compaction":
            compaction = item

    messages: list[dict[str, Any]] = []

    def append(item: dict[str, Any]) -> None:
        if item["type"] == "message":
            messages.append(item["message"])
        elif item["type"] == "custom_message":
            out = {
                "role": "custom",
                "customType": item["customType"],
                "content": item["content"],
                "display": item["display"],
            }
            if "details" in item:
                out["details"] = item["details"]
            out["timestamp"] = iso_to_ms(item["timestamp"])
            messages.append(out)
        elif item["type"] == "branch_summary" and item["summary"]:
            messages.append(
                {
                    "role": "branchSummary",
                    "summary": item["summary"],
                    "fromId": item["fromId"],
                    "timestamp": iso_to_ms(item["timestamp"]),
                }
            )

    if compaction is not None:
        messages.append(
            {
                "role": "compactionSummary",
                "summary": compaction["summary"],
                "tokensBefore": compaction["tokensBefore"],
                "timestamp": iso_to_ms(compaction["timestamp"]),
            }
        )
        index = next(i for i, e in enumerate(path) if e["id"] == compaction["id"])
        found = False
        for item in path[:index]:
            if item["id"] == compaction["firstKeptEntryId"]:
                found = True
            if found:
                append(item)
        for item in path[index + 1 :]:
            append(item)
    else:
        for item in path:
            append(item)
    return {"messages": messages, "thinkingLevel": thinking, "model": model}


# --- the path ----------------------------------------------------------------------------


class TestPath:
    def session(self, tmp_path: Path) -> Session:
        # A ─ B ─ C
        #   └ D ─ E
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, assistant("b")),
            message(C, B, user("c")),
            message(D, A, assistant("d")),
            message(E, D, user("e")),
        )

    def test_messages_follow_the_path_from_the_root_to_the_leaf(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert [m["content"] for m in session.build_context(C).messages][::2] == ["a", "c"]
        assert [m["content"] for m in session.build_context(E).messages][::2] == ["a", "e"]
        assert len(session.build_context(C).messages) == 3
        assert [m["content"] for m in session.build_context(A).messages] == ["a"]

    def test_messages_are_the_file_s_message_objects_unchanged(self, tmp_path: Path) -> None:
        odd = {"role": "user", "zeta": [1, {"b": 2, "a": 1}], "content": "x", "timestamp": 5}
        tool = {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [{"type": "text", "text": "file"}],
            "details": {"path": "/x"},
            "isError": False,
            "timestamp": 6,
        }
        bash = {
            "role": "bashExecution",
            "command": "ls",
            "output": "x",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 7,
            "excludeFromContext": True,
        }
        future = {"role": "hologram", "shape": "cube"}
        session = open_lines(
            tmp_path,
            message(A, None, odd),
            message(B, A, tool),
            message(C, B, bash),
            message(D, C, future),
        )
        messages = session.build_context().messages
        assert messages == [odd, tool, bash, future]
        assert as_json(messages) == as_json([odd, tool, bash, future])

    def test_entries_that_are_not_messages_contribute_none(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            entry("custom", B, A, customType="ext", data={"x": 1}),
            entry("label", C, B, targetId=A, label="l"),
            entry("session_info", D, C, name="n"),
            entry("model_change", E, D, provider="p", modelId="m"),
            entry("thinking_level_change", F, E, thinkingLevel="low"),
            entry("hologram", G, F, content="not for the model", message=user("no")),
            marker(H, G),
        )
        assert contents(session.build_context(G)) == ["a"]

    def test_the_context_is_a_pure_function_of_entries_and_leaf(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        loaded = load_entries(tmp_path / "s.jsonl")
        for leaf in (A, B, C, D, E):
            expected = session.build_context(leaf)
            assert build_context(loaded.entries, leaf) == expected
            assert context_module.build_context(session.entries, leaf) == expected
            assert session.build_context(leaf) == expected

    def test_changing_returned_messages_does_not_change_the_session(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        session.build_context(C).messages[0]["content"] = "changed"
        assert session.build_context(C).messages[0]["content"] == "a"


# --- model and thinking level ---------------------------------------------------------------


class TestModelAndThinkingLevel:
    def test_defaults_are_off_and_no_model(self, tmp_path: Path) -> None:
        context = open_lines(tmp_path, message(A, None, user("a"))).build_context()
        assert context.thinking_level == "off"
        assert context.model is None
        assert context.to_dict() == {"messages": [user("a")], "thinkingLevel": "off", "model": None}

    def test_the_last_model_change_sets_the_model(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            entry("model_change", A, None, provider="openai", modelId="gpt-4"),
            entry("model_change", B, A, provider="anthropic", modelId="claude"),
        )
        model = session.build_context().model
        assert model == {"provider": "anthropic", "modelId": "claude"}
        assert list(model) == ["provider", "modelId"]  # type: ignore[arg-type]

    def test_an_assistant_message_after_a_model_change_wins(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            entry("model_change", A, None, provider="openai", modelId="gpt-4"),
            message(B, A, assistant("b", provider="google", model="gemini")),
            entry("model_change", C, B, provider="xai", modelId="grok"),
        )
        assert session.build_context(B).model == {"provider": "google", "modelId": "gemini"}
        assert session.build_context(C).model == {"provider": "xai", "modelId": "grok"}
        assert session.build_context(A).model == {"provider": "openai", "modelId": "gpt-4"}

    def test_the_last_thinking_level_change_sets_the_level(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            entry("thinking_level_change", A, None, thinkingLevel="high"),
            message(B, A, user("b")),
            entry("thinking_level_change", C, B, thinkingLevel="minimal"),
        )
        assert session.build_context(B).thinking_level == "high"
        assert session.build_context(C).thinking_level == "minimal"

    def test_settings_on_other_branches_do_not_count(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            entry("model_change", B, A, provider="p", modelId="other-branch"),
            entry("thinking_level_change", C, A, thinkingLevel="high"),
            message(D, C, user("d")),
        )
        context = session.build_context(D)
        assert context.model is None
        assert context.thinking_level == "high"

    def test_settings_before_a_compaction_still_count(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            entry("thinking_level_change", A, None, thinkingLevel="medium"),
            message(B, A, assistant("b", provider="p", model="m")),
            message(C, B, user("c")),
            entry("compaction", D, C, summary="s", firstKeptEntryId=C, tokensBefore=1),
        )
        context = session.build_context()
        assert context.thinking_level == "medium"
        assert context.model == {"provider": "p", "modelId": "m"}

    def test_the_context_dict_has_pi_s_key_order(self, tmp_path: Path) -> None:
        session = open_lines(tmp_path, message(A, None, assistant("a")))
        assert list(session.build_context().to_dict()) == ["messages", "thinkingLevel", "model"]


# --- compaction ------------------------------------------------------------------------------


class TestCompaction:
    def session(self, tmp_path: Path) -> Session:
        # A ─ B ─ C ─ D ─ K(compaction, keeps C) ─ E ─ F
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, assistant("b")),
            message(C, B, user("c")),
            message(D, C, assistant("d")),
            entry(
                "compaction",
                "cccc0000",
                D,
                timestamp=ts(30),
                summary="so far",
                firstKeptEntryId=C,
                tokensBefore=1234,
                details={"readFiles": []},
                fromHook=False,
            ),
            message(E, "cccc0000", user("e")),
            entry("custom_message", F, E, customType="t", content="f", display=True),
        )

    def test_the_summary_comes_first_in_pi_s_shape(self, tmp_path: Path) -> None:
        first = self.session(tmp_path).build_context().messages[0]
        assert first == {
            "role": "compactionSummary",
            "summary": "so far",
            "tokensBefore": 1234,
            "timestamp": BASE_MS + 30_000,
        }
        assert list(first) == ["role", "summary", "tokensBefore", "timestamp"]

    def test_kept_entries_then_later_entries_follow(self, tmp_path: Path) -> None:
        assert contents(self.session(tmp_path).build_context()) == [
            "so far",
            "c",
            [{"type": "text", "text": "d"}],
            "e",
            "f",
        ]

    def test_a_leaf_before_the_compaction_sees_everything(self, tmp_path: Path) -> None:
        assert len(self.session(tmp_path).build_context(D).messages) == 4

    def test_only_the_last_compaction_on_the_path_counts(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            entry("compaction", C, B, summary="one", firstKeptEntryId=B, tokensBefore=1),
            message(D, C, user("d")),
            message(E, D, user("e")),
            entry("compaction", F, E, summary="two", firstKeptEntryId=D, tokensBefore=2),
            message(G, F, user("g")),
        )
        assert contents(session.build_context()) == ["two", "d", "e", "g"]
        assert contents(session.build_context(E)) == ["one", "b", "d", "e"]

    def test_a_first_kept_entry_before_an_earlier_compaction_keeps_from_there(
        self, tmp_path: Path
    ) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            entry("compaction", B, A, summary="one", firstKeptEntryId=A, tokensBefore=1),
            message(C, B, user("c")),
            entry("compaction", D, C, summary="two", firstKeptEntryId=A, tokensBefore=2),
        )
        assert contents(session.build_context()) == ["two", "a", "c"]

    def test_a_first_kept_entry_not_on_the_path_keeps_nothing_before(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            message(X := "99999999", A, user("elsewhere")),
            entry("compaction", C, B, summary="s", firstKeptEntryId=X, tokensBefore=1),
            message(D, C, user("d")),
        )
        assert contents(session.build_context(D)) == ["s", "d"]

    def test_a_compaction_on_another_branch_does_not_count(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            entry("compaction", B, A, summary="s", firstKeptEntryId=A, tokensBefore=1),
            message(C, A, user("c")),
        )
        assert contents(session.build_context(C)) == ["a", "c"]

    def test_a_compaction_as_leaf_gives_summary_and_kept_entries(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            entry("compaction", C, B, summary="s", firstKeptEntryId=B, tokensBefore=1),
        )
        assert contents(session.build_context()) == ["s", "b"]


# --- synthetic messages -----------------------------------------------------------------------


class TestCustomMessages:
    def test_a_custom_message_has_pi_s_shape_and_key_order(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            entry(
                "custom_message",
                A,
                None,
                timestamp=ts(2.5),
                customType="ext",
                content="hello",
                display=False,
                unknown=1,
            ),
        )
        (msg,) = session.build_context().messages
        assert msg == {
            "role": "custom",
            "customType": "ext",
            "content": "hello",
            "display": False,
            "timestamp": BASE_MS + 2500,
        }
        assert list(msg) == ["role", "customType", "content", "display", "timestamp"]

    def test_details_are_included_when_present(self, tmp_path: Path) -> None:
        blocks = [{"type": "text", "text": "t"}, {"type": "image", "data": "AA", "mimeType": "x"}]
        session = open_lines(
            tmp_path,
            entry(
                "custom_message",
                A,
                None,
                customType="ext",
                content=blocks,
                details={"z": 1, "a": 2},
                display=True,
            ),
            entry(
                "custom_message", B, A, customType="ext", content="x", display=True, details=None
            ),
        )
        first, second = session.build_context().messages
        assert list(first) == ["role", "customType", "content", "display", "details", "timestamp"]
        assert first["details"] == {"z": 1, "a": 2}
        assert list(first["details"]) == ["z", "a"]
        assert first["content"] == blocks
        assert "details" in second
        assert second["details"] is None

    def test_a_custom_entry_never_reaches_the_context(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path, entry("custom", A, None, customType="ext", data={"content": "x"})
        )
        assert session.build_context().messages == []


class TestBranchSummaries:
    def test_a_branch_summary_has_pi_s_shape_and_key_order(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            entry(
                "branch_summary",
                B,
                A,
                timestamp=ts(9),
                fromId=C,
                summary="tried X",
                details={"readFiles": ["a"]},
                fromHook=True,
            ),
        )
        summary = session.build_context().messages[1]
        assert summary == {
            "role": "branchSummary",
            "summary": "tried X",
            "fromId": C,
            "timestamp": BASE_MS + 9000,
        }
        assert list(summary) == ["role", "summary", "fromId", "timestamp"]

    @pytest.mark.parametrize("fields", [{"summary": ""}, {}], ids=["empty", "absent"])
    def test_an_empty_branch_summary_is_skipped(
        self, tmp_path: Path, fields: dict[str, Any]
    ) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            entry("branch_summary", B, A, fromId=C, **fields),
            message(C, B, user("c")),
        )
        assert contents(session.build_context()) == ["a", "c"]

    def test_a_summary_kept_by_a_compaction_is_emitted(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            entry("branch_summary", B, A, fromId="root", summary="bs"),
            message(C, B, user("c")),
            entry("compaction", D, C, summary="s", firstKeptEntryId=B, tokensBefore=1),
        )
        assert [m["role"] for m in session.build_context().messages] == [
            "compactionSummary",
            "branchSummary",
            "user",
        ]


# --- timestamps -----------------------------------------------------------------------------


class TestTimestamps:
    @pytest.mark.parametrize(
        ("text", "ms"),
        [
            ("2024-05-01T12:00:00.000Z", BASE_MS),
            ("2024-05-01T12:00:00.123Z", BASE_MS + 123),
            ("1970-01-01T00:00:00.000Z", 0),
            ("2024-05-01T14:00:00.000+02:00", BASE_MS),
            ("2024-05-01T12:00:00Z", BASE_MS),
            ("2024-05-01T12:00:00.123456Z", BASE_MS + 123),
            ("1969-12-31T23:59:59.999Z", -1),
        ],
    )
    def test_iso_timestamps_become_epoch_milliseconds(
        self, tmp_path: Path, text: str, ms: int
    ) -> None:
        session = open_lines(
            tmp_path,
            entry(
                "custom_message", A, None, timestamp=text, customType="t", content="c", display=True
            ),
            entry("branch_summary", B, A, timestamp=text, fromId=A, summary="s"),
            entry(
                "compaction", C, B, timestamp=text, summary="s", firstKeptEntryId=A, tokensBefore=1
            ),
        )
        stamps = [m["timestamp"] for m in session.build_context().messages]
        assert stamps == [ms, ms, ms]

    @pytest.mark.parametrize("text", ["not a date", "", "2024-13-45T00:00:00.000Z"])
    def test_an_unreadable_timestamp_becomes_null_like_javascript_nan(
        self, tmp_path: Path, text: str
    ) -> None:
        session = open_lines(
            tmp_path,
            entry(
                "custom_message", A, None, timestamp=text, customType="t", content="c", display=True
            ),
        )
        assert session.build_context().messages[0]["timestamp"] is None

    def test_message_timestamps_are_left_as_written(self, tmp_path: Path) -> None:
        session = open_lines(tmp_path, message(A, None, user("a", 42)))
        assert session.build_context().messages[0]["timestamp"] == 42


# --- choosing the leaf -----------------------------------------------------------------------


class TestLeafSelection:
    def session(self, tmp_path: Path) -> Session:
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, assistant("b")),
            message(C, B, user("c")),
            marker(D, A),
        )

    def test_no_leaf_means_the_file_s_active_leaf_through_markers(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert session.leaf_id == A
        assert contents(session.build_context()) == ["a"]
        assert session.build_context() == session.build_context(A)
        loaded = load_entries(tmp_path / "s.jsonl")
        assert build_context(loaded.entries) == session.build_context(A)
        assert build_context(loaded.entries, None) == session.build_context(A)

    def test_without_markers_no_leaf_means_the_last_entry(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            message(C, A, user("c")),
        )
        assert contents(session.build_context()) == ["a", "c"]
        assert build_context(session.entries) == session.build_context(C)

    def test_the_empty_leaf_gives_no_messages(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert EMPTY_LEAF == ""
        empty = session.build_context(EMPTY_LEAF)
        assert empty == SessionContext()
        assert empty.to_dict() == {"messages": [], "thinkingLevel": "off", "model": None}
        assert build_context(session.entries, EMPTY_LEAF).messages == []

    def test_an_unknown_leaf_is_an_error_naming_it(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        with pytest.raises(SessionTreeError) as info:
            session.build_context("0badc0de")
        assert "0badc0de" in str(info.value)
        with pytest.raises(SessionTreeError):
            build_context(session.entries, "0badc0de")

    def test_a_session_without_entries_has_an_empty_context(self, tmp_path: Path) -> None:
        session = open_lines(tmp_path)
        assert session.build_context() == SessionContext()
        assert build_context([]) == SessionContext()

    def test_a_leaf_on_another_branch_can_be_asked_for(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert contents(session.build_context(C))[::2] == ["a", "c"]
        assert session.leaf_id == A


# --- a whole file compared with pi's expected output ----------------------------------------


class TestWholeFile:
    def test_a_realistic_session_gives_pi_s_exact_context(self, tmp_path: Path) -> None:
        tool_call = {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
                {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a"}},
            ],
            "api": "openai-responses",
            "provider": "openai",
            "model": "gpt-5",
            "usage": {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "toolUse",
            "timestamp": BASE_MS + 3,
        }
        result = {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "read",
            "content": [{"type": "text", "text": "contents"}],
            "isError": False,
            "timestamp": BASE_MS + 4,
        }
        lines = [
            entry("model_change", "00000001", None, provider="anthropic", modelId="claude"),
            entry("thinking_level_change", "00000002", "00000001", thinkingLevel="high"),
            message("00000003", "00000002", user("start", BASE_MS + 1)),
            message("00000004", "00000003", assistant("ok", ms=BASE_MS + 2)),
            message("00000005", "00000004", user("read a", BASE_MS + 3)),
            message("00000006", "00000005", tool_call),
            message("00000007", "00000006", result),
            entry(
                "compaction",
                "00000008",
                "00000007",
                timestamp=iso(BASE_MS + 10_000),
                summary="## Goal\nread a",
                firstKeptEntryId="00000005",
                tokensBefore=4321,
            ),
            entry("label", "00000009", "00000008", targetId="00000003", label="begin"),
            entry(
                "custom_message",
                "0000000a",
                "00000009",
                timestamp=iso(BASE_MS + 11_000),
                customType="reminder",
                content=[{"type": "text", "text": "be brief"}],
                display=False,
                details={"n": 1},
            ),
            entry(
                "branch_summary",
                "0000000b",
                "0000000a",
                timestamp=iso(BASE_MS + 12_000),
                fromId="00000004",
                summary="tried another way",
            ),
            entry("session_info", "0000000c", "0000000b", name="reading"),
            message("0000000d", "0000000c", user("done?", BASE_MS + 13)),
        ]
        session = open_lines(tmp_path, *lines)
        expected = {
            "messages": [
                {
                    "role": "compactionSummary",
                    "summary": "## Goal\nread a",
                    "tokensBefore": 4321,
                    "timestamp": BASE_MS + 10_000,
                },
                user("read a", BASE_MS + 3),
                tool_call,
                result,
                {
                    "role": "custom",
                    "customType": "reminder",
                    "content": [{"type": "text", "text": "be brief"}],
                    "display": False,
                    "details": {"n": 1},
                    "timestamp": BASE_MS + 11_000,
                },
                {
                    "role": "branchSummary",
                    "summary": "tried another way",
                    "fromId": "00000004",
                    "timestamp": BASE_MS + 12_000,
                },
                user("done?", BASE_MS + 13),
            ],
            "thinkingLevel": "high",
            "model": {"provider": "openai", "modelId": "gpt-5"},
        }
        assert as_json(session.build_context().to_dict()) == as_json(expected)
        assert as_json(reference_context(lines, None)) == as_json(expected)


# --- property: every leaf of random trees matches the reference ------------------------------


_KINDS = [
    "user",
    "assistant",
    "tool",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "unknown",
    "marker",
]
_text = st.text(alphabet="ab é\n\u2603", max_size=6)


@st.composite
def random_trees(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 24))
    out: list[dict[str, Any]] = []
    for i in range(count):
        entry_id = f"{i + 1:08x}"
        earlier = [e["id"] for e in out]
        if earlier and draw(st.integers(0, 3)):
            # Mostly continue from a recent entry; sometimes branch from anywhere.
            parent: str | None = draw(st.sampled_from(earlier[-3:] + earlier))
        else:
            parent = None
        stamp = iso(draw(st.integers(0, 4_102_444_799_999)))
        kind = draw(st.sampled_from(_KINDS))
        ms = draw(st.integers(0, 2**41))
        if kind == "user":
            made = message(entry_id, parent, user(draw(_text), ms), timestamp=stamp)
        elif kind == "assistant":
            msg = assistant(draw(_text), draw(st.sampled_from(["p1", "p2"])), draw(_text), ms)
            made = message(entry_id, parent, msg, timestamp=stamp)
        elif kind == "tool":
            msg = {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "t",
                "content": [{"type": "text", "text": draw(_text)}],
                "isError": draw(st.booleans()),
                "timestamp": ms,
            }
            made = message(entry_id, parent, msg, timestamp=stamp)
        elif kind == "model_change":
            made = entry(kind, entry_id, parent, stamp, provider=draw(_text), modelId=draw(_text))
        elif kind == "thinking_level_change":
            level = draw(st.sampled_from(["off", "low", "medium", "high", "xhigh"]))
            made = entry(kind, entry_id, parent, stamp, thinkingLevel=level)
        elif kind == "compaction":
            kept = draw(st.sampled_from([*earlier, "0badc0de"]))
            made = entry(
                kind,
                entry_id,
                parent,
                stamp,
                summary=draw(_text),
                firstKeptEntryId=kept,
                tokensBefore=draw(st.integers(0, 10**6)),
            )
        elif kind == "branch_summary":
            made = entry(
                kind,
                entry_id,
                parent,
                stamp,
                fromId=draw(st.sampled_from([*earlier, "root"])),
                summary=draw(st.sampled_from(["", "went elsewhere"])),
            )
        elif kind == "custom":
            made = entry(kind, entry_id, parent, stamp, customType="ext", data={"k": 1})
        elif kind == "custom_message":
            fields: dict[str, Any] = {
                "customType": "ext",
                "content": draw(_text),
                "display": draw(st.booleans()),
            }
            if draw(st.booleans()):
                fields["details"] = draw(st.one_of(st.none(), st.dictionaries(_text, _text)))
            made = entry(kind, entry_id, parent, stamp, **fields)
        elif kind == "label":
            target = draw(st.sampled_from(earlier)) if earlier else entry_id
            made = entry(kind, entry_id, parent, stamp, targetId=target, label=draw(_text))
        elif kind == "session_info":
            made = entry(kind, entry_id, parent, stamp, name=draw(_text))
        elif kind == "unknown":
            made = entry("hologram", entry_id, parent, stamp, message=user("hidden"))
        else:
            made = marker(entry_id, parent)
            made["timestamp"] = stamp
        out.append(made)
    return out


class TestAgainstReference:
    @settings(
        max_examples=250,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(tree=random_trees())
    def test_every_leaf_of_a_random_tree_matches_pi_s_algorithm(
        self, tmp_path: Path, tree: list[dict[str, Any]]
    ) -> None:
        path = write_session(tmp_path / "random.jsonl", [header(), *tree])
        session = Session.open(path)
        entries = load_entries(path).entries
        assert session.problems == []
        for item in tree:
            expected = as_json(reference_context(tree, item["id"]))
            assert as_json(session.build_context(item["id"]).to_dict()) == expected
            assert as_json(build_context(entries, item["id"]).to_dict()) == expected
        expected_default = as_json(reference_context(tree, None))
        assert as_json(session.build_context().to_dict()) == expected_default
        assert as_json(build_context(entries).to_dict()) == expected_default
        assert as_json(session.build_context(EMPTY_LEAF).to_dict()) == as_json(
            reference_context(tree, EMPTY_LEAF)
        )


class TestSettingsThatCannotBeUsed:
    def test_a_last_thinking_level_that_is_not_text_gives_way_to_the_one_before(
        self, tmp_path: Path
    ) -> None:
        session = open_lines(
            tmp_path,
            entry("thinking_level_change", A, None, thinkingLevel="high"),
            message(B, A, user("b")),
            entry("thinking_level_change", C, B, thinkingLevel=5),
        )
        assert session.build_context(C).thinking_level == "high"
