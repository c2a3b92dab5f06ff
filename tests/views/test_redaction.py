"""Redaction held to the corpus of benchmarks/redaction_corpus.py: every secret type is
caught in every placement and every look-alike is left alone, as text, inside JSON
values and through each export format of a real session; code and prose that once
fooled the patterns stay as written; and the benchmark's measurement runs, small,
beside detect-secrets.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import assistant_message, text_block, tool_call_block
from builders import export_tool_result as tool_result
from hypothesis import given, settings
from hypothesis import strategies as st
from locations import ROOT

from jsonl_session import Redactor, Session, export_session, redact_text
from jsonl_session.redaction.finding import find_secrets

sys.path.insert(0, str(ROOT / "benchmarks"))
from redaction import judge_detector, judge_redactor, speed
from redaction_corpus import lookalike_cases, secret_cases
from redaction_forms import Case, leaked, pieces

SECRETS = secret_cases()
LOOKALIKES = lookalike_cases()


def case_id(case: Case) -> str:
    return f"{case.kind}/{case.placement}"


def seen(secret: str, text: str) -> bool:
    """`leaked`, looking at every fourth piece (any 15 characters of the secret left
    together in ``text`` still show): a large export is searched once per piece."""
    return any(piece in text for piece in pieces(secret)[::4])


def session_holding(folder: Path, cases: list[Case]) -> Session:
    """A session with each case where its placement puts it: prose in user and
    assistant messages, commands in bash tool calls, the rest in tool outputs."""
    session = Session.create(cwd="/work/project", session_dir=folder, fsync="never")
    for number, case in enumerate(cases):
        if case.placement == "bare":
            session.append_message({"role": "user", "content": case.text, "timestamp": 1})
        elif case.placement == "url":
            session.append_message(assistant_message(case.text))
        else:
            call = f"call{number}"
            command = case.text if case.placement == "shell" else f"cat config.{case.placement}"
            block = tool_call_block(call, "bash", {"command": command})
            session.append_message({**assistant_message(""), "content": [block]})
            output = "done" if case.placement == "shell" else case.text
            session.append_message(tool_result("bash", output, call))
    session.flush()
    return session


class TestTheCorpus:
    @pytest.mark.parametrize("case", SECRETS, ids=case_id)
    def test_every_secret_type_is_caught_in_every_placement(self, case: Case) -> None:
        assert case.secret is not None
        redacted = Redactor().text(case.text)
        assert not leaked(case.secret, redacted), redacted
        assert "[REDACTED:" in redacted

    @pytest.mark.parametrize("case", LOOKALIKES, ids=case_id)
    def test_every_lookalike_is_left_alone(self, case: Case) -> None:
        assert redact_text(case.text) == (case.text, {})

    @pytest.mark.parametrize("case", [c for c in SECRETS if c.placement == "json"], ids=case_id)
    def test_a_secret_in_a_json_document_is_caught_in_the_decoded_value_too(
        self, case: Case
    ) -> None:
        assert case.secret is not None
        redacted = Redactor().value(json.loads(case.text))
        assert not leaked(case.secret, json.dumps(redacted))

    def test_the_corpus_covers_sixty_types_or_more_in_several_placements(self) -> None:
        kinds = {case.kind for case in SECRETS}
        assert len(kinds) >= 60 and len(SECRETS) >= 4 * len(kinds)
        assert {case.placement for case in SECRETS} == {
            "bare", "shell", "json", "env", "url", "output"
        }  # fmt: skip
        for named in ("jwt", "jwt-in-cookie", "basic-auth-header", "pgp-private-key",
                      "aws-sts-secret-in-json", "aws-session-token", "redis-url-password",
                      "pgpassword-env", "mysql-p-flag", "password-flag", "curl-user-password",
                      "netrc-password", "slack-app-token", "slack-webhook",
                      "google-oauth-access-token", "npm-token", "sendgrid-key",
                      "azure-storage-account-key", "discord-bot-token", "twilio-api-key",
                      "supabase-service-role-key"):  # fmt: skip
            assert named in kinds, named


class TestExports:
    @pytest.mark.parametrize("fmt", ["markdown", "html", "json"])
    def test_no_secret_of_the_corpus_survives_an_export(self, tmp_path: Path, fmt: Any) -> None:
        session = session_holding(tmp_path, SECRETS)
        result = export_session(session, fmt, redact=True)
        leaks = [case_id(c) for c in SECRETS if c.secret and seen(c.secret, result.text)]
        assert leaks == []
        assert result.redacted >= len(SECRETS)

    @pytest.mark.parametrize("fmt", ["markdown", "html", "json"])
    def test_an_export_of_the_lookalikes_is_the_same_redacted_or_not(
        self, tmp_path: Path, fmt: Any
    ) -> None:
        session = session_holding(tmp_path, LOOKALIKES)
        redacted = export_session(session, fmt, redact=True)
        assert redacted.redactions == {}
        assert redacted.text == export_session(session, fmt).text


class TestCodeAndProse:
    @pytest.mark.parametrize(
        "text",
        [
            'styles = {Token:   "#c0c0c0", Comment: "#707070"}',
            "lexer(_stoken=_stoken, _token=_token)",
            "finish = {'eos_token': 'stop', 'length': 'length'}",
            'authorization = request.headers["Authorization"]',
            "def sign(private_key: Ed25519PrivateKey | None = None) -> bytes:",
            '_BEGIN = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n_END = b"-----END OPENSSH PRIVATE',
            "yield Finding(secret=match, line=number)",
            "Signature: 0f3a9b8c7d6e5f4a3b2c1d0e9f8a7b6c",
            '"passwd:dir", "passwd:gecos", "passwd:shell"',
            "give it with the --username and --password options instead",
            "the config token actual value was reset",
            "TOKEN_URL = 'https://oauth2.example.com/token'  # refresh_token grant",
            "https://user@example.com:8443/path and http://localhost:3000/?token=",
            "RUN pip install --no-cache-dir -r requirements.txt --index-url $INDEX",
        ],
    )
    def test_these_stay_as_written(self, text: str) -> None:
        assert redact_text(text) == (text, {})

    @pytest.mark.parametrize(
        ("text", "secret"),
        [
            ("PGPASSWORD=kT7v.Qm2x9 psql -h db", "kT7v.Qm2x9"),
            ("DB_PASSWORD=hunter22 ./run", "hunter22"),
            ('{"SecretAccessKey": "a/B+c1d2E3f4G5h6I7j8K9l0M1n2O3p4Q5r6S7t8"}', "a/B+c1d2E3f4"),
            ("redis://:Sup3rSecret@cache:6379/0", "Sup3rSecret"),
            ("curl -u deploy:Pa55word9 https://ci", "Pa55word9"),
        ],
    )
    def test_the_gaps_of_the_old_patterns_are_closed(self, text: str, secret: str) -> None:
        redacted, counts = redact_text(text)
        assert secret not in redacted and sum(counts.values()) == 1

    def test_overlapping_finds_are_one_secret_named_by_the_most_specific_rule(self) -> None:
        token = "ghp_" + "Q8s0dK2LmZ7xW4cV9bN1" * 2
        redacted, counts = redact_text(f'{{"github_token": "{token}"}}')
        assert redacted == '{"github_token": "[REDACTED:github-token]"}'
        assert counts == {"github-token": 1}

    def test_image_data_and_entry_structure_are_never_looked_at(self) -> None:
        key = "AKIA" + "Q7W2E9R4T6Y1U3I5"
        entry = {
            "type": "message",
            "id": key,
            "message": {"content": [{"type": "image", "data": key, "mimeType": "image/png"}]},
        }
        redactor = Redactor()
        assert redactor.value(entry) == entry and redactor.total == 0


class TestAnyText:
    @settings(max_examples=150, deadline=None)
    @given(
        st.lists(
            st.sampled_from([c.text for c in SECRETS[::7]] + [c.text for c in LOOKALIKES[::3]])
            | st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
            max_size=6,
        )
    )
    def test_redacting_never_fails_and_twice_is_once(self, parts: list[str]) -> None:
        text = " ".join(parts)
        once, _ = redact_text(text)
        assert redact_text(once) == (once, {})

    def test_text_that_lowercasing_would_shift_is_still_read(self) -> None:
        redacted, counts = redact_text(
            "İstanbul: PGPASSWORD=kT7v.Qm2x9 Authorization: Basic ZGV2OnB3"
        )
        assert "kT7v" not in redacted and "ZGV2OnB3" not in redacted
        assert counts == {"authorization": 1, "password": 1}


# Pieces of text the rules react to, in both cases, with token runs, separators and
# characters that make a str wide (é, an emoji).
_PIECES = [
    "password", "Passwd", "TOKEN", "secret", "api_key", "credentials", "auth", "Sig",
    "authorization", "Authorization: ", "Bearer ", "cookie", "Cookie: ", "-b ", "--password ",
    "mysql -p", "curl -u ", "sshpass -p ", "docker login -p ", "login ", "config set ",
    "git config --global ", "configure set ", "://u:", "@host", "1//0", "hooks.slack.com/",
    "discord.com/api/webhooks/", "whsec_", "glc_", "sntrys_", "ghp_", "AKIA", "sk-", ":AA",
    "-----BEGIN RSA PRIVATE KEY-----\n", "=", ": ", " = ", "=>", '"', "'", "\\", "\n", " ",
    "\t", "?", "&", ";", "é", "\U0001f680", "Q8s0dK2LmZ7xW4cV9bN1", "a1B2c3D4e5F6g7H8",
    "1234567890",
]  # fmt: skip


class TestTheSearch:
    def test_only_four_characters_fold_onto_ascii_letters(self) -> None:
        letters = re.compile("[a-z]", re.IGNORECASE)
        folding = [
            code
            for code in range(0x80, 0x110000)
            if not 0xD800 <= code <= 0xDFFF
            and (
                len(chr(code).lower()) != 1
                or chr(code).lower().isascii()
                or letters.match(chr(code)) is not None
            )
        ]
        assert folding == [0x130, 0x131, 0x17F, 0x212A]

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from(_PIECES), max_size=30))
    def test_the_search_of_the_ascii_image_finds_what_the_search_of_the_lowercased_text_does(
        self, parts: list[str]
    ) -> None:
        # a dotless i on a line of its own sends the text down the path that searches
        # text.lower() (as all texts were searched before), and no rule reads it; the
        # long text (over 16,384 characters) goes past the checks for short texts
        for text in ("".join(parts), "a long text: " * 1300 + "".join(parts)):
            assert find_secrets(text) == find_secrets(text + "\n\u0131")

    def test_a_word_written_with_a_character_that_folds_is_read_as_lowercasing_reads_it(
        self,
    ) -> None:
        kelvin, dotless = "to\u212aen = Xy12345678", "credent\u0131al = Xy12345678"
        assert redact_text(kelvin) == ("to\u212aen = [REDACTED:token]", {"token": 1})
        assert redact_text(dotless) == (dotless, {})


class TestTheMeasurement:
    def test_the_benchmark_judges_ours_and_the_detector_on_the_same_cases(self) -> None:
        sample = list({c.kind: c for c in SECRETS}.values()) + LOOKALIKES[::4]
        ours = judge_redactor(Redactor, sample)
        assert all(all(results) for results in ours.values())
        detector = judge_detector(sample)
        if detector is None:
            pytest.skip("detect-secrets is not installed")
        assert set(detector) == set(ours)
        caught = sum(sum(results) for results in detector.values())
        assert 0 < caught < sum(len(results) for results in ours.values())

    def test_speed_is_measured_over_every_entry_of_a_session(self, tmp_path: Path) -> None:
        session = session_holding(tmp_path, SECRETS[:40])
        rate, counts = speed(Redactor, session.path, runs=1)
        assert rate > 0 and sum(counts.values()) >= 40


def test_text_blocks_keep_their_shape() -> None:
    block = text_block("token=q1w2e3r4t5")
    assert Redactor().value(block) == {"type": "text", "text": "token=[REDACTED:token]"}


def test_a_rebuilt_text_comes_in_narrow_pieces_whose_join_is_the_text() -> None:
    secret = "ghp_" + "a1B2c3D4e5" * 4
    text = ("plain words " * 100_000) + f"token {secret} then more \U0001f600 " + "tail " * 10
    pieces = Redactor().text_pieces(text)
    assert "".join(pieces) == Redactor().text(text) == redact_text(text)[0]
    assert "[REDACTED:github-token]" in pieces
    ascii_pieces = [piece for piece in pieces if piece.isascii()]
    # kept stretches are slices as narrow as their own characters: not one wide text
    assert sum(map(len, ascii_pieces)) > 1_000_000
    assert max(map(len, pieces)) <= 1 << 20
    untouched = "no secret here, only words " * 10
    assert Redactor().text_pieces(untouched) is untouched
    assert Redactor(enabled=False).text_pieces(text) is text
