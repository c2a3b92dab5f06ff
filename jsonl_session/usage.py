"""The usage a session recorded: the token counts and cost of each usage record
(assistant replies, usage entries, the calls that wrote summaries), added up in
total, by model and by kind (RecordedUsage), and UsageTally, which adds up the same
figures faster for a pass over a whole session (breakdown.py's).
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import as_text, finite_number

USAGE_KEYS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")


UsageFigures = tuple[dict[str, int], float]


def usage_figures(usage: dict[str, Any]) -> UsageFigures:
    """The token counts (by USAGE_KEYS, those present) and the cost of one usage
    record; a figure no double holds (1e400, 10**30) is damage, counted as missing."""
    tokens = {}
    for key in USAGE_KEYS:
        value = usage.get(key)
        if value.__class__ is int and -(2**53) <= value <= 2**53:  # most records: plain
            tokens[key] = value
        elif (number := finite_number(value)) is not None:
            tokens[key] = int(number)
    cost = usage.get("cost")
    total = finite_number(cost.get("total") if isinstance(cost, dict) else None)
    return tokens, float(total) if total is not None else 0.0


@dataclass(slots=True)
class UsageTotal:
    """Tokens and cost that usage records add up to."""

    tokens: Counter[str] = field(default_factory=Counter)  # by USAGE_KEYS
    cost: float = 0.0  # US dollars, as recorded
    records: int = 0

    def add(self, usage: dict[str, Any]) -> None:
        self.add_figures(usage_figures(usage))

    def add_figures(self, figures: UsageFigures) -> None:
        tokens, cost = figures
        self.records += 1
        counts = self.tokens
        for key, value in tokens.items():  # Counter.update is slower, in Python
            counts[key] += value
        self.cost += cost

    def to_dict(self) -> dict[str, Any]:
        tokens = {key: self.tokens.get(key, 0) for key in USAGE_KEYS}
        return {**tokens, "cost": round(self.cost, 10), "records": self.records}


@dataclass(slots=True)
class RecordedUsage:
    """The usage a session recorded, all branches: assistant replies, usage entries
    (pi 1.5: cache warming, classifiers, ...) and the calls that wrote compaction and
    branch summaries; by model (``provider/model``) and by kind (``assistant``,
    ``compaction``, ``branch_summary`` or a usage entry's own kind)."""

    total: UsageTotal = field(default_factory=UsageTotal)
    by_model: dict[str, UsageTotal] = field(default_factory=dict)
    by_kind: dict[str, UsageTotal] = field(default_factory=dict)

    def add(self, usage: Any, model: str, kind: str) -> None:
        if not isinstance(usage, dict):
            return
        figures = usage_figures(usage)  # once for the three totals
        self.total.add_figures(figures)
        by_model = self.by_model.get(model)
        if by_model is None:
            by_model = self.by_model[model] = UsageTotal()
        by_model.add_figures(figures)
        by_kind = self.by_kind.get(kind)
        if by_kind is None:
            by_kind = self.by_kind[kind] = UsageTotal()
        by_kind.add_figures(figures)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total.to_dict(),
            "byModel": {k: v.to_dict() for k, v in self.by_model.items()},
            "byKind": {k: v.to_dict() for k, v in self.by_kind.items()},
        }


def recorded_usage(entries: Sequence[StoredEntry]) -> RecordedUsage:
    """What the usage records of ``entries`` add up to (see RecordedUsage)."""
    found = RecordedUsage()
    for entry in entries:
        if entry.type in USAGE_TYPES:
            note_usage(found, entry, entry.data())
    return found


USAGE_TYPES = frozenset({"message", "usage", "compaction", "branch_summary"})


def note_usage(found: RecordedUsage | UsageTally, entry: StoredEntry, data: dict[str, Any]) -> None:
    """Add the usage one entry records, given its body."""
    if entry.type == "message" and entry.role == "assistant":
        message = data.get("message")
        if isinstance(message, dict):
            model = f"{as_text(message.get('provider'))}/{as_text(message.get('model'))}"
            found.add(message.get("usage"), model, "assistant")
    elif entry.type == "usage":
        model = f"{as_text(data.get('provider'))}/{as_text(data.get('model'))}"
        found.add(data.get("usage"), model, as_text(data.get("kind")))
    elif entry.type in ("compaction", "branch_summary"):
        found.add(data.get("usage"), "(summaries)", entry.type)


