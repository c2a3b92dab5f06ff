"""Secrets known by their shape: provider keys with a fixed prefix, JSON Web Tokens,
webhook URLs that carry their secret in the path, and private key blocks.

Each rule names its kind, the literal text that must occur for it to be tried (its
anchors: finding.py looks for them first with ``in``, which is far cheaper than a
regex scan) and a pattern whose ``value`` group (or whole match) is the secret. A
shape must stand alone (no letter or digit glued to either end) and look random:
``ghp_xxxx…``, ``AKIAXXXXXXXXXXXXXXXX`` and ``sk-ant-...`` are placeholders, not keys.
Secrets known by what stands before them (``password=``, ``Bearer``) are
context.py's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from jsonl_session.redaction.hay import Anchor, Gate, Group, Hay, Probe, gate

Span = tuple[int, int, str, int]
"""(start, end, kind, rank) of a secret found; a lower rank is a more specific rule."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A way of finding secrets: tried only when one of ``anchors`` occurs in the text
    (a `Probe` without lookahead, which says whether case counts, or a branch of a
    `Group`), or always if it has none. A short text (hay.py's ``short``) is tried only
    when one of ``gates`` matches its lowercased image (if it has any): made by
    hay.py's `gate`, they match wherever the rule could find a secret, and finding.py
    runs all of them in one scan of the text."""

    anchors: tuple[Anchor, ...]
    find: Callable[[Hay], Iterator[Span]]
    gates: tuple[Gate, ...] = ()


def random_looking(value: str) -> bool:
    """Whether a token's body looks generated: not one character repeated (a mask such
    as ``ghp_xxxx…``), and a digit or both cases (so a long hyphenated word after a
    known prefix does not count)."""
    if len(set(value)) < 2:
        return False
    if any(c.isdigit() for c in value):
        return True
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def varied(value: str) -> bool:
    """Not one character repeated (``AKIAXXXXXXXXXXXXXXXX`` is a mask)."""
    return len(set(value)) >= 2


_GLUED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_EDGE_AFTER = r"(?![A-Za-z0-9_\-])"

# (kind, anchors, pattern, check). The whole match is the secret unless the pattern
# has a "value" group. A check looks at the part after the fixed prefix (or at the
# value group).
_TOKENS: list[tuple[str, tuple[str, ...], str, Callable[[str], bool]]] = [
    ("anthropic-key", ("sk-ant-",), r"sk-ant-(?P<value>[A-Za-z0-9_\-]{30,})", random_looking),
    ("openrouter-key", ("sk-or-",), r"sk-or-v\d-(?P<value>[0-9a-f]{48,})", varied),
    (
        "openai-key",
        ("sk-",),
        r"sk-(?:(?:proj|svcacct|admin|None)-(?P<value>[A-Za-z0-9_\-]{20,})"
        r"|(?P<legacy>[A-Za-z0-9]{32,}))",
        random_looking,
    ),
    ("github-token", ("gh",), r"gh[pousr]_(?P<value>[A-Za-z0-9]{30,})", random_looking),
    ("github-token", ("github_pat_",), r"github_pat_(?P<value>[A-Za-z0-9_]{22,})", random_looking),
    (
        "gitlab-token",
        ("gl",),
        r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-(?P<value>[A-Za-z0-9_\-]{20,})",
        random_looking,
    ),
    ("slack-token", ("xox",), r"xox[abposre]-(?P<value>[0-9A-Za-z\-]{10,})", random_looking),
    (
        "slack-token",
        ("xapp-",),
        r"xapp-\d-(?P<value>[A-Z0-9]{6,}-\d{6,}-[A-Za-z0-9]{20,})",
        varied,
    ),
    (
        "slack-webhook",
        ("hooks.slack.com/",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?:[A-Za-z0-9]+/)+"
        r"(?P<value>[A-Za-z0-9_\-]{16,})",
        varied,
    ),
    (
        "discord-webhook",
        ("discord",),
        r"discord(?:app)?\.com/api/webhooks/\d{5,30}/(?P<value>[A-Za-z0-9_\-]{30,})",
        varied,
    ),
    ("google-api-key", ("AIza",), r"AIza(?P<value>[0-9A-Za-z_\-]{35})", random_looking),
    ("google-oauth-token", ("ya29.",), r"ya29\.(?P<value>[0-9A-Za-z_\-]{20,})", random_looking),
    ("google-oauth-token", ("1//0",), r"1//0(?P<value>[0-9A-Za-z_\-]{30,})", random_looking),
    ("google-client-secret", ("GOCSPX-",), r"GOCSPX-(?P<value>[0-9A-Za-z_\-]{20,})", varied),
    (
        "stripe-key",
        ("sk_", "rk_"),
        r"(?:sk|rk)_(?:live|test)_(?P<value>[0-9A-Za-z]{16,})",
        random_looking,
    ),
    ("stripe-key", ("whsec_",), r"whsec_(?P<value>[A-Za-z0-9+/=]{24,})", random_looking),
    ("huggingface-token", ("hf_",), r"hf_(?P<value>[A-Za-z0-9]{30,})", random_looking),
    ("huggingface-token", ("api_org_",), r"api_org_(?P<value>[A-Za-z0-9]{30,})", random_looking),
    (
        "aws-access-key",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        r"A(?:KI|SI|BI|CC)A(?P<value>[A-Z0-9]{16})",
        varied,
    ),
    (
        "jwt",
        ("eyJ",),
        r"eyJ[A-Za-z0-9_\-]{8,}\.ey[A-Za-z0-9_\-]{8,}\.(?P<value>[A-Za-z0-9_\-]*)",
        lambda _: True,
    ),
    ("npm-token", ("npm_",), r"npm_(?P<value>[A-Za-z0-9]{36})", random_looking),
    (
        "sendgrid-key",
        ("SG.",),
        r"SG\.(?P<value>[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,})",
        varied,
    ),
    (
        "discord-token",
        ("M", "N", "O"),
        r"[MNO][A-Za-z0-9]{23,27}\.(?P<value>[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40})",
        random_looking,
    ),
    ("twilio-key", ("SK",), r"SK(?P<value>[0-9a-fA-F]{32})", varied),
    ("supabase-token", ("sbp_",), r"sbp_(?:v0_)?(?P<value>[0-9a-f]{40})", varied),
    ("supabase-token", ("sb_secret_",), r"sb_secret_(?P<value>[A-Za-z0-9_\-]{20,})", varied),
    ("telegram-bot-token", (":AA",), r"\d{8,10}:AA(?P<value>[0-9A-Za-z_\-]{33})", random_looking),
    ("pypi-token", ("pypi-AgE",), r"pypi-AgE(?P<value>[A-Za-z0-9_\-]{50,})", varied),
    ("docker-token", ("dckr_",), r"dckr_(?:pat|oat)_(?P<value>[A-Za-z0-9_\-]{20,})", varied),
    ("digitalocean-token", ("do",), r"do[opr]_v1_(?P<value>[a-f0-9]{64})", varied),
    ("shopify-token", ("shp",), r"shp(?:at|ca|pa|ss)_(?P<value>[a-fA-F0-9]{32})", varied),
    ("mailgun-key", ("key-",), r"key-(?P<value>[0-9a-f]{32})", varied),
    ("groq-key", ("gsk_",), r"gsk_(?P<value>[A-Za-z0-9]{40,})", random_looking),
    ("xai-key", ("xai-",), r"xai-(?P<value>[A-Za-z0-9]{60,})", random_looking),
    ("perplexity-key", ("pplx-",), r"pplx-(?P<value>[A-Za-z0-9]{40,})", random_looking),
    ("cerebras-key", ("csk-",), r"csk-(?P<value>[a-z0-9]{40,})", random_looking),
    ("replicate-token", ("r8_",), r"r8_(?P<value>[A-Za-z0-9]{30,})", random_looking),
    ("linear-key", ("lin_",), r"lin_(?:api|oauth)_(?P<value>[A-Za-z0-9]{30,})", random_looking),
    ("notion-token", ("ntn_",), r"ntn_(?P<value>[A-Za-z0-9]{40,})", random_looking),
    ("vault-token", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.(?P<value>[A-Za-z0-9_\-]{24,})", varied),
    ("age-secret-key", ("AGE-SECRET-KEY-1",), r"AGE-SECRET-KEY-1[0-9A-Z]{50,}", varied),
    (
        "tailscale-key",
        ("tskey-",),
        r"tskey-[a-z]+-(?P<value>[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,})",
        random_looking,
    ),
    ("sentry-token", ("sntry",), r"sntry[su]_(?P<value>[A-Za-z0-9+/=_]{40,})", varied),
    ("grafana-token", ("glsa_",), r"glsa_(?P<value>[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})", varied),
    ("grafana-token", ("glc_",), r"glc_(?P<value>[A-Za-z0-9+/]{32,}={0,2})", random_looking),
    ("newrelic-key", ("NRAK-",), r"NRAK-(?P<value>[A-Z0-9]{27})", varied),
    ("atlassian-token", ("ATATT",), r"ATATT3(?P<value>[A-Za-z0-9_=\-]{100,})", varied),
    ("postman-key", ("PMAK-",), r"PMAK-(?P<value>[a-f0-9]{24}-[a-f0-9]{34})", varied),
    ("figma-token", ("figd_",), r"figd_(?P<value>[A-Za-z0-9_\-]{36,})", random_looking),
    ("databricks-token", ("dapi",), r"dapi(?P<value>[a-f0-9]{32})(?:-\d)?", varied),
    (
        "doppler-token",
        ("dp.",),
        r"dp\.(?:st|ct|sa|pt|scim|audit)\.(?P<value>[A-Za-z0-9_.\-]{40,})",
        random_looking,
    ),
    ("airtable-token", ("pat",), r"pat[A-Za-z0-9]{14}\.(?P<value>[a-f0-9]{64})", varied),
    ("square-token", ("sq0",), r"sq0(?:atp|csp)-(?P<value>[0-9A-Za-z_\-]{22,})", random_looking),
    ("pulumi-token", ("pul-",), r"pul-(?P<value>[a-f0-9]{40})", varied),
    ("rubygems-key", ("rubygems_",), r"rubygems_(?P<value>[a-f0-9]{48})", varied),
    ("heroku-key", ("HRKU-",), r"HRKU-(?P<value>[A-Za-z0-9_\-]{40,})", varied),
]

# A private key block, up to its END line; or, when the text was cut short, over the
# armor headers and base64 lines that follow (also with newlines escaped, as in JSON).
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    # a body must follow: base64 or armor headers, not the end of a string in code
    r"(?=(?:\s|\\[rn])+(?:[A-Za-z0-9+/]{16}|[A-Za-z\-]+: ))"
    r"(?:.{0,40000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"|(?:(?:\s|\\[rn])*(?:[A-Za-z\-]+:[^\n\\]*|[A-Za-z0-9+/=]{8,}))*)",
    re.DOTALL,
)


# Shapes whose first characters a token-like run may not start with (a colon, a slash,
# base64's + and /), found by looking for their anchor in the whole text instead.
_SCANNED = frozenset({":AA", "1//0", "hooks.slack.com/", "discord", "whsec_", "glc_", "sntry"})
# Where a token may start: a run of 20 or more token characters.
_RUN_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_RUN_MASK = bytes(0x78 if c in _RUN_CHARS else 0x20 for c in range(256))
_LONG_RUN = b"x" * 20  # no shape is shorter (AKIA and 16 more)


@dataclass(frozen=True, slots=True)
class _Shape:
    kind: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool]
    in_path: bool  # a URL whose path is the secret: only the path is replaced

    def at(self, text: str, start: int) -> Span | None:
        match = self.pattern.match(text, start)
        if match is None:
            return None
        groups = match.groupdict()
        body = groups.get("value") or groups.get("legacy") or match.group()
        if not self.check(body):
            return None
        if self.in_path:
            return match.start("value"), match.end("value"), self.kind, 0
        return match.start(), match.end(), self.kind, 0


def _shape(kind: str, body: str, check: Callable[[str], bool]) -> _Shape:
    in_path = kind.endswith("-webhook")
    return _Shape(kind, re.compile(body if in_path else body + _EDGE_AFTER), check, in_path)


_BY_START: dict[str, list[_Shape]] = {}  # the first two characters (or one) -> shapes
_SCANNED_SHAPES: dict[str, list[_Shape]] = {}  # an anchor -> the shapes it stands for
for _kind, _anchors, _body, _check in _TOKENS:
    _made = _shape(_kind, _body, _check)
    if _anchors[0] in _SCANNED:
        _SCANNED_SHAPES.setdefault(_anchors[0], []).append(_made)
        continue
    for _anchor in _anchors:
        _BY_START.setdefault(_anchor[:2], []).append(_made)
_STARTS = frozenset(key.encode() for key in _BY_START)


def _candidates(hay: Hay) -> Iterator[Span]:
    """Token-shaped secrets: each long run of token characters is looked up by its
    first characters, and only the shapes that start so are tried, where it stands.

    Runs are found in a mask of the text's ASCII image (token characters as ``x``, the
    rest as spaces; a byte is a character, so a run's place in the mask is its place in
    the text) with bytes.find, which skips short words at C speed; a run whose first
    characters start no shape costs one more find. Each run is tried where the mask
    found it, never by searching the text for its word again: that made the time grow
    with the number of distinct runs times the text's length."""
    text, image = hay.text, hay.image
    find = image.translate(_RUN_MASK).find
    starts, by_start = _STARTS, _BY_START
    at = find(_LONG_RUN)
    while at != -1:
        end = find(b" ", at)
        if image[at : at + 2] in starts or image[at : at + 1] in starts:
            word = (image[at:end] if end != -1 else image[at:]).decode("ascii")
            for shape in (*by_start.get(word[:2], ()), *by_start.get(word[0], ())):
                found = shape.at(text, at)
                if found is not None:
                    yield found
                    break
        at = -1 if end == -1 else find(_LONG_RUN, end)


