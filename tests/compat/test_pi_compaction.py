"""Compaction, branch summary and prune entries our library writes give pi's context.

`tests/compat/golden/pi-compaction/inputs/` holds sessions whose compaction,
branch_summary and prune entries jsonl_session wrote
(tests/compat/golden/make_compaction_inputs.py); `<name>.txt.xz` holds, for every
entry as leaf, the bytes pi 0.73.1's buildSessionContext produced for it, and
`pi-leaves.json` pi's leaf for each file (see tests/compat/golden/README.md). pi
ignores our prune entries, so the context equal to pi's is ours with pruning=False;
with pruning on, only pruned outputs differ.
"""

from __future__ import annotations

import json
import lzma
import re
from collections import Counter
from functools import cache
from typing import Any

import pytest
from locations import GOLDEN_DIR

from jsonl_session import LEAF_MARKER_TYPE, Session
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.model import PRUNE_MARKER_TYPE

GOLDEN = GOLDEN_DIR / "pi-compaction"
INPUTS = GOLDEN / "inputs"
PI_LEAVES: dict[str, str] = json.loads((GOLDEN / "pi-leaves.json").read_text())
NAMES = sorted(p.stem for p in INPUTS.glob("*.jsonl"))

# per file: (compactions and branch summaries our library appended, prune entries,
# leaf markers, the branching fixture's three included); ours are told apart from
# the fixtures' own by fromHook false, which only our library writes here
WRITTEN = {
    "bash-execution-k200": (1, 0, 0, 0),
    "branch-summaries": (1, 4, 0, 0),
    "branching-k50": (2, 0, 0, 3),
    "branching-summary": (0, 1, 0, 3),
    "chat": (2, 0, 0, 0),
    "compaction-two-k1000": (1, 0, 0, 0),
    "compaction-two-k50": (2, 0, 0, 0),
    "custom-entries-k1000": (1, 0, 0, 0),
    "linear-k50": (2, 0, 0, 0),
    "long-session": (5, 0, 0, 3),
    "model-thinking-k50": (2, 0, 0, 0),
    "prune": (1, 0, 2, 0),
    "tool-calls-k200": (2, 0, 0, 0),
}
PLACEHOLDER = re.compile(
    r"\[The output of this (\S+) call was pruned from the context to save space; "
    r"it is kept in the session file as entry ([0-9a-f]{8})\.\]"
)


@cache
def pi_contexts(name: str) -> list[tuple[str, bytes]]:
    raw = lzma.decompress((GOLDEN / f"{name}.txt.xz").read_bytes())
    rows = [row.split(b"\t", 1) for row in raw.split(b"\n") if row]
    return [(leaf.decode(), context) for leaf, context in rows]


def open_input(name: str) -> Session:
    return Session.open(INPUTS / f"{name}.jsonl", fsync="never")


def ours(entry: StoredEntry) -> bool:
    return entry.type in ("compaction", "branch_summary") and entry.data().get("fromHook") is False


def test_every_input_has_pis_contexts_and_leaf() -> None:
    assert set(NAMES) == {p.name.removesuffix(".txt.xz") for p in GOLDEN.glob("*.txt.xz")}
    assert set(NAMES) == set(PI_LEAVES) == set(WRITTEN)


def test_the_inputs_stay_small() -> None:
    assert sum(p.stat().st_size for p in GOLDEN.rglob("*") if p.is_file()) < 1_000_000


@pytest.mark.parametrize("name", NAMES)
def test_our_context_at_every_entry_is_byte_identical_to_pis(name: str) -> None:
    session = open_input(name)
    rows = pi_contexts(name)
    assert [leaf for leaf, _ in rows] == [e.id for e in session.entries]
    different = [
        leaf
        for leaf, expected in rows
        if dumps(session.build_context(leaf, pruning=False).to_dict()) != expected
    ]
    assert different == []


