"""The tree of a loaded session: children, roots and orphans, paths, the active leaf,
tree views with folded leaf markers and labels, and broken links (duplicate ids,
missing parents, cycles) that are reported and never hang."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import read_assistant as assistant
from builders import read_user as user
from helpers_large import generate
from helpers_read import (
    entry,
    header,
    marker,
    message,
    time_limit,
    write_session,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from locations import FIXTURES, copy_fixture

from jsonl_session import Session, SessionFormatError, SessionTreeError, TreeIndex, load_entries
from jsonl_session.tree import TreeNode, iter_nodes

A, B, C, D, E, F, G = (c * 8 for c in "abcdefg")
M1, M2, L1, L2 = "11111111", "22222222", "33333333", "44444444"


def open_lines(tmp_path: Path, *lines: dict[str, Any] | bytes) -> Session:
    return Session.open(write_session(tmp_path / "s.jsonl", [header(), *lines]))


def shape(roots: list[TreeNode]) -> list[tuple[int, str]]:
    """(depth, id) pairs, depth first."""
    return [(depth, node.entry.id) for depth, node in iter_nodes(roots)]


def ids(entries: Any) -> list[str]:
    return [e.id for e in entries]


# --- children, roots, paths ------------------------------------------------------------


class TestChildrenAndRoots:
    def session(self, tmp_path: Path) -> Session:
        #   A ─ B ─ D
        #     └ C
        #   E (second root)      F (orphan: parent missing)
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, assistant("b")),
            message(E, None, user("e")),
            message(C, A, user("c")),
            message(F, "99999999", user("f")),
            message(D, B, user("d")),
        )

    def test_children_are_in_file_order(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert ids(session.children(A)) == [B, C]
        assert ids(session.children(B)) == [D]
        assert session.children(D) == []

    def test_children_of_none_are_the_entries_without_a_parent(self, tmp_path: Path) -> None:
        assert ids(self.session(tmp_path).children(None)) == [A, E]

    def test_roots_include_orphans_after_the_true_roots(self, tmp_path: Path) -> None:
        assert ids(self.session(tmp_path).roots()) == [A, E, F]

    def test_unknown_ids_have_no_children_and_no_entry(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert session.children("00000000") == []
        assert session.get("00000000") is None

    def test_get_returns_the_stored_entry(self, tmp_path: Path) -> None:
        stored = self.session(tmp_path).get(C)
        assert stored is not None
        assert (stored.id, stored.parent_id, stored.line) == (C, A, 5)

    def test_the_index_can_be_built_from_loaded_entries(self, tmp_path: Path) -> None:
        self.session(tmp_path)
        index = TreeIndex(load_entries(tmp_path / "s.jsonl").entries)
        assert len(index) == 6
        assert A in index
        assert "00000000" not in index
        assert ids(index.children(A)) == [B, C]
        assert ids(index.roots()) == [A, E, F]
        assert index.last_entry().id == D  # type: ignore[union-attr]
        assert A in ids(index.path(D))
        assert B not in ids(index.path(C))
        assert A not in ids(index.path(F))


class TestBranchPath:
    def session(self, tmp_path: Path) -> Session:
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, assistant("b")),
            message(C, B, user("c")),
            message(D, A, user("d")),
        )

    def test_the_path_runs_from_the_root_to_the_leaf(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert ids(session.branch_path(C)) == [A, B, C]
        assert ids(session.branch_path(D)) == [A, D]
        assert ids(session.branch_path(A)) == [A]

    def test_the_default_path_ends_at_the_current_leaf(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert session.leaf_id == D
        assert ids(session.branch_path()) == [A, D]

    def test_an_unknown_leaf_is_an_error_naming_it(self, tmp_path: Path) -> None:
        with pytest.raises(SessionTreeError) as info:
            self.session(tmp_path).branch_path("0badc0de")
        assert "0badc0de" in str(info.value)
        assert info.value.entry_ids == ("0badc0de",)

    def test_an_empty_session_has_an_empty_path(self, tmp_path: Path) -> None:
        assert open_lines(tmp_path).branch_path() == []


# --- the active leaf --------------------------------------------------------------------


class TestActiveLeaf:
    def test_the_active_leaf_is_the_last_entry_in_file_order(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            message(C, A, user("c")),
            entry("session_info", D, A, name="named"),
        )
        assert session.leaf_id == D
        assert session.name == "named"

    def test_a_leaf_marker_makes_its_target_the_active_leaf(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            message(C, B, user("c")),
            marker(M1, A),
        )
        assert session.leaf_id == A
        assert ids(session.branch_path()) == [A]

    def test_a_chain_of_leaf_markers_is_looked_through(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            marker(M1, A),
            marker(M2, M1),
        )
        assert session.leaf_id == A

    def test_a_leaf_marker_at_the_root_means_no_leaf(self, tmp_path: Path) -> None:
        session = open_lines(tmp_path, message(A, None, user("a")), marker(M1, None))
        assert session.leaf_id is None
        assert session.branch_path() == []
        assert session.build_context().messages == []

    def test_a_custom_entry_of_another_type_is_an_ordinary_leaf(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            entry("custom", M1, A, customType="someone-else/leaf"),
        )
        assert session.leaf_id == M1

    def test_entries_after_a_marker_make_the_leaf_theirs(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            marker(M1, A),
            message(C, A, user("c")),
        )
        assert session.leaf_id == C

    def test_a_header_only_session_has_no_leaf(self, tmp_path: Path) -> None:
        assert open_lines(tmp_path).leaf_id is None


# --- tree views ------------------------------------------------------------------------------


class TestTreeView:
    def session(self, tmp_path: Path) -> Session:
        # A ─ B ─ L1(label on A) ─ C
        #   │   └ M2(marker → B)
        #   └ M1(marker → A) ─ D      (D was appended by pi after our marker)
        # E ← orphan (parent missing)
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, assistant("b")),
            entry("label", L1, B, targetId=A, label="start"),
            message(C, L1, user("c")),
            marker(M1, A),
            message(D, M1, user("d")),
            message(E, "99999999", user("e")),
            marker(M2, B),
        )

    def test_markers_and_labels_are_folded_and_their_children_reattached(
        self, tmp_path: Path
    ) -> None:
        tree = self.session(tmp_path).tree()
        assert shape(tree) == [(0, A), (1, B), (2, C), (1, D), (0, E)]

    def test_unfolded_the_tree_shows_every_entry(self, tmp_path: Path) -> None:
        tree = self.session(tmp_path).tree(fold=False)
        assert shape(tree) == [
            (0, A),
            (1, B),
            (2, L1),
            (3, C),
            (2, M2),
            (1, M1),
            (2, D),
            (0, E),
        ]

    def test_the_active_path_is_marked(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert session.leaf_id == B
        marked = {n.entry.id for _, n in iter_nodes(session.tree()) if n.on_active_path}
        assert marked == {A, B}
        unfolded = {n.entry.id for _, n in iter_nodes(session.tree(fold=False)) if n.on_active_path}
        assert unfolded == {A, B}

    def test_labels_are_shown_on_their_targets(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        labels = {n.entry.id: n.label for _, n in iter_nodes(session.tree())}
        assert labels == {A: "start", B: None, C: None, D: None, E: None}
        assert session.labels == {A: "start"}

    def test_the_latest_label_wins_and_an_empty_one_clears(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            entry("label", L1, B, targetId=A, label="first"),
            entry("label", L2, L1, targetId=A, label="second"),
            entry("label", "55555555", L2, targetId=B, label="bee"),
            entry("label", "66666666", "55555555", targetId=B),
        )
        assert session.labels == {A: "second"}
        labels = {n.entry.id: n.label for _, n in iter_nodes(session.tree())}
        assert labels == {A: "second", B: None}

    def test_hidden_chains_reattach_to_the_nearest_shown_ancestor(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            marker(M1, A),
            entry("label", L1, M1, targetId=A, label="x"),
            marker(M2, L1),
            message(B, M2, user("b")),
        )
        assert shape(session.tree()) == [(0, A), (1, B)]

    def test_children_of_a_hidden_root_become_roots(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            marker(M1, None),
            message(A, M1, user("a")),
            message(B, A, user("b")),
        )
        assert shape(session.tree()) == [(0, A), (1, B)]
        assert ids(session.roots()) == [M1]

    def test_children_are_in_file_order(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(D, A, user("d")),
            message(B, A, user("b")),
            message(C, A, user("c")),
        )
        assert shape(session.tree()) == [(0, A), (1, D), (1, B), (1, C)]

    def test_nodes_carry_their_stored_entries(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        for _, node in iter_nodes(session.tree()):
            assert node.entry is session.get(node.entry.id)


# --- broken links ------------------------------------------------------------------------------


class TestDuplicateIds:
    def session(self, tmp_path: Path) -> Session:
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("first b")),
            message(B, A, user("second b")),
            message(C, B, user("c")),
        )

    def test_a_duplicate_id_is_reported_on_its_later_line(self, tmp_path: Path) -> None:
        problems = self.session(tmp_path).problems
        assert [(p.kind, p.line, p.entry_id) for p in problems] == [("duplicate-id", 4, B)]
        assert "line 3" in problems[0].message

    def test_the_later_entry_wins(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert session.get(B).line == 4  # type: ignore[union-attr]
        assert [e.line for e in session.children(A)] == [4]
        contents = [m["content"] for m in session.build_context().messages]
        assert contents == ["a", "second b", "c"]

    def test_the_tree_shows_a_duplicated_id_once(self, tmp_path: Path) -> None:
        tree = self.session(tmp_path).tree()
        assert shape(tree) == [(0, A), (1, B), (2, C)]
        assert next(n for _, n in iter_nodes(tree) if n.entry.id == B).entry.line == 4

    def test_a_duplicate_under_another_parent_moves_the_id(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            message(C, A, user("c")),
            message(B, C, user("b again")),
        )
        assert session.children(A) == [session.get(C)]
        assert ids(session.children(C)) == [B]
        assert ids(session.branch_path(B)) == [A, C, B]


class TestMissingParents:
    def session(self, tmp_path: Path) -> Session:
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, "0badc0de", user("b")),
            message(C, B, user("c")),
        )

    def test_a_missing_parent_is_reported(self, tmp_path: Path) -> None:
        problems = self.session(tmp_path).problems
        assert [(p.kind, p.line, p.entry_id) for p in problems] == [("missing-parent", 3, B)]
        assert "0badc0de" in problems[0].message

    def test_a_path_through_a_missing_parent_starts_at_the_orphan_as_in_pi(
        self, tmp_path: Path
    ) -> None:
        # pi's own forks leave such gaps (a child of a dropped label entry); pi stops
        # the path there, and so do we, while `problems` reports the gap.
        session = self.session(tmp_path)
        assert ids(session.branch_path(B)) == [B]
        assert ids(session.branch_path(C)) == [B, C]
        contents = [m["content"] for m in session.build_context().messages]
        assert contents == ["b", "c"]

    def test_orphans_appear_as_roots_in_the_tree(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert shape(session.tree()) == [(0, A), (0, B), (1, C)]
        active = {n.entry.id for _, n in iter_nodes(session.tree()) if n.on_active_path}
        assert active == {B, C}


class TestCycles:
    def session(self, tmp_path: Path) -> Session:
        # A is a proper root; B <-> C form a loop; D hangs below the loop; E is its own parent.
        return open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, C, user("b")),
            message(C, B, user("c")),
            message(D, C, user("d")),
            message(E, E, user("e")),
            message(F, A, user("f")),
        )

    def test_opening_a_file_with_cycles_does_not_hang(self, tmp_path: Path) -> None:
        with time_limit(5):
            session = self.session(tmp_path)
            session.problems  # noqa: B018
            session.roots()
            list(iter_nodes(session.tree()))
            list(iter_nodes(session.tree(fold=False)))
        assert session.leaf_id == F

    def test_cycles_are_reported_with_an_entry_of_the_loop(self, tmp_path: Path) -> None:
        problems = [p for p in self.session(tmp_path).problems if p.kind == "cycle"]
        assert [(p.line, p.entry_id) for p in problems] == [(3, B), (6, E)]
        assert B in problems[0].message
        assert C in problems[0].message
        assert E in problems[1].message

    def test_building_context_inside_a_cycle_names_the_entries(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        for leaf in (B, C, D):
            with time_limit(5), pytest.raises(SessionTreeError) as info:
                session.build_context(leaf)
            assert set(info.value.entry_ids) == {B, C}
            assert B in str(info.value)
            assert C in str(info.value)
            assert "cycle" in str(info.value)
        with time_limit(5), pytest.raises(SessionTreeError) as info:
            session.build_context(E)
        assert info.value.entry_ids == (E,)

    def test_an_id_used_again_that_closes_a_loop_is_a_cycle(self, tmp_path: Path) -> None:
        # each parent is on an earlier line, but the later A (the one that counts)
        # hangs below B, whose parent is A: the loop runs through the id used again
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            message(A, B, user("a again")),
        )
        assert "cycle" in [p.kind for p in session.problems]

    def test_a_session_whose_parents_all_come_first_has_no_cycle(self, tmp_path: Path) -> None:
        session = open_lines(
            tmp_path,
            message(A, None, user("a")),
            message(B, A, user("b")),
            message(C, G, user("c")),
        )
        assert [p.kind for p in session.problems] == ["missing-parent"]

    def test_paths_outside_the_cycle_still_work(self, tmp_path: Path) -> None:
        session = self.session(tmp_path)
        assert [m["content"] for m in session.build_context().messages] == ["a", "f"]
        assert ids(session.branch_path(F)) == [A, F]

    def test_the_default_context_of_a_cycle_leaf_is_an_error_not_a_hang(
        self, tmp_path: Path
    ) -> None:
        session = open_lines(tmp_path, message(A, B, user("a")), message(B, A, user("b")))
        assert session.roots() == []
        with time_limit(5), pytest.raises(SessionTreeError):
            session.build_context()

    def test_a_leaf_marker_pointing_at_itself_does_not_hang(self, tmp_path: Path) -> None:
        with time_limit(5):
            session = open_lines(tmp_path, message(A, None, user("a")), marker(M1, M1))
            list(iter_nodes(session.tree()))
            assert [p.kind for p in session.problems] == ["cycle"]

    def test_a_two_marker_loop_does_not_hang(self, tmp_path: Path) -> None:
        with time_limit(5):
            session = open_lines(
                tmp_path, message(A, None, user("a")), marker(M1, M2), marker(M2, M1)
            )
            list(iter_nodes(session.tree()))
            with pytest.raises(SessionTreeError):
                session.build_context()


# --- deep sessions -------------------------------------------------------------------------------


class TestDeepSessions:
    def test_a_very_deep_chain_needs_no_recursion(self, tmp_path: Path) -> None:
        count = 5000
        lines: list[dict[str, Any] | bytes] = []
        parent: str | None = None
        for i in range(count):
            entry_id = f"{i:08x}"
            lines.append(message(entry_id, parent, user(str(i))))
            parent = entry_id
        lines.append(marker("ffffffff", f"{count // 2:08x}"))
        with time_limit(30):
            session = open_lines(tmp_path, *lines)
            assert session.leaf_id == f"{count // 2:08x}"
            assert len(session.branch_path(f"{count - 1:08x}")) == count
            depths = [depth for depth, _ in iter_nodes(session.tree())]
            assert depths == list(range(count))
            assert len(session.build_context(f"{count - 1:08x}").messages) == count
            assert session.problems == []


# --- properties ----------------------------------------------------------------------------


@st.composite
def parent_graphs(draw: st.DrawFn) -> list[tuple[str, str | None, str]]:
    """(id, parentId, kind) triples with arbitrary parents: cycles and orphans allowed."""
    count = draw(st.integers(1, 14))
    entry_ids = [f"{i + 1:08x}" for i in range(count)]
    out = []
    for entry_id in entry_ids:
        parent = draw(
            st.one_of(st.none(), st.sampled_from(entry_ids), st.just("0badc0de")),
        )
        kind = draw(st.sampled_from(["message", "message", "message", "marker", "label"]))
        out.append((entry_id, parent, kind))
    return out


def _line(entry_id: str, parent: str | None, kind: str) -> dict[str, Any]:
    if kind == "marker":
        return marker(entry_id, parent)
    if kind == "label":
        return entry("label", entry_id, parent, targetId="00000001", label="l")
    return message(entry_id, parent, user(entry_id))


def _walk(graph: dict[str, str | None], start: str) -> tuple[str, list[str]]:
    """Follow parents: ("ok", root..start) or ("cycle", visited)."""
    seen: list[str] = []
    current: str | None = start
    while current is not None:
        if current not in graph:  # a missing parent ends the path, as in pi
            return "ok", seen[::-1]
        if current in seen:
            return "cycle", seen
        seen.append(current)
        current = graph[current]
    return "ok", seen[::-1]


class TestTreeProperties:
    @settings(
        max_examples=200,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(graph=parent_graphs())
    def test_any_parent_graph_is_reported_and_followed_without_hanging(
        self, tmp_path: Path, graph: list[tuple[str, str | None, str]]
    ) -> None:
        parents = {entry_id: parent for entry_id, parent, _ in graph}
        with time_limit(10):
            session = open_lines(tmp_path, *(_line(*spec) for spec in graph))
            reported = {p.kind for p in session.problems}
            outcomes = {entry_id: _walk(parents, entry_id) for entry_id in parents}
            in_cycle = any(outcome == "cycle" for outcome, _ in outcomes.values())
            assert ("cycle" in reported) == in_cycle
            missing = any(p is not None and p not in parents for p in parents.values())
            assert ("missing-parent" in reported) == missing
            for entry_id, (outcome, path) in outcomes.items():
                if outcome == "ok":
                    assert ids(session.branch_path(entry_id)) == path
                    session.build_context(entry_id)
                else:
                    with pytest.raises(SessionTreeError):
                        session.branch_path(entry_id)
                    with pytest.raises(SessionTreeError):
                        session.build_context(entry_id)
            seen = [node.entry.id for _, node in iter_nodes(session.tree(fold=False))]
            assert len(seen) == len(set(seen))
            # Every entry is shown exactly once, cycles included (broken at their
            # first entry in file order).
            assert set(seen) == set(parents)

    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(data=st.data(), count=st.integers(1, 16))
    def test_folded_trees_hang_each_shown_entry_from_its_nearest_shown_ancestor(
        self, tmp_path: Path, data: st.DataObject, count: int
    ) -> None:
        specs: list[tuple[str, str | None, str]] = []
        for i in range(count):
            entry_id = f"{i + 1:08x}"
            earlier = [s[0] for s in specs]
            parent = data.draw(st.one_of(st.none(), st.sampled_from(earlier))) if earlier else None
            kind = data.draw(st.sampled_from(["message", "message", "marker", "label"]))
            specs.append((entry_id, parent, kind))
        session = open_lines(tmp_path, *(_line(*spec) for spec in specs))
        parents = {s[0]: s[1] for s in specs}
        hidden = {s[0] for s in specs if s[2] != "message"}

        def shown_parent(entry_id: str) -> str | None:
            current = parents[entry_id]
            while current is not None and current in hidden:
                current = parents[current]
            return current

        tree = session.tree()
        found: dict[str, str | None] = {}
        order: list[str] = []
        stack: list[tuple[str | None, TreeNode]] = [(None, node) for node in reversed(tree)]
        while stack:
            parent, node = stack.pop()
            found[node.entry.id] = parent
            order.append(node.entry.id)
            stack.extend((node.entry.id, child) for child in reversed(node.children))
        assert found == {e: shown_parent(e) for e in parents if e not in hidden}
        # Siblings come in file order.
        for node in [n for _, n in iter_nodes(tree)]:
            lines = [child.entry.line for child in node.children]
            assert lines == sorted(lines)
        # The active leaf: the last entry, looked through leaf markers; then root..leaf.
        leaf: str | None = specs[-1][0]
        while leaf is not None and leaf in {s[0] for s in specs if s[2] == "marker"}:
            leaf = parents[leaf]
        assert session.leaf_id == leaf
        active = set() if leaf is None else set(_walk(parents, leaf)[1])
        marked = {node.entry.id for _, node in iter_nodes(tree) if node.on_active_path}
        assert marked == active - hidden


def _opens(path: Path) -> bool:
    try:
        load_entries(path, cache=False)
    except SessionFormatError:
        return False
    return True


SESSION_FIXTURES = sorted(p.stem for p in FIXTURES.glob("*.jsonl") if _opens(p))


@pytest.mark.parametrize("name", SESSION_FIXTURES)
def test_the_entries_in_file_order_without_an_index_are_the_order(
    tmp_path: Path, name: str
) -> None:
    # a table from the cache (a second open) and a fresh one, then appends beside it
    path = copy_fixture(tmp_path, name)
    for _ in range(2):
        session = Session.open(path)
        index = session._state.index
        walked = index.in_file_order()
        assert [id(entry) for entry in walked] == [id(entry) for entry in index.order]
        assert index.in_file_order() == index.order
    if session.version_read > 3:  # (written to by no one)
        return
    session.append_message({"role": "user", "content": "one more", "timestamp": 1})
    index = session._state.index  # the table, and an entry added beside it
    assert [id(entry) for entry in index.in_file_order()] == [id(entry) for entry in index.order]


@pytest.mark.parametrize("name", SESSION_FIXTURES)
def test_the_problems_of_a_table_alone_are_those_of_every_entry_built(
    tmp_path: Path, name: str
) -> None:
    # a clean table answers from its parent positions; built, the index walks them all
    path = copy_fixture(tmp_path, name)
    for _ in range(2):  # a fresh table, then one from the cache
        index = Session.open(path)._state.index
        from_table = index.problems()
        assert index.by_id  # every entry built
        assert from_table == index.problems()
    if name == "damaged-dangling-parent":
        assert [p.kind for p in from_table] == ["missing-parent"]


def test_a_large_session_s_missing_parents_are_found_from_its_table_alone(tmp_path: Path) -> None:
    path = generate(tmp_path / "big.jsonl", 700)
    with path.open("a") as out:  # two entries whose parents no entry has
        for number in (1, 2):
            out.write(
                f'{{"type":"message","id":"orphan0{number}","parentId":"gone000{number}",'
                '"timestamp":"2025-01-01T00:00:00.000Z",'
                '"message":{"role":"user","content":"lost","timestamp":1}}\n'
            )
    for _ in range(2):  # a fresh table, then one from the cache
        index = Session.open(path)._state.index
        assert index._table is not None and not index._order  # (the table alone)
        from_table = index.problems()
        assert [(p.kind, p.entry_id) for p in from_table] == [
            ("missing-parent", "orphan01"),
            ("missing-parent", "orphan02"),
        ]
        assert index.by_id  # every entry built
        assert from_table == index.problems()
