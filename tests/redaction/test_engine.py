"""The engine's shortcuts held to the long way round: the rules the gates pick for a
short text (one scan of it) find what running every rule on it finds."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from locations import ROOT

from jsonl_session.redaction import context, engine, finding
from jsonl_session.redaction.engine import Redactor
from jsonl_session.redaction.finding import _RULES, _merged, find_secrets
from jsonl_session.redaction.hay import Hay, Probe
from jsonl_session.redaction.shapes import Span

sys.path.insert(0, str(ROOT / "benchmarks"))
from redaction_corpus import lookalike_cases, secret_cases

CASES = [case.text for case in secret_cases() + lookalike_cases()]
# What the gates look for, cut short or spaced out, so that some texts come close to a
# gate without matching it.
PIECES = [
    "password", "Passwd", "pass", "TOKEN", "token", "secret", "api_key", "credentials",
    "auth", "Sig", "signature", "authorization", "Authorization: ", "Bearer ", "bearer",
    "cookie", "Cookie: ", "-b ", "-b", "--", "--password ", "--api-key ", "mysql -p",
    "mariadb", "curl -u ", "sshpass -p ", "docker login -p ", "login ", "config set ",
    "git config --global ", "configure set ", "://", "://u:", "@host", "1//0",
    "hooks.slack.com/", "discord.com/api/webhooks/", "whsec_", "glc_", "sntrys_", "ghp_",
    "AKIA", "sk-", ":AA", "-----BEGIN RSA PRIVATE KEY-----\n", "private key", "=", ": ",
    " = ", "=>", ":=", '"', "'", "\\", "\n", " ", "\t", "\x0b", "\x0c", "?", "&", ";", "é",
    "\U0001f680",
    "Q8s0dK2LmZ7xW4cV9bN1", "a1B2c3D4e5F6g7H8", "1234567890",
]  # fmt: skip


def every_rule_finds(text: str) -> list[Span]:
    """What find_secrets would give if every rule ran on the text."""
    hay = Hay(text)
    found = [span for rule in _RULES for span in rule.find(hay)]
    return _merged(found) if found else found


@contextlib.contextmanager
def gates_scanned_by(scan: str) -> Iterator[None]:
    """find_secrets picking a short text's rules by RE2's scan of the gates (skipped
    without google-re2) or by the one `re` pattern of them (as without it)."""
    kept = finding._SET_SCAN
    if scan == "re2" and kept is None:
        pytest.skip("google-re2 is not installed")
    finding._SET_SCAN = kept if scan == "re2" else None
    finding._TINY_CLEAN.clear()  # (short texts found clean the other way are asked again)
    try:
        yield
    finally:
        finding._SET_SCAN = kept


@pytest.mark.parametrize("scan", ["re2", "re"])
class TestTheGates:
    def test_every_case_of_the_corpus_is_found_as_every_rule_finds_it(self, scan: str) -> None:
        with gates_scanned_by(scan):
            for text in CASES:
                assert find_secrets(text) == every_rule_finds(text), text

    def test_cases_glued_together_are_found_as_every_rule_finds_them(self, scan: str) -> None:
        with gates_scanned_by(scan):
            for first, second in zip(CASES, CASES[1:] + CASES[:1], strict=True):
                for text in (first + second, f"{first} {second}", f"{first}\n{second}"):
                    assert find_secrets(text) == every_rule_finds(text), text

    @settings(max_examples=500, deadline=None)
    @given(st.lists(st.sampled_from(PIECES), max_size=30))
    def test_texts_near_the_gates_are_searched_as_every_rule_searches_them(
        self, scan: str, parts: list[str]
    ) -> None:
        text = "".join(parts)
        with gates_scanned_by(scan):
            assert find_secrets(text) == every_rule_finds(text)


class TestTheMemoryOfShortTexts:
    def test_a_short_text_is_found_alike_the_first_time_and_after(self) -> None:
        for text in (
            "anthropic/claude-sonnet-4-5",
            "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
        ):
            first = find_secrets(text)
            assert find_secrets(text) == first == every_rule_finds(text)

    def test_short_cases_of_the_corpus_are_found_alike_twice(self) -> None:
        short = [text for text in CASES if len(text) <= 64]
        assert short
        assert [find_secrets(text) for text in short] == [find_secrets(text) for text in short]
        assert [find_secrets(text) for text in short] == [every_rule_finds(text) for text in short]


class TestTheRebuilding:
    @pytest.mark.parametrize("piece", [1, 5, 13, 1 << 20])
    def test_a_text_rebuilt_in_short_pieces_is_the_text_with_its_secrets_replaced(
        self, piece: int, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(engine, "_PIECE", piece)
        secret = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
        filler = "some words → and an emoji \U0001f680 between them; " * 9
        for text in (f"{secret}{filler}", f"{filler}{secret}", f"{filler}{secret}\n{filler}"):
            spans = find_secrets(text)
            expected, at = "", 0
            for start, end, kind, _ in spans:
                expected += text[at:start] + f"[REDACTED:{kind}]"
                at = end
            assert spans and Redactor().text(text) == expected + text[at:]


def probes_found_by_a_group() -> list[Probe]:
    """Every probe of the rules whose places a group's scan gives (``via``)."""
    probes = [probe for _, probe in context._PAIRS]
    probes += [value for value in vars(context).values() if isinstance(value, Probe)]
    return list({id(probe): probe for probe in probes if probe.via is not None}.values())


