"""Compaction planning makes pi's decisions: on every leaf of every well-formed
fixture and of a longer session with two compactions (tests/compat/golden/inputs/),
for keep_recent_tokens 20000, 1000 and 200, the first kept entry, split turn, tokens
before, file lists, previous summary and the exact messages summarized equal what pi
0.73.1's prepareCompaction returned (tests/compat/golden/pi-planning.json)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from locations import FIXTURES, GOLDEN_DIR

from jsonl_session import Session
from jsonl_session.compaction.planning import (
    CompactionSettings,
    prepare_compaction,
    should_compact,
)
from jsonl_session.format.jsonio import dumps

GOLDEN = json.loads((GOLDEN_DIR / "pi-planning.json").read_text())


def source(name: str) -> Path:
    fixture = FIXTURES / f"{name}.jsonl"
    return fixture if fixture.exists() else GOLDEN_DIR / "inputs" / f"{name}.jsonl"


def digest(value: Any) -> str:
    return hashlib.sha256(dumps(value)).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_every_leaf_and_setting_gives_pis_plan(name: str) -> None:
    session = Session.open(source(name))
    entries = session.entries
    for row in GOLDEN[name]:
        leaf = entries[row["position"]]
        settings = CompactionSettings(keep_recent_tokens=row["k"])
        plan = prepare_compaction(session.branch_path(leaf.id), settings)
        where = f"{name} leaf {leaf.id} keep {row['k']}"
        expected = row["plan"]
        if expected is None:
            assert plan is None, where
            continue
        assert plan is not None, where
        got = {
            "firstKeptPosition": next(
                i for i, e in enumerate(entries) if e.id == plan.first_kept_entry_id
            ),
            "isSplitTurn": plan.is_split_turn,
            "tokensBefore": plan.tokens_before,
            "readFiles": plan.read_files,
            "modifiedFiles": plan.modified_files,
            "summarize": digest(plan.messages_to_summarize),
            "turnPrefix": digest(plan.turn_prefix_messages),
            "summarizeCount": len(plan.messages_to_summarize),
            "turnPrefixCount": len(plan.turn_prefix_messages),
            "previousSummary": None
            if plan.previous_summary is None
            else digest(plan.previous_summary),
        }
        assert got == expected, where


def test_the_goldens_exercise_cuts_split_turns_and_previous_compactions() -> None:
    plans = [r["plan"] for rows in GOLDEN.values() for r in rows if r["plan"]]
    assert sum(p["isSplitTurn"] for p in plans) > 100
    assert sum(p["previousSummary"] is not None for p in plans) > 100
    assert sum(bool(p["modifiedFiles"]) for p in plans) > 100


class TestShouldCompact:
    def test_compaction_is_due_when_the_reserve_no_longer_fits(self) -> None:
        settings = CompactionSettings()
        assert not should_compact(200_000 - 16_384, 200_000, settings)
        assert should_compact(200_000 - 16_383, 200_000, settings)

    def test_disabled_settings_never_compact(self) -> None:
        assert not should_compact(10**9, 1000, CompactionSettings(enabled=False))


def test_a_path_ending_in_a_compaction_has_nothing_to_plan() -> None:
    session = Session.open(FIXTURES / "compaction-one.jsonl")
    compaction = next(e for e in session.entries if e.type == "compaction")
    assert prepare_compaction(session.branch_path(compaction.id)) is None
