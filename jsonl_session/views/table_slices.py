"""A transcript's slices made straight from the blocks of the index-cache table the
file was read from: this process builds none of the entries, it hands each worker a
block as the record keeps it (msgpack, as views/slices.py packs a slice's entries).

Owns when that can be done (a clean table that is the whole file: nothing read after
it, no damaged line; its record knows where each block starts, and no block holds a
line long enough to be rendered here, `HERE_BYTES`) and `InFileOrder`, what a
worker's slice knows of the entries before each of its own (the id of the one just
before; no id comes twice in a clean table). What a block's entries become is the
render function's (views/textconv_blocks.py's); the workers are views/slices.py's.
"""

from __future__ import annotations

from jsonl_session.storage.loader import LoadedFile
from jsonl_session.views.slices import HERE_BYTES, LazySlices, Render, Slice, export_workers
from jsonl_session.views.visible import Escape


class InFileOrder:
    """The id of the entry before the next one a slice renders (a worker's, the
    slice's own: each slice brings a copy, and its render moves it on)."""

    __slots__ = ("previous",)

    def __init__(self, previous: str | None) -> None:
        self.previous = previous

    def __getstate__(self) -> tuple[str | None]:
        return (self.previous,)  # (a state pickle finds false is not set again)

    def __setstate__(self, state: tuple[str | None]) -> None:
        (self.previous,) = state


def table_slices(
    loaded: LoadedFile, path: str, render: Render, escape: Escape, workers: int | None
) -> tuple[LazySlices, int] | None:
    """The slices of ``loaded``'s entries in file order, one per block of its table,
    each rendered by ``render`` with an `InFileOrder` as what all its entries share,
    and how many workers render them; None when the table cannot stand for the file
    (see the module docstring) or the file is too short to spread."""
    table = loaded.table
    if (
        table is None
        or not table.clean
        or loaded.read_entries
        or loaded.bad_lines
        or loaded.torn_tail is not None
        or loaded.dialect != "pi"
    ):
        return None
    blocks = table.packed_blocks()
    if not blocks:
        return None
    starts = [start for _, start in blocks]
    ends = [*starts[1:], loaded.end_offset]
    spans = [end - start for start, end in zip(starts, ends, strict=True)]
    if any(span >= HERE_BYTES for span in spans):
        return None
    count = export_workers(workers, loaded.end_offset - starts[0])
    if count == 1:
        return None
    previous = table.block_previous_ids()

    def make(index: int) -> Slice:
        shared = InFileOrder(previous[index])
        return Slice(render, path, False, blocks[index][0], shared=shared, escape=escape)

    return LazySlices(len(blocks), make), count
