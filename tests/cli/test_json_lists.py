"""`--json` lists (list, search, and the entries of show --json) are written a
thousand items at a time: the bytes are those of the whole list written at once,
whatever the items hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers_cli import invoke
from locations import copy_fixture

from jsonl_session import Session
from jsonl_session.cli.output import print_json, print_json_list, print_json_with_list

AWKWARD: list[Any] = [
    {"n": 1.0, "big": 2**70, "tiny": -2.5e-7, "zero": -0.0},
    {"half an emoji": "\ud83d", "controls": "\x00\x1b[31m\x7f\x85\u202e"},
    {"nested": [[[{"k": None}]]], "text": "日本語 ✓ 🚀"},
]


@pytest.mark.parametrize("count", [0, 1, 999, 1000, 1001, 2500])
def test_a_list_written_in_parts_is_the_list_written_at_once(
    count: int, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    items = [AWKWARD[n % len(AWKWARD)] | {"i": n} for n in range(count)]
    print_json(items)
    whole = capsysbinary.readouterr().out
    print_json_list(iter(items))
    assert capsysbinary.readouterr().out == whole


@pytest.mark.parametrize("count", [0, 1, 1001])
@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({}, {}),
        ({"agent": "pi", "header": AWKWARD[1]}, {}),
        ({}, {"leafId": None, "x": AWKWARD[0]}),
    ],
)
def test_an_object_with_a_list_written_in_parts_is_the_object_written_at_once(
    count: int,
    before: dict[str, Any],
    after: dict[str, Any],
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    items = [AWKWARD[n % len(AWKWARD)] | {"i": n} for n in range(count)]
    print_json({**before, "entries": items, **after})
    whole = capsysbinary.readouterr().out
    print_json_with_list(before, "entries", iter(items), after)
    assert capsysbinary.readouterr().out == whole


def test_show_json_writes_its_entries_as_they_are_read(tmp_path: Path) -> None:
    # the entries are the session's bodies, read a batch at a time (Session.entry_data)
    path = copy_fixture(tmp_path, "branching")
    session = Session.open(path, cache=False)
    code, out, err = invoke("show", path, "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown["entries"] == [entry.data() for entry in session.entries]
    assert list(session.entry_data()) == shown["entries"]
    assert list(shown)[:3] == ["agent", "header", "entries"]


def test_tree_json_summarises_each_node_from_its_body(tmp_path: Path) -> None:
    from jsonl_session import entry_summary, iter_nodes

    path = copy_fixture(tmp_path, "branching")
    session = Session.open(path, cache=False)
    code, out, err = invoke("tree", path, "--json")
    assert code == 0, err
    nodes = json.loads(out)["nodes"]
    walked = [node for _, node in iter_nodes(session.tree())]
    assert [n["id"] for n in nodes] == [node.entry.id for node in walked]
    assert [n["summary"] for n in nodes] == [entry_summary(node.entry) for node in walked]
    chosen = [node.entry for node in walked][::-1]  # any entries, in their order
    assert list(session.entry_data(chosen)) == [entry.data() for entry in chosen]
