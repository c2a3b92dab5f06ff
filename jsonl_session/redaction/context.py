"""Secrets known by where they stand: after a key that names a secret
(``DB_PASSWORD=…``, ``"SessionToken": "…"``, ``--password …``, ``?sig=…``), in an
``Authorization`` header or after ``Bearer``, in a cookie, in a URL before the ``@``
(``redis://:pw@host``), and in the commands that take one inline (``mysql -pX``,
``curl -u user:pass``, ``sshpass -p``, ``docker login -p``) or a netrc line.

Only the value is replaced; the key, flag or command stays readable. Whether a key
names a secret and whether a value is one (not a placeholder, a reference or code) is
judge.py's. Keywords are matched without regard to case: a rule's keyword is looked
for in the lowercased image of the text (hay.py's `Probe`), and its pattern is tried
only where the keyword stands, followed by what the pattern needs next (a separator,
a space); a search of the whole text by the pattern would be much slower.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from jsonl_session.redaction.hay import AllOf, AnyOf, Group, Hay, Probe, gate, pivoted
from jsonl_session.redaction.judge import (
    code_name,
    is_secret,
    key_kind,
    looks_like_path,
    strength_for,
)
from jsonl_session.redaction.shapes import SLASHES, Rule, Span, random_looking

Finder = Callable[[Hay], Iterator[Span]]

_QUOTED_OR_PLAIN = (
    r"(?:(?P<q>\\?[\"'`])(?P<quoted>[^\n]*?)(?P=q)"
    r"|(?P<plain>[^\s\"'`,;&<>(){}\[\]|\\]+))"
)
_IDENTIFIER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$@")


def _both(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The pattern for lowercased text, and an ignore-case one for text that
    lowercasing would have shifted."""
    return re.compile(pattern), re.compile(pattern, re.IGNORECASE)


def _value(text: str, match: re.Match[str]) -> tuple[int, int, str, bool]:
    """(start, end, value, quoted) of a match's quoted or plain value, read from the
    original text (the match may be over the lowercased copy)."""
    if match["quoted"] is not None:
        start, end = match.span("quoted")
        return start, end, text[start:end], True
    start, end = match.span("plain")
    return start, end, text[start:end], False


# --- key = value ---------------------------------------------------------------------

# One pattern per keyword, each starting with its literal: its probe finds the keyword
# where a separator follows, and the pattern is tried there only.
_SEPARATOR = r"(?P<sep>\\?[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*)"
_SEPARATOR_AHEAD = r"\\?[\"']?[ \t]*[=:]"
_COOKIE_AHEAD = r"\\?[\"']?[ \t]*[:=]|[ \t]"
_CONFIG_SET_AHEAD = r"(?:ure)?[ \t]+set[ \t]"
_GIT_CONFIG_AHEAD = r"[ \t]+config"
# Probes found by one scan of a long text for each of two rare letters (hay.py's
# `pivoted`): after "k" comes "en", "ey" or "ie", and around "g" "si", "fi" or "it".
_TOKEN_VIA, _KEY_VIA, _COOKIE_VIA = pivoted(
    "k", [("token", _SEPARATOR_AHEAD), ("key", _SEPARATOR_AHEAD), ("cookie", _COOKIE_AHEAD)]
)
_SIG_VIA, _CONFIG_SET_VIA, _GIT_CONFIG_VIA = pivoted(
    "g",
    [
        ("sig", "(?:nature)?" + _SEPARATOR_AHEAD),
        ("config", _CONFIG_SET_AHEAD),
        ("git", _GIT_CONFIG_AHEAD),
    ],
)
_PAIR_VIAS = {"token": _TOKEN_VIA, "key": _KEY_VIA, "sig": _SIG_VIA}
_PAIRS = [
    (
        _both(f"(?P<word>{word}{more}){_SEPARATOR}{_QUOTED_OR_PLAIN}"),
        Probe(word, more + _SEPARATOR_AHEAD, via=_PAIR_VIAS.get(word)),
    )
    for word, more in [
        ("pass", "(?:word|wd|phrase)?"),
        ("pwd", ""),
        ("secret", ""),
        ("token", ""),
        ("key", ""),
        ("credential", "s?"),
        ("auth", "(?:orization)?"),  # one search serves _authorization too
        ("sig", "(?:nature)?"),
    ]
]


