"""Compatibility with pi 0.73.x, without needing node.

`tests/compat/golden/pi-context/<fixture>.txt` holds, for every entry of each
well-formed fixture, the bytes pi's own context builder produced (JSON.stringify of
buildSessionContext(entries, id)), recorded by hand with pi 0.73.1 (see
tests/compat/golden/README.md). The other tests pin behaviours the by-hand round trip
found in files pi writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from locations import FIXTURES, GOLDEN_DIR

from jsonl_session import Session
from jsonl_session.format.jsonio import decode_any, dumps

GOLDEN = GOLDEN_DIR / "pi-context"


def golden_cases() -> list[tuple[str, str, bytes]]:
    cases = []
    for golden in sorted(GOLDEN.glob("*.txt")):
        raw = golden.read_bytes()
        for row in raw.split(b"\n"):
            if row:
                leaf, expected = row.split(b"\t", 1)
                cases.append((golden.stem, leaf.decode(), expected))
    return cases


class TestGoldenContextsFromPi:
    def test_every_well_formed_fixture_has_a_golden(self) -> None:
        # fixtures with pi 1.5's entries have pi 1.5.2's goldens (test_pi15_compat.py)
        fixtures = {
            p.stem for p in FIXTURES.glob("*.jsonl") if not p.stem.startswith(("damaged", "pi15-"))
        }
        assert fixtures == {p.stem for p in GOLDEN.glob("*.txt")}

    @pytest.mark.parametrize(("fixture", "leaf", "expected"), golden_cases())
    def test_our_context_is_byte_identical_to_pis(
        self, fixture: str, leaf: str, expected: bytes
    ) -> None:
        session = Session.open(FIXTURES / f"{fixture}.jsonl")
        assert dumps(session.build_context(leaf).to_dict()) == expected

    def test_the_cli_prints_the_same_bytes(self) -> None:
        fixture, leaf, expected = next(
            case for case in golden_cases() if case[0] == "compaction-two"
        )
        done = subprocess.run(
            [
                *(sys.executable, "-m", "jsonl_session", "context"),
                *(str(FIXTURES / f"{fixture}.jsonl"), "--leaf", leaf, "--json"),
            ],
            capture_output=True,
            check=True,
        )
        assert done.stdout == expected + b"\n"


HEADER = (
    b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}'
)


def pi_file(tmp_path: Path, *lines: bytes) -> Path:
    path = tmp_path / "pi.jsonl"
    path.write_bytes(b"\n".join([HEADER, *lines]) + b"\n")
    return path


def user_line(entry_id: str, parent: str | None, text: str) -> bytes:
    return dumps(
        {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1},
        }
    )


class TestLoneSurrogates:
    """pi cuts long lines by UTF-16 units, which can split an emoji; JSON.stringify
    then writes the half as an escape, and JSON.parse reads it back."""

    LINE = (
        b'{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2025-01-01T00:00:02.000Z",'
        b'"message":{"role":"user","content":"face \\ud83d cut","timestamp":2}}'
    )

    def test_the_entry_is_read_not_skipped(self, tmp_path: Path) -> None:
        path = pi_file(tmp_path, user_line("aaaaaaaa", None, "hi"), self.LINE)
        session = Session.open(path)
        assert [e.id for e in session.entries] == ["aaaaaaaa", "bbbbbbbb"]
        assert session.problems == []
        assert session.build_context().messages[-1]["content"] == "face \ud83d cut"

    def test_it_is_written_back_as_pi_writes_it(self, tmp_path: Path) -> None:
        path = pi_file(tmp_path, user_line("aaaaaaaa", None, "hi"), self.LINE)
        context = dumps(Session.open(path).build_context().to_dict())
        assert b'"face \\ud83d cut"' in context

    def test_appending_after_it_keeps_its_bytes(self, tmp_path: Path) -> None:
        path = pi_file(tmp_path, user_line("aaaaaaaa", None, "hi"), self.LINE)
        session = Session.open(path, fsync="never")
        session.append_custom_message("note", "a \ud83d half too")
        lines = path.read_bytes().split(b"\n")
        assert lines[2] == self.LINE
        assert b'"a \\ud83d half too"' in lines[3]


class TestForksPiWrote:
    """pi's fork drops label entries from the path without re-parenting the next
    entry, leaving a parent that does not exist; pi's context starts there."""

    def test_the_context_starts_at_the_gap_and_the_gap_is_reported(self, tmp_path: Path) -> None:
        path = pi_file(
            tmp_path,
            user_line("aaaaaaaa", None, "before the gap"),
            user_line("cccccccc", "1abe1000", "after the gap"),
            user_line("dddddddd", "cccccccc", "last"),
        )
        session = Session.open(path)
        assert [m["content"] for m in session.build_context().messages] == [
            "after the gap",
            "last",
        ]
        assert [(p.kind, p.entry_id) for p in session.problems] == [("missing-parent", "cccccccc")]

    def test_the_cli_warns_about_the_gap(self, tmp_path: Path) -> None:
        path = pi_file(
            tmp_path,
            user_line("aaaaaaaa", None, "before"),
            user_line("cccccccc", "1abe1000", "after"),
        )
        done = subprocess.run(
            [sys.executable, "-m", "jsonl_session", "context", str(path), "--json"],
            capture_output=True,
            check=True,
        )
        assert json.loads(done.stdout)["messages"][0]["content"] == "after"
        assert b"1abe1000" in done.stderr and b"does not exist" in done.stderr


