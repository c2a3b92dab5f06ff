"""Which keys name a secret, and which values stand for one.

A key names a secret when, lowercased and without ``_``, ``-`` and ``.``, it ends in a
secret word (``DB_PASSWORD``, ``PGPASSWORD``, ``SecretAccessKey``, ``x-api-key``,
``_authToken``, ``AccountKey``); the kind follows from that word. A value stands for
a secret unless it is a placeholder (``YOUR_API_KEY``, ``<token>``, ``sk-...``,
``********``), a reference (``$TOKEN``, ``${{ secrets.X }}``, ``%PASS%``), a word for
nothing (``null``, ``none``, ``str``), a short number, or, when not quoted, code
(``password = new_password``, ``token: str``, ``api_key=api_key``,
``self.password``, ``getpass()``). Finding the pairs is context.py's.
"""

from __future__ import annotations

import re
from typing import Literal

SHORTEST = 8
"""No rule finds a secret in a text of fewer characters (``pwd=abc1``): finding.py
searches none, and engine.py does not even ask it."""

# Endings of keys that name a secret -> the kind of secret (checked in this order).
_ENDINGS: tuple[tuple[str, str], ...] = (
    ("password", "password"),
    ("passwd", "password"),
    ("passphrase", "password"),
    ("pwd", "password"),
    ("secretaccesskey", "aws-secret-key"),
    ("sessiontoken", "token"),
    ("apikey", "api-key"),
    ("subscriptionkey", "api-key"),
    ("secretkey", "secret-key"),
    ("accesskey", "secret-key"),
    ("privatekey", "secret-key"),
    ("accountkey", "secret-key"),
    ("masterkey", "secret-key"),
    ("signingkey", "secret-key"),
    ("encryptionkey", "secret-key"),
    ("secret", "secret"),
    ("token", "token"),
    ("credential", "secret"),
    ("credentials", "secret"),
)
# Keys that end like a secret's but name something else ($PWD is the working folder).
_NOT_SECRET_KEYS = frozenset({"pwd", "oldpwd"})
# Keys that count only with a value that looks generated (``auth: true`` is a switch).
_WEAK_KEYS = {"auth": "secret", "pass": "password"}
_WEAK_ENDINGS = ("auth", "pass", "credential", "credentials")
# Keys that count only in a URL's query (``?key=...``).
_QUERY_ONLY = frozenset({"key", "sig", "signature", "code"})

_NOTHING = frozenset(
    {
        "none", "null", "nil", "true", "false", "undefined", "str", "string", "int", "bool",
        "bytes", "any", "number", "boolean", "optional", "required", "yes", "no", "on", "off",
        "env", "redacted", "secret", "secrets", "password", "passwd", "token", "xxx", "xxxx",
        "changeme", "hidden", "masked", "empty", "unset", "default", "placeholder", "dummy",
        "example", "sample", "value", "text", "object", "dict", "list", "array", "void",
        "secretstr", "char", "varchar", "uuid", "sha256", "hash", "bearer", "basic", "apikey",
        "api_key", "your_api_key", "pass", "auth", "credentials", "key", "foo", "bar", "baz",
        "qux",
    }
)  # fmt: skip
_PLACEHOLDER_WORD = re.compile(
    r"(?:your|my|insert|enter|replace|put|example|sample|dummy|fake|placeholder|change)"
    r"(?:[-_ ][\w\- ]*)?",
    re.IGNORECASE,
)
_CAPS_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # YOUR_API_KEY, OPENAI_API_KEY
# Names in code are made of words: digits, if any, at the end of a part.
_SNAKE_NAME = re.compile(r"_*[a-z]+\d*(?:_+[a-z]+\d*)+")  # new_password, api_key
_CAMEL_NAME = re.compile(r"[a-z]+(?:[A-Z][a-z]+)+\d*")  # accessToken, hashedPassword
# a path of names whose first part is a word (os.environ, rust_openssl.hpke.Ed448Key)
_DOTTED_NAME = re.compile(
    r"(?:[a-z_$][a-z0-9_$]*|[a-z]+(?:[A-Z][a-z]+)+|[A-Z][a-z]+(?:[A-Z][a-z]+)*)"
    r"(?:\.[A-Za-z_$][\w$]*)+"
)
_PLAIN_WORD = re.compile(r"[A-Za-z_\-]+")
_MASK_CHARS = frozenset("*xX.-•#_ ")
_NOT_FIRST = ("$", "%", "<", "{", "[", "(", "&", "@", "#", "`")
_SECRET_WORDS = ("password", "passwd", "token", "secret", "apikey", "api_key", "api-key")
Strength = Literal["word", "token", "generated"]


