"""Every crash point of every write path (issue 16): for each call that changes a
file (open for writing, write, fsync, link, rename, unlink, ...), a child that dies
right before it. After each death the file loads, nothing acknowledged or held
before is lost, the next write works (migrate again, append, write the output again,
read through the cache), and then no temporary file, extra hard link or partial
output is left. Deterministic: every window is reached on every run.

The sweeps are in crash_points.py; the child that dies is fault_child.py (--die-at).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from crash_points import SCENARIOS, sweep
from faultkit import assert_clean, assert_nothing_lost


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_write_path_that_dies_before_any_of_its_file_changes_loses_nothing_and_leaves_nothing(
    tmp_path: Path, name: str
) -> None:
    figures = sweep(tmp_path, name)
    assert figures.killed == figures.rounds > 0, figures.summary()
    assert_nothing_lost(figures)
    assert_clean(figures)
