"""A run of entries kept as an index-cache record (table.py; made by table_build.py)
answers as the entries themselves do: positions, ids, parent chains, labels and names;
a tree index over a table and the entries after it equals one over all the entries,
also when the later entries reuse an id or supply a parent the table lacks; and a
record brought up to date equals one made afresh."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builders import user_message
from helpers_large import entry_key, generate
from helpers_write import raw_entry
from hypothesis import given, settings
from hypothesis import strategies as st
from locations import FIXTURES

from jsonl_session import Session, load_entries
from jsonl_session.errors import JsonlSessionError, SessionTreeError
from jsonl_session.format.entry import StoredEntry, decode_envelope
from jsonl_session.storage import table, table_build
from jsonl_session.storage.table import EntryTable, TableRecord
from jsonl_session.storage.table_build import table_record
from jsonl_session.tree import TreeIndex


def _readable_v3(path: Path) -> bool:
    try:
        loaded = load_entries(path, cache=False)
    except JsonlSessionError:
        return False
    return loaded.version_read == 3 and bool(loaded.entries)


V3_FIXTURES = sorted(p for p in FIXTURES.glob("*.jsonl") if _readable_v3(p))


def fixture_entries(path: Path) -> list[StoredEntry]:
    return load_entries(path).entries


def line(entry_id: str, parent: str | None, number: int, **fields: Any) -> StoredEntry:
    fields.setdefault("type", "message")
    if fields["type"] == "message":
        fields.setdefault("message", user_message())
    raw = raw_entry(entry_id, parent, **fields)
    return StoredEntry.from_envelope(decode_envelope(raw), number, number * 1000, raw)


def chain(*ids: str) -> list[StoredEntry]:
    """Entries each the child of the one before."""
    return [line(i, ids[n - 1] if n else None, n + 2) for n, i in enumerate(ids)]


def as_table(entries: Sequence[StoredEntry]) -> EntryTable:
    held = msgspec.msgpack.Encoder(enc_hook=table.no_source).encode(table_record(entries))
    record = msgspec.msgpack.decode(held, type=TableRecord)
    source = next((e.source for e in entries if e.source is not None), None)
    return EntryTable(record, source)  # through bytes, as the cache holds it


def record_key(record: TableRecord) -> tuple[Any, ...]:
    def held(entry: StoredEntry) -> tuple[Any, ...]:
        return msgspec.structs.astuple(entry)[:-1]  # all but the source it reads from

    blocks = [msgspec.msgpack.decode(b, type=list[StoredEntry]) for b in record.blocks]
    fields = (record.count, record.has_assistant, record.clean, record.ids, record.parents)
    entries = [held(e) for block in blocks for e in block]
    return (*fields, record.missing, entries, [held(e) for e in record.noted])


def outcome(call: Any) -> Any:
    try:
        return call()
    except SessionTreeError as exc:
        return ("error", str(exc))


def index_key(index: TreeIndex, ids: list[str]) -> tuple[Any, ...]:
    """What an index answers, asked in the order a session asks (leaf, paths, lookups)
    before what needs every entry."""
    last = index.last_entry()
    return (
        len(index),
        index.count,
        None if last is None else entry_key(last),
        [i in index for i in [*ids, "nope"]],
        [outcome(lambda i=i: [e.id for e in index.path(i)]) for i in ids],
        [None if (e := index.get(i)) is None else entry_key(e) for i in ids],
        [entry_key(e) for e in index.order],
        list(index.by_id),
        index.problems(),
        [e.id for e in index.roots()],
        {k: list(v) for k, v in index.children_of.items()},
    )


class TestATableAnswersAsItsEntries:
    @pytest.mark.parametrize("path", V3_FIXTURES, ids=lambda p: p.name)
    def test_positions_entries_and_chains_match_the_entries(self, path: Path) -> None:
        entries = fixture_entries(path)
        held = as_table(entries)
        assert len(held) == len(entries)
        assert [entry_key(e) for e in held.materialise()] == [entry_key(e) for e in entries]
        assert entry_key(held[-1]) == entry_key(entries[-1])
        with pytest.raises(IndexError):
            held[len(entries)]
        if not held.clean:
            return
        plain = TreeIndex(entries)
        for position, entry in enumerate(entries):
            assert held.position(entry.id) == position
            expected = [e.id for e in reversed(plain.path(entry.id))]
            assert [held[p].id for p in held.chain(position)] == expected
        assert held.position("not-an-id") is None

    @settings(max_examples=300, deadline=None)
    @given(
        links=st.lists(
            st.one_of(st.just("before"), st.just("none"), st.just("missing"), st.integers(0, 40)),
            min_size=1,
            max_size=40,
        )
    )
    def test_a_chain_steps_over_runs_of_children_as_a_walk_from_parent_to_parent_does(
        self, links: list[str | int]
    ) -> None:
        entries: list[StoredEntry] = []
        for n, link in enumerate(links):
            if link == "before":
                parent = f"e{n - 1}" if n else None
            elif link == "none":
                parent = None
            elif link == "missing":
                parent = "gone"
            else:
                parent = f"e{int(link) % n}" if n else None
            entries.append(line(f"e{n}", parent, n + 2))
        held = as_table(entries)
        assert held.clean
        by_id = {e.id: n for n, e in enumerate(entries)}
        for position in range(len(entries)):
            walked, at = [], position
            while at is not None:
                walked.append(at)
                parent = entries[at].parent_id
                at = by_id.get(parent) if parent is not None else None
            assert held.chain(position) == walked

    def test_entries_read_back_share_their_types_roles_and_parents_ids(
        self, tmp_path: Path
    ) -> None:
        entries = load_entries(generate(tmp_path / "gen.jsonl", entries=300)).entries
        held = as_table(entries).materialise()
        assert [entry_key(e) for e in held] == [entry_key(e) for e in entries]
        messages = [e for e in held if e.type == "message"]
        assert len({id(e.type) for e in messages}) == 1
        assert len({id(e.role) for e in messages if e.role == "toolResult"}) == 1
        linked = [(e, p) for p, e in itertools.pairwise(held) if e.parent_id == p.id]
        assert len(linked) > 250 and all(e.parent_id is p.id for e, p in linked)

    def test_lookups_answer_the_same_once_a_dict_of_ids_is_built(self) -> None:
        entries = chain(*(f"{n:08x}" for n in range(200)))
        held = as_table(entries)
        for _ in range(2):  # the second round, past the limit, goes through the dict
            assert [held.position(e.id) for e in entries] == list(range(200))
            assert held.position("ffffffff") is None

    @pytest.mark.parametrize(
        "odd", ["a\nb", "caf\u00e9", "\U0001f600", "\u00ff", "x" * 300, "1"], ids=repr
    )
    def test_an_id_with_any_characters_is_found(self, odd: str) -> None:
        entries = [*chain("aaaa0001", "aaaa0002"), line(odd, "aaaa0002", 4), line("z", odd, 5)]
        held = as_table(entries)
        assert held.clean
        assert held.position(odd) == 2
        assert held.chain(3) == [3, 2, 1, 0]
        assert held.position("a") is None and held.position("b") is None

    def test_labels_names_and_assistant_messages_are_known_without_the_blocks(self) -> None:
        entries = [
            *chain("a1", "a2"),
            line("l1", "a2", 4, type="label", targetId="a1", label="start"),
            line("n1", "l1", 5, type="session_info", name="my run"),
        ]
        held = as_table(entries)
        assert [e.id for e in held.noted] == ["l1", "n1"]
        assert not held.has_assistant
        assistant = {"role": "assistant", "content": [], "timestamp": 1}
        assert as_table([*entries, line("b1", "n1", 6, message=assistant)]).has_assistant

    @pytest.mark.parametrize(
        "entries",
        [
            [*chain("a", "b"), line("a", "b", 4)],  # an id used again
            [line("a", "b", 2), line("b", None, 3)],  # a parent after its child
            [line("a", "a", 2)],  # its own parent
        ],
        ids=["duplicate", "forward parent", "own parent"],
    )
    def test_a_table_with_a_reused_id_or_a_later_parent_is_not_clean(
        self, entries: list[StoredEntry]
    ) -> None:
        record = table_record(entries)
        assert not record.clean and record.ids == b"" and record.parents == b""


CUTS = {
    "nothing later": lambda e: (e, []),
    "half later": lambda e: (e[: len(e) // 2], e[len(e) // 2 :]),
    "all later": lambda e: ([], e),
    "the last later": lambda e: (e[:-1], e[-1:]),
}
Entries = list[StoredEntry]


def cut_fixture(path: Path, cut: str) -> tuple[Entries, Entries, Entries]:
    """A fixture's entries, and them cut in two as CUTS[cut] says."""
    entries = fixture_entries(path)
    earlier, later = CUTS[cut](entries)
    return entries, earlier, later