@pytest.mark.parametrize("name", NAMES)
def test_our_leaf_is_pis_looked_through_leaf_markers(name: str) -> None:
    session = open_input(name)
    leaf = PI_LEAVES[name]
    while (entry := session.get(leaf)) is not None and entry.custom_type == LEAF_MARKER_TYPE:
        assert entry.parent_id is not None
        leaf = entry.parent_id
    assert session.leaf_id == leaf


@pytest.mark.parametrize("name", NAMES)
def test_the_file_holds_the_entries_our_library_wrote(name: str) -> None:
    entries = open_input(name).entries
    counts = Counter(
        "compaction"
        if e.type == "compaction" and ours(e)
        else "branch_summary"
        if e.type == "branch_summary" and ours(e)
        else e.custom_type
        if e.type == "custom"
        else "other"
        for e in entries
    )
    found = (
        counts["compaction"],
        counts["branch_summary"],
        counts[PRUNE_MARKER_TYPE],
        counts[LEAF_MARKER_TYPE],
    )
    assert found == WRITTEN[name]


def first_kept_role(session: Session, compaction: StoredEntry) -> Any:
    kept = session.get(compaction.data()["firstKeptEntryId"])
    assert kept is not None
    return kept.data().get("message", {}).get("role") if kept.type == "message" else kept.type


def test_the_inputs_cover_split_turns_updates_and_every_branch_target() -> None:
    kept_roles: Counter[Any] = Counter()
    updates = after_branch_summary = 0
    targets: Counter[str] = Counter()
    for name in NAMES:
        session = open_input(name)
        entries = session.entries
        for position, entry in enumerate(entries):
            if not ours(entry):
                continue
            path = session.branch_path(entry.id)[:-1]
            if entry.type == "compaction":
                kept_roles[first_kept_role(session, entry)] += 1
                updates += any(e.type == "compaction" for e in path)
                after_branch_summary += any(e.type == "branch_summary" for e in path)
            elif entry.parent_id is None:
                targets["root"] += 1
            else:
                # the leaf it left is the entry written just before it
                left = {e.id for e in session.branch_path(entries[position - 1].id)}
                targets["ancestor" if entry.parent_id in left else "other branch"] += 1
    # a cut at an assistant message splits a turn; at a user message it does not
    assert kept_roles["assistant"] >= 10
    assert kept_roles["user"] >= 3
    assert updates >= 10
    assert after_branch_summary >= 1
    assert targets == {"ancestor": 2, "other branch": 2, "root": 1}


def test_prune_entries_name_tool_results() -> None:
    session = open_input("prune")
    named = [
        entry_id
        for e in session.entries
        if e.custom_type == PRUNE_MARKER_TYPE
        for entry_id in e.data()["data"]["entryIds"]
    ]
    assert len(named) == len(set(named)) > 10
    for entry_id in named:
        entry = session.get(entry_id)
        assert entry is not None and entry.role == "toolResult"


def test_with_pruning_only_the_pruned_outputs_differ_from_pis() -> None:
    session = open_input("prune")
    replaced = 0
    for leaf, expected in pi_contexts("prune"):
        theirs = json.loads(expected)
        mine = session.build_context(leaf).to_dict()
        assert (mine["model"], mine["thinkingLevel"]) == (theirs["model"], theirs["thinkingLevel"])
        assert [m["role"] for m in mine["messages"]] == [m["role"] for m in theirs["messages"]]
        pruned = {
            entry_id
            for e in session.branch_path(leaf)
            if e.custom_type == PRUNE_MARKER_TYPE
            for entry_id in e.data()["data"]["entryIds"]
        }
        for message, pis in zip(mine["messages"], theirs["messages"], strict=True):
            if message == pis:
                continue
            replaced += 1
            assert message["role"] == "toolResult", leaf
            [block] = message["content"]
            match = PLACEHOLDER.fullmatch(block["text"])
            assert match is not None, leaf
            assert match.group(1) == pis["toolName"]
            assert match.group(2) in pruned
            assert {**message, "content": pis["content"]} == pis
    assert replaced > 100
