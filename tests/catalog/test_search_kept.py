"""The record a search keeps of a file's texts (catalog/search_kept.py): read back as
it was kept, never mistaken when damaged, and judged on its bytes without missing a
text that holds the query."""

from __future__ import annotations

import random

import pytest

from jsonl_session.catalog.search import Wanted, _snippet
from jsonl_session.catalog.search_kept import (
    kept_search_texts,
    kept_texts,
    may_hold,
    record_of,
)
from jsonl_session.catalog.search_texts import SearchText

# İ lower-cases to "i̇" and the Kelvin sign to "k"; ß, É and Σ to letters of their own
ALPHABET = ["a", "B", "i", "I", "k", "K", "z", "Z", "q", "\u0130", "\u212a", "ß", "É", "Σ", " "]


def random_texts(rng: random.Random, count: int, alphabet: list[str]) -> list[SearchText]:
    return [
        SearchText(
            rng.randrange(1, 10_000),
            rng.choice([None, f"e{n}"]),
            rng.choice([None, "2025-07-25T23:20:36.369Z"]),
            rng.choice(["user", "assistant", "name", "toolResult"]),
            "".join(rng.choices(alphabet, k=rng.randint(0, 9))),
        )
        for n in range(count)
    ]


class TestARecord:
    def test_gives_back_the_texts_it_was_made_of(self) -> None:
        rng = random.Random(3)
        for count in (0, 1, 2, 7, 40):
            texts = random_texts(rng, count, [*ALPHABET, "é", "🚀", "\n", '"', "\\"])
            record = record_of("s1", texts, 77)
            assert kept_search_texts(record) == ("s1", texts, 77)
            session_id, places, bodies = kept_texts(record) or (None, [], [])
            assert session_id == "s1"
            assert [text.text for text in texts] == bodies
            assert [(t.line, t.entry_id, t.timestamp, t.role) for t in texts] == [
                (p.line, p.entry_id, p.timestamp, p.role) for p in places
            ]

    def test_of_a_session_without_an_id_keeps_none(self) -> None:
        record = record_of(None, [], 2)
        assert kept_search_texts(record) == (None, [], 2)

    def test_cannot_keep_a_lone_surrogate(self) -> None:
        with pytest.raises(UnicodeEncodeError):
            record_of("s", [SearchText(2, None, None, "user", "half \ud800 of a pair")], 3)

    @pytest.mark.parametrize("cut", [0, 1, 4, 5, 9, -1, -3])
    def test_cut_short_reads_as_damaged(self, cut: int) -> None:
        texts = [
            SearchText(2, "e", None, "user", "hello there"),
            SearchText(3, None, None, "assistant", "hi"),
        ]
        record = record_of("s", texts, 4)
        assert kept_texts(record[:cut]) is None
        assert kept_search_texts(record[:cut]) is None

    def test_with_a_text_that_is_not_utf8_reads_as_damaged(self) -> None:
        record = record_of("s", [SearchText(2, None, None, "user", "abcdef")], 3)
        damaged = record.replace(b"abcdef", b"ab\xff\xfeef")
        assert kept_texts(damaged) is None
        assert kept_search_texts(damaged) is None

    def test_with_more_places_than_texts_reads_as_damaged(self) -> None:
        one, two = (SearchText(n, None, None, "user", f"text {n}") for n in (2, 3))
        both, alone = record_of("s", [one, two], 4), record_of("s", [one], 4)
        texts_at = 5 + int.from_bytes(both[1:5], "little")
        alone_at = 5 + int.from_bytes(alone[1:5], "little")
        mixed = both[:texts_at] + alone[alone_at:]  # two places, one text
        assert kept_texts(mixed) is None
        assert kept_search_texts(mixed) is None

    def test_of_random_bytes_or_another_layout_reads_as_damaged(self) -> None:
        rng = random.Random(5)
        texts = [SearchText(2, "e", None, "user", "hello there")]
        record = record_of("s", texts, 4)
        assert kept_texts(b"\x02" + record[1:]) is None  # flags of no layout here
        assert kept_texts(record + b"\x90") is None  # something after its texts
        for size in (0, 3, 40, 4000):
            assert kept_texts(rng.randbytes(size)) is None


