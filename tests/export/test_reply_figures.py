"""The figures an export's header reads from the replies (export/replies.py): decoded
in part, they add up to what reading each reply whole gives, whatever odd values a
usage holds; read by a worker process, they are the same."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import msgspec
import pytest

from jsonl_session import Session
from jsonl_session.errors import SessionFormatError
from jsonl_session.export.replies import (
    TOKEN_KEYS,
    ReplyFigures,
    figures_in_worker,
    reply_figures,
)
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import finite_number
from jsonl_session.storage.columns import entry_columns
from jsonl_session.storage.lines import LineSource

BIG = 2**70  # beyond 64 bits: read whole, such an integer is a float
# Usages as the file holds them (JSON text: integers beyond 64 bits stay exact).
USAGES = [
    '{"input": 10, "output": 5, "cacheRead": 2, "cacheWrite": 1, "cost": {"total": 0.25}}',
    f'{{"input": {BIG}, "output": -{BIG}, "cost": {{"total": {BIG}}}}}',
    '{"input": 9007199254740993, "output": 1.5, "cacheRead": true, "cacheWrite": "7"}',
    '{"input": 1e308, "output": -0.0, "cost": {"total": 1e299}}',
    '{"input": 3, "cost": [1, 2]}',
    '{"input": 4, "cost": {"total": "0.5"}}',
    '{"input": 5, "cost": {"other": 1}}',
    '{"input": 1, "input": 6}',
    "null",
    "[1, 2]",
    '"usage"',
    "7",
]
CONTENTS = [
    '[{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}, {"type": "text"}]',
    '"just text"',
    '[{"type": "toolCall"}, "not a block"]',
    "null",
    '[{"type": "toolCall", "arguments": {"n": 123456789012345678901234567890}}]',
]


def reply_line(number: int, content: str, usage: str | None) -> str:
    used = "" if usage is None else f', "usage": {usage}'
    return (
        f'{{"type": "message", "id": "r{number:07d}", "parentId": {_parent(number)},'
        f' "timestamp": "2025-01-01T00:00:00.000Z", "message": {{"role": "assistant",'
        f' "content": {content}, "provider": "p", "model": "m"{used}}}}}'
    )


def _parent(number: int) -> str:
    return "null" if number == 0 else f'"r{number - 1:07d}"'


@pytest.fixture(scope="module")
def odd_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Assistant replies with each content and each usage (or none) above."""
    lines = [
        json.dumps({"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/"})
    ]
    cases = [(c, u) for c in CONTENTS for u in [*USAGES, None]]
    lines += [reply_line(n, content, usage) for n, (content, usage) in enumerate(cases)]
    # bytes that are not UTF-8 where the usage is decoded: the line is read whole
    broken = reply_line(len(cases), "null", '{"input": 2, "cost": {"total": 0.5, "x": "@"}}')
    raw = "\n".join([*lines, broken]).encode().replace(b'"x": "@"', b'"x": "\xff\xf0"')
    path = tmp_path_factory.mktemp("replies") / "odd.jsonl"
    path.write_bytes(raw + b"\n")
    return path


@pytest.fixture(scope="module")
def replies(odd_file: Path) -> list[StoredEntry]:
    entries = [e for e in Session.open(odd_file, cache=False).entries if e.role == "assistant"]
    assert len(entries) == len(CONTENTS) * (len(USAGES) + 1) + 1
    return entries


def read_back(entries: list[StoredEntry], path: Path) -> list[StoredEntry]:
    """``entries`` as a large session's are: their lines read back from the file."""
    source = LineSource(path, os.open(path, os.O_RDONLY))
    return [msgspec.structs.replace(entry, inline=None, source=source) for entry in entries]


def read_whole(replies: list[StoredEntry]) -> ReplyFigures:
    """The figures from each reply read whole (`StoredEntry.data`), by the rule the
    header follows."""
    out = ReplyFigures()
    for entry in replies:
        message = entry.data().get("message", {})
        content = message.get("content")
        if isinstance(content, list):
            out.calls += sum(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)
        usage: Any = message.get("usage")
        if not isinstance(usage, dict):
            continue
        for key in TOKEN_KEYS:
            value = finite_number(usage.get(key))
            out.tokens[key] += int(value) if value is not None else 0
        cost = usage.get("cost")
        spent = cost.get("total") if isinstance(cost, dict) else 0
        out.cost += float(finite_number(spent) or 0.0)
    return out


