"""Reading session files: lines, damage, fatal header problems, exact bytes, and the
rule that no read path ever writes. Files are real bytes in tmp_path."""

from __future__ import annotations

import itertools
from contextlib import suppress
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builders import BASE_MS
from builders import read_assistant as assistant
from builders import read_user as user
from helpers_large import generate
from helpers_read import (
    Snapshot,
    dumps,
    entry,
    file_bytes,
    header,
    linear_session,
    marker,
    message,
    snapshot,
    time_limit,
    ts,
    write_session,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jsonl_session import (
    JsonlSessionError,
    Session,
    SessionFormatError,
    SessionTreeError,
    load_entries,
)
from jsonl_session.format.model import MessageEntry, UnknownEntry, UserMessage
from jsonl_session.tree import iter_nodes

A, B, C, D = "aaaaaaaa", "bbbbbbbb", "cccccccc", "dddddddd"


def kinds(problems: Any) -> list[tuple[str, int | None]]:
    return [(p.kind, p.line) for p in problems]


# --- well-formed files ---------------------------------------------------------------


class TestWellFormedFile:
    def test_entries_share_their_types_roles_and_parents_ids(self, tmp_path: Path) -> None:
        loaded = load_entries(generate(tmp_path / "gen.jsonl", entries=300), cache=False)
        held = loaded.entries
        messages = [e for e in held if e.type == "message"]
        assert len({id(e.type) for e in messages}) == 1
        assert len({id(e.role) for e in messages if e.role == "toolResult"}) == 1
        linked = [(e, p) for p, e in itertools.pairwise(held) if e.parent_id == p.id]
        assert len(linked) > 250 and all(e.parent_id is p.id for e, p in linked)

    def test_header_and_entries_are_read_in_file_order(self, tmp_path: Path) -> None:
        written = linear_session(tmp_path / "s.jsonl", count=4)
        loaded = load_entries(tmp_path / "s.jsonl")
        assert loaded.header == header()
        assert [e.id for e in loaded.entries] == [e["id"] for e in written]
        assert [e.line for e in loaded.entries] == [2, 3, 4, 5]
        assert loaded.problems == []
        assert loaded.version_read == 3
        assert loaded.migrations == []

    def test_each_entry_keeps_the_exact_bytes_of_its_line(self, tmp_path: Path) -> None:
        path = tmp_path / "s.jsonl"
        linear_session(path, count=3)
        data = path.read_bytes()
        lines = data.split(b"\n")
        for stored in load_entries(path).entries:
            assert stored.raw == lines[stored.line - 1]
            assert data[stored.offset : stored.offset + len(stored.raw)] == stored.raw
            assert stored.migrated is False

    def test_envelope_fields_are_decoded(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "s.jsonl",
            [
                header(),
                message(A, None, user("hi", 123), timestamp=ts(5)),
                entry("custom_message", B, A, customType="ext", content="x", display=True),
            ],
        )
        first, second = load_entries(path).entries
        assert (first.type, first.id, first.parent_id, first.timestamp) == (
            "message",
            A,
            None,
            ts(5),
        )
        assert (first.role, first.message_timestamp) == ("user", 123)
        assert (second.type, second.parent_id, second.custom_type) == ("custom_message", A, "ext")

    def test_non_compact_json_and_unicode_are_kept_byte_for_byte(self, tmp_path: Path) -> None:
        spaced = (
            '{ "type" : "message", "id": "aaaaaaaa", "parentId": null,'
            ' "timestamp": "2024-05-01T12:00:01.000Z",'
            ' "message": {"role": "user", "content": "h\u00e9llo \u2603 \\u00e9 \U0001f600",'
            ' "timestamp": 1} }'
        ).encode()
        path = write_session(tmp_path / "s.jsonl", [header(), spaced])
        (stored,) = load_entries(path).entries
        assert stored.raw == spaced
        assert stored.data()["message"]["content"] == "h\u00e9llo \u2603 \u00e9 \U0001f600"

    def test_unknown_fields_are_kept_in_order(self, tmp_path: Path) -> None:
        line = {
            "type": "message",
            "zeta": 1,
            "id": A,
            "parentId": None,
            "alpha": {"nested": [1, 2]},
            "timestamp": ts(1),
            "message": {"role": "user", "extra": True, "content": "x", "timestamp": 1},
            "omega": None,
        }
        path = write_session(tmp_path / "s.jsonl", [header(), line])
        (stored,) = load_entries(path).entries
        data = stored.data()
        assert data == line
        assert list(data) == list(line)
        assert list(data["message"]) == list(line["message"])
        assert stored.raw == dumps(line)

    def test_unknown_entry_types_are_kept_whole(self, tmp_path: Path) -> None:
        line = entry("hologram", B, A, payload={"z": 1, "a": [True, None]}, more="x")
        path = write_session(tmp_path / "s.jsonl", [header(), message(A, None, user("hi")), line])
        session = Session.open(path)
        stored = session.get(B)
        assert stored is not None
        assert stored.raw == dumps(line)
        assert list(stored.data()) == list(line)
        typed = stored.typed()
        assert isinstance(typed, UnknownEntry)
        assert typed.type == "hologram"
        assert typed.data == line
        assert session.problems == []
        assert session.leaf_id == B

    def test_data_is_fresh_each_time(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [header(), message(A, None, user("hi"))])
        (stored,) = load_entries(path).entries
        stored.data()["message"]["content"] = "changed"
        assert stored.data()["message"]["content"] == "hi"

    def test_known_entries_have_a_typed_view(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [header(), message(A, None, user("hi", 7))])
        (stored,) = load_entries(path).entries
        typed = stored.typed()
        assert isinstance(typed, MessageEntry)
        assert typed.message == UserMessage(content="hi", timestamp=7)

    def test_a_header_only_file_has_no_entries_and_no_leaf(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [header()])
        session = Session.open(path)
        assert session.entries == []
        assert session.leaf_id is None
        assert session.problems == []
        assert session.build_context().messages == []

    def test_a_header_without_a_final_newline_is_still_a_header(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [header()], final_eol=False)
        loaded = load_entries(path)
        assert loaded.header["id"] == header()["id"]
        assert loaded.problems == []

    def test_unknown_header_keys_are_kept(self, tmp_path: Path) -> None:
        head = header(zzz="later", parentSession="/p.jsonl")
        path = write_session(tmp_path / "s.jsonl", [head])
        session = Session.open(path)
        assert session.header_data == head
        assert list(session.header_data) == list(head)
        assert session.header.parent_session == "/p.jsonl"


# --- BOM, CRLF, blank lines -----------------------------------------------------------


class TestLineEndings:
    def entries(self) -> list[dict[str, Any]]:
        return [
            header(),
            message(A, None, user("one")),
            message(B, A, assistant("two")),
            message(C, B, user("three")),
        ]

    @pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
    def test_a_byte_order_mark_is_refused_as_pi_15_refuses_it(
        self, tmp_path: Path, eol: bytes
    ) -> None:
        path = write_session(tmp_path / "s.jsonl", self.entries(), eol=eol, bom=True)
        before = snapshot(path)
        with pytest.raises(
            SessionFormatError, match=r"s\.jsonl:1: line 1 starts with a UTF-8 byte"
        ):
            load_entries(path)
        with pytest.raises(SessionFormatError, match="remove those three bytes"):
            Session.open(path)
        before.assert_unchanged()

    def test_crlf_line_ends_are_tolerated_and_not_part_of_raw(self, tmp_path: Path) -> None:
        crlf = write_session(tmp_path / "crlf.jsonl", self.entries(), eol=b"\r\n")
        lf = write_session(tmp_path / "lf.jsonl", self.entries())
        loaded = load_entries(crlf)
        assert loaded.problems == []
        assert [e.raw for e in loaded.entries] == [dumps(e) for e in self.entries()[1:]]
        assert [e.line for e in loaded.entries] == [2, 3, 4]
        assert Session.open(crlf).build_context() == Session.open(lf).build_context()

    def test_blank_and_whitespace_lines_are_skipped_but_counted(self, tmp_path: Path) -> None:
        lines: list[dict[str, Any] | bytes] = self.entries()
        lines = [lines[0], b"", lines[1], b"   \t", b"", lines[2], b" ", lines[3], b"", b""]
        path = write_session(tmp_path / "s.jsonl", lines)
        loaded = load_entries(path)
        assert loaded.problems == []
        assert [e.line for e in loaded.entries] == [3, 6, 8]
        assert [e.id for e in loaded.entries] == [A, B, C]

    def test_blank_lines_before_the_header_are_skipped(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [b"", b"  ", *self.entries()])
        loaded = load_entries(path)
        assert loaded.problems == []
        assert [e.line for e in loaded.entries] == [4, 5, 6]

    def test_crlf_and_blank_lines_together(self, tmp_path: Path) -> None:
        lines: list[dict[str, Any] | bytes] = self.entries()
        lines.insert(2, b"")
        path = write_session(tmp_path / "s.jsonl", lines, eol=b"\r\n")
        data = path.read_bytes()
        session = Session.open(path)
        assert session.problems == []
        assert [e.line for e in session.entries] == [2, 4, 5]
        for stored in session.entries:
            assert data[stored.offset : stored.offset + len(stored.raw)] == stored.raw
        assert session.build_context().messages[0]["content"] == "one"


# --- a torn last line --------------------------------------------------------------------


class TestTornTail:
    def lines(self) -> list[dict[str, Any] | bytes]:
        return [header(), message(A, None, user("one")), message(B, A, assistant("two"))]

    def test_a_torn_last_line_is_reported_and_skipped(self, tmp_path: Path) -> None:
        torn = dumps(message(C, B, user("three")))[:40]
        path = write_session(tmp_path / "s.jsonl", [*self.lines(), torn], final_eol=False)
        session = Session.open(path)
        assert kinds(session.problems) == [("torn-tail", 4)]
        assert [e.id for e in session.entries] == [A, B]
        assert session.leaf_id == B
        assert len(session.build_context().messages) == 2

    def test_the_torn_line_is_recorded_and_left_in_the_file(self, tmp_path: Path) -> None:
        torn = b'{"type":"message","id":"cccccccc","parentId":"bbbb'
        path = write_session(tmp_path / "s.jsonl", [*self.lines(), torn], final_eol=False)
        before = snapshot(path)
        loaded = load_entries(path)
        assert loaded.torn_tail is not None
        assert loaded.torn_tail.raw == torn
        assert loaded.torn_tail.number == 4
        assert path.read_bytes().endswith(torn)
        before.assert_unchanged()

    def test_a_last_line_without_newline_that_is_valid_json_is_a_whole_entry(
        self, tmp_path: Path
    ) -> None:
        last = message(C, B, user("three"))
        path = write_session(tmp_path / "s.jsonl", [*self.lines(), last], final_eol=False)
        session = Session.open(path)
        assert session.problems == []
        assert [e.id for e in session.entries] == [A, B, C]
        assert session.get(C) is not None
        assert session.get(C).raw == dumps(last)  # type: ignore[union-attr]
        assert session.leaf_id == C
        assert load_entries(path).torn_tail is None

    def test_a_torn_line_after_crlf_lines_is_reported(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "s.jsonl", [*self.lines(), b'{"type":"mess'], eol=b"\r\n", final_eol=False
        )
        assert kinds(load_entries(path).problems) == [("torn-tail", 4)]

    def test_a_torn_line_after_blank_lines_keeps_its_physical_line_number(
        self, tmp_path: Path
    ) -> None:
        path = write_session(
            tmp_path / "s.jsonl", [*self.lines(), b"", b"", b'{"type":'], final_eol=False
        )
        assert kinds(load_entries(path).problems) == [("torn-tail", 6)]

    def test_an_invalid_last_line_that_ends_with_a_newline_is_not_torn(
        self, tmp_path: Path
    ) -> None:
        path = write_session(tmp_path / "s.jsonl", [*self.lines(), b'{"type":"mess'])
        loaded = load_entries(path)
        assert kinds(loaded.problems) == [("invalid-json", 4)]
        assert loaded.torn_tail is None

    def test_a_torn_line_right_after_the_header(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", [header(), b'{"ty'], final_eol=False)
        session = Session.open(path)
        assert kinds(session.problems) == [("torn-tail", 2)]
        assert session.entries == []
        assert session.leaf_id is None

    def test_trailing_blank_space_after_the_last_newline_is_not_a_torn_line(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "s.jsonl"
        path.write_bytes(file_bytes(self.lines()) + b"  ")
        loaded = load_entries(path)
        assert loaded.problems == []
        assert loaded.torn_tail is None
        assert [e.id for e in loaded.entries] == [A, B]


# --- bad lines in the middle --------------------------------------------------------------


class TestBadLinesInTheMiddle:
    def write(self, tmp_path: Path, bad: bytes) -> Path:
        return write_session(
            tmp_path / "s.jsonl",
            [header(), message(A, None, user("one")), bad, message(B, A, assistant("two"))],
        )

    @pytest.mark.parametrize(
        "bad",
        [
            b"{not json",
            b'{"type":"message","id":"x"',
            b"\xff\xfe garbage",
            b'{"type":"message",}',
            b"NaN",
            b'{"type":"message","id":"x","s":"tab\there"}',
        ],
    )
    def test_a_malformed_line_is_reported_with_its_line_number(
        self, tmp_path: Path, bad: bytes
    ) -> None:
        path = self.write(tmp_path, bad)
        before = snapshot(path)
        session = Session.open(path)
        assert kinds(session.problems) == [("invalid-json", 3)]
        assert [e.id for e in session.entries] == [A, B]
        assert [m["role"] for m in session.build_context().messages] == ["user", "assistant"]
        before.assert_unchanged()

    @pytest.mark.parametrize(
        "bad", [b"null", b"42", b"[]", b"{}", b'"text"', b"true", b'{"type":1}', b"[1,{}]"]
    )
    def test_valid_json_that_is_not_an_entry_is_reported(self, tmp_path: Path, bad: bytes) -> None:
        path = self.write(tmp_path, bad)
        session = Session.open(path)
        assert kinds(session.problems) == [("not-an-entry", 3)]
        assert [e.id for e in session.entries] == [A, B]
        assert len(session.build_context().messages) == 2

    def test_a_bad_line_is_kept_for_rewrites(self, tmp_path: Path) -> None:
        path = self.write(tmp_path, b"{oops")
        loaded = load_entries(path)
        assert [(b.line, b.raw) for b in loaded.bad_lines] == [(3, b"{oops")]
        data = path.read_bytes()
        (bad,) = loaded.bad_lines
        assert data[bad.offset : bad.offset + len(bad.raw)] == b"{oops"

    def test_an_entry_without_a_string_id_is_reported_and_skipped(self, tmp_path: Path) -> None:
        path = self.write(tmp_path, dumps(entry("message", 5, A, message=user("x"))))  # type: ignore[arg-type]
        session = Session.open(path)
        assert kinds(session.problems) == [("invalid-entry", 3)]
        assert [e.id for e in session.entries] == [A, B]

    def test_a_second_header_is_reported_and_ignored(self, tmp_path: Path) -> None:
        path = self.write(tmp_path, dumps(header(session_id="other")))
        session = Session.open(path)
        assert kinds(session.problems) == [("extra-header", 3)]
        assert session.id == header()["id"]
        assert [e.id for e in session.entries] == [A, B]

    def test_problems_come_in_line_order_and_name_their_line(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "s.jsonl",
            [
                header(),
                b"42",
                message(A, None, user("one")),
                b"",
                b"{bad",
                message(B, A, user("two")),
                b"[]",
                b'{"type":"x"',
            ],
            final_eol=False,
        )
        problems = Session.open(path).problems
        assert kinds(problems) == [
            ("not-an-entry", 2),
            ("invalid-json", 5),
            ("not-an-entry", 7),
            ("torn-tail", 8),
        ]
        for problem in problems:
            assert str(problem).startswith(f"line {problem.line}: ")
            assert problem.to_dict()["line"] == problem.line

    def test_a_line_with_many_bad_neighbours_still_builds_its_context(self, tmp_path: Path) -> None:
        lines: list[dict[str, Any] | bytes] = [header()]
        parent = None
        for i in range(20):
            lines.append(b"{broken" if i % 2 else message(f"{i:08x}", parent, user(str(i))))
            if i % 2 == 0:
                parent = f"{i:08x}"
        session = Session.open(write_session(tmp_path / "s.jsonl", lines))
        assert len(session.problems) == 10
        assert [m["content"] for m in session.build_context().messages] == [
            str(i) for i in range(0, 20, 2)
        ]


# --- fatal: no usable header --------------------------------------------------------------


def _format_error(path: Path) -> SessionFormatError:
    with pytest.raises(SessionFormatError) as info:
        load_entries(path)
    with pytest.raises(SessionFormatError):
        Session.open(path)
    return info.value


class TestFatalFormatErrors:
    @pytest.mark.parametrize(
        "content",
        [b"", b"\n", b"\n\n   \n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\r\n\r\n"],
        ids=["empty", "newline", "blank-lines", "bom", "bom-crlf"],
    )
    def test_an_empty_file_is_a_format_error_naming_file_and_line(
        self, tmp_path: Path, content: bytes
    ) -> None:
        path = tmp_path / "empty.jsonl"
        path.write_bytes(content)
        error = _format_error(path)
        assert error.path == path
        assert error.line == 1
        assert str(path) in str(error)
        assert f"{path}:1" in str(error)
        assert "empty" in str(error)

    @pytest.mark.parametrize(
        ("first", "words"),
        [
            (b"not json at all", "not valid JSON"),
            (b'{"type":"session","id":"x"', "not valid JSON"),
            (b"null", "null"),
            (b"[1,2]", "array"),
            (b"42", "number"),
            (b'"session"', "string"),
            (b"{}", "no type"),
            (b'{"type":"message","id":"aaaaaaaa"}', "'message'"),
            (b'{"type":"session","version":3}', "'id'"),
            (b'{"type":"session","id":7}', "'id'"),
            (b'{"type":"session","version":"3","id":"x"}', "integer"),
            (b'{"type":"session","version":true,"id":"x"}', "integer"),
        ],
    )
    def test_an_invalid_header_is_a_format_error_naming_file_line_and_problem(
        self, tmp_path: Path, first: bytes, words: str
    ) -> None:
        path = write_session(tmp_path / "s.jsonl", [first, message(A, None, user("x"))])
        error = _format_error(path)
        assert error.line == 1
        assert str(error).startswith(f"{path}:1: ")
        assert words in str(error)

    def test_a_header_not_on_line_1_is_a_format_error_that_says_where_it_is(
        self, tmp_path: Path
    ) -> None:
        path = write_session(tmp_path / "s.jsonl", [message(A, None, user("x")), b"", header()])
        error = _format_error(path)
        assert error.line == 1
        assert f"{path}:1" in str(error)
        assert "line 3" in str(error)
        assert "first line" in str(error)

    def test_the_line_number_of_an_invalid_header_after_blank_lines_is_physical(
        self, tmp_path: Path
    ) -> None:
        path = write_session(tmp_path / "s.jsonl", [b"", b"", b"{nope"])
        error = _format_error(path)
        assert error.line == 3
        assert f"{path}:3" in str(error)

    def test_a_missing_file_is_a_format_error_naming_it(self, tmp_path: Path) -> None:
        path = tmp_path / "absent.jsonl"
        error = _format_error(path)
        assert str(path) in str(error)
        assert not path.exists()

    def test_a_directory_is_a_format_error_naming_it(self, tmp_path: Path) -> None:
        error = _format_error(tmp_path)
        assert str(tmp_path) in str(error)

    @pytest.mark.parametrize(
        "extra",
        [{"cwd": 5}, {"timestamp": None}, {"parentSession": 7}, {"version": 1, "branchedFrom": 7}],
        ids=["cwd", "timestamp", "parentSession", "branchedFrom"],
    )
    def test_a_header_with_wrongly_typed_fields_is_refused_or_readable(
        self, tmp_path: Path, extra: dict[str, Any]
    ) -> None:
        path = write_session(tmp_path / "s.jsonl", [{**header(), **extra}])
        try:
            session = Session.open(path)
        except SessionFormatError as exc:
            assert f"{path}:1" in str(exc)
            return
        # Opened: then every read of the header works (no decoder errors leak out).
        session.header  # noqa: B018
        session.header_data  # noqa: B018
        session.cwd  # noqa: B018

    def test_format_errors_are_library_errors(self, tmp_path: Path) -> None:
        path = tmp_path / "empty.jsonl"
        path.write_bytes(b"")
        with pytest.raises(JsonlSessionError):
            Session.open(path)


# --- lines the envelope decoder accepts but the body decoder may not -----------------------


class TestLinesThatAreHardToDecode:
    """Valid (or nearly valid) JSON at the edges of the decoders. Reading must never
    raise anything but the library's own errors; a line it cannot use is a problem."""

    def open_and_use(self, path: Path) -> Session:
        session = Session.open(path)
        session.problems  # noqa: B018
        list(iter_nodes(session.tree()))
        for stored in session.entries:
            with suppress(SessionTreeError):
                session.build_context(stored.id)
        session.build_context()
        return session

    def test_a_deeply_nested_but_valid_line_does_not_crash_the_reader(self, tmp_path: Path) -> None:
        depth = 5000
        deep = (
            b'{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa",'
            b'"timestamp":"2024-05-01T12:00:01.000Z",'
            b'"message":{"role":"user","content":"deep","timestamp":1},"x":'
            + b"[" * depth
            + b"]" * depth
            + b"}"
        )
        path = write_session(
            tmp_path / "s.jsonl",
            [header(), message(A, None, user("one")), deep, message(C, A, user("three"))],
        )
        session = self.open_and_use(path)
        ids = [e.id for e in session.entries]
        assert A in ids
        assert C in ids
        assert B in ids or any(p.line == 3 for p in session.problems)

    @pytest.mark.parametrize(
        "value", [b"1e400", b"-1e400", b"9" * 400], ids=["inf", "-inf", "huge-int"]
    )
    def test_a_number_too_large_for_a_double_does_not_crash_context_building(
        self, tmp_path: Path, value: bytes
    ) -> None:
        line = dumps(message(B, A, user("two")))[:-1] + b',"n":' + value + b"}"
        path = write_session(tmp_path / "s.jsonl", [header(), message(A, None, user("one")), line])
        session = self.open_and_use(path)
        assert B in [e.id for e in session.entries] or any(p.line == 3 for p in session.problems)

    def test_an_overflowing_number_in_a_label_does_not_crash_opening(self, tmp_path: Path) -> None:
        label = dumps(entry("label", B, A, targetId=A, label="x"))[:-1] + b',"n":1e400}'
        path = write_session(tmp_path / "s.jsonl", [header(), message(A, None, user("one")), label])
        self.open_and_use(path)

    def test_an_encoded_surrogate_does_not_crash_context_building(self, tmp_path: Path) -> None:
        # UTF-8 bytes of U+D800: not valid UTF-8; one decoder accepts it, another not.
        line = dumps(message(B, A, user("two")))[:-1] + b',"s":"\xed\xa0\x80"}'
        path = write_session(tmp_path / "s.jsonl", [header(), message(A, None, user("one")), line])
        session = self.open_and_use(path)
        assert B in [e.id for e in session.entries] or any(p.line == 3 for p in session.problems)

    def test_an_invalid_utf8_byte_in_an_envelope_field_is_reported_not_raised(
        self, tmp_path: Path
    ) -> None:
        line = dumps(message(B, A, user("two"))).replace(b'"bbbbbbbb"', b'"bbb\x80bbbb"')
        path = write_session(
            tmp_path / "s.jsonl",
            [header(), message(A, None, user("one")), line, message(C, A, user("three"))],
        )
        # Node reads the file as UTF-8 with U+FFFD for bad bytes, so pi keeps this
        # entry; we keep it the same way and report the damage.
        session = self.open_and_use(path)
        assert [e.id for e in session.entries] == [A, "bbb\ufffdbbbb", C]
        assert [(p.kind, p.line) for p in session.problems] == [("invalid-utf8", 3)]

    def test_a_header_with_bytes_that_are_not_utf8_is_read_and_reported(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "s.jsonl"
        path.write_bytes(b'{"type":"session","version":3,"id":"\xff","cwd":"/"}\n')
        session = Session.open(path)
        assert session.id == "\ufffd"
        assert [(p.kind, p.line) for p in session.problems] == [("invalid-utf8", 1)]

    def test_an_invalid_utf8_byte_in_a_message_body_does_not_crash_context_building(
        self, tmp_path: Path
    ) -> None:
        line = dumps(message(B, A, user("tw\x00o"))).replace(b"\\u0000", b"\x80")
        assert b"\x80" in line
        path = write_session(tmp_path / "s.jsonl", [header(), message(A, None, user("one")), line])
        session = self.open_and_use(path)
        assert B in [e.id for e in session.entries] or any(p.line == 3 for p in session.problems)

    def test_a_message_that_is_not_an_object_contributes_nothing(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "s.jsonl",
            [
                header(),
                message(A, None, user("one")),
                entry("message", B, A, message="just text"),
                entry("message", C, B, message=None),
            ],
        )
        session = self.open_and_use(path)
        assert [m["content"] for m in session.build_context().messages] == ["one"]


# --- no read path writes ---------------------------------------------------------------------


def _file_kinds() -> dict[str, list[dict[str, Any] | bytes]]:
    v3 = [
        header(),
        message(A, None, user("one")),
        message(B, A, assistant("two")),
        entry("label", C, B, targetId=A, label="start"),
        marker(D, A),
    ]
    v1 = [
        header(version=None, branchedFrom="/old.jsonl"),
        {"type": "message", "timestamp": ts(1), "message": user("one")},
        {"type": "message", "timestamp": ts(2), "message": assistant("two")},
        {
            "type": "compaction",
            "timestamp": ts(3),
            "summary": "s",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 5,
        },
    ]
    v2 = [
        header(version=2),
        message(
            A,
            None,
            {
                "role": "hookMessage",
                "customType": "h",
                "content": "x",
                "display": True,
                "timestamp": BASE_MS,
            },
        ),
    ]
    return {
        "v3": v3,
        "v1": v1,
        "v2-hook-message": v2,
        "header-without-version": [header(version=None), *v3[1:]],
        "v4": [header(version=4), *v3[1:], entry("hologram", "eeeeeeee", B)],
        "bad-lines": [header(), b"null", message(A, None, user("one")), b"{oops", b"[]"],
        "duplicates": [header(), message(A, None, user("1")), message(A, None, user("2"))],
        "cycle": [header(), message(A, B, user("1")), message(B, A, user("2"))],
        "missing-parent": [header(), message(A, "ffffffff", user("1"))],
        "header-only": [header()],
    }


class TestReadingNeverWrites:
    def read_everything(self, path: Path) -> None:
        loaded = load_entries(path)
        session = Session.open(path)
        session.problems  # noqa: B018
        session.entries  # noqa: B018
        session.labels  # noqa: B018
        session.name  # noqa: B018
        session.header  # noqa: B018
        session.roots()
        list(iter_nodes(session.tree()))
        list(iter_nodes(session.tree(fold=False)))
        for stored in loaded.entries:
            stored.data()
            stored.typed()
            with suppress(SessionTreeError):
                session.branch_path(stored.id)
                session.build_context(stored.id)
        with suppress(SessionTreeError):
            session.build_context()

    @pytest.mark.parametrize("kind", list(_file_kinds()))
    @pytest.mark.parametrize(
        "options",
        [{}, {"eol": b"\r\n"}, {"final_eol": False}],
        ids=["lf", "crlf", "no-final-newline"],
    )
    def test_no_read_path_modifies_the_file(
        self, tmp_path: Path, kind: str, options: dict[str, Any]
    ) -> None:
        path = write_session(tmp_path / "s.jsonl", _file_kinds()[kind], **options)
        before = snapshot(path)
        with time_limit(20):
            self.read_everything(path)
        before.assert_unchanged()

    def test_a_torn_tail_is_not_sealed_by_reading(self, tmp_path: Path) -> None:
        path = write_session(
            tmp_path / "s.jsonl",
            [header(), message(A, None, user("one")), b'{"type":"mes'],
            final_eol=False,
        )
        before = snapshot(path)
        self.read_everything(path)
        before.assert_unchanged()

    def test_a_read_only_file_can_be_read(self, tmp_path: Path) -> None:
        path = write_session(tmp_path / "s.jsonl", _file_kinds()["v1"])
        path.chmod(0o400)
        try:
            before = snapshot(path)
            self.read_everything(path)
            before.assert_unchanged()
        finally:
            path.chmod(0o600)


# --- properties ----------------------------------------------------------------------------------


def _valid_file() -> bytes:
    lines: list[dict[str, Any] | bytes] = [header()]
    lines += [
        message(A, None, user("one")),
        entry("model_change", B, A, provider="openai", modelId="gpt"),
        message(C, B, assistant("two")),
        entry("compaction", D, C, summary="sum", firstKeptEntryId=C, tokensBefore=9),
        entry("label", "eeeeeeee", D, targetId=A, label="x"),
        marker("ffffffff", B),
        entry("custom_message", "11111111", "ffffffff", customType="t", content="c", display=False),
        entry("branch_summary", "22222222", A, fromId=C, summary="went"),
    ]
    return file_bytes(lines)


_damage = st.one_of(
    st.tuples(st.just("truncate"), st.integers(0, 10_000)),
    st.tuples(st.just("flip"), st.integers(0, 10_000), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.integers(0, 10_000), st.binary(min_size=1, max_size=8)),
    st.tuples(
        st.just("insert"),
        st.integers(0, 10_000),
        st.sampled_from([b"\n", b"\r\n", b"{", b"}", b'"', b"\xef\xbb\xbf", b"null\n"]),
    ),
    st.tuples(st.just("delete"), st.integers(0, 10_000), st.integers(1, 40)),
    st.tuples(st.just("swap-lines"), st.integers(0, 50), st.integers(0, 50)),
)


def _apply(data: bytes, damage: tuple[Any, ...]) -> bytes:
    kind = damage[0]
    if kind == "swap-lines":
        lines = data.split(b"\n")
        i, j = damage[1] % len(lines), damage[2] % len(lines)
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    pos = damage[1] % (len(data) + 1)
    if kind == "truncate":
        return data[:pos]
    if kind == "flip":
        return data[:pos] + bytes([damage[2]]) + data[pos + 1 :] if pos < len(data) else data
    if kind == "insert":
        return data[:pos] + damage[2] + data[pos:]
    return data[:pos] + data[pos + damage[2] :]


class TestRandomDamage:
    @settings(
        max_examples=300,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(damages=st.lists(_damage, min_size=1, max_size=6))
    def test_damage_raises_nothing_but_library_errors_and_never_hangs_or_writes(
        self, tmp_path: Path, damages: list[tuple[Any, ...]]
    ) -> None:
        data = _valid_file()
        for damage in damages:
            data = _apply(data, damage)
        path = tmp_path / "damaged.jsonl"
        path.write_bytes(data)
        before: Snapshot = snapshot(path)
        with time_limit(10):
            try:
                loaded = load_entries(path)
            except SessionFormatError as exc:
                assert str(path) in str(exc)
                with pytest.raises(SessionFormatError):
                    Session.open(path)
                before.assert_unchanged()
                return
            session = Session.open(path)
            assert [e.id for e in session.entries] == [e.id for e in loaded.entries]
            for problem in session.problems:
                assert problem.line is None or 1 <= problem.line <= data.count(b"\n") + 1
            list(iter_nodes(session.tree()))
            session.roots()
            for stored in session.entries:
                assert data[stored.offset : stored.offset + len(stored.raw)] == stored.raw or (
                    stored.migrated
                )
                with suppress(SessionTreeError):
                    session.build_context(stored.id)
            with suppress(SessionTreeError):
                session.build_context()
        before.assert_unchanged()

    @settings(
        max_examples=200,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(data=st.binary(max_size=300))
    def test_arbitrary_bytes_are_a_session_or_a_format_error(
        self, tmp_path: Path, data: bytes
    ) -> None:
        path = tmp_path / "noise.jsonl"
        path.write_bytes(data)
        before = snapshot(path)
        with time_limit(10):
            try:
                session = Session.open(path)
            except SessionFormatError as exc:
                assert str(path) in str(exc)
            else:
                session.problems  # noqa: B018
                session.build_context()
        before.assert_unchanged()

    @settings(
        max_examples=100,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        texts=st.lists(st.text(max_size=20), min_size=1, max_size=5),
        eol=st.sampled_from([b"\n", b"\r\n"]),
        blanks=st.lists(st.integers(0, 6), max_size=4),
    )
    def test_every_entry_keeps_its_exact_bytes_whatever_the_layout(
        self, tmp_path: Path, texts: list[str], eol: bytes, blanks: list[int]
    ) -> None:
        lines: list[dict[str, Any] | bytes] = [header()]
        parent = None
        for i, text in enumerate(texts):
            lines.append(message(f"{i:08x}", parent, user(text), odd=text))
            parent = f"{i:08x}"
        for position in blanks:
            lines.insert(1 + position % len(lines), b"")
        path = tmp_path / "layout.jsonl"
        path.write_bytes(file_bytes(lines, eol=eol))
        session = Session.open(path)
        assert session.problems == []
        expected = [dumps(line) for line in lines if isinstance(line, dict)][1:]
        assert [e.raw for e in session.entries] == expected
        assert [m["content"] for m in session.build_context().messages] == texts
        data = path.read_bytes()
        for stored in session.entries:
            assert data[stored.offset : stored.offset + len(stored.raw)] == stored.raw
            assert stored.data() == msgspec.json.decode(stored.raw)


class TestLinesThatDoNotHoldOneEntryEach:
    def test_two_entries_on_a_line_and_one_over_two_lines_are_not_paired_with_wrong_lines(
        self, tmp_path: Path
    ) -> None:
        a, b, c = (message(i, p, user(i)) for i, p in (("a", None), ("b", "a"), ("c", "b")))
        d = message("d", "c", user("d"))
        split = dumps(c).replace(b'"id":', b'\n"id":')  # one entry written over two lines
        path = write_session(tmp_path / "s.jsonl", [header(), dumps(a) + dumps(b), split, d])
        loaded = load_entries(path, cache=False)
        for found in loaded.entries:
            msgspec.json.decode(found.raw)  # each entry is a whole line of its own
        assert [e.id for e in loaded.entries] == ["d"]
        kinds = [(p.kind, p.line) for p in loaded.problems]
        assert kinds == [("fused-line", 2), ("invalid-json", 3), ("invalid-json", 4)]
