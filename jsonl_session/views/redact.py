"""Finding secrets in session text and replacing them with placeholders.

Owns the patterns (provider API keys, bearer tokens, AWS keys, private key
blocks, ``password=`` style pairs, passwords in URLs) and the counting: a
`Redactor` replaces each secret with ``[REDACTED:<kind>]`` and remembers how many
of each kind it replaced. It knows nothing of sessions or exports; export/ and
transcript.py decide which texts go through it.

The patterns aim at secrets, not at everything that looks random: entry ids,
hashes, uuids and base64 image data are left alone, and a ``key = value`` pair
counts only when the value could be a secret (not a variable, a type name, a
function call or a ``$VARIABLE`` reference).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

PLACEHOLDER = "[REDACTED:{kind}]"

# Token-shaped secrets: (kind, pattern). The whole match is replaced. Ordered so
# that a more specific prefix wins (sk-ant- before sk-).
_NOT_BEFORE = r"(?<![A-Za-z0-9_\-])"
_NOT_AFTER = r"(?![A-Za-z0-9_\-])"
_TOKENS: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(_NOT_BEFORE + body + _NOT_AFTER))
    for kind, body in [
        ("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
        # with a digit somewhere, so long hyphenated words after "sk-" do not count
        ("openai-key", r"sk-(?=[A-Za-z0-9_\-]*[0-9])(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        ("github-token", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
        ("gitlab-token", r"glpat-[A-Za-z0-9_\-]{20,}"),
        ("slack-token", r"xox[baprs]-[A-Za-z0-9\-]{10,}"),
        ("google-api-key", r"AIza[0-9A-Za-z_\-]{35}"),
        ("stripe-key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
        ("huggingface-token", r"hf_[A-Za-z0-9]{30,}"),
        ("aws-access-key", r"(?:AKIA|ASIA)[A-Z0-9]{16}"),
    ]
]

_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    # up to the END line, or (output cut short) over the base64 body that follows
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    r"|(?:\s*(?:[A-Za-z\-]+:[^\n]*|[A-Za-z0-9+/=]{16,}))*)",
    re.DOTALL,
)

# Prefix kept, value replaced.
_BEARER = re.compile(
    r"(?P<keep>(?:\bAuthorization[\"']?[ \t]*[:=][ \t]*[\"']?)?\bBearer[ \t]+)"
    r"(?P<value>(?=[A-Za-z._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{8,}=*)",
    re.IGNORECASE,
)
_AWS_SECRET = re.compile(
    r"(?P<keep>\baws_secret_access_key[\"']?[ \t]*[:=][ \t]*[\"']?)"
    r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    re.IGNORECASE,
)
_URL_PASSWORD = re.compile(
    r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@\"'<>]+:)(?P<value>[^/\s@\"'<>]+)(?=@)"
)

# ``password=hunter2``, ``DB_PASSWORD: "x"``, ``"api_key": "..."``, ``x-api-key: ...``
_PAIR = re.compile(
    r"(?<![A-Za-z0-9])(?P<key>(?:[A-Za-z0-9]+[_\-])*"
    r"(?P<name>password|passwd|secret|token|api[_\-]?key|secret[_\-]?key"
    r"|private[_\-]?key|access[_\-]?key))"
    r"(?P<sep>[\"']?[ \t]*[=:][ \t]*)"
    r"(?:(?P<quote>[\"'])(?P<quoted>[^\"'\n]+)(?P=quote)|(?P<plain>[^\s\"'`,;&<>(){}\[\]]+))",
    re.IGNORECASE,
)
_SECRET_KEY_NAME = re.compile(
    r"(?:^|[_\-])(?:password|passwd|secret|token|api[_\-]?key|secret[_\-]?key"
    r"|private[_\-]?key|access[_\-]?key)$",
    re.IGNORECASE,
)
# Values that name something rather than being a secret.
_NOT_SECRETS = {
    "none", "null", "nil", "true", "false", "undefined", "str", "string", "int", "bool",
    "bytes", "any", "number", "boolean", "optional", "required", "yes", "no", "env",
    "redacted", "secret", "password", "token", "xxx", "xxxx", "changeme",
}  # fmt: skip
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PLAIN_WORD = re.compile(r"[A-Za-z_\-]+")


class Redactor:
    """Replaces secrets with ``[REDACTED:<kind>]`` and counts them by kind.

    One redactor serves a whole export, so ``counts`` covers everything it was
    given. A disabled redactor returns its input unchanged and counts nothing.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.counts: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> dict[str, int]:
        """Counts by kind, kinds sorted."""
        return {kind: self.counts[kind] for kind in sorted(self.counts)}

    def text(self, text: str) -> str:
        if not self.enabled or not text:
            return text
        text = _PRIVATE_KEY.sub(self._whole("private-key"), text)
        for kind, pattern in _TOKENS:
            text = pattern.sub(self._whole(kind), text)
        text = _BEARER.sub(self._value("bearer-token"), text)
        text = _AWS_SECRET.sub(self._value("aws-secret-key"), text)
        text = _PAIR.sub(self._pair, text)
        return _URL_PASSWORD.sub(self._value("url-password", check=True), text)

    def value(self, value: Any) -> Any:
        """A copy of a JSON value with every string redacted; a string stored under a
        secret-looking key (``"password": "..."``) is replaced whole. Image data
        (``{"type": "image", "data": ...}``) is left as it is."""
        if not self.enabled:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        # Recursive: entry bodies nest only a few levels (JSON decoders cap depth).
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._walk(item) for item in value]
        if not isinstance(value, dict):
            return value
        is_image = value.get("type") == "image"
        out: dict[str, Any] = {}
        for key, item in value.items():
            if is_image and key == "data":
                out[key] = item
            elif isinstance(item, str) and _SECRET_KEY_NAME.search(key):
                # a recognised token keeps its own kind; any other value goes whole
                redacted = self.text(item)
                if redacted == item and _secret(item):
                    self.counts[_pair_kind(key)] += 1
                    redacted = PLACEHOLDER.format(kind=_pair_kind(key))
                out[key] = redacted
            else:
                out[key] = self._walk(item)
        return out

    def _whole(self, kind: str) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            self.counts[kind] += 1
            return PLACEHOLDER.format(kind=kind)

        return replace

    def _value(self, kind: str, *, check: bool = False) -> Callable[[re.Match[str]], str]:
        def replace(match: re.Match[str]) -> str:
            if check and not _secret(match["value"]):
                return match.group()
            self.counts[kind] += 1
            return match["keep"] + PLACEHOLDER.format(kind=kind)

        return replace

    def _pair(self, match: re.Match[str]) -> str:
        quoted = match["quoted"]
        value = quoted if quoted is not None else match["plain"]
        if quoted is None:
            after = match.string[match.end() : match.end() + 1]
            spaced = match["sep"] != match["sep"].strip(" \t")
            if after in ("(", "[") or _looks_like_code(value, spaced):
                return match.group()
        if not _secret(value):
            return match.group()
        kind = _pair_kind(match["name"])
        self.counts[kind] += 1
        start = match.start("quoted") if quoted is not None else match.start("plain")
        end = match.end("quoted") if quoted is not None else match.end("plain")
        whole = match.string
        return (
            whole[match.start() : start] + PLACEHOLDER.format(kind=kind) + whole[end : match.end()]
        )


