"""The adapters' output for every fixture, every leaf and every format equals the
recorded goldens (tests/compat/golden/adapters/). A difference is either a bug or an
intended change: then run ``python tests/compat/golden/regenerate_adapters.py`` and
review the diff."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from locations import GOLDEN_DIR

sys.path.insert(0, str(GOLDEN_DIR))
from regenerate_adapters import OUT, fixtures, golden_lines


@pytest.mark.parametrize("fixture", fixtures(), ids=lambda p: p.stem)
def test_the_adapters_give_the_recorded_requests(fixture: Path) -> None:
    recorded = (OUT / f"{fixture.stem}.jsonl").read_bytes().split(b"\n")[:-1]
    built = list(golden_lines(fixture))
    assert len(built) == len(recorded), "run python tests/compat/golden/regenerate_adapters.py"
    for now, before in zip(built, recorded, strict=True):
        assert now == before, f"{fixture.stem}: {now[:120]!r}… differs from the golden"