# Around the letters the groups take: the probes' words cut short, glued, cased.
NEAR_THE_GROUPS = [
    "token", "Token", "tok", "en", "key", "KEY", "ey", "cookie", "coo", "ie", "k", "sig",
    "signature", "si", "config", "configure", "confi", "fi", "git", "it", "g", "set ",
    "set\t", " ", "\t", "=", ":", "'", '"', "\\", "-b", "\n", "é",
]  # fmt: skip


class TestProbesFoundTogether:
    def test_there_are_probes_found_by_a_group(self) -> None:
        assert {probe.word for probe in probes_found_by_a_group()} >= {"token", "sig", "cookie"}

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from(NEAR_THE_GROUPS), max_size=40), st.booleans())
    def test_a_group_finds_each_probe_where_the_probe_alone_would(
        self, parts: list[str], long: bool
    ) -> None:
        text = "".join(parts) * (2_000 if long else 1)  # long: past the short path
        for probe in probes_found_by_a_group():
            alone = Probe(probe.word, probe.ahead, folded=probe.folded)
            assert list(Hay(text).hits(probe)) == list(Hay(text).hits(alone)), probe.word


class TestValuesOfHugeTexts:
    SECRET = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"

    def searched(self, monkeypatch: pytest.MonkeyPatch) -> list[int]:
        lengths: list[int] = []
        real = finding.find_secrets

        def spy(text: str, helpers: object = None) -> list[Span]:
            lengths.append(len(text))
            return real(text)

        monkeypatch.setattr(finding, "find_secrets", spy)
        return lengths

    def test_a_huge_text_in_a_value_is_searched_once(self, monkeypatch: pytest.MonkeyPatch) -> None:
        searched = self.searched(monkeypatch)
        huge = "a line of a long log\n" * 60_000 + self.SECRET
        value = {"type": "text", "text": huge, "more": ["short", {"note": "fine"}]}
        redactor = Redactor()
        redacted = redactor.value(value)
        assert redacted["text"] == huge.replace(self.SECRET, "[REDACTED:github-token]")
        assert redacted["more"] == value["more"] and redactor.summary() == {"github-token": 1}
        assert [length for length in searched if length >= len(huge)] == [len(huge)]

    def test_a_huge_value_without_a_secret_is_given_back_itself(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        value = {"text": "nothing to hide here\n" * 60_000, "list": ["a", "b"]}
        redactor = Redactor()
        assert redactor.value(value) is value and redactor.total == 0


def test_the_engine_skips_the_texts_finding_would_skip() -> None:
    # (the engine answers a text this short without loading the rules)
    assert engine.SHORTEST == finding.SHORTEST
    assert len("pwd=ab1") < engine.SHORTEST and Redactor().text("pwd=ab1") == "pwd=ab1"
    assert Redactor().text("password=hunter2secret") == "password=[REDACTED:password]"
