"""The line level of a session file's bytes (storage/lines.py): counting newlines."""

from __future__ import annotations

import random

import pytest

from jsonl_session.storage import lines
from jsonl_session.storage.lines import count_newlines


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
