"""Finding the secrets in one text: which rules run on it, and their finds merged.

Owns `find_secrets`, the rules of shapes.py and context.py in the order they rank,
and the scan of all their gates together that picks the rules a short text needs
(most texts of a session need none): by RE2 when google-re2 is installed
(gate_set.py), else by one `re` pattern of them all. Their patterns are compiled when
this module is imported: engine.py imports it only once a redactor has a text to
search, so a command that redacts nothing never pays for them (about 20 ms).
Replacing what is found, counting it and walking JSON values is engine.py's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from jsonl_session.redaction.context import context_rules
from jsonl_session.redaction.gate_set import set_scan
from jsonl_session.redaction.hay import Hay, commonness
from jsonl_session.redaction.judge import SHORTEST
from jsonl_session.redaction.shapes import Rule, Span, shape_rules
from jsonl_session.redaction.spread import SharedScans, spread_worthy

if TYPE_CHECKING:
    from jsonl_session.redaction.spread import Helpers

_RULES: tuple[Rule, ...] = (*shape_rules(), *context_rules())


def find_secrets(text: str, helpers: Helpers | None = None) -> list[Span]:
    """The secrets in ``text`` as (start, end, kind, rank), in order, not overlapping.
    ``helpers``: worker processes (an executor) that may make a huge text's keyword
    scans meanwhile (spread.py); what is found is the same."""
    if len(text) < SHORTEST:
        return []
    tiny = len(text) <= _TINY
    if tiny and text in _TINY_CLEAN:
        return []
    found: list[Span] = []
    hay = Hay(text)
    shared = SharedScans(hay, helpers) if helpers is not None and spread_worthy(hay) else None
    if hay.short and hay.fast:
        rules = _rules_for(hay.low)
    else:
        rules = tuple(
            rule
            for rule in _RULES
            if not rule.anchors or any(anchor.present(hay) for anchor in rule.anchors)
        )
    if shared is not None:
        found = shared.find(hay, rules)
    else:
        for rule in rules:
            found.extend(rule.find(hay))
    if found:
        return _merged(found)
    if tiny:
        if len(_TINY_CLEAN) >= 10_000:
            _TINY_CLEAN.clear()
        _TINY_CLEAN.add(text)
    return found


# Texts this short that held no secret: a session repeats many (a model's name on every
# answer, a tool's, "done"), and a set lookup costs a fraction of a search.
_TINY = 64
_TINY_CLEAN: set[str] = set()


def _gates(rules: tuple[Rule, ...]) -> tuple[re.Pattern[bytes], dict[bytes, frozenset[int]]]:
    """All the rules' gates as one pattern (branches that take the same character
    grouped, so the scan tests each place once), and which rules each character that
    a branch takes stands for."""
    by_char: dict[str, list[str]] = {}
    rules_by_char: dict[bytes, set[int]] = {}
    for index, rule in enumerate(rules):
        for gate in (each.pattern for each in rule.gates):
            # every gate takes its first character, escaped or not, and looks around it
            char = gate[:2] if gate.startswith("\\") else gate[:1]
            by_char.setdefault(char, []).append(gate[len(char) :])
            key = char[-1].encode("ascii")  # unescaped
            rules_by_char.setdefault(key, set()).add(index)
    chars = sorted(by_char, key=lambda char: commonness(char[-1]))
    branches = [f"{char}(?:{'|'.join(by_char[char])})" for char in chars]
    pattern = re.compile("|".join(branches).encode("ascii"))
    return pattern, {char: frozenset(indexes) for char, indexes in rules_by_char.items()}


_GATE, _RULES_BY_CHAR = _gates(_RULES)
_UNGATED = tuple(rule for rule in _RULES if not rule.gates)
# RE2's scan of every gate (None without google-re2), and the rule of each gate
_SET_SCAN = set_scan([gate.plain for rule in _RULES for gate in rule.gates])
_GATE_OWNERS = tuple(index for index, rule in enumerate(_RULES) for _ in rule.gates)
# The rules chosen, by what a scan gave: gates' places in the set (int) or the
# characters the `re` scan took (bytes), which never compare equal
_CHOSEN: dict[frozenset[int] | frozenset[bytes], tuple[Rule, ...]] = {}


def _rules_for(low: bytes) -> tuple[Rule, ...]:
    """The rules worth running on a short text: those without gates, and those whose
    gates match its lowercased image ``low``: by RE2's scan of them all (gate_set.py),
    which gives the gates that match, when it is installed; else by one `re` scan that
    gives the characters they took (a place where one branch matched is one where any
    branch taking the same character may have: all of their rules run). In their
    order in _RULES, remembered by what the scan gave: a few sets of it come back all
    the time."""
    found: frozenset[int] | frozenset[bytes]
    if _SET_SCAN is not None:
        found = frozenset(_SET_SCAN(low) or ())
    else:
        found = frozenset(_GATE.findall(low))
    if not found:
        return _UNGATED
    try:
        return _CHOSEN[found]
    except KeyError:
        if len(_CHOSEN) > 4096:
            _CHOSEN.clear()
        owners = {
            owner
            for each in found
            for owner in ((_GATE_OWNERS[each],) if isinstance(each, int) else _RULES_BY_CHAR[each])
        }
        rules = _CHOSEN[found] = tuple(
            rule for index, rule in enumerate(_RULES) if not rule.gates or index in owners
        )
        return rules


def _merged(spans: list[Span]) -> list[Span]:
    """Overlapping spans as one, named by the most specific (lowest rank) of them."""
    spans.sort(key=lambda span: (span[0], span[3]))
    merged = [spans[0]]
    for start, end, kind, rank in spans[1:]:
        last_start, last_end, last_kind, last_rank = merged[-1]
        if start < last_end:
            better = (kind, rank) if rank < last_rank else (last_kind, last_rank)
            merged[-1] = (last_start, max(end, last_end), *better)
        else:
            merged.append((start, end, kind, rank))
    return merged