class UsageTally:
    """What RecordedUsage.add adds up, exactly (the same counts, costs, and order of
    keys), for many records at less cost: each record's token counts are kept once,
    in its (model, kind) group, and only `recorded` sums the groups into the total, the
    models and the kinds; integers sum the same in any order. Costs are floats, whose
    sum depends on the order, so each of the three costs is added to at every record,
    in order, as RecordedUsage does.

    A tally made with ``keep_costs`` also keeps each record's cost, so that `merge` can
    add its records to another tally's as if they had come after them: how a session
    measured in parts (breakdown_spread.py) adds up what it would in one pass."""

    def __init__(self, *, keep_costs: bool = False) -> None:
        self._groups: dict[tuple[str, str], _Group] = {}
        self._records = 0
        self._cost = 0.0
        self._model_costs: dict[str, float] = {}
        self._kind_costs: dict[str, float] = {}
        # each record's model, kind and cost, in order (kept: as columns, which a
        # worker's tally crosses to its caller in and `merge` adds up in C)
        self._cost_log: tuple[list[str], list[str], list[float]] | None = (
            ([], [], []) if keep_costs else None
        )

    def add(self, usage: Any, model: str, kind: str) -> None:
        """RecordedUsage.add's record (nothing unless ``usage`` is an object)."""
        if not isinstance(usage, dict):
            return
        tokens, cost = usage_figures(usage)
        group = self._group(model, kind, cost)
        sums = group.sums
        for key, value in tokens.items():
            if key in sums:
                sums[key] += value
            else:
                sums[key] = value
                group.first[key] = self._records - 1

    def add_counts(self, counts: tuple[int, ...], cost: float, model: str, kind: str) -> None:
        """`add` of a record whose counts usage_figures takes all five as they are
        (integers within 2**53 either way), in USAGE_KEYS order, and whose cost is
        ``cost`` (as usage_figures finds it)."""
        group = self._group(model, kind, cost)
        if group.first_full < 0:
            group.first_full = self._records - 1
        group.rows.append(counts)

    def _group(self, model: str, kind: str, cost: float) -> _Group:
        """Count one more record and add its cost; its group."""
        group = self._groups.get((model, kind))
        if group is None:
            group = self._groups[model, kind] = _Group(model, kind)
            self._model_costs.setdefault(model, 0.0)
            self._kind_costs.setdefault(kind, 0.0)
        group.records += 1
        self._records += 1
        self._cost += cost
        self._model_costs[model] += cost
        self._kind_costs[kind] += cost
        log = self._cost_log
        if log is not None:
            log[0].append(model)
            log[1].append(kind)
            log[2].append(cost)
        return group

    def merge(self, later: UsageTally) -> None:
        """Add the records ``later`` tallied as if they had been added here after this
        tally's own, one by one: the same counts, costs and order of keys. ``later``
        must keep its costs (see the class), as the float sums depend on their order."""
        if later._cost_log is None:
            raise ValueError("merge: the later tally was not made with keep_costs=True")
        offset = self._records
        for key, group in later._groups.items():  # new groups after this tally's
            group.fold_rows()
            mine = self._groups.get(key)
            if mine is None:
                mine = self._groups[key] = _Group(group.model, group.kind)
            mine.records += group.records
            for name, value in group.sums.items():
                mine.sums[name] = mine.sums.get(name, 0) + value
                ordinal = group.first[name] + offset
                mine.first[name] = min(ordinal, mine.first.get(name, ordinal))
        self._records += later._records
        models, kinds, costs = later._cost_log
        # each sum goes on from where it is, adding the later costs one by one in
        # their order (a float sum depends on it); reduce does it in C
        self._cost = functools.reduce(operator.add, costs, self._cost)
        for sums, column in ((self._model_costs, models), (self._kind_costs, kinds)):
            for name in dict.fromkeys(column):  # (in the order they first came)
                picked = itertools.compress(costs, map(name.__eq__, column))
                sums[name] = functools.reduce(operator.add, picked, sums.get(name, 0.0))
        log = self._cost_log
        if log is not None:
            log[0].extend(models)
            log[1].extend(kinds)
            log[2].extend(costs)

    def fold(self) -> None:
        """Sum the records waiting in each group now (a worker's tally, before it
        crosses to its caller: the sums cross, not a row per record)."""
        for group in self._groups.values():
            group.fold_rows()

    def recorded(self) -> RecordedUsage:
        """The RecordedUsage the records added so far make."""
        found = RecordedUsage()
        by_model: dict[str, list[_Group]] = {}
        by_kind: dict[str, list[_Group]] = {}
        for group in self._groups.values():  # in the order of their first records
            group.fold_rows()
            by_model.setdefault(group.model, []).append(group)
            by_kind.setdefault(group.kind, []).append(group)
        _sum_groups(found.total, list(self._groups.values()), self._cost)
        for model, groups in by_model.items():
            total = found.by_model.setdefault(model, UsageTotal())
            _sum_groups(total, groups, self._model_costs[model])
        for kind, groups in by_kind.items():
            _sum_groups(
                found.by_kind.setdefault(kind, UsageTotal()), groups, self._kind_costs[kind]
            )
        return found


@dataclass(slots=True)
class _Group:
    """The records of one model and kind: their token counts summed, and for each
    key the ordinal of the first record that had it (a Counter keeps keys in the order
    they first came); records with all five counts wait in ``rows``, summed at the end
    (in C, column by column)."""

    model: str
    kind: str
    records: int = 0
    sums: dict[str, int] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)
    rows: list[tuple[int, ...]] = field(default_factory=list)
    first_full: int = -1  # the ordinal of the first of ``rows``

    def fold_rows(self) -> None:
        """Add ``rows`` into ``sums`` and ``first``."""
        if not self.rows:
            return
        for key, column in zip(USAGE_KEYS, zip(*self.rows, strict=True), strict=True):
            self.sums[key] = self.sums.get(key, 0) + sum(column)
            self.first[key] = min(self.first_full, self.first.get(key, self.first_full))
        self.rows = []


def _sum_groups(total: UsageTotal, groups: list[_Group], cost: float) -> None:
    first: dict[str, int] = {}
    for group in groups:
        for key, ordinal in group.first.items():
            first[key] = min(ordinal, first.get(key, ordinal))
    # keys as they first came: by record, and within one in USAGE_KEYS order
    for key in sorted(first, key=lambda k: (first[k], USAGE_KEYS.index(k))):
        total.tokens[key] = sum(group.sums.get(key, 0) for group in groups)
    total.records = sum(group.records for group in groups)
    total.cost = cost