def _scanned(shapes: list[_Shape]) -> Callable[[Hay], Iterator[Span]]:
    def find(hay: Hay) -> Iterator[Span]:
        text = hay.text
        for shape in shapes:
            for match in shape.pattern.finditer(text):
                start = match.start()
                glued = start and text[start - 1] in _GLUED and not shape.in_path
                if glued and not (
                    shape.kind == "telegram-bot-token" and text.endswith("/bot", 0, start)
                ):
                    continue
                found = shape.at(text, start)
                if found is not None:
                    yield found

    return find


def _block(kind: str, pattern: re.Pattern[str]) -> Callable[[Hay], Iterator[Span]]:
    def find(hay: Hay) -> Iterator[Span]:
        for match in pattern.finditer(hay.text):
            yield match.start(), match.end(), kind, 0

    return find


# Anchors looked for together, one scan of the text for each group. Each branch takes
# one character or the shared literal, after which no other branch could start.
SLASHES = Group("//", r"(?:(?<=1//)(0)|(?<=://)())", folded=False)
_UNDERSCORE = Group("_", r"(?:(?<=whsec_)()|(?<=glc_)()|(?<=sntry[su]_)())", folded=False)
_HOOKS = Group("hooks", r"(?:(\.slack\.com/)|(/))", folded=False)  # discord's: webhooks/
_GATES: dict[str, Anchor] = {
    "hooks.slack.com/": _HOOKS.branch(1),
    "discord": _HOOKS.branch(2),
    "1//0": SLASHES.branch(1),
    "whsec_": _UNDERSCORE.branch(1),
    ":AA": Probe(":AA", folded=False),
    "sntry": _UNDERSCORE.branch(3),
    "glc_": _UNDERSCORE.branch(2),
}


def shape_rules() -> list[Rule]:
    """The rules of this module: private key blocks, the shapes looked for by their
    anchor, and one rule for every shape a token-like run starts with."""
    rules = [
        Rule(
            (Probe("PRIVATE KEY", folded=False),),
            _block("private-key", _PRIVATE_KEY),
            (gate("PRIVATE KEY"),),
        ),
    ]
    rules += [
        Rule((_GATES[anchor],), _scanned(shapes), (gate(anchor),))
        for anchor, shapes in _SCANNED_SHAPES.items()
    ]
    rules.append(Rule((), _candidates))
    return rules
