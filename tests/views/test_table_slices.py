"""views/table_slices.py: a transcript spread on workers straight from the blocks of
the index-cache record it was read from writes the text one process writes; where the
record cannot stand for the file (entries read after it, a damaged line, a record
made before it kept where its blocks start, a line long enough to be rendered here),
the transcript is made as before, the same text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers_large import generate

from jsonl_session import textconv_chunks
from jsonl_session.storage import table, table_build
from jsonl_session.storage.loader import load_entries
from jsonl_session.views import slices, table_slices, textconv


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch, own_cache_folder: Path) -> list[Any]:
    """Records of 64-entry blocks, workers for any size; what `table_slices` gave."""
    monkeypatch.setattr(table_build, "BLOCK", 64)
    monkeypatch.setattr(slices, "PARALLEL_BYTES", 0)
    given: list[Any] = []
    real = table_slices.table_slices

    def spy(*args: Any) -> Any:
        given.append(real(*args))
        return given[-1]

    monkeypatch.setattr(textconv, "table_slices", spy)
    return given


def recorded(path: Path) -> Path:
    load_entries(path)  # (the first open writes the record)
    return path


def test_a_transcript_from_a_record_s_blocks_is_what_one_process_writes(
    tmp_path: Path, small_blocks: list[Any]
) -> None:
    path = recorded(generate(tmp_path / "gen.jsonl", 700))
    for visible in (False, True):
        alone = "".join(textconv_chunks(path, cache=False, visible=visible))
        small_blocks.clear()
        assert "".join(textconv_chunks(path, workers=2, visible=visible)) == alone
        (made,) = small_blocks
        assert made is not None and len(made[0]) == 11  # (700 entries, 64 a block)


def alike(path: Path, small_blocks: list[Any]) -> None:
    """A transcript spread as before (not from the blocks): the same text."""
    alone = "".join(textconv_chunks(path, cache=False))
    small_blocks.clear()
    assert "".join(textconv_chunks(path, workers=2)) == alone
    assert small_blocks == [None]


def test_a_record_that_cannot_stand_for_the_file_leaves_the_transcript_as_before(
    tmp_path: Path, small_blocks: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = recorded(generate(tmp_path / "gen.jsonl", 700))
    # a line appended since the record: read after it
    with path.open("a") as out:
        out.write('{"type":"label","id":"late0001","parentId":null,"timestamp":"t","label":"x"}\n')
    alike(path, small_blocks)
    # a damaged line
    path = recorded(generate(tmp_path / "torn.jsonl", 700))
    with path.open("a") as out:
        out.write('{"type":"message","id":"torn\n')
    alike(path, small_blocks)
    # a record made before it kept where its blocks start
    path = recorded(generate(tmp_path / "old.jsonl", 700))
    monkeypatch.setattr(table.EntryTable, "packed_blocks", lambda self: None)
    alike(path, small_blocks)


def test_a_block_holding_a_line_to_render_here_leaves_the_transcript_as_before(
    tmp_path: Path, small_blocks: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = recorded(generate(tmp_path / "gen.jsonl", 700))
    monkeypatch.setattr(table_slices, "HERE_BYTES", 20_000)
    monkeypatch.setattr(slices, "HERE_BYTES", 20_000)
    alike(path, small_blocks)


def test_a_slice_s_place_in_file_order_travels_with_it() -> None:
    import pickle

    for previous in (None, "", "0a1b2c3d"):
        order = pickle.loads(pickle.dumps(table_slices.InFileOrder(previous)))
        assert order.previous == previous


def test_a_record_keeps_where_each_block_starts_and_an_older_one_is_read_without(
    tmp_path: Path, small_blocks: list[Any]
) -> None:
    path = recorded(generate(tmp_path / "gen.jsonl", 700))
    loaded = load_entries(path)
    assert loaded.table is not None
    blocks = loaded.table.packed_blocks()
    assert blocks is not None
    entries = loaded.entries
    assert [start for _, start in blocks] == [e.offset for e in entries[::64]]
    record = loaded.table.record
    older = msgspec.msgpack.encode(msgspec.structs.astuple(record)[:-1])
    again = msgspec.msgpack.decode(older, type=table.TableRecord)
    assert again.starts == [] and again.blocks == record.blocks


def test_a_record_made_with_another_block_size_gives_the_same_transcript(
    tmp_path: Path, small_blocks: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # made with blocks of 64 entries, read where a block is 1,024: its own size counts
    path = recorded(generate(tmp_path / "gen.jsonl", 700))
    monkeypatch.setattr(table_build, "BLOCK", 1024)
    alone = "".join(textconv_chunks(path, cache=False))
    small_blocks.clear()
    assert "".join(textconv_chunks(path, workers=2)) == alone
    (made,) = small_blocks
    assert made is not None and len(made[0]) == 11
