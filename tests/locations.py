"""Where the repository's files are, defined once for every suite and conftest.py:
the checkout's root, the bundled session files in fixtures/, and the goldens recorded
with pi. Imported as a module (``pythonpath = ["tests"]`` in pyproject.toml), so the
paths do not depend on how deep a test file sits under tests/."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
GOLDEN_DIR = ROOT / "tests" / "compat" / "golden"


def copy_fixture(tmp_path: Path, name: str) -> Path:
    """A copy of fixtures/<name>.jsonl in ``tmp_path``, for tests that may write to it."""
    target = tmp_path / f"{name}.jsonl"
    shutil.copyfile(FIXTURES / f"{name}.jsonl", target)
    return target
