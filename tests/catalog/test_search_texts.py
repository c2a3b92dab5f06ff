"""What search reads of a line (catalog/search_texts.py): a user's or an assistant's
message is read through msgspec structs that skip what search does not read; whatever
the line holds, the texts are the ones reading it whole gives."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers_large import generate
from locations import FIXTURES

from jsonl_session.catalog import search_texts
from jsonl_session.catalog.search import search_sessions

# values two JSON readers could read apart, or that are not what a text must be
ODD: list[Any] = [None, 7, 10**20, 1.5, True, "", [], {}, ["x"], {"text": "x"}, "\ud800"]
PIECES = ["plain", "caf\u00e9", "\U0001f680", "\\n", '"q"', "\n\t", " ", "K\u212a", "ZEBRACORN"]


def text(rng: random.Random) -> Any:
    if rng.random() < 0.15:
        return rng.choice(ODD)
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6)))


def content(rng: random.Random) -> Any:
    choice = rng.random()
    if choice < 0.2:
        return text(rng)
    if choice < 0.3:
        return rng.choice(ODD)
    blocks: list[Any] = []
    for _ in range(rng.randint(0, 4)):
        if rng.random() < 0.1:
            blocks.append(rng.choice(ODD))
            continue
        block: dict[str, Any] = {"type": rng.choice(["text", "text", "thinking", "image", 3])}
        if rng.random() < 0.9:
            block["text"] = text(rng)
        blocks.append(block)
    return blocks


def line(rng: random.Random, number: int) -> bytes:
    entry: dict[str, Any] = {
        "type": rng.choice(["message"] * 8 + ["session_info", "custom", 5]),
        "id": f"e{number}" if rng.random() < 0.9 else rng.choice(ODD),
        "parentId": None,
        "timestamp": "2025-06-01T08:00:00.000Z" if rng.random() < 0.9 else rng.choice(ODD),
    }
    if entry["type"] == "session_info":
        entry["name"] = text(rng)
    roles = ["user", "assistant", "toolResult", "custom", None, 5]
    message = {"role": rng.choice(roles), "content": content(rng)}
    if rng.random() < 0.1:
        del message["content"]
    entry["message"] = message if rng.random() < 0.95 else rng.choice(ODD)
    choice = rng.random()
    if choice < 0.6:
        raw = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    elif choice < 0.85:
        raw = json.dumps(entry)  # spaces, \u escapes
    else:  # a key twice: the last one counts
        raw = json.dumps(entry)[:-1] + ', "message": ' + json.dumps({"role": "user"}) + "}"
    data = raw.encode("utf-8", "surrogatepass")  # a lone surrogate: bytes not UTF-8
    if rng.random() < 0.04:
        data = data[:-1] + b',"note":"\xff"}'  # not UTF-8 where search does not read
    if rng.random() < 0.03:
        data = data.replace(b'"plain', b'"pl\xffain', 1)  # ... or where it reads
    if rng.random() < 0.02:
        data = data[:-1]  # not JSON
    return data


def region(seed: int, lines: int = 300) -> bytes:
    rng = random.Random(seed)
    return b"\n".join(line(rng, number) for number in range(lines)) + b"\n"


def read_every_line_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_texts, "_message_text", lambda raw, number: search_texts._WHOLE)


def texts_of(data: bytes, needle: bytes | None = None) -> list[tuple[Any, ...]]:
    found = search_texts.searchable_texts(data, 0, 2, needle)
    return [(t.line, t.entry_id, t.timestamp, t.role, t.text) for t in found]


class TestReadingLessGivesTheSameTexts:
    @pytest.mark.parametrize("seed", range(8))
    def test_odd_lines_give_the_texts_reading_them_whole_gives(
        self, seed: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        data = region(seed)
        fast, filtered = texts_of(data), texts_of(data, b"zebracorn")
        assert fast  # (the generator makes lines with text)
        read_every_line_whole(monkeypatch)
        assert fast == texts_of(data)
        assert filtered == texts_of(data, b"zebracorn")

    def test_a_generated_session_is_read_without_reading_a_line_whole(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        data = generate(tmp_path / "gen.jsonl", entries=600).read_bytes()
        body = data[data.index(b"\n") + 1 :]
        whole: list[bytes] = []
        decode = search_texts.decode_envelope

        def counted(raw: bytes) -> Any:
            whole.append(raw)
            return decode(raw)

        monkeypatch.setattr(search_texts, "decode_envelope", counted)
        fast = texts_of(body)
        assert len(fast) > 100
        assert all(b'"session_info"' in raw for raw in whole)  # only names are read whole
        read_every_line_whole(monkeypatch)
        assert fast == texts_of(body)

    def test_every_fixture_is_searched_the_same_either_way(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        folder = tmp_path / "sessions"
        folder.mkdir()
        for fixture in sorted(FIXTURES.glob("*.jsonl")):
            shutil.copy(fixture, folder / fixture.name)
        files = sorted(folder.iterdir())

        def hits() -> list[dict[str, Any]]:
            found = []
            for query in ("the", "a", "é", "session"):
                for cache in (False, True):
                    hits = search_sessions(query, files, cache=cache)
                    found += [hit.to_dict() for hit in hits]
            return found

        fast = hits()
        assert fast
        read_every_line_whole(monkeypatch)
        monkeypatch.setenv("JSONL_SESSION_CACHE_DIR", str(tmp_path / "other-cache"))
        assert fast == hits()


# pieces of a line's text: the needle in several cases, at the ends and cut in two;
# characters that are not ASCII (none lower-cases to ASCII); a CR and blanks
LINE_PIECES = ["zebracorn", "ZebraCorn", "zebra", "corn", "x", " ", "\t", "caf\u00e9", "\U0001f680"]
# what makes a line's bytes differ from its text (an escape) or lower-case to ASCII
HIDING = ["\\u0041", "\\/", "\u212a", "\u0130", "\\\\u0041"]


def lines_region(rng: random.Random, *, hiding: bool) -> bytes:
    lines = []
    for _ in range(rng.randint(0, 40)):
        pieces = [rng.choice(LINE_PIECES) for _ in range(rng.randint(0, 5))]
        if hiding and rng.random() < 0.1:
            pieces.insert(rng.randint(0, len(pieces)), rng.choice(HIDING))
        lines.append("".join(pieces) + rng.choice(["", "", "\r"]))
    data = "\n".join(lines).encode()
    return data + (b"\n" if rng.random() < 0.7 else b"")


def lines_holding(data: bytes, needle: bytes, base: int, first: int) -> list[Any]:
    """The lines `_may_hold` keeps, one line at a time: what searching them must give."""
    lines = search_texts.split_lines(data, base_offset=base, first_number=first)
    return [line for line in lines if search_texts._may_hold(line.raw, needle)]


class TestLinesThatMayHoldTheNeedle:
    @pytest.mark.parametrize("window", [1, 7, 64, 1 << 20])
    @pytest.mark.parametrize("hiding", [False, True])
    def test_the_lines_found_a_window_at_a_time_are_those_each_line_gives(
        self, window: int, hiding: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(search_texts, "_WINDOW_BYTES", window)
        rng = random.Random(window * 2 + hiding)
        found = 0
        for _ in range(300):
            data = lines_region(rng, hiding=hiding)
            for needle in (b"zebracorn", b"zebra", b"a", b"e corn", b" ", b""):
                base, first = rng.randint(0, 99), rng.randint(1, 9)
                expected = lines_holding(data, needle, base, first)
                got = search_texts._lines_that_may_hold(data, needle, base, first)
                assert got == expected, (data, needle)
                found += len(got)
        assert found > 1000  # (the needles are found in many lines)

    def test_a_line_that_hides_the_needle_is_searched(self) -> None:
        # its bytes do not hold "zebracorn" in any case, its text does
        for hidden in ("\\u007aebracorn", "zebracor\\u006e"):
            data = b'{"a":1}\n' + f'{{"text":"{hidden}"}}'.encode() + b"\n"
            assert [
                line.number for line in search_texts._lines_that_may_hold(data, b"zebracorn", 0, 1)
            ] == [2]
        kelvin = 'x\n{"text":"\u212aey"}\n'.encode()  # KELVIN SIGN lower-cases to "k"
        assert [
            line.number for line in search_texts._lines_that_may_hold(kelvin, b"key", 0, 1)
        ] == [2]
