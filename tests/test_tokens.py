"""Token accounting: pi's estimate, exactly, and the breakdown of a session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import assistant_message, user_message
from helpers_cli import invoke, runner
from locations import FIXTURES, GOLDEN_DIR

from jsonl_session import Session
from jsonl_session.cli import app
from jsonl_session.tokens import (
    estimate_context_tokens,
    estimate_tokens,
    js_length,
    recorded_usage,
)

GOLDEN = json.loads((GOLDEN_DIR / "pi-estimates.json").read_text())


class TestEstimatesEqualPis:
    @pytest.mark.parametrize("fixture", sorted(GOLDEN))
    def test_every_leaf_of_every_fixture_by_pi_073s_rule(self, fixture: str) -> None:
        # pi 0.73.1 recorded these; 1.5 also counts images in user messages
        session = Session.open(FIXTURES / f"{fixture}.jsonl")
        for entry, expected in zip(session.entries, GOLDEN[fixture], strict=True):
            messages = session.build_context(entry.id).messages
            old_rule = [estimate_tokens(m, count_user_images=False) for m in messages]
            assert old_rule == expected["perMessage"]
            estimate = estimate_context_tokens(messages, count_user_images=False)
            assert (estimate.tokens, estimate.trailing_tokens) == (
                expected["tokens"],
                expected["trailingTokens"],
            )


class TestTheEstimate:
    def test_characters_are_counted_as_javascript_counts_them(self) -> None:
        assert js_length("abc") == 3
        assert js_length("😀") == 2  # one code point, two UTF-16 units
        assert estimate_tokens(user_message("😀😀")) == 1

    @pytest.mark.parametrize("size", [1, 1000, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20])
    def test_texts_past_u_ffff_count_two_units_per_such_character_at_any_length(
        self, size: int
    ) -> None:
        # short texts are encoded whole, long ones in slices: the same count either way,
        # also with an emoji across a slice's edge and a lone surrogate
        text = ("é\ud800" + "a" * 7 + "😀") * (size // 10 + 1)
        text = text[:size] + "😀"
        units = sum(2 if ord(char) > 0xFFFF else 1 for char in text)
        assert js_length(text) == units

    def test_tool_calls_count_their_name_and_compact_json_arguments(self) -> None:
        message = assistant_message("")
        message["content"] = [
            {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "a.py"}}
        ]
        assert estimate_tokens(message) == -(-(4 + len('{"path":"a.py"}')) // 4)

    def test_an_image_counts_4800_characters_in_tool_results_and_user_turns_as_pi_15(
        self,
    ) -> None:
        image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        result = {"role": "toolResult", "toolCallId": "c", "toolName": "shot", "content": [image]}
        user = {"role": "user", "content": [image], "timestamp": 1}
        assert estimate_tokens(result) == 1200
        assert estimate_tokens(user) == 1200  # as pi 1.5
        assert estimate_tokens(user, count_user_images=False) == 0  # as pi 0.73

    def test_a_system_message_counts_content_sections_and_tool_json(self) -> None:
        tools = [{"name": "read", "description": "", "parameters": {}}]
        message = {"role": "system", "content": "ab", "sections": {"x": "cdef", "y": None}}
        assert estimate_tokens(message) == 2  # 6 characters
        message["toolsAdded"] = tools
        tool_json = '[{"name":"read","description":"","parameters":{}}]'
        assert estimate_tokens(message) == -(-(6 + len(tool_json)) // 4)

    def test_the_context_estimate_uses_the_last_usable_usage_then_estimates_the_rest(
        self,
    ) -> None:
        answered = assistant_message("ok")
        answered["usage"]["totalTokens"] = 1000
        aborted = assistant_message("partial")
        aborted["stopReason"] = "aborted"
        aborted["usage"]["totalTokens"] = 5
        messages = [user_message("q"), answered, user_message("x" * 40), aborted]
        estimate = estimate_context_tokens(messages)
        assert estimate.usage_tokens == 1000 and estimate.last_usage_index == 1
        assert estimate.trailing_tokens == 10 + 2


class TestBreakdown:
    def test_stored_path_and_model_tokens_account_for_branches_and_compaction(self) -> None:
        session = Session.open(FIXTURES / "compaction-two.jsonl")
        found = session.token_breakdown()
        assert found.stored_tokens >= found.path_tokens >= found.model_tokens > 0
        assert found.compaction_saved_tokens == found.path_tokens - found.model_tokens
        assert sum(found.by_entry_type.values()) == found.stored_tokens
        assert sum(found.by_role_model.values()) == found.model_tokens
        assert found.largest[0].tokens == max(x.tokens for x in found.largest)

    def test_other_branches_are_what_the_active_path_leaves_out(self) -> None:
        found = Session.open(FIXTURES / "branching.jsonl").token_breakdown()
        assert found.other_branches_tokens == found.stored_tokens - found.path_tokens > 0

    def test_the_stats_command_prints_a_table_or_json(self) -> None:
        path = FIXTURES / "tool-calls.jsonl"
        table = runner.invoke(app, ["stats", str(path)])
        assert table.exit_code == 0 and "sent to the model" in table.stdout
        as_json = runner.invoke(app, ["stats", str(path), "--json"])
        data = json.loads(as_json.stdout)
        assert data == Session.open(path).token_breakdown().to_dict()
        assert {"storedTokens", "modelTokens", "byTool", "largest"} <= set(data)


class TestTheContextEstimateInStats:
    def test_a_usage_from_before_the_compaction_is_not_taken_as_the_current_size(self) -> None:
        session = Session.open(FIXTURES / "compaction-two.jsonl")
        compaction = [e for e in session.entries if e.type == "compaction"][-1]
        found = session.token_breakdown(compaction.id)
        assert found.context_estimate == found.model_tokens  # all estimated, none stale

    def test_a_shell_command_kept_out_of_context_is_not_counted_as_sent(
        self, tmp_path: Path
    ) -> None:
        session = Session.create(cwd="/p", session_dir=tmp_path, fsync="never")
        session.append_message(user_message("q"))
        session.append_message(
            {
                "role": "bashExecution",
                "command": "ls",
                "output": "x" * 400,
                "exitCode": 0,
                "cancelled": False,
                "truncated": False,
                "excludeFromContext": True,
                "timestamp": 2,
            }
        )
        found = session.token_breakdown()
        assert found.model_tokens == estimate_tokens(user_message("q"))
        assert found.stored_tokens > found.model_tokens


class TestRecordedUsage:
    def test_usage_entries_and_summaries_count_by_model_and_kind(self) -> None:
        corpus = GOLDEN_DIR / "pi15" / "corpus"
        found = recorded_usage(Session.open(corpus / "usage-entries.jsonl").entries)
        assert set(found.by_kind) == {"assistant", "cache_warm", "classifier", "something-new"}
        assert found.by_kind["cache_warm"].tokens["cacheRead"] == 50_000
        assert found.by_model["openai/gpt-5.1-mini"].to_dict()["cost"] == 0.000312
        assert found.total.records == 5
        compacted = recorded_usage(Session.open(corpus / "compaction-checkpoints.jsonl").entries)
        assert compacted.by_kind["compaction"].tokens["input"] == 5_000 + 6_000
        assert compacted.by_kind["compaction"].records == 2  # the third recorded no usage

    def test_stats_reports_them(self) -> None:
        path = GOLDEN_DIR / "pi15" / "corpus" / "usage-entries.jsonl"
        code, out, _ = invoke("stats", path, "--json")
        recorded = json.loads(out)["recordedUsage"]
        assert code == 0 and recorded["total"]["totalTokens"] == 53_014
        code, out, _ = invoke("stats", path)
        assert code == 0 and "recorded usage by kind" in out and "cache_warm" in out