def test_replies_decoded_in_part_add_up_as_read_whole(replies: list[StoredEntry]) -> None:
    expected = read_whole(replies)
    assert reply_figures(replies) == expected
    assert expected.tokens["input"] > BIG  # the float an integer beyond 64 bits is read as
    assert expected.calls > 0 and expected.cost > 0


def test_each_odd_reply_alone_adds_up_as_read_whole(replies: list[StoredEntry]) -> None:
    for entry in replies:
        assert reply_figures([entry]) == read_whole([entry]), entry.raw


def test_a_worker_reads_the_same_figures_from_the_file(
    replies: list[StoredEntry], odd_file: Path
) -> None:  # as a large session's entries are: their lines on disk, read by offset
    on_disk = [msgspec.structs.replace(entry, inline=None) for entry in replies]
    path = str(odd_file)
    assert figures_in_worker(entry_columns(path, on_disk)) == read_whole(replies)
    assert figures_in_worker(entry_columns(path, replies)) == read_whole(replies)


def test_figures_read_in_two_parts_add_up_as_one_pass_at_every_cut(
    replies: list[StoredEntry],
) -> None:
    expected = reply_figures(replies)
    for cut in range(len(replies) + 1):
        first = reply_figures(replies[:cut])
        first.then(reply_figures(replies[cut:], keep_costs=True))
        assert first == expected, cut


def test_costs_read_in_parts_are_added_in_the_order_of_one_pass(tmp_path: Path) -> None:
    # 0.1 + 0.2 + 0.3 in turn is not 0.1 + (0.2 + 0.3): adding the later part's total
    # would be off in the last bit
    lines = [json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"})]
    for number, cost in enumerate((0.1, 0.2, 0.3)):
        lines.append(reply_line(number, "null", f'{{"input": 1, "cost": {{"total": {cost}}}}}'))
    path = tmp_path / "costs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    three = [e for e in Session.open(path, cache=False).entries if e.role == "assistant"]
    first, later = reply_figures(three[:1]), reply_figures(three[1:], keep_costs=True)
    assert first.cost + later.cost != reply_figures(three).cost
    assert later.costs == [0.2, 0.3]
    first.then(later)
    assert first.cost == reply_figures(three).cost == (0.1 + 0.2) + 0.3
    assert first.tokens["input"] == 3


def test_figures_read_without_their_costs_cannot_be_added_after_others(
    replies: list[StoredEntry],
) -> None:
    with pytest.raises(ValueError, match="without their costs"):
        reply_figures(replies[:1]).then(reply_figures(replies[1:]))


def test_each_odd_reply_read_from_the_file_adds_up_as_read_whole(
    replies: list[StoredEntry], odd_file: Path
) -> None:
    # decoded where each line lies in the block read for many, its id checked there
    on_disk = read_back(replies, odd_file)
    assert reply_figures(on_disk) == read_whole(replies)
    for entry, kept in zip(on_disk, replies, strict=True):
        assert reply_figures([entry]) == read_whole([kept]), kept.raw


def test_a_reply_whose_line_was_rewritten_since_is_said_not_counted(tmp_path: Path) -> None:
    header = json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"})
    usage = '{"input": 1, "cost": {"total": 0.5}}'
    lines = [header, *(reply_line(n, "null", usage) for n in range(3))]
    path = tmp_path / "rewritten.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session = Session.open(path, cache=False)
    three = read_back([e for e in session.entries if e.role == "assistant"], path)
    # the same bytes but another id: the line is no longer the reply's
    path.write_text(path.read_text().replace("r0000001", "x0000001"))
    with pytest.raises(SessionFormatError, match="no longer where it was"):
        reply_figures(three)


def test_a_reply_whose_id_is_written_with_escapes_is_still_its_own(tmp_path: Path) -> None:
    header = json.dumps({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"})
    line = reply_line(0, "null", '{"input": 4, "cost": {"total": 0.25}}')
    line = line.replace('"id": "r0000000"', '"id": "\\u0072\\u00300000000"')
    path = tmp_path / "escaped.jsonl"
    path.write_text(f"{header}\n{line}\n")
    (reply,) = [e for e in Session.open(path, cache=False).entries if e.role == "assistant"]
    assert reply.id == "r00000000"
    figures = reply_figures(read_back([reply], path))
    assert figures.tokens["input"] == 4 and figures.cost == 0.25
