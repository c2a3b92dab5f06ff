"""Writes that cannot complete (issue 16): append, migrate, compact, fork, export and
a read that writes cache records, each in turn under RLIMIT_FSIZE (a child with
SIGXFSZ ignored, so the write fails with EFBIG) and on a full tmpfs (mounted with
``unshare -rm`` in the child's own namespace; skipped where that is not permitted).
Each either works or fails with our error (an append with SessionWriteError, a
command with its one error line), never a traceback; the file still loads; nothing
acknowledged or held before is lost; no torn line is left in it; no temporary file
or partial output stays; and the next write works once there is room.

``JSONL_SESSION_FAULT_ROUNDS=N`` runs N rounds of each loop (the CI default is one
of every operation); ``python benchmarks/faults.py`` runs the long version. The
loops are in limit_loops.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from faultkit import Figures, assert_clean, assert_nothing_lost, rounds
from limit_loops import OPERATIONS, full_disk, full_disk_unavailable, size_limits

CI_ROUNDS = len(OPERATIONS)


def assert_failed_cleanly(figures: Figures) -> None:
    assert figures.refused > 0, figures.summary()
    assert figures.unclean_errors == 0, figures.summary()
    assert figures.torn_left == 0, figures.summary()


def test_every_write_path_under_a_file_size_limit_fails_cleanly_and_loses_nothing(
    tmp_path: Path,
) -> None:
    figures = size_limits(tmp_path, rounds(CI_ROUNDS), seed=16)
    assert_failed_cleanly(figures)
    assert_nothing_lost(figures)
    assert_clean(figures)


def test_every_write_path_on_a_full_file_system_fails_cleanly_and_loses_nothing(
    tmp_path: Path,
) -> None:
    reason = full_disk_unavailable(tmp_path)
    if reason is not None:
        pytest.skip(reason)
    figures = full_disk(tmp_path, rounds(CI_ROUNDS), seed=16)
    assert_failed_cleanly(figures)
    assert_nothing_lost(figures)
    assert_clean(figures)
