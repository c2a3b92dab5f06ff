"""The line level of a session file's bytes (storage/lines.py): counting newlines."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from jsonl_session.storage import lines
from jsonl_session.storage.lines import WholeLines, count_newlines


class TestCountingNewlines:
    @pytest.mark.parametrize("size", [0, 1, 2, 100, (1 << 16) - 1, 1 << 16, 3 * (1 << 16) + 5])
    def test_a_range_holds_as_many_newlines_as_bytes_count_finds(self, size: int) -> None:
        rng = random.Random(size)
        data = bytes(rng.choice(b"a\n\r{}") for _ in range(size))
        for _ in range(50):
            start = rng.randint(0, size)
            stop = rng.randint(start, size)
            assert count_newlines(data, start, stop) == data.count(b"\n", start, stop)
            assert count_newlines(data, start) == data.count(b"\n", start)
        assert count_newlines(data) == data.count(b"\n")

    def test_a_range_longer_than_a_piece_is_counted_piece_by_piece(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(lines, "_COUNT_PIECE", 3)
        data = b"\n\nab\n\n\ncd\n" * 7
        for start in range(len(data) + 1):
            for stop in range(start, len(data) + 1):
                assert count_newlines(data, start, stop) == data.count(b"\n", start, stop)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 64, 4096])
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"no newline at all",
        b"a\nbb\n\nccc\n",
        b"a\nbb\nunfinished",
        b"\n\n\n",
        b"x" * 20 + b"\ny",
    ],
)
def test_whole_lines_gives_every_whole_line_once_and_the_tail(
    tmp_path: Path, data: bytes, size: int
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"HEAD\n" + data)
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = WholeLines(fd, 5, size)
        regions = [data_[begin:end] for data_, begin, end in lines]
    finally:
        os.close(fd)
    cut = data.rfind(b"\n") + 1
    assert b"".join(regions) == data[:cut] and lines.tail == data[cut:]
    assert all(region.endswith(b"\n") for region in regions)
