"""Compaction planning makes pi 1.5.2's decisions: on every leaf of every
well-formed fixture, of a longer session with two compactions
(tests/compat/golden/inputs/) and of the sessions pi 1.5.2 and we wrote with its new
entries (tests/compat/golden/pi15/), for keep_recent_tokens 20000, 1000, 200 and 50,
the first kept entry, split turn, tokens before, file lists, previous summary and
the exact messages summarized equal what pi 1.5.2's prepareCompaction returned
(pi15/planning.json.xz); and wherever pi 1.5.2 did not change pi 0.73.1's plan, it
is still 0.73.1's (pi-planning.json)."""

from __future__ import annotations

import hashlib
import json
import lzma
from functools import cache
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

PI073 = json.loads((GOLDEN_DIR / "pi-planning.json").read_text())
PI152 = json.loads(lzma.decompress((GOLDEN_DIR / "pi15" / "planning.json.xz").read_bytes()))
PLANS = PI152["plans"]


def source(name: str) -> Path:
    places = (FIXTURES, GOLDEN_DIR / "inputs", GOLDEN_DIR / "pi15" / "corpus")
    places += (GOLDEN_DIR / "pi15" / "ours",)
    return next(p / f"{name}.jsonl" for p in places if (p / f"{name}.jsonl").exists())


def digest(value: Any) -> str:
    return hashlib.sha256(dumps(value)).hexdigest()[:16]


@cache
def opened(name: str) -> Session:
    return Session.open(source(name), cache=False)


def our_plan(name: str, position: int, keep: int) -> dict[str, Any] | None:
    session = opened(name)
    entries = session.entries
    settings = CompactionSettings(keep_recent_tokens=keep)
    plan = prepare_compaction(session.branch_path(entries[position].id), settings)
    if plan is None:
        return None
    return {
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
        "previousSummary": None if plan.previous_summary is None else digest(plan.previous_summary),
    }


@pytest.mark.parametrize("name", sorted(PLANS))
def test_every_leaf_and_setting_gives_pi_152s_plan(name: str) -> None:
    for row in PLANS[name]:
        where = f"{name} position {row['position']} keep {row['k']}"
        assert our_plan(name, row["position"], row["k"]) == row["plan"], where


@pytest.mark.parametrize("name", sorted(PI073))
def test_pi_0731s_plans_hold_wherever_pi_152_kept_them(name: str) -> None:
    now = {(r["position"], r["k"]): r["plan"] for r in PLANS[name]}
    kept = [r for r in PI073[name] if now[r["position"], r["k"]] == r["plan"]]
    for row in kept:
        where = f"{name} position {row['position']} keep {row['k']}"
        assert our_plan(name, row["position"], row["k"]) == row["plan"], where


def test_the_goldens_exercise_every_decision_pi_152_changed() -> None:
    assert PI152["pi_version"] == "1.5.2"
    plans = [r["plan"] for rows in PLANS.values() for r in rows if r["plan"]]
    assert sum(p["isSplitTurn"] for p in plans) > 100
    assert sum(p["previousSummary"] is not None for p in plans) > 100
    assert sum(bool(p["modifiedFiles"]) for p in plans) > 100
    changed = {"none": 0, "cut": 0, "tokens": 0}
    for name, rows in PI073.items():
        now = {(r["position"], r["k"]): r["plan"] for r in PLANS[name]}
        for row in rows:
            new, old = now[row["position"], row["k"]], row["plan"]
            if new is None and old is not None:
                changed["none"] += 1
            elif new and old and new["firstKeptPosition"] != old["firstKeptPosition"]:
                changed["cut"] += 1
            elif new and old and new["tokensBefore"] != old["tokensBefore"]:
                changed["tokens"] += 1
    assert all(count > 0 for count in changed.values()), changed
    pi15 = [r["plan"] for n in PLANS if source(n).parent.parent.name == "pi15" for r in PLANS[n]]
    assert sum(p is not None for p in pi15) > 50


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
