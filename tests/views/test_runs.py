"""The runs of a session built from its entries (`session_runs`) are the runs of its
tree of nodes (`runs_of(session.tree())`): the same numbers, starting points and
entries, for any shape of parents (branches, label entries and leaf markers folded
away or not, ids used again, missing parents, cycles)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from jsonl_session import Session
from jsonl_session.format.model import LEAF_MARKER_TYPE
from jsonl_session.views.runs import Run, _runs_from_entries, iter_runs, runs_of, session_runs


def _shape(runs: list[Run]) -> list[tuple[str, str | None, list[int], int]]:
    return [
        (run.number, run.from_id, [e.line for e in run.entries], len(run.branches))
        for run in iter_runs(runs)
    ]


def _random_session(folder: Path, seed: int, reuse: float = 0.05) -> Path:
    """A file of 60 entries whose parents are drawn at random: mostly the entry before,
    sometimes an earlier one, a missing id, the entry itself or a later one (cycles);
    some are label entries or leaf markers, some ids (``reuse`` of them) used twice."""
    rng = random.Random(seed)
    ids = [f"e{i:02d}" for i in range(60)]
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w"}]
    for i, entry_id in enumerate(ids):
        roll = rng.random()
        parent: str | None
        if i == 0 or roll < 0.05:
            parent = None
        elif roll < 0.6:
            parent = ids[i - 1]
        elif roll < 0.85:
            parent = ids[rng.randrange(i)]
        elif roll < 0.9:
            parent = "missing"
        else:
            parent = ids[rng.randrange(len(ids))]  # itself or later: perhaps a cycle
        if rng.random() < reuse and i > 0:
            entry_id = ids[rng.randrange(i)]  # an id used again
        base = {"id": entry_id, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z"}
        kind = rng.random()
        if kind < 0.1:
            line = {"type": "label", "targetId": ids[0], "label": "x", **base}
        elif kind < 0.2:
            line = {"type": "custom", "customType": LEAF_MARKER_TYPE, **base}
        else:
            message = {"role": "user", "content": f"m{i}", "timestamp": 1}
            line = {"type": "message", "message": message, **base}
        lines.append(line)
    path = folder / f"random-{seed}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("reuse", [0.05, 0.0], ids=["ids-used-again", "each-id-once"])
@pytest.mark.parametrize("fold", [True, False])
def test_the_runs_built_from_entries_are_the_runs_of_the_tree_for_any_shape_of_parents(
    tmp_path: Path, fold: bool, reuse: float
) -> None:
    for seed in range(200):
        session = Session.open(_random_session(tmp_path, seed, reuse), cache=False)
        expected = _shape(runs_of(session.tree(fold=fold)))
        assert _shape(session_runs(session, fold=fold)) == expected, seed


def test_a_session_that_branches_has_a_run_for_each_branch(tmp_path: Path) -> None:
    session = Session.create(cwd="/w", session_dir=tmp_path, fsync="never")
    first = session.append_message({"role": "user", "content": "a", "timestamp": 1})
    session.append_message({"role": "user", "content": "b", "timestamp": 2})
    session.branch(first)
    session.append_message({"role": "user", "content": "c", "timestamp": 3})
    runs = session_runs(session)
    assert [run.number for run in iter_runs(runs)] == ["1", "1.1", "1.2"]
    assert runs[0].entries[0].id == first
    assert _shape(runs) == _shape(runs_of(session.tree()))


def test_a_long_session_s_runs_are_its_stretches_between_branches(tmp_path: Path) -> None:
    # long chains, each entry the child of the one before, with labels and leaf
    # markers among them and branches from earlier entries: the runs of the tree
    session = Session.create(cwd="/w", session_dir=tmp_path, fsync="never")
    ids = [session.append_message({"role": "user", "content": "a", "timestamp": 1})]
    for i in range(600):
        ids.append(session.append_message({"role": "user", "content": f"m{i}", "timestamp": 2}))
        if i % 97 == 5:
            session.append_label(ids[-3], f"l{i}")
        if i % 150 == 149:
            session.branch(ids[i // 2])
    for fold in (True, False):
        runs = session_runs(session, fold=fold)
        assert _shape(runs) == _shape(runs_of(session.tree(fold=fold)))
        # made from the entries, not from the tree it falls back to (no cycle here)
        assert _runs_from_entries(session.entries, fold) is not None
        assert sum(len(run.entries) for run in iter_runs(runs)) > 600
    assert len(list(iter_runs(session_runs(session)))) > 4
