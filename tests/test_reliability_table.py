"""spec/RELIABILITY.md names, for every promise, the tests that prove it: each name
must still be a test here, so the table cannot point at a test that was renamed or
removed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "spec" / "RELIABILITY.md"
TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)((?:::\w+)+)`")


def _test_names(path: Path) -> set[str]:
    """Every ``Class::test`` and ``test`` defined in a test module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(f"{node.name}::{member.name}")
    return names


def test_every_test_the_reliability_table_names_exists() -> None:
    references = TEST_REFERENCE.findall(TABLE.read_text(encoding="utf-8"))
    assert len(references) >= 30, "the table should name the tests behind its promises"
    missing = []
    for module, dotted in references:
        path = ROOT / module
        name = dotted.removeprefix("::")
        if not path.is_file() or name not in _test_names(path):
            missing.append(f"{module}::{name}")
    assert missing == []


def test_every_promise_row_names_at_least_one_test() -> None:
    rows = [
        line
        for line in TABLE.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith("| Promise") and "---" not in line
    ]
    assert rows
    assert [row for row in rows if not TEST_REFERENCE.search(row)] == []