def redact_text(text: str) -> tuple[str, dict[str, int]]:
    """``text`` with its secrets replaced, and how many of each kind were replaced."""
    redactor = Redactor()
    return redactor.text(text), redactor.summary()


def _pair_kind(name: str) -> str:
    lowered = name.lower().replace("-", "_")
    if lowered.endswith(("password", "passwd")):
        return "password"
    if lowered.endswith("token"):
        return "token"
    if lowered.endswith("secret"):
        return "secret"
    return "api-key" if "api" in lowered else "secret-key"


def _secret(value: str) -> bool:
    """Whether a value could be a secret rather than a placeholder or a reference."""
    stripped = value.strip()
    if len(stripped) < 3 or stripped.startswith(("$", "%", "<", "{", "*", "[REDACTED")):
        return False
    if stripped.lower() in _NOT_SECRETS or set(stripped) <= {"*", "x", "X", ".", "-"}:
        return False
    return not (stripped.isdigit() and len(stripped) < 6)


def _looks_like_code(value: str, spaced: bool) -> bool:
    """An unquoted value that is an attribute path (``self.password``) or, after a
    spaced separator (``password = new_password``, ``token: str``), a plain word."""
    if _IDENTIFIER.fullmatch(value) and "." in value:
        return True
    return spaced and _PLAIN_WORD.fullmatch(value) is not None