def _pairs(hay: Hay) -> Iterator[Span]:
    for patterns, probe in _PAIRS:
        if hay.short and hay.fast and probe.word_bytes not in hay.low:
            continue
        for match in hay.matches(patterns, probe):
            found = _pair(hay.text, match)
            if found is not None:
                yield found


def _pair(text: str, match: re.Match[str]) -> Span | None:
    """The value of a ``key = value`` match, if the key names a secret and the value
    is one."""
    start = match.start()
    stop = max(0, start - 64)
    while start > stop and text[start - 1] in _IDENTIFIER:
        start -= 1
    if text.endswith("://", 0, start):
        return None  # a URL's user name (https://x-access-token:...@): _url_passwords's
    key = text[start : match.end("word")]
    before = text[start - 1] if start else ""
    in_query = before in ("?", "&")
    flag = key.startswith("-")
    if flag and key.lstrip("-").lower().startswith("no-"):
        return None
    kind = key_kind(key, in_query=in_query, flag=flag)
    if kind is None:
        return None
    value_start, value_end, value, quoted = _value(text, match)
    if in_query and not quoted:
        value = value.split("#", 1)[0]
        value_end = value_start + len(value)
    if key.lower().endswith(("credential", "credentials", "pwd")) and looks_like_path(value):
        return None
    sep = match["sep"]
    spaced = sep != sep.strip(" \t")
    data = (quoted and match["q"] != "`") or in_query  # a URL's query holds data, not code
    if not data and _code_follows(text, value_end, colon=":" in sep and spaced):
        return None
    strength = "generated" if in_query and kind == "secret" else strength_for(key, kind)
    if sep.strip(" \t\"'\\") == ":" and not spaced and not quoted:
        strength = "generated"  # passwd:gecos, token:name: a namespace more than a pair
    if is_secret(value, quoted=data, spaced=spaced, strength=strength):
        return value_start, value_end, kind, 2
    return None


def _code_follows(text: str, end: int, *, colon: bool) -> bool:
    """Whether what follows an unquoted value makes it code: a call or a subscript
    (``getpass()``, ``env[...]``), an argument (``secret=match,``), or, after
    ``name: ``, a type (``private_key: PrivateKeyTypes | None``)."""
    after = text[end : end + 1]
    if after in ("(", "[", ",", ")"):
        return True
    return colon and text[end : end + 4].lstrip(" ")[:1] in ("|", "=", "]")


# --- command-line options: --password VALUE ------------------------------------------

_FLAG = re.compile(
    r"--(?P<key>[a-z0-9-]*?(?:password|passwd|pass|token|secret|key|credentials?))"
    r"[ \t]+(?!-)" + _QUOTED_OR_PLAIN
)


def _flags(hay: Hay) -> Iterator[Span]:
    text = hay.text
    for match in _FLAG.finditer(text):
        key = match["key"]
        if key.startswith("no-"):
            continue
        kind = key_kind(key, flag=True)
        value_start, value_end, value, quoted = _value(text, match)
        strength = "generated" if key == "pass" else strength_for(key, kind or "")
        if kind is not None and is_secret(value, quoted=quoted, spaced=True, strength=strength):
            yield value_start, value_end, kind, 1


# --- tools that store a setting: aws configure set KEY VALUE, npm config set KEY VALUE

_CONFIG_SET = _both(r"config(?:ure)?[ \t]+set[ \t]+(?P<key>[^\s=\"']+)[ \t]+" + _QUOTED_OR_PLAIN)
_GIT_CONFIG = _both(
    r"git[ \t]+config(?:[ \t]+--?[a-z][a-z-]*)*[ \t]+(?P<key>[^\s=\"']+)[ \t]+" + _QUOTED_OR_PLAIN
)


_CONFIG_WORD = Probe("config")
_CONFIG_SET_AT = Probe("config", _CONFIG_SET_AHEAD, via=_CONFIG_SET_VIA)
_GIT_CONFIG_AT = Probe("git", _GIT_CONFIG_AHEAD, via=_GIT_CONFIG_VIA)


def _config_set(hay: Hay) -> Iterator[Span]:
    if not (hay.fast or hay.has(_CONFIG_WORD)):
        return
    text = hay.text
    matches = (*hay.matches(_CONFIG_SET, _CONFIG_SET_AT), *hay.matches(_GIT_CONFIG, _GIT_CONFIG_AT))
    for match in matches:
        key = text[match.start("key") : match.end("key")]
        kind = key_kind(key)
        value_start, value_end, value, _ = _value(text, match)
        if kind is not None and is_secret(value, quoted=True, strength=strength_for(key, kind)):
            yield value_start, value_end, kind, 1