class TestJudgedOnItsBytes:
    """`may_hold` says False only of a record none of whose texts holds the query in
    its lower case: a warm search then decodes nothing of it."""

    @pytest.mark.parametrize("seed", range(4))
    def test_never_passes_over_a_text_that_holds_the_query(self, seed: int) -> None:
        rng = random.Random(seed)
        queries = ["zi", "ik", "k", "i", "bz", "qa", "ai", "z", "a b", "kz", " ", "bbq"]
        passed_over = 0
        for _ in range(600):
            texts = random_texts(rng, rng.randint(0, 4), ALPHABET)
            record = record_of("s", texts, 9)
            for query in queries:
                wanted = Wanted.of(query)
                assert wanted.ascii_needle is not None
                held = any(wanted.needle in text.text.lower() for text in texts)
                judged = may_hold(record, wanted.ascii_needle, wanted.ascii_probe)
                assert judged or not held, (query, texts)
                passed_over += not judged
        assert passed_over > 1000  # it does pass over records

    def test_a_text_with_a_letter_that_lower_cases_to_ascii_is_never_passed_over(self) -> None:
        for written, query in (("\u212aELVIN", "kelvin"), ("Z\u0130P", "zi")):
            text = SearchText(2, None, None, "user", written)
            wanted = Wanted.of(query)
            assert wanted.needle in text.text.lower()
            assert wanted.ascii_needle is not None
            assert may_hold(record_of("s", [text], 3), wanted.ascii_needle, wanted.ascii_probe)

    def test_a_query_across_two_texts_may_only_make_it_decoded(self) -> None:
        texts = [
            SearchText(2, None, None, "user", "zebra"),
            SearchText(3, None, None, "user", "corn"),
        ]
        wanted = Wanted.of("zebracorn")
        assert wanted.ascii_needle is not None
        assert not may_hold(record_of("s", texts, 4), wanted.ascii_needle, wanted.ascii_probe)

    def test_the_head_is_not_looked_through(self) -> None:
        text = SearchText(2, "quokka-id", "quokka-time", "user", "a quiet day")
        wanted = Wanted.of("quokka")
        assert wanted.ascii_needle is not None
        assert not may_hold(record_of("quokka", [text], 3), wanted.ascii_needle, wanted.ascii_probe)


class TestSnippets:
    @pytest.mark.parametrize(
        "alphabet",
        [
            ["a", "b", " ", "  ", "\n", "\t", "\xa0", "\u2003", "\x1f", "é", "\u200b"],
            ["a", "b", "é", " "],  # printable: only spaces to join, at the ends too
        ],
    )
    def test_are_what_splitting_and_joining_the_white_space_gives(
        self, alphabet: list[str]
    ) -> None:
        rng = random.Random(11)
        for _ in range(5000):
            text = "".join(rng.choices(alphabet, k=rng.randint(0, 200)))
            at, length = rng.randint(0, len(text)), rng.randint(1, 5)
            start = max(0, at - 60)
            end = min(len(text), at + length + 60)
            middle = " ".join(text[start:end].split())
            expected = ("…" if start > 0 else "") + middle + ("…" if end < len(text) else "")
            assert _snippet(text, at, length) == expected


class TestADamagedRecord:
    def test_whose_texts_would_start_past_its_end_is_never_passed_over(self) -> None:
        record = record_of("s", [SearchText(2, None, None, "user", "nothing here")], 3)
        wanted = Wanted.of("quokka")
        assert wanted.ascii_needle is not None
        assert not may_hold(record, wanted.ascii_needle, wanted.ascii_probe)
        for damaged in (record[:5], record[:1] + b"\xff\xff\xff\x7f" + record[5:]):
            assert may_hold(damaged, wanted.ascii_needle, wanted.ascii_probe)  # decoded
        assert kept_texts(record[:5]) is None  # and then read as damaged
