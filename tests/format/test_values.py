"""The value check (format/values.py, Session.check_values, doctor): a value of the wrong
type or out of range is a problem with its line, never a crash, and files pi and this
library write have none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_cli import invoke
from locations import FIXTURES, GOLDEN_DIR

from jsonl_session import Session, SessionFormatError

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z"}


def entry(entry_id: str, parent: object, **fields: object) -> dict[str, object]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hi", "timestamp": 1},
        **fields,
    }


def assistant(entry_id: str, parent: str, **message: object) -> dict[str, object]:
    body: dict[str, object] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "m",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": 2,
        **message,
    }
    return entry(entry_id, parent, message=body)


def write(path: Path, *lines: object) -> Path:
    path.write_text("".join(f"{json.dumps(line)}\n" for line in lines))
    return path


def problems_of(path: Path) -> list[tuple[int | None, str]]:
    return [(p.line, p.message) for p in Session.open(path, cache=False).check_values()]


def pi_format_files() -> list[Path]:
    found = sorted(FIXTURES.glob("*.jsonl")) + sorted(GOLDEN_DIR.rglob("*.jsonl"))
    return [path for path in found if not path.name.startswith("damaged-")]


class TestFilesWrittenRightHaveNone:
    def test_no_bundled_fixture_or_golden_pi_wrote_has_a_value_problem(self) -> None:
        checked = 0
        for path in pi_format_files():
            if path.name == "null-contents.jsonl":
                continue  # made with null contents on purpose (below)
            try:
                session = Session.open(path, cache=False)
            except SessionFormatError:
                continue  # a golden that is no session file (adapter requests)
            assert session.check_values() == [], path
            checked += session.dialect == "pi"
        assert checked >= 40

    def test_contents_left_null_on_purpose_are_each_named(self) -> None:
        path = GOLDEN_DIR / "pi15" / "corpus" / "null-contents.jsonl"
        found = problems_of(path)
        assert found and all("content: expected" in message for _, message in found)
        assert all(line is not None for line, _ in found)

    def test_a_session_this_library_wrote_has_none(self, tmp_path: Path) -> None:
        session = Session.create(cwd="/w", session_dir=tmp_path, fsync="never")
        first = session.append_message({"role": "user", "content": "q", "timestamp": 1})
        session.append_label(first, "start")
        session.append_session_info("named")
        session.append_thinking_level_change("high")
        session.append_model_change("openai", "gpt")
        assert Session.open(session.path, cache=False).check_values() == []

    def test_another_agents_file_is_left_to_its_reader(self) -> None:
        claude = next((FIXTURES / "claude").rglob("*.jsonl"))
        assert Session.open(claude, cache=False).check_values() == []


class TestEachWrongValueIsNamedWithItsLine:
    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            (entry("u2", "u1", timestamp=12), "timestamp is a number (12), not an ISO 8601 time"),
            (entry("u2", "u1", timestamp="yesterday"), 'timestamp "yesterday" is not an ISO 8601'),
            (
                entry("u2", "u1", timestamp="+275760-09-13T00:00:00.000Z"),
                "clock can hold (years 1 to 9999)",
            ),
            (
                entry("u2", "u1", message={"role": "user", "content": "x", "timestamp": 1e17}),
                "message.timestamp 1e+17 is outside the times a JavaScript Date holds",
            ),
            (
                entry("u2", "u1", message={"role": "user", "content": "x", "timestamp": 8e15}),
                "is outside what this platform's clock can hold",
            ),
            (
                entry("u2", "u1", message={"role": "user", "content": "x", "timestamp": "now"}),
                'message.timestamp is a string ("now"), not milliseconds since 1970',
            ),
            (
                assistant("u2", "u1", usage={"input": "5"}),
                "message.usage.input: expected `int`, got `str`",
            ),
            (
                assistant("u2", "u1", content=[{"type": "text", "text": 7}]),
                "message.content[0].text: expected `str`, got `int`",
            ),
            (
                {**entry("u2", "u1"), "type": "label", "targetId": "u1", "label": ["x"]},
                "label: expected `str`, got `array`",
            ),
            (assistant("u2", "u1", content=42), "message.content: expected `array`, got `int`"),
        ],
    )
    def test_the_problem_names_the_field_and_the_line(
        self, tmp_path: Path, line: dict[str, object], expected: str
    ) -> None:
        path = write(tmp_path / "s.jsonl", HEADER, entry("u1", None), line)
        found = problems_of(path)
        assert len(found) == 1, found
        assert found[0][0] == 3
        assert expected in found[0][1]

    def test_numbers_no_double_holds_are_named_by_place(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        write(path, HEADER, entry("u1", None))
        with path.open("a") as file:
            line = json.dumps(assistant("a1", "u1", usage={"input": 1, "cost": {"total": 7}}))
            file.write(line.replace('"total": 7', '"total": 1e400') + "\n")
            huge = "9" * 400
            file.write(json.dumps(entry("u2", "a1", details=[0, 1])).replace("1]", f"{huge}]"))
            file.write("\n")
        found = problems_of(path)
        assert found == [
            (3, "message.usage.cost.total: a number too large for a double (read as Infinity)"),
            (4, "details[1]: a number too large for a double (read as Infinity)"),
        ]

    def test_a_parent_that_is_not_a_string_makes_a_root_as_in_pi(self, tmp_path: Path) -> None:
        # pi 1.5.2 (checked with the oracle): the entry starts a path of its own, and
        # the leaf is the last entry, whose context starts at that entry.
        path = write(
            tmp_path / "s.jsonl",
            HEADER,
            entry("u1", None),
            entry("u2", 5, message={"role": "user", "content": "two", "timestamp": 2}),
            entry("u3", "u2", message={"role": "user", "content": "three", "timestamp": 3}),
        )
        assert problems_of(path) == [
            (3, "parentId is a number (5), not a string or null; read as a root")
        ]
        session = Session.open(path, cache=False)
        assert [root.id for root in session.roots()] == ["u1", "u2"]
        contents = [m["content"] for m in session.build_context().messages]
        assert (session.leaf_id, contents) == ("u3", ["two", "three"])

    def test_a_role_from_a_newer_format_is_not_judged(self, tmp_path: Path) -> None:
        newer = entry("u2", "u1", message={"role": "narrator", "voice": 3, "timestamp": 4})
        path = write(tmp_path / "s.jsonl", HEADER, entry("u1", None), newer)
        assert problems_of(path) == []

    def test_a_lone_surrogate_is_text_not_a_wrong_value(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        write(path, HEADER)
        with path.open("a") as file:
            file.write(json.dumps(entry("u1", None)).replace('"hi"', '"\\ud83d"') + "\n")
        assert problems_of(path) == []

    def test_a_value_nested_past_recursion_is_walked(self, tmp_path: Path) -> None:
        depth = 20_000
        deep = '{"a":' * depth + "1" + "e999" + "}" * depth
        path = tmp_path / "s.jsonl"
        write(path, HEADER, entry("u1", None))
        with path.open("a") as file:
            file.write(
                json.dumps(entry("u2", "u1", details=0)).replace(
                    '"details": 0', f'"details": {deep}'
                )
            )
            file.write("\n")
        [(line, message)] = problems_of(path)
        assert line == 3
        assert message.startswith("details.a.a.a.a.a …19989 levels… a.a.a.a.a.a: ")
        assert message.endswith("a number too large for a double (read as Infinity)")

    def test_the_header_timestamp_is_checked(self, tmp_path: Path) -> None:
        header = {**HEADER, "timestamp": "0000-00-00"}
        path = write(tmp_path / "s.jsonl", header, entry("u1", None))
        [(line, message)] = problems_of(path)
        assert line == 1
        assert message.startswith("the header's timestamp")

    def test_a_large_file_read_in_chunks_names_the_same_lines(self, tmp_path: Path) -> None:
        path = tmp_path / "big.jsonl"
        lines: list[object] = [HEADER, entry("u0", None)]
        pad = "x" * 2_000
        for n in range(1, 700):
            message = {"role": "user", "content": pad, "timestamp": n}
            lines.append(entry(f"u{n}", f"u{n - 1}", message=message))
        lines[500] = entry("u499", "u498", timestamp=False)
        write(path, *lines)
        assert path.stat().st_size > 1 << 20
        for cache in (False, tmp_path / "cache", tmp_path / "cache"):
            session = Session.open(path, cache=cache)
            found = [(p.line, p.entry_id) for p in session.check_values()]
            assert found == [(501, "u499")]

    def test_checking_writes_nothing_and_leaves_problems_as_they_were(self, tmp_path: Path) -> None:
        path = write(tmp_path / "s.jsonl", HEADER, entry("u1", None, timestamp=3))
        before = path.read_bytes()
        session = Session.open(path, cache=False)
        assert session.check_values() and session.problems == []
        assert path.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


class TestDoctor:
    def test_doctor_lists_wrong_values_with_lines_and_exits_1(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "s.jsonl", HEADER, entry("u1", None), entry("u2", "u1", timestamp=12)
        )
        code, out, _ = invoke("--no-cache", "doctor", path)
        assert code == 1
        assert "line 3: timestamp is a number (12), not an ISO 8601 time (invalid-value)" in out

    def test_doctor_json_gives_kind_line_and_entry(self, tmp_path: Path) -> None:
        path = write(
            tmp_path / "s.jsonl", HEADER, entry("u1", None), entry("u2", "u1", timestamp=12)
        )
        code, out, _ = invoke("--no-cache", "doctor", "--json", path)
        [report] = json.loads(out)
        assert code == 1
        assert [(p["kind"], p["line"], p["entryId"]) for p in report["problems"]] == [
            ("invalid-value", 3, "u2")
        ]

    def test_doctor_passes_a_sound_file(self) -> None:
        code, out, _ = invoke("--no-cache", "doctor", FIXTURES / "branching.jsonl")
        assert code == 0
        assert out.startswith("ok ")
