"""search_sessions beyond messages and names: tool output (tools=True), a limit, and
ids for hits in version-1 files; with and without the cache."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from builders import assistant_calling, tool_call, tool_result, user_message
from locations import FIXTURES

from jsonl_session import Session, search_sessions

CACHE_OPTIONS = [None, False]


def with_tool_output(folder: Path) -> Session:
    session = Session.create(cwd="/p", session_dir=folder, fsync="never")
    session.append_message(user_message("run the tests"))
    session.append_message(assistant_calling(tool_call("c1", "bash", command="pytest")))
    output = [{"type": "text", "text": "FAILED test_parser.py::test_empty - KeyError: 'x'"}]
    session.append_message(tool_result("c1", "bash", output, timestamp=1_700_000_001_000))
    session.append_message(
        {
            "role": "bashExecution",
            "command": "grep -rn SENTINEL_COMMAND src",
            "output": "src/a.py:3: SENTINEL_OUTPUT",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1_700_000_002_000,
        }
    )
    return session


@pytest.mark.parametrize("cache", CACHE_OPTIONS, ids=["cached", "uncached"])
class TestToolOutput:
    def test_is_searched_only_when_asked(self, tmp_path: Path, cache: bool | None) -> None:
        session = with_tool_output(tmp_path)
        assert list(search_sessions("KeyError", [session.path], cache=cache)) == []
        (hit,) = search_sessions("KeyError", [session.path], tools=True, cache=cache)
        assert hit.role == "toolResult"
        assert session.get(hit.entry_id or "") is not None
        assert "test_parser.py::test_empty - KeyError" in hit.snippet

    def test_bash_executions_are_searched_by_command_and_output(
        self, tmp_path: Path, cache: bool | None
    ) -> None:
        path = with_tool_output(tmp_path).path
        for word in ("SENTINEL_COMMAND", "sentinel_output"):
            (hit,) = search_sessions(word, [path], tools=True, cache=cache)
            assert hit.role == "bashExecution"

    def test_hits_come_in_file_order_with_messages(
        self, tmp_path: Path, cache: bool | None
    ) -> None:
        path = with_tool_output(tmp_path).path
        hits = list(search_sessions("test", [path], tools=True, cache=cache))
        assert [hit.role for hit in hits] == ["user", "toolResult"]
        assert hits[0].line < hits[1].line

    def test_a_search_after_an_append_sees_the_new_output(
        self, tmp_path: Path, cache: bool | None
    ) -> None:
        session = with_tool_output(tmp_path)
        assert list(search_sessions("later", [session.path], tools=True, cache=cache)) == []
        done = [{"type": "text", "text": "later output"}]
        session.append_message(tool_result("c1", "bash", done, timestamp=1_700_000_003_000))
        (hit,) = search_sessions("later", [session.path], tools=True, cache=cache)
        assert hit.role == "toolResult"
        assert list(search_sessions("later", [session.path], cache=cache)) == []


@pytest.mark.parametrize("cache", CACHE_OPTIONS, ids=["cached", "uncached"])
class TestOldFiles:
    def test_a_v1_hit_has_the_id_reading_the_file_gives(
        self, tmp_path: Path, cache: bool | None
    ) -> None:
        path = tmp_path / "v1.jsonl"
        shutil.copyfile(FIXTURES / "v1.jsonl", path)
        hits = list(search_sessions("eslint", [path], cache=cache))
        session = Session.open(path)
        by_line = {entry.line: entry.id for entry in session.entries}
        assert hits and [hit.entry_id for hit in hits] == [by_line[hit.line] for hit in hits]
        assert path.read_bytes() == (FIXTURES / "v1.jsonl").read_bytes()  # never written


class TestTextBlocks:
    """A message's text blocks are searched joined by a space, as pi's listing joins
    them, whether the file is read or its kept texts are."""

    @pytest.mark.parametrize("query", ["token buffer", "n b", "token ", " buffer", "a token b"])
    def test_a_query_across_two_blocks_is_found_with_and_without_the_cache(
        self, tmp_path: Path, own_cache_folder: Path, query: str
    ) -> None:
        session = Session.create(cwd="/p", session_dir=tmp_path, fsync="never")
        blocks = [{"type": "text", "text": "a token"}, {"type": "text", "text": "buffer b"}]
        session.append_message({"role": "user", "content": blocks, "timestamp": 1})
        session.append_message(user_message("nothing to see"))
        found = [
            [hit.snippet for hit in search_sessions(query, [session.path], cache=cache)]
            for cache in (False, None, None)  # no cache; then kept, and from what was kept
        ]
        assert found == [["a token buffer b"]] * 3


class TestLimit:
    def test_at_most_that_many_in_file_order(self, tmp_path: Path) -> None:
        session = Session.create(cwd="/p", session_dir=tmp_path, fsync="never")
        for n in range(5):
            session.append_message(user_message(f"note {n}"))
        hits = search_sessions("note", [session.path], limit=2)
        assert [hit.snippet for hit in hits] == ["note 0", "note 1"]


class TestALetterProbe:
    """A text is lower-cased only when it holds the query's rarest letter in one case
    or the other (search._probe): the hits are those of lower-casing every text."""

    def test_the_probe_skips_only_texts_that_cannot_hold_the_query(self) -> None:
        from jsonl_session.catalog.search import Wanted, _hits
        from jsonl_session.catalog.search_texts import SearchText

        # İ lower-cases to "i̇" and the Kelvin sign to "k": the probe never takes them
        alphabet = ["a", "B", "i", "I", "k", "K", "z", "Z", "q", "\u0130", "\u212a", "ß", " ", "é"]
        rng = random.Random(7)
        texts = [
            SearchText(n, "e", None, "user", "".join(rng.choices(alphabet, k=rng.randint(0, 12))))
            for n in range(3000)
        ]
        for query in ["zi", "IK", "k", "i", "bz", "QA", "ai", "K", "é", "ßz", "\u0130", " b"]:
            found = [hit.line for hit in _hits(Wanted.of(query), "s.jsonl", "s", texts)]
            needle = query.lower()
            expected = [text.line for text in texts if needle in text.text.lower()]
            assert found == expected, query
            assert expected, query  # each query is found somewhere