# --- headers and cookies ----------------------------------------------------------------

_AUTHORIZATION = _both(
    r"authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?"
    r"(?P<scheme>(?:basic|bearer|token|apikey|api-key|sso-key|ssws|bot|key|otp|oauth)[ \t]+)?"
    r"(?P<plain>[^\s\"'`\\<>,;()\[\]{}]+)"
)
_BEARER = _both(r"bearer[ \t]+(?P<plain>[a-z0-9._~+/\-]{8,}=*)")
_COOKIE = _both(r"cookie(?:\\?[\"']?[ \t]*[:=]|[ \t]+)[ \t]*\\?[\"']?(?P<jar>[^\n\"'\\]*)")
_COOKIE_FLAG = _both(r"-b[ \t]+\\?[\"']?(?P<jar>[^\n\"'\\]*)")  # curl -b 'name=value'
_COOKIE_PAIR = re.compile(r"(?P<name>[A-Za-z0-9_.\-]+)=(?P<value>[^;\s\"',]+)")
_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "priority"})


_AUTHORIZATION_WORD = Probe("authorization")
_AUTHORIZATION_AT = _PAIRS[6][1]  # "auth", then "orization" or not, then a separator
_BEARER_WORD = Probe("bearer")
_BEARER_AT = Probe("bearer", r"[ \t]")
_COOKIE_WORD = Probe("cookie")
_COOKIE_AT = Probe("cookie", _COOKIE_AHEAD, via=_COOKIE_VIA)
_COOKIE_FLAG_WORD = Probe("-b")
# A dash starting "--", "-b " or, after a space, "-p" or "-u": what the options of
# _flags, _cookies and _COMMANDS start with (each branch takes the dash only).
_DASHES = Group("-", r"(?:(?=-)()|(?=b[ \t])()|(?<=[ \t]-)(?=[pu])())", folded=True)
_COOKIE_FLAG_AT = Probe("-b", r"[ \t]", via=_DASHES.branch(2))


def _authorization(hay: Hay) -> Iterator[Span]:
    if not (hay.fast or hay.has(_AUTHORIZATION_WORD)):
        return
    text = hay.text
    for match in hay.matches(_AUTHORIZATION, _AUTHORIZATION_AT):
        start, end = match.span("plain")
        if match.start() and text[match.start() - 1] in _IDENTIFIER:
            continue  # expected_authorization = ...: a name in code
        value = text[start:end]
        if match["scheme"] is None and (code_name(value) or _code_follows(text, end, colon=True)):
            continue
        scheme = (hay.folded_group(match, "scheme") or "").strip(" \t")
        if is_secret(value, quoted=bool(scheme), spaced=True, strength="token"):
            yield start, end, "bearer-token" if scheme == "bearer" else "authorization", 1


def _bearer(hay: Hay) -> Iterator[Span]:
    if not (hay.fast or hay.has(_BEARER_WORD)):
        return
    text = hay.text
    for match in hay.matches(_BEARER, _BEARER_AT):
        start, end = match.span("plain")
        value = text[start:end]
        if any(c.isdigit() for c in value) and is_secret(value, strength="token"):
            yield start, end, "bearer-token", 1


def _cookies(hay: Hay) -> Iterator[Span]:
    text = hay.text
    jars = hay.matches(_COOKIE, _COOKIE_AT) if hay.fast or hay.has(_COOKIE_WORD) else ()
    flags = (
        hay.matches(_COOKIE_FLAG, _COOKIE_FLAG_AT) if hay.fast or hay.has(_COOKIE_FLAG_WORD) else ()
    )
    for match in (*jars, *flags):
        jar_start, jar_end = match.span("jar")
        for pair in _COOKIE_PAIR.finditer(text, jar_start, jar_end):
            value = pair["value"]
            if pair["name"].lower() in _COOKIE_ATTRIBUTES or len(value) < 12:
                continue
            if random_looking(value) and is_secret(value, strength="token"):
                yield pair.start("value"), pair.end("value"), "cookie", 1


# --- URLs, commands, netrc -------------------------------------------------------------

