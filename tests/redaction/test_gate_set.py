"""RE2's scan of every gate at once (redaction/gate_set.py): each gate found in
exactly the texts where its own `re` pattern matches, and nothing lost without
google-re2."""

from __future__ import annotations

import re
import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_engine import CASES, PIECES

from jsonl_session.redaction import finding
from jsonl_session.redaction.gate_set import for_re2, set_scan
from jsonl_session.redaction.hay import Hay

GATES = [gate for rule in finding._RULES for gate in rule.gates]


def re2_scan() -> finding.SetScan:
    if finding._SET_SCAN is None:
        pytest.skip("google-re2 is not installed")
    return finding._SET_SCAN


def gates_by_re(low: bytes) -> set[int]:
    """The gates whose `re` pattern (the one the single scan joins) matches."""
    return {index for index, gate in enumerate(GATES) if re.search(gate.pattern.encode(), low)}


def gates_by_re2(low: bytes) -> set[int]:
    return set(re2_scan()(low) or ())


def test_every_gate_is_one_the_scan_holds_and_each_has_its_rule() -> None:
    re2_scan()
    assert len(finding._GATE_OWNERS) == len(GATES) > 20
    for gate, owner in zip(GATES, finding._GATE_OWNERS, strict=True):
        assert gate in finding._RULES[owner].gates


def test_each_case_of_the_corpus_finds_the_gates_the_re_patterns_find() -> None:
    for text in CASES:
        low = Hay(text).low
        assert gates_by_re2(low) == gates_by_re(low), text


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.booleans())
def test_texts_near_the_gates_find_the_gates_the_re_patterns_find(
    parts: list[str], upper: bool
) -> None:
    text = "".join(parts)
    low = Hay(text.upper() if upper else text).low
    assert gates_by_re2(low) == gates_by_re(low)


@pytest.mark.parametrize("space", [" ", "\t", "\n", "\r", "\x0b", "\x0c"])
def test_white_space_in_a_url_ends_its_user_as_re_says(space: str) -> None:
    for text in (f"https://us{space}er:pw@host", f"https://user:p{space}w@host"):
        low = Hay(text).low
        assert gates_by_re2(low) == gates_by_re(low)
    assert gates_by_re2(b"https://user:pw@host") == gates_by_re(b"https://user:pw@host") != set()


@pytest.mark.parametrize(
    ("pattern", "written"),
    [
        (r"a\sb", "a[[:space:]]b"),
        (r"[^\s/:@]*:", "[^[:space:]/:@]*:"),
        (r"[\s]x\s", "[[:space:]]x[[:space:]]"),
        (r"[]\s]", "[][:space:]]"),
        (r"[^]\s]", "[^][:space:]]"),
        (r"\\s\[\s", r"\\s\[[[:space:]]"),
        (r"key(?:\\?[\"']?[ \t]*[=:])", r"key(?:\\?[\"']?[ \t]*[=:])"),
    ],
)
def test_a_pattern_is_written_for_re2_with_the_white_space_re_means(
    pattern: str, written: str
) -> None:
    assert for_re2(pattern) == written


def test_without_google_re2_there_is_no_set_and_the_re_scan_picks_the_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "re2", None)  # (an import of it fails)
    assert set_scan([gate.plain for gate in GATES]) is None
    monkeypatch.setattr(finding, "_SET_SCAN", None)
    low = Hay("export API_TOKEN=abc and curl -u me:pw").low
    picked = {id(rule) for rule in finding._rules_for(low)}
    needed = {id(finding._RULES[finding._GATE_OWNERS[gate]]) for gate in gates_by_re(low)}
    assert needed and picked >= needed
    assert finding.find_secrets("password=hunter2secret") == [(9, 22, "password", 2)]


def test_another_module_named_re2_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyre2 and fb-re2 install a module of that name too (without google-re2's sets),
    and so may a script named re2.py: redaction goes on with the `re` scan."""
    monkeypatch.setitem(sys.modules, "re2", types.ModuleType("re2"))
    assert set_scan([gate.plain for gate in GATES]) is None