class TestATreeIndexOverATable:
    @pytest.mark.parametrize("cut", list(CUTS))
    @pytest.mark.parametrize("path", V3_FIXTURES, ids=lambda p: p.name)
    def test_it_answers_as_an_index_of_every_entry(self, path: Path, cut: str) -> None:
        entries, earlier, later = cut_fixture(path, cut)
        ids = list(dict.fromkeys(e.id for e in entries))
        held = TreeIndex(later, table=as_table(earlier))
        assert index_key(held, ids) == index_key(TreeIndex(entries), ids)

    @pytest.mark.parametrize(
        "later",
        [
            [line("0003", "0002", 9)],  # reuses an id of the table
            [line("gone", "0001", 9), line("0009", "gone", 10)],  # supplies a missing parent
            [line("0009", "0002", 9), line("0009", "0009", 10)],  # reuses its own id
            [line("0009", "0002", 9), line("000a", "0009", 10)],  # plain
        ],
        ids=["reused table id", "missing parent supplied", "reused later id", "plain"],
    )
    def test_entries_added_later_that_change_the_tables_links_are_taken_in(
        self, later: list[StoredEntry]
    ) -> None:
        earlier = [*chain("0001", "0002", "0003"), line("0004", "gone", 5), line("0005", "0004", 6)]
        ids = list(dict.fromkeys(e.id for e in [*earlier, *later]))
        held = TreeIndex(table=as_table(earlier))
        held.extend(later)  # as a session adds what it reads or writes
        assert index_key(held, ids) == index_key(TreeIndex([*earlier, *later]), ids)

    def test_a_lookup_of_what_is_not_a_string_finds_nothing(self) -> None:
        entries = chain("a", "b")
        for index in (TreeIndex(entries), TreeIndex(table=as_table(entries))):
            assert [index.get(odd) for odd in (None, 5)] == [None, None]  # type: ignore[arg-type]
            assert None not in index and 5 not in index

    def test_an_unclean_table_is_built_whole_at_once(self) -> None:
        entries = [*chain("a", "b"), line("a", "b", 4)]
        held = TreeIndex(table=as_table(entries))
        assert index_key(held, ["a", "b"]) == index_key(TreeIndex(entries), ["a", "b"])


