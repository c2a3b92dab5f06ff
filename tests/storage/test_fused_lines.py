"""A line fused from a torn fragment and another writer's whole entry.

A writer killed partway through a long line leaves a fragment with no newline; pi,
which appends without a lock, then writes its whole line right after it. The line is
not JSON, so pi skips it and so does a read here (the same leaf and context as pi);
it is reported as ``fused-line``, and ``doctor --repair`` moves the fragment to a
``torn`` sidecar and keeps the entry, with the original kept as a backup."""

from __future__ import annotations

import json
from pathlib import Path

from helpers_cli import invoke
from helpers_write import append_raw, raw_entry, sidecars, v3_bytes, write_file

from jsonl_session import Session
from jsonl_session.storage.reading import fused_entry_start

FRAGMENT = b'{"type":"custom","customType":"fault","data":{"text":"cut sh'
AFTER = {"role": "user", "content": [{"type": "text", "text": "after"}], "timestamp": 4}
PI_LINE = raw_entry("cccc0001", "bbbb0003", type="message", message=AFTER)


def fused_file(folder: Path) -> Path:
    path = write_file(folder / "s.jsonl", v3_bytes())
    append_raw(path, FRAGMENT + PI_LINE + b"\n")
    return path


class TestReading:
    def test_the_fused_line_is_skipped_as_pi_skips_it_and_reported_as_fused(
        self, tmp_path: Path
    ) -> None:
        session = Session.open(fused_file(tmp_path), cache=False)
        assert "cccc0001" not in {entry.id for entry in session.entries}
        assert session.leaf_id == "bbbb0003"
        assert [(p.kind, p.line) for p in session.problems] == [("fused-line", 5)]
        assert "doctor --repair" in session.problems[0].message

    def test_the_entry_found_is_the_whole_line_after_the_fragment(self) -> None:
        assert fused_entry_start(FRAGMENT + PI_LINE) == len(FRAGMENT)

    def test_a_block_nested_inside_the_fragment_is_not_taken_for_an_entry(self) -> None:
        nested = b'{"type":"message","message":{"content":[{"type":"text","text":"x"}]'
        assert fused_entry_start(nested + b"}") is None
        assert fused_entry_start(nested + FRAGMENT) is None

    def test_a_line_that_is_only_damaged_stays_invalid_json(self, tmp_path: Path) -> None:
        path = write_file(tmp_path / "s.jsonl", v3_bytes())
        append_raw(path, FRAGMENT + b"\n")
        assert [p.kind for p in Session.open(path, cache=False).problems] == ["invalid-json"]


class TestRepair:
    def test_repair_keeps_the_entry_and_moves_the_fragment_to_a_sidecar_with_a_backup(
        self, tmp_path: Path
    ) -> None:
        path = fused_file(tmp_path)
        original = path.read_bytes()
        made = Session.open(path, cache=False).repair()
        (torn,) = sidecars(tmp_path, "torn")
        assert torn.read_bytes() == FRAGMENT
        (backup,) = [p for p in made if ".bak-" in p.name]
        assert backup.read_bytes() == original
        assert path.read_bytes() == v3_bytes() + PI_LINE + b"\n"
        again = Session.open(path, cache=False)
        assert again.problems == []
        assert again.leaf_id == "cccc0001"

    def test_doctor_reports_it_and_repair_says_what_it_wrote(self, tmp_path: Path) -> None:
        path = fused_file(tmp_path)
        code, out, _ = invoke("doctor", path, "--json")
        assert code == 1
        (report,) = json.loads(out)
        assert [p["kind"] for p in report["problems"]] == ["fused-line"]
        code, out, err = invoke("doctor", path, "--repair")
        assert code == 0, err
        assert ".torn-1" in out and ".bak-1" in out
        assert "no problems remain" in out