class TestEntriesPiAcceptsWithFieldsLeftOut:
    def test_derived_messages_leave_out_keys_the_entry_lacks(self, tmp_path: Path) -> None:
        path = pi_file(
            tmp_path,
            user_line("aaaaaaaa", None, "hi"),
            b'{"type":"compaction","id":"bbbbbbbb","parentId":"aaaaaaaa",'
            b'"timestamp":"2025-01-01T00:00:02.000Z","summary":"s","firstKeptEntryId":"aaaaaaaa"}',
            b'{"type":"custom_message","customType":"x","content":"c","id":"cccccccc",'
            b'"parentId":"bbbbbbbb","timestamp":"2025-01-01T00:00:03.000Z"}',
        )
        messages = Session.open(path).build_context().messages
        assert messages[0] == {
            "role": "compactionSummary",
            "summary": "s",
            "timestamp": 1735689602000,
        }
        assert messages[2] == {
            "role": "custom",
            "customType": "x",
            "content": "c",
            "timestamp": 1735689603000,
        }

    @pytest.mark.parametrize(("stamp", "millis"), [(b"5", 5), (b"null", 0), (b'"soon"', None)])
    def test_timestamps_are_read_as_javascripts_date_reads_them(
        self, tmp_path: Path, stamp: bytes, millis: int | None
    ) -> None:
        path = pi_file(
            tmp_path,
            b'{"type":"custom_message","customType":"x","content":"c","display":true,'
            b'"id":"cccccccc","parentId":null,"timestamp":' + stamp + b"}",
        )
        assert Session.open(path).build_context().messages[0]["timestamp"] == millis


class TestNumbersJsonParseAccepts:
    def test_a_number_beyond_a_double_reads_as_infinity_and_writes_as_null(self) -> None:
        assert dumps(decode_any(b'{"a":1e400,"b":-1e400}')) == b'{"a":null,"b":null}'

    def test_an_integer_beyond_64_bits_becomes_the_double_javascript_reads(self) -> None:
        raw = b'{"a":123456789012345678901234567890}'
        # node -e 'JSON.stringify(JSON.parse(raw))' prints exactly this
        assert dumps(decode_any(raw)) == b'{"a":1.2345678901234568e+29}'

    @pytest.mark.parametrize(
        ("raw", "written"),
        [  # what node -e 'JSON.stringify(JSON.parse(raw))' prints
            (b'{"cost":0.0,"total":1.0,"neg":-0.0}', b'{"cost":0,"total":1,"neg":0}'),
            (b"[1e16,1.5e20,1e21,2.5]", b"[10000000000000000,150000000000000000000,1e+21,2.5]"),
            (b'{"s":"kept: 1.0,","n":[3.0]}', b'{"s":"kept: 1.0,","n":[3]}'),
        ],
    )
    def test_a_float_with_no_fraction_is_written_as_javascript_writes_it(
        self, raw: bytes, written: bytes
    ) -> None:
        assert dumps(decode_any(raw)) == written

    def test_infinity_beside_a_lone_surrogate_is_still_written_as_null(self) -> None:
        value = decode_any(b'{"a":1e400,"b":"half \\ud83d","c":[[-1e400]]}')
        assert dumps(value) == b'{"a":null,"b":"half \\ud83d","c":[[null]]}'


class TestBytesThatAreNotUtf8:
    def test_bad_bytes_in_a_message_body_are_read_as_replacement_and_reported(
        self, tmp_path: Path
    ) -> None:
        line = user_line("aaaaaaaa", None, "caf\x00").replace(b"\\u0000", b"\xe9")
        path = pi_file(tmp_path, line)
        session = Session.open(path)
        assert session.build_context().messages[0]["content"] == "caf\ufffd"
        assert [(p.kind, p.line) for p in session.problems] == [("invalid-utf8", 2)]