_URL_PASSWORD_AHEAD = r"[^\s/:@\"'<>]*:[^\s/@\"'<>]+@"  # after "://"; also over bytes
_URL_PASSWORD = re.compile(r"://(?P<user>[^\s/:@\"'<>]*):(?P<plain>[^\s/@\"'<>]+)@")
# (anchor, pattern starting with it, tools one of which must come first on the line)
_COMMANDS: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = [
    (tool, re.compile(tool + r"[a-z\-]*\b[^\n|;&]*?[ \t]-p" + _QUOTED_OR_PLAIN), ())
    for tool in ("mysql", "mariadb")
] + [
    (
        "curl",
        re.compile(
            r"curl\b[^\n|;&]*?[ \t](?:-u|--user)[ \t=]*[\"']?[^\s:\"'$]*:(?P<plain>[^\s\"']+)"
        ),
        (),
    ),
    ("sshpass", re.compile(r"sshpass\b[^\n|;&]*?[ \t]-p[ \t]*" + _QUOTED_OR_PLAIN), ()),
    (
        "login",
        re.compile(r"login\b[^\n|;&]*?[ \t]-p[ \t=]*" + _QUOTED_OR_PLAIN),
        ("docker", "podman", "nerdctl", "buildah", "skopeo", "oras", "helm"),
    ),
    ("login", re.compile(r"login[ \t]+\S+\s+password[ \t]+(?P<plain>[^\s`'\"]+)"), ()),  # netrc
]
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _url_passwords(hay: Hay) -> Iterator[Span]:
    for match in _URL_PASSWORD.finditer(hay.text):
        if is_secret(match["plain"], quoted=True):
            yield match.start("plain"), match.end("plain"), "url-password", 1


def _command(commands: list[tuple[re.Pattern[str], tuple[str, ...]]]) -> Finder:
    def find(hay: Hay) -> Iterator[Span]:
        text = hay.text
        for pattern, tools in commands:
            for match in pattern.finditer(text):
                start = match.start()
                if start and text[start - 1] in _WORD:
                    continue
                if tools:
                    line = text[text.rfind("\n", 0, start) + 1 : start]
                    if not any(tool in line for tool in tools):
                        continue
                name = "quoted" if match.groupdict().get("quoted") is not None else "plain"
                if is_secret(match[name], quoted=True):
                    yield match.start(name), match.end(name), "password", 1

    return find


KEYWORD_FINDERS: tuple[Finder, ...] = (_authorization, _bearer, _config_set, _cookies, _pairs)
"""The rules without anchors: each looks for its keywords in every text."""
KEYWORD_PROBES: tuple[Probe, ...] = (
    *(probe for _, probe in _PAIRS),
    _BEARER_AT,
    _CONFIG_SET_AT,
    _GIT_CONFIG_AT,
    _COOKIE_AT,
)
"""The probes those rules read the places of in a long text (spread.py has a worker
find them), but "-b" (the dashes' group, which the anchors of this process scan)."""


def context_rules() -> list[Rule]:
    """The rules of this module, most specific first. The keyword rules look for their
    words themselves (hay.py's probes), so they have no anchors."""
    rules = [
        Rule((), _authorization, (gate("authorization", _SEPARATOR_AHEAD),)),
        Rule((), _bearer, (_BEARER_AT.gate,)),
        Rule((SLASHES.branch(2),), _url_passwords, (gate("://", _URL_PASSWORD_AHEAD),)),
    ]
    by_anchor: dict[str, list[tuple[re.Pattern[str], tuple[str, ...]]]] = {}
    for anchor, pattern, tools in _COMMANDS:
        by_anchor.setdefault(anchor, []).append((pattern, tools))
    # -p or -u after a space ("--user" for curl): mysql, sshpass, docker login's option
    option = AnyOf(_DASHES.branch(3), _DASHES.branch(1))
    rules += [
        Rule(
            (
                Probe(anchor, folded=False)
                if anchor == "login"
                else AllOf(option, Probe(anchor, folded=False)),
            ),
            _command(commands),
            (gate(anchor),),
        )
        for anchor, commands in by_anchor.items()
    ]
    rules.append(Rule((_DASHES.branch(1),), _flags, (gate("--"),)))
    rules += [
        Rule((), _config_set, (_CONFIG_SET_AT.gate, _GIT_CONFIG_AT.gate)),
        Rule((), _cookies, (_COOKIE_AT.gate, _COOKIE_FLAG_AT.gate)),
        Rule((), _pairs, tuple(probe.gate for _, probe in _PAIRS)),
    ]
    return rules