class TestARecordBroughtUpToDate:
    @pytest.mark.parametrize("cut", list(CUTS))
    @pytest.mark.parametrize("path", V3_FIXTURES, ids=lambda p: p.name)
    def test_it_equals_a_record_made_afresh(self, path: Path, cut: str) -> None:
        entries, earlier, later = cut_fixture(path, cut)
        grown = table_record(later, as_table(earlier))
        assert record_key(grown) == record_key(table_record(entries))

    @pytest.mark.parametrize(
        "size", [table_build.BLOCK - 1, table_build.BLOCK, table_build.BLOCK + 1]
    )
    def test_only_the_last_block_is_encoded_again(self, size: int) -> None:
        entries = chain(*(f"{n:08x}" for n in range(size + 5)))
        base = table_record(entries[:size])
        grown = table_record(entries[size:], as_table(entries[:size]))
        full = size // table_build.BLOCK
        assert grown.blocks[:full] == base.blocks[:full]
        assert record_key(grown) == record_key(table_record(entries))


class TestASessionOverACachedRecord:
    def test_opening_decodes_at_most_the_last_block_and_the_context_only_the_path(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        big = generate(tmp_path / "big.jsonl", entries=2500)
        plain = Session.open(big, cache=False)
        Session.open(big)  # writes the record
        decoded: list[int] = []
        real = EntryTable._decode

        def spy(self: EntryTable, block: int) -> list[StoredEntry]:
            decoded.append(block)
            return real(self, block)

        monkeypatch.setattr(EntryTable, "_decode", spy)
        loaded = load_entries(big)
        assert loaded.table is not None and loaded.read_entries == []
        assert len(loaded.entries) == len(plain.entries) and loaded.read_entries == []
        decoded.clear()
        session = Session.open(big)
        assert decoded == [len(plain.entries) // table_build.BLOCK]  # the leaf's block
        assert (session.leaf_id, session.name, session.labels) == (
            plain.leaf_id,
            plain.name,
            plain.labels,
        )
        assert session.revision == plain.revision
        assert session.build_context() == plain.build_context()
        path = {e.line for e in plain.branch_path()}
        lines = [e.line for e in plain.entries]
        blocks = {n // table_build.BLOCK for n, number in enumerate(lines) if number in path}
        assert set(decoded) <= blocks
        assert [entry_key(e) for e in session.entries] == [entry_key(e) for e in plain.entries]
        assert session.problems == plain.problems

    def test_appends_look_ids_up_in_a_dict_built_once_not_in_a_search_of_every_id(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        big = generate(tmp_path / "big.jsonl", entries=2500)
        Session.open(big)  # writes the record
        session = Session.open(big, fsync="never")
        searched: list[bytes] = []
        real = EntryTable.position

        def spy(self: EntryTable, entry_id: str) -> int | None:
            found = real(self, entry_id)
            if self._positions is None:  # answered by a search of every id
                searched.append(entry_id.encode())
            return found

        monkeypatch.setattr(EntryTable, "position", spy)
        before = session.revision
        ids = [session.append_message(user_message(f"turn {n}")) for n in range(5)]
        assert searched == []  # (the first lookup built the dict)
        assert session.revision == before + 5 and session.leaf_id == ids[-1]
        again = Session.open(big, cache=False)
        assert [e.id for e in again.entries][-5:] == ids


def reference_parents(entries: Sequence[StoredEntry]) -> tuple[bool, list[int], list[str]]:
    """The parent column as a dict of every id gives it: (clean, codes, missing)."""
    positions = {e.id: n for n, e in enumerate(entries)}
    if len(positions) != len(entries):
        return False, [], []
    codes = [
        table.NO_PARENT if e.parent_id is None else positions.get(e.parent_id, table.MISSING_PARENT)
        for e in entries
    ]
    if any(code >= own for own, code in enumerate(codes)):
        return False, [], []
    missing = [str(e.parent_id) for e, c in zip(entries, codes, strict=True) if c == -2]
    return True, codes, missing


class TestARecordMadeFromEntriesJustRead:
    @pytest.mark.parametrize(
        "later",
        [
            [line("x0", "00000002", 300)],  # a parent just behind
            [line("x0", "00000001", 300)],  # a parent far back: past the look-back
            [line("x0", "gone", 300), line("x1", "gone", 301)],  # missing, twice
            [line("x0", None, 300), line("x1", "x0", 301)],  # a second root
            [line("x0", "x1", 300), line("x1", None, 301)],  # a parent after its child
            [line("x0", "x0", 300)],  # its own parent
            [line("00000005", "00000199", 300)],  # an id used again
        ],
        ids=["near", "far", "missing", "root", "forward", "own", "reused"],
    )
    def test_its_parents_are_those_a_dict_of_every_id_gives(self, later: list[StoredEntry]) -> None:
        entries = [*chain(*(f"{n:08x}" for n in range(200))), *later]
        record, positions = table_build.fresh_columns(entries)
        clean, codes, missing = reference_parents(entries)
        assert (record.clean, record.missing) == (clean, missing)
        assert list(table._positions_from(record.parents)) == codes
        assert positions is None or all(positions[e.id] == n for n, e in enumerate(entries))

    @pytest.mark.parametrize("path", V3_FIXTURES, ids=lambda p: p.name)
    def test_a_table_over_them_answers_as_one_read_back_from_its_record(self, path: Path) -> None:
        entries = fixture_entries(path)
        fresh = table_build.fresh_table(entries, None)
        held = as_table(entries)
        assert record_key(table_build.kept_record(fresh)) == record_key(held.record)
        assert fresh.clean == held.clean
        ids = list(dict.fromkeys(e.id for e in entries))
        if fresh.clean:
            assert index_key(TreeIndex(table=fresh), ids) == index_key(TreeIndex(entries), ids)
        positions = list(range(len(entries)))[::-1]
        assert [entry_key(e) for e in fresh.at(positions)] == [
            entry_key(e) for e in held.at(positions)
        ]
