"""Eight processes appending to one session at once, beside a writer that appends
whole lines with no lock as pi does (issue 16): every acknowledged entry of every
writer is there, in its writer's order, every line is whole JSON, every parent is an
entry before it, and the file loads.

CI runs 8 x 300 appends; with ``JSONL_SESSION_FAULT_ROUNDS`` set (the long run,
benchmarks/faults.py) each process appends 1,000. The loop is in many_writers.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from faultkit import ROUNDS_ENV, assert_clean, assert_nothing_lost
from many_writers import many_writers


def test_eight_writers_and_an_unlocked_one_lose_nothing_and_keep_every_parent(
    tmp_path: Path,
) -> None:
    appends = 1000 if os.environ.get(ROUNDS_ENV) else 300
    figures = many_writers(tmp_path, writers=8, appends=appends, unlocked=1)
    assert figures.acknowledged == 9 * appends, figures.summary()
    assert figures.unclean_errors == 0, figures.summary()
    assert figures.torn_left == 0, figures.summary()
    assert figures.bad_parents == 0, figures.summary()
    assert figures.writer_switches > 9, figures.summary()  # they did write at once
    figures.killed = 1  # nothing is killed here; assert_nothing_lost wants a fault
    assert_nothing_lost(figures)
    assert_clean(figures)
