"""Secrets known by where they stand: after a key that names a secret
(``DB_PASSWORD=…``, ``"SessionToken": "…"``, ``--password …``, ``?sig=…``), in an
``Authorization`` header or after ``Bearer``, in a cookie, in a URL before the ``@``
(``redis://:pw@host``), and in the commands that take one inline (``mysql -pX``,
``curl -u user:pass``, ``sshpass -p``, ``docker login -p``) or a netrc line.

Only the value is replaced; the key, flag or command stays readable. Whether a key
names a secret and whether a value is one (not a placeholder, a reference or code) is
judge.py's. Keywords are matched without regard to case: each rule is given the text
lowercased (when lowercasing kept every character where it was) and searches that
with a case-sensitive pattern, which is much faster than an ignore-case one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from jsonl_session.redaction.judge import (
    code_name,
    is_secret,
    key_kind,
    looks_like_path,
    strength_for,
)
from jsonl_session.redaction.shapes import Rule, Span, random_looking

Finder = Callable[[str, str | None], Iterator[Span]]

_QUOTED_OR_PLAIN = (
    r"(?:(?P<q>\\?[\"'`])(?P<quoted>[^\n]*?)(?P=q)"
    r"|(?P<plain>[^\s\"'`,;&<>(){}\[\]|\\]+))"
)
_IDENTIFIER = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$@")


def _both(pattern: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The pattern for lowercased text, and an ignore-case one for text that
    lowercasing would have shifted."""
    return re.compile(pattern), re.compile(pattern, re.IGNORECASE)


def _search(
    patterns: tuple[re.Pattern[str], re.Pattern[str]], text: str, lowered: str | None
) -> Iterator[re.Match[str]]:
    if lowered is not None:
        return patterns[0].finditer(lowered)
    return patterns[1].finditer(text)


def _value(text: str, match: re.Match[str]) -> tuple[int, int, str, bool]:
    """(start, end, value, quoted) of a match's quoted or plain value, read from the
    original text (the match may be over the lowercased copy)."""
    if match["quoted"] is not None:
        start, end = match.span("quoted")
        return start, end, text[start:end], True
    start, end = match.span("plain")
    return start, end, text[start:end], False


# --- key = value ---------------------------------------------------------------------

# One pattern per keyword, each starting with its literal: searched for much faster
# than one pattern starting with a choice of words.
_SEPARATOR = r"(?P<sep>\\?[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*)"
_PAIRS = [
    (word, _both(f"(?P<word>{body}){_SEPARATOR}{_QUOTED_OR_PLAIN}"))
    for word, body in [
        ("pass", "pass(?:word|wd|phrase)?"),
        ("pwd", "pwd"),
        ("secret", "secret"),
        ("token", "token"),
        ("key", "key"),
        ("credential", "credentials?"),
        ("auth", "auth"),
        ("sig", "sig(?:nature)?"),
    ]
]
_KEYWORDS = tuple(word for word, _ in _PAIRS)


def _pairs(text: str, lowered: str | None) -> Iterator[Span]:
    for word, (exact, ignoring_case) in _PAIRS:
        if lowered is None:
            matches: Iterator[re.Match[str]] = ignoring_case.finditer(text)
        else:
            matches = _each(word, exact, lowered)
        for match in matches:
            found = _pair(text, match)
            if found is not None:
                yield found


def _each(word: str, pattern: re.Pattern[str], lowered: str) -> Iterator[re.Match[str]]:
    """Matches of ``pattern`` wherever ``word`` (its first letters) occurs: found with
    str.find, cheaper than a second scan of the whole text by the pattern."""
    at = lowered.find(word)
    while at != -1:
        match = pattern.match(lowered, at)
        if match is not None:
            yield match
        at = lowered.find(word, match.end() if match is not None else at + len(word))


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


def _flags(text: str, lowered: str | None) -> Iterator[Span]:
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


def _config_set(text: str, lowered: str | None) -> Iterator[Span]:
    matches = (*_search(_CONFIG_SET, text, lowered), *_search(_GIT_CONFIG, text, lowered))
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


def _authorization(text: str, lowered: str | None) -> Iterator[Span]:
    for match in _search(_AUTHORIZATION, text, lowered):
        start, end = match.span("plain")
        if match.start() and text[match.start() - 1] in _IDENTIFIER:
            continue  # expected_authorization = ...: a name in code
        value = text[start:end]
        if match["scheme"] is None and (code_name(value) or _code_follows(text, end, colon=True)):
            continue
        scheme = (match["scheme"] or "").strip(" \t")
        if is_secret(value, quoted=bool(scheme), spaced=True, strength="token"):
            yield start, end, "bearer-token" if scheme == "bearer" else "authorization", 1


def _bearer(text: str, lowered: str | None) -> Iterator[Span]:
    for match in _search(_BEARER, text, lowered):
        start, end = match.span("plain")
        value = text[start:end]
        if any(c.isdigit() for c in value) and is_secret(value, strength="token"):
            yield start, end, "bearer-token", 1


def _cookies(text: str, lowered: str | None) -> Iterator[Span]:
    hay = text.lower() if lowered is None else lowered
    jars = _search(_COOKIE, text, lowered) if "cookie" in hay else iter(())
    flags = _search(_COOKIE_FLAG, text, lowered) if "-b" in hay else iter(())
    for match in (*jars, *flags):
        jar_start, jar_end = match.span("jar")
        for pair in _COOKIE_PAIR.finditer(text, jar_start, jar_end):
            value = pair["value"]
            if pair["name"].lower() in _COOKIE_ATTRIBUTES or len(value) < 12:
                continue
            if random_looking(value) and is_secret(value, strength="token"):
                yield pair.start("value"), pair.end("value"), "cookie", 1


# --- URLs, commands, netrc -------------------------------------------------------------

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


def _url_passwords(text: str, lowered: str | None) -> Iterator[Span]:
    for match in _URL_PASSWORD.finditer(text):
        if is_secret(match["plain"], quoted=True):
            yield match.start("plain"), match.end("plain"), "url-password", 1


def _command(commands: list[tuple[re.Pattern[str], tuple[str, ...]]]) -> Finder:
    def find(text: str, lowered: str | None) -> Iterator[Span]:
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


def context_rules() -> list[Rule]:
    """The rules of this module, most specific first."""
    rules = [
        Rule(("authorization",), True, _authorization),
        Rule(("bearer",), True, _bearer),
        Rule(("://",), False, _url_passwords),
    ]
    by_anchor: dict[str, list[tuple[re.Pattern[str], tuple[str, ...]]]] = {}
    for anchor, pattern, tools in _COMMANDS:
        by_anchor.setdefault(anchor, []).append((pattern, tools))
    rules += [Rule((anchor,), False, _command(commands)) for anchor, commands in by_anchor.items()]
    rules.append(Rule(("--",), False, _flags))
    rules.append(Rule(("config",), True, _config_set))
    # no anchors: _pairs and _cookies look for their words themselves, once each
    rules += [Rule((), True, _cookies), Rule((), True, _pairs)]
    return rules