def key_kind(key: str, *, in_query: bool = False, flag: bool = False) -> str | None:
    """The kind of secret ``key`` names, or None. ``in_query``: the key stands in a
    URL's query string; ``flag``: it is a command-line option (``--password``)."""
    name = key.lstrip("-_$@").lower()
    squeezed = name.replace("_", "").replace("-", "").replace(".", "")
    if not squeezed or squeezed in _NOT_SECRET_KEYS:
        return None
    if in_query and name in _QUERY_ONLY:
        return "secret"
    for ending, kind in _ENDINGS:
        if squeezed.endswith(ending):
            return kind
    if squeezed in _WEAK_KEYS or name.endswith(("_auth", "_pass", "-pass", ".pass")):
        return _WEAK_KEYS.get(squeezed, "password" if name.endswith("pass") else "secret")
    if flag and squeezed == "pass":
        return "password"
    return None


def strength_for(key: str, kind: str) -> Strength:
    """How much a value under ``key`` must look like a secret: a password may be any
    word; a token or key has no spaces and looks generated; under a key that says
    little on its own (``auth``, ``*_pass``, ``credentials``), a value must hold a
    digit."""
    name = key.lstrip("-_$@").lower()
    squeezed = name.replace("_", "").replace("-", "").replace(".", "")
    if squeezed in _WEAK_KEYS or squeezed.endswith(_WEAK_ENDINGS):
        return "generated"
    return "word" if kind == "password" else "token"


def is_secret(
    value: str, *, quoted: bool = True, spaced: bool = False, strength: Strength = "word"
) -> bool:
    """Whether ``value`` (stored under a key that names a secret) could be one.

    ``quoted``: the value was in quotes (or is a JSON string), so it is data, not
    code. ``spaced``: unquoted, after a separator with spaces around it (``x = y``,
    ``x: y``), where a plain word is more likely code or prose than a password.
    ``strength``: "word" (a password: any word that is not a placeholder), "token"
    (no spaces, 5 characters or more, a digit or both cases), "generated" (8 or more
    with a digit).
    """
    text = value.strip()
    if len(text) < 3 or text.startswith(_NOT_FIRST) or text.endswith("\\"):
        return False
    lowered = text.lower()
    if lowered in _NOTHING or set(text) <= _MASK_CHARS or "***" in text or "xxxx" in lowered:
        return False
    if "..." in text or "…" in text or "${" in text or "{{" in text or "$(" in text:
        return False
    if text.isdigit() and len(text) < 6:
        return False
    if text.endswith(">") and "<" in text:
        return False
    if _PLACEHOLDER_WORD.fullmatch(text) or _CAPS_NAME.fullmatch(text):
        return False
    digits = any(c.isdigit() for c in text)
    if not digits and any(word in lowered for word in _SECRET_WORDS):
        return False  # "my-secret-token", "challengePassword": a name for one
    if strength != "word" and (len(text) < 5 or any(c.isspace() for c in text)):
        return False
    if strength == "generated" and not (digits and len(text) >= 8):
        return False
    if strength == "token" and not (digits or (text.lower() != text and text.upper() != text)):
        return False
    if quoted:
        return True
    return not (code_name(text) or (spaced and _PLAIN_WORD.fullmatch(text)))


def code_name(text: str) -> bool:
    """Whether an unquoted value is a name in code: ``new_password``, ``accessToken``,
    ``self.password``, ``rust_openssl.hpke.X25519PrivateKey``, ``_token``."""
    if text.startswith("_") or _SNAKE_NAME.fullmatch(text) or _CAMEL_NAME.fullmatch(text):
        return True
    return _DOTTED_NAME.fullmatch(text) is not None


def looks_like_path(value: str) -> bool:
    """A file path (``/home/me/key.json``, ``~/.aws/credentials``, ``./creds.json``)."""
    if value.startswith(("/", "~/", "./", "../")) and "/" in value[1:]:
        return True
    return value.endswith((".json", ".pem", ".key", ".txt", ".yaml", ".yml"))
