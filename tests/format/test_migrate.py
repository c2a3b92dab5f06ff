"""Reading older (and newer) format versions: ids and parents for version 1, line
indexes turned into ids, branchedFrom, hookMessage, headers that lost their version,
and version 4 read best-effort but refused for writing. Migration is in memory only."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from builders import hook_message as hook
from builders import read_assistant as assistant
from builders import read_user as user
from helpers_read import (
    SESSION_ID,
    dumps,
    entry,
    header,
    message,
    snapshot,
    ts,
    write_session,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsonl_session import CURRENT_VERSION, Session, SessionWriteError, load_entries
from jsonl_session.format.model import CustomMessage, MessageEntry

A, B, C = "aaaaaaaa", "bbbbbbbb", "cccccccc"
ID = re.compile(r"^[0-9a-f]{8}$")


def v1(kind: str, seconds: float, **fields: Any) -> dict[str, Any]:
    """A version-1 entry: no id, no parentId."""
    return {"type": kind, "timestamp": ts(seconds), **fields}


def v1_file(tmp_path: Path, *lines: dict[str, Any] | bytes, **head: Any) -> Path:
    return write_session(tmp_path / "v1.jsonl", [header(version=None, **head), *lines])


# --- version 1: ids and parents ---------------------------------------------------------


class TestVersion1IdsAndParents:
    def lines(self) -> list[dict[str, Any]]:
        return [
            v1("message", 1, message=user("one")),
            v1("thinking_level_change", 2, thinkingLevel="high"),
            v1("message", 3, message=assistant("two")),
            v1("model_change", 4, provider="openai", modelId="gpt-5"),
            v1("message", 5, message=user("three")),
        ]

    def test_entries_get_ids_of_eight_lowercase_hex_chars(self, tmp_path: Path) -> None:
        session = Session.open(v1_file(tmp_path, *self.lines()))
        ids = [e.id for e in session.entries]
        assert len(ids) == 5
        assert all(ID.match(i) for i in ids)
        assert len(set(ids)) == 5
        assert session.problems == []

    def test_ids_are_the_same_every_time_the_file_is_read(self, tmp_path: Path) -> None:
        path = v1_file(tmp_path, *self.lines())
        first = [e.id for e in Session.open(path).entries]
        assert [e.id for e in Session.open(path).entries] == first
        assert [e.id for e in load_entries(path).entries] == first
        assert [e.raw for e in load_entries(path).entries] == [
            e.raw for e in load_entries(path).entries
        ]

    def test_entries_form_one_chain_in_file_order(self, tmp_path: Path) -> None:
        session = Session.open(v1_file(tmp_path, *self.lines()))
        entries = session.entries
        assert entries[0].parent_id is None
        for previous, current in pairwise(entries):
            assert current.parent_id == previous.id
            assert current.data()["parentId"] == previous.id
        assert entries[0].data()["parentId"] is None
        assert session.leaf_id == entries[-1].id
        assert [e.id for e in session.branch_path()] == [e.id for e in entries]

    def test_the_chain_skips_blank_and_bad_lines(self, tmp_path: Path) -> None:
        one, two, three = self.lines()[0], self.lines()[2], self.lines()[4]
        session = Session.open(v1_file(tmp_path, one, b"", b"{bad", two, b"null", three))
        entries = session.entries
        assert [e.line for e in entries] == [2, 5, 7]
        assert entries[1].parent_id == entries[0].id
        assert entries[2].parent_id == entries[1].id
        assert [p.kind for p in session.problems] == ["invalid-json", "not-an-entry"]

    def test_a_migrated_entry_keeps_its_keys_and_gains_id_and_parent_at_the_end(
        self, tmp_path: Path
    ) -> None:
        original = v1("message", 1, message=user("one"), extra={"b": 1, "a": 2})
        (stored,) = Session.open(v1_file(tmp_path, original)).entries
        data = stored.data()
        assert list(data) == [*original, "id", "parentId"]
        assert {k: data[k] for k in original} == original
        assert stored.migrated is True
        assert stored.raw == dumps({**original, "id": stored.id, "parentId": None})

    def test_the_version_read_and_the_migrated_header_are_reported(self, tmp_path: Path) -> None:
        session = Session.open(v1_file(tmp_path, *self.lines()))
        assert session.version_read == 1
        assert session.migrations
        assert session.header_data["version"] == CURRENT_VERSION
        assert list(session.header_data)[:2] == ["type", "version"]
        assert session.header.version == CURRENT_VERSION

    def test_the_context_of_a_version_1_file_is_its_whole_chain(self, tmp_path: Path) -> None:
        context = Session.open(v1_file(tmp_path, *self.lines())).build_context()
        assert [m["role"] for m in context.messages] == ["user", "assistant", "user"]
        assert context.thinking_level == "high"
        assert context.model == {"provider": "openai", "modelId": "gpt-5"}

    def test_version_1_ids_differ_between_sessions(self, tmp_path: Path) -> None:
        a = v1_file(tmp_path, *self.lines())
        b = write_session(
            tmp_path / "other.jsonl", [header(version=None, session_id="other"), *self.lines()]
        )
        assert [e.id for e in Session.open(a).entries] != [e.id for e in Session.open(b).entries]

    def test_an_explicit_version_1_is_migrated_like_a_missing_one(self, tmp_path: Path) -> None:
        implicit = v1_file(tmp_path, *self.lines())
        explicit = write_session(tmp_path / "e.jsonl", [header(version=1), *self.lines()])
        a, b = Session.open(implicit), Session.open(explicit)
        assert b.version_read == 1
        assert [e.id for e in a.entries] == [e.id for e in b.entries]
        assert a.build_context() == b.build_context()


# --- version 1: line indexes become ids ------------------------------------------------


class TestVersion1IndexReferences:
    def test_first_kept_entry_index_becomes_the_id_of_the_same_entry(self, tmp_path: Path) -> None:
        path = v1_file(
            tmp_path,
            v1("message", 1, message=user("one")),  # index 1
            v1("message", 2, message=assistant("two")),  # index 2
            v1("message", 3, message=user("three")),  # index 3
            v1("compaction", 4, summary="S", firstKeptEntryIndex=2, tokensBefore=100),
            v1("message", 5, message=user("four")),
        )
        session = Session.open(path)
        entries = session.entries
        compaction = entries[3].data()
        assert "firstKeptEntryIndex" not in compaction
        assert compaction["firstKeptEntryId"] == entries[1].id
        context = session.build_context()
        assert [m.get("content") for m in context.messages][2:] == ["three", "four"]
        assert context.messages[0]["role"] == "compactionSummary"
        assert context.messages[1]["role"] == "assistant"

    def test_the_index_counts_non_blank_lines_with_the_header_as_zero(self, tmp_path: Path) -> None:
        path = v1_file(
            tmp_path,
            b"",
            v1("message", 1, message=user("one")),  # index 1
            b"",
            b"",
            v1("message", 2, message=user("two")),  # index 2
            v1("message", 3, message=user("three")),  # index 3
            b"",
            v1("compaction", 4, summary="S", firstKeptEntryIndex=3, tokensBefore=1),
        )
        entries = Session.open(path).entries
        assert entries[3].data()["firstKeptEntryId"] == entries[2].id

    def test_the_index_counts_lines_in_a_crlf_file(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "v1.jsonl",
            [
                header(version=None),
                v1("message", 1, message=user("one")),
                v1("message", 2, message=user("two")),
                v1("compaction", 3, summary="S", firstKeptEntryIndex=1, tokensBefore=1),
            ],
            eol=b"\r\n",
        )
        entries = Session.open(path).entries
        assert entries[2].data()["firstKeptEntryId"] == entries[0].id

    def test_compaction_keys_keep_pi_s_order(self, tmp_path: Path) -> None:
        compaction = v1("compaction", 2, summary="S", firstKeptEntryIndex=1, tokensBefore=7)
        path = v1_file(tmp_path, v1("message", 1, message=user("one")), compaction)
        entries = Session.open(path).entries
        data = entries[1].data()
        assert list(data) == [
            "type",
            "timestamp",
            "summary",
            "tokensBefore",
            "id",
            "parentId",
            "firstKeptEntryId",
        ]

    def test_an_index_pointing_at_the_header_is_reported(self, tmp_path: Path) -> None:
        path = v1_file(
            tmp_path,
            v1("message", 1, message=user("one")),
            v1("compaction", 2, summary="S", firstKeptEntryIndex=0, tokensBefore=1),
        )
        session = Session.open(path)
        assert [(p.kind, p.line) for p in session.problems] == [("missing-target", 3)]
        assert "firstKeptEntryId" not in session.entries[1].data()
        messages = session.build_context().messages
        assert [m["role"] for m in messages] == ["compactionSummary"]

    @pytest.mark.parametrize("index", [99, -1])
    def test_an_index_past_the_entries_is_reported(self, tmp_path: Path, index: int) -> None:
        path = v1_file(
            tmp_path,
            v1("message", 1, message=user("one")),
            v1("compaction", 2, summary="S", firstKeptEntryIndex=index, tokensBefore=1),
        )
        session = Session.open(path)
        problems = [(p.kind, p.line, p.entry_id) for p in session.problems]
        assert problems == [("missing-target", 3, session.entries[1].id)]

    def test_an_index_pointing_at_a_bad_line_is_reported(self, tmp_path: Path) -> None:
        path = v1_file(
            tmp_path,
            v1("message", 1, message=user("one")),
            b"{broken",
            v1("message", 2, message=user("two")),
            v1("compaction", 3, summary="S", firstKeptEntryIndex=2, tokensBefore=1),
        )
        session = Session.open(path)
        assert ("missing-target", 5) in [(p.kind, p.line) for p in session.problems]

    def test_a_label_with_a_numeric_target_keeps_pointing_at_the_same_entry(
        self, tmp_path: Path
    ) -> None:
        path = v1_file(
            tmp_path,
            v1("message", 1, message=user("one")),
            b"",
            v1("message", 2, message=assistant("two")),
            v1("label", 3, targetId=2, label="answer"),
            v1("label", 4, targetId=1, label="question"),
        )
        session = Session.open(path)
        one, two, first_label, second_label = session.entries
        assert first_label.data()["targetId"] == two.id
        assert second_label.data()["targetId"] == one.id
        assert session.labels == {two.id: "answer", one.id: "question"}
        assert session.problems == []

    def test_string_references_are_left_alone(self, tmp_path: Path) -> None:
        line = v1("label", 2, targetId="somewhere", label="x")
        path = v1_file(tmp_path, v1("message", 1, message=user("one")), line)
        assert Session.open(path).entries[1].data()["targetId"] == "somewhere"


# --- the header -----------------------------------------------------------------------------


class TestHeaderMigration:
    @pytest.mark.parametrize("version", [None, 1, 2])
    def test_branched_from_is_read_as_parent_session(
        self, tmp_path: Path, version: int | None
    ) -> None:
        path = write_session(
            tmp_path / "s.jsonl", [header(version=version, branchedFrom="/old/one.jsonl")]
        )
        session = Session.open(path)
        assert session.header.parent_session == "/old/one.jsonl"
        assert session.header_data["parentSession"] == "/old/one.jsonl"
        assert "branchedFrom" not in session.header_data

    def test_parent_session_wins_over_branched_from(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "s.jsonl",
            [header(version=2, branchedFrom="/old.jsonl", parentSession="/new.jsonl")],
        )
        session = Session.open(path)
        assert session.header.parent_session == "/new.jsonl"
        assert "branchedFrom" not in session.header_data

    def test_old_header_fields_are_kept(self, tmp_path: Path) -> None:
        head = header(version=None, provider="anthropic", modelId="m", thinkingLevel="low")
        session = Session.open(write_session(tmp_path / "s.jsonl", [head]))
        data = session.header_data
        assert data["provider"] == "anthropic"
        assert data["modelId"] == "m"
        assert data["thinkingLevel"] == "low"
        assert list(data) == [
            "type",
            "version",
            "id",
            "timestamp",
            "cwd",
            "provider",
            "modelId",
            "thinkingLevel",
        ]
        assert session.id == SESSION_ID


# --- version 2 ------------------------------------------------------------------------------


class TestVersion2:
    def write(self, tmp_path: Path) -> tuple[Path, list[bytes]]:
        lines = [
            b'{"type": "message", "id": "aaaaaaaa", "parentId": null, '
            b'"timestamp": "2024-05-01T12:00:01.000Z", '
            b'"message": {"role": "user", "content": "one", "timestamp": 1}}',
            dumps(message(B, A, hook("hooked"), zz="unknown")),
            dumps(message(C, B, assistant("two"))),
        ]
        return write_session(tmp_path / "v2.jsonl", [header(version=2), *lines]), lines

    def test_role_hook_message_becomes_custom(self, tmp_path: Path) -> None:
        path, _ = self.write(tmp_path)
        session = Session.open(path)
        stored = session.get(B)
        assert stored is not None
        assert stored.role == "custom"
        assert stored.data()["message"]["role"] == "custom"
        assert stored.migrated
        typed = stored.typed()
        assert isinstance(typed, MessageEntry)
        assert isinstance(typed.message, CustomMessage)
        assert session.version_read == 2
        assert session.header_data["version"] == CURRENT_VERSION

    def test_the_changed_entry_keeps_its_keys_in_order(self, tmp_path: Path) -> None:
        path, _ = self.write(tmp_path)
        stored = Session.open(path).get(B)
        assert stored is not None
        expected = message(B, A, {**hook("hooked"), "role": "custom"}, zz="unknown")
        assert stored.data() == expected
        assert list(stored.data()) == list(expected)
        assert list(stored.data()["message"]) == list(expected["message"])
        assert stored.raw == dumps(expected)

    def test_entries_not_changed_keep_their_exact_bytes(self, tmp_path: Path) -> None:
        path, lines = self.write(tmp_path)
        session = Session.open(path)
        first, _, third = session.entries
        assert first.raw == lines[0]
        assert third.raw == lines[2]
        assert not first.migrated
        assert not third.migrated

    def test_the_context_carries_the_renamed_message(self, tmp_path: Path) -> None:
        path, _ = self.write(tmp_path)
        messages = Session.open(path).build_context().messages
        assert [m["role"] for m in messages] == ["user", "custom", "assistant"]
        assert messages[1] == {**hook("hooked"), "role": "custom"}

    def test_a_version_3_file_is_not_migrated(self, tmp_path: Path) -> None:
        lines = [
            message(A, None, hook("left as is")),
            b'{"type":"message",  "id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"x",'
            b'"message":{"role":"user","content":"x","timestamp":1}}',
        ]
        path = write_session(tmp_path / "v3.jsonl", [header(), *lines])
        session = Session.open(path)
        assert session.migrations == []
        assert session.version_read == 3
        assert session.get(A).role == "hookMessage"  # type: ignore[union-attr]
        assert [e.raw for e in session.entries] == [dumps(lines[0]), lines[1]]
        assert not any(e.migrated for e in session.entries)

    def test_a_version_2_file_keeps_its_tree(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "v2.jsonl",
            [
                header(version=2),
                message(A, None, user("one")),
                message(B, A, user("two")),
                message(C, A, user("three")),
            ],
        )
        session = Session.open(path)
        assert [e.id for e in session.children(A)] == [B, C]
        assert not any(e.migrated for e in session.entries)


# --- a header that lost its version ----------------------------------------------------


class TestHeaderWithoutVersion:
    def lines(self) -> list[dict[str, Any]]:
        return [
            message(A, None, user("one")),
            message(B, A, assistant("two")),
            message(C, A, user("three")),  # a second branch from A
        ]

    def test_entries_with_ids_and_parents_keep_their_tree(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [header(version=None), *self.lines()])
        session = Session.open(path)
        assert [(e.id, e.parent_id) for e in session.entries] == [(A, None), (B, A), (C, A)]
        assert [e.id for e in session.children(A)] == [B, C]
        assert [m["content"] for m in session.build_context().messages] == ["one", "three"]

    def test_it_is_reported(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [header(version=None), *self.lines()])
        session = Session.open(path)
        assert [(p.kind, p.line) for p in session.problems] == [("header-without-version", 1)]
        assert session.version_read == 2

    def test_the_entries_keep_their_bytes(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [header(version=None), *self.lines()])
        session = Session.open(path)
        assert [e.raw for e in session.entries] == [dumps(e) for e in self.lines()]
        assert not any(e.migrated for e in session.entries)

    def test_a_single_root_entry_with_a_null_parent_is_enough(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "s.jsonl", [header(version=None), message(A, None, user("one"))]
        )
        session = Session.open(path)
        assert [p.kind for p in session.problems] == ["header-without-version"]
        assert session.entries[0].id == A
        assert not session.entries[0].migrated


# --- a newer version ---------------------------------------------------------------------


class TestNewerVersion:
    def write(self, tmp_path: Path) -> Path:
        return write_session(
            tmp_path / "v4.jsonl",
            [
                header(version=4, futureField={"x": 1}),
                message(A, None, user("one"), newKey=1),
                entry("hologram", B, A, shape="cube"),
                message(C, B, assistant("two")),
            ],
        )

    def test_it_is_read_best_effort_with_a_problem(self, tmp_path: Path) -> None:
        session = Session.open(self.write(tmp_path))
        assert [(p.kind, p.line) for p in session.problems] == [("newer-version", 1)]
        assert "4" in session.problems[0].message
        assert session.version_read == 4
        assert session.migrations == []
        assert session.header_data["version"] == 4
        assert [e.id for e in session.entries] == [A, B, C]
        assert not any(e.migrated for e in session.entries)
        context = session.build_context()
        assert [m["role"] for m in context.messages] == ["user", "assistant"]

    @pytest.mark.parametrize(
        "write",
        [
            lambda s: s.append_message(user("x")),
            lambda s: s.append_message(assistant("x")),
            lambda s: s.append_model_change("p", "m"),
            lambda s: s.append_thinking_level_change("high"),
            lambda s: s.append_compaction("sum", A, 10),
            lambda s: s.append_branch_summary(A, "sum"),
            lambda s: s.append_custom("ext", {"a": 1}),
            lambda s: s.append_custom_message("ext", "text"),
            lambda s: s.append_label(A, "x"),
            lambda s: s.append_session_info("name"),
            lambda s: s.branch(A),
            lambda s: s.migrate(),
        ],
        ids=[
            "message",
            "assistant",
            "model_change",
            "thinking_level_change",
            "compaction",
            "branch_summary",
            "custom",
            "custom_message",
            "label",
            "session_info",
            "branch",
            "migrate",
        ],
    )
    def test_writing_is_refused_and_changes_nothing(self, tmp_path: Path, write: Any) -> None:
        path = self.write(tmp_path)
        before = snapshot(path)
        session = Session.open(path)
        leaf = session.leaf_id
        with pytest.raises(SessionWriteError) as info:
            write(session)
        assert str(path) in str(info.value)
        assert "4" in str(info.value)
        before.assert_unchanged()
        assert session.leaf_id == leaf
        assert [e.id for e in session.entries] == [A, B, C]

    def test_a_newer_file_is_not_changed_by_reading(self, tmp_path: Path) -> None:
        path = self.write(tmp_path)
        before = snapshot(path)
        session = Session.open(path)
        session.build_context()
        session.tree()
        before.assert_unchanged()


# --- migration is in memory ---------------------------------------------------------------


class TestMigrationIsInMemory:
    def test_opening_an_old_file_does_not_rewrite_it(self, tmp_path: Path) -> None:
        path = v1_file(
            tmp_path,
            v1("message", 1, message=user("one")),
            v1("message", 2, message={**hook("h"), "timestamp": 2}),
            v1("compaction", 3, summary="S", firstKeptEntryIndex=1, tokensBefore=1),
            branchedFrom="/x.jsonl",
        )
        before = snapshot(path)
        session = Session.open(path)
        session.build_context()
        session.tree()
        load_entries(path)
        before.assert_unchanged()
        assert not list(tmp_path.glob("*.bak"))

    @settings(
        max_examples=60,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        kinds=st.lists(
            st.sampled_from(["user", "assistant", "hook", "model", "thinking", "compaction"]),
            min_size=1,
            max_size=12,
        ),
        blanks=st.lists(st.integers(0, 20), max_size=3),
        data=st.data(),
    )
    def test_random_version_1_files_migrate_to_a_chain_that_keeps_every_entry(
        self, tmp_path: Path, kinds: list[str], blanks: list[int], data: st.DataObject
    ) -> None:
        lines: list[dict[str, Any] | bytes] = []
        for i, kind in enumerate(kinds):
            if kind == "user":
                lines.append(v1("message", i, message=user(f"u{i}")))
            elif kind == "assistant":
                lines.append(v1("message", i, message=assistant(f"a{i}")))
            elif kind == "hook":
                lines.append(v1("message", i, message=hook(f"h{i}")))
            elif kind == "model":
                lines.append(v1("model_change", i, provider="p", modelId=f"m{i}"))
            elif kind == "thinking":
                lines.append(v1("thinking_level_change", i, thinkingLevel=f"t{i}"))
            else:
                target = data.draw(st.integers(1, max(1, i)), label="firstKeptEntryIndex")
                lines.append(
                    v1("compaction", i, summary=f"s{i}", firstKeptEntryIndex=target, tokensBefore=i)
                )
        originals = [line for line in lines if isinstance(line, dict)]
        for position in blanks:
            lines.insert(position % (len(lines) + 1), b"")
        path = write_session(tmp_path / "v1.jsonl", [header(version=None), *lines])
        before = snapshot(path)
        session = Session.open(path)
        again = Session.open(path)
        before.assert_unchanged()

        entries = session.entries
        assert [e.id for e in entries] == [e.id for e in again.entries]
        assert len(entries) == len(originals)
        assert all(ID.match(e.id) for e in entries)
        assert [e.parent_id for e in entries] == [None, *[e.id for e in entries[:-1]]]
        non_blank = [None, *[line for line in lines if line != b""]]
        for stored, original in zip(entries, originals, strict=True):
            data_now = stored.data()
            for key, value in original.items():
                if key == "firstKeptEntryIndex":
                    target = non_blank[value]
                    assert "firstKeptEntryIndex" not in data_now
                    assert data_now["firstKeptEntryId"] == entries[originals.index(target)].id
                elif key == "message" and value["role"] == "hookMessage":
                    assert data_now["message"] == {**value, "role": "custom"}
                else:
                    assert data_now[key] == value
        assert [p.kind for p in session.problems] == []
