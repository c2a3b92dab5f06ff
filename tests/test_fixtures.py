"""The committed fixtures are exactly what fixtures/generate.py writes, so a change to
the writer that changes them is seen (and the goldens recorded from them re-recorded)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from locations import FIXTURES


def test_generate_py_writes_the_committed_fixtures_byte_for_byte() -> None:
    done = subprocess.run(
        [sys.executable, str(FIXTURES / "generate.py"), "--check"],
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
