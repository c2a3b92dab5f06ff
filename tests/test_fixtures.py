"""The committed fixtures are exactly what fixtures/generate.py (pi sessions) and
fixtures/generate_dialects.py (Claude Code, Codex) write, so a change to a writer
that changes them is seen (and the goldens recorded from them re-recorded)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from locations import FIXTURES


@pytest.mark.parametrize("script", ["generate.py", "generate_dialects.py"])
def test_the_generators_write_the_committed_fixtures_byte_for_byte(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(FIXTURES / script), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_fixture_file_is_written_by_the_generator() -> None:
    spec = importlib.util.spec_from_file_location("fixtures_generate", FIXTURES / "generate.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    built = {name for name, _, _ in generator.BUILDERS}
    assert built == {path.name for path in FIXTURES.glob("*.jsonl")}
