"""Building blocks of the redaction corpus (redaction_corpus.py): synthetic values with
the shapes of real secrets, and forms, the texts that hold a value as it stands in
one placement of a coding agent's session:

- ``bare``: in prose (a user or an assistant saying it),
- ``shell``: in a command (a bash tool call's arguments),
- ``json``: in a JSON document (a config file read, an API answer),
- ``env``: in an env or config file,
- ``url``: in a URL,
- ``output``: in a tool's output (grep hits, logs, a file printed, shell history).

Every value is generated from a seeded random source with the prefix, length and
alphabet a provider documents, so no real secret is in this repository.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field

PLACEMENTS = ("bare", "shell", "json", "env", "url", "output")

Form = Callable[[str], str]


@dataclass(frozen=True)
class Case:
    """One text to redact. ``secret`` is what must not survive (None for look-alikes);
    ``lines`` the 1-based lines of ``text`` it stands on (a key block spans several)."""

    kind: str
    placement: str
    text: str
    secret: str | None
    lines: frozenset[int] = field(default_factory=frozenset)
    category: str = ""


@dataclass(frozen=True)
class Kind:
    name: str
    category: str
    make: Callable[[random.Random], str]
    forms: dict[str, Form]
    secret_of: Callable[[str], str] = lambda value: value

    def secret(self, value: str) -> str:
        """What must not survive redaction: the value, or its secret part."""
        return key_body(value) if "PRIVATE KEY" in value else self.secret_of(value)


# --- values ------------------------------------------------------------------------------

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
BASE62 = LOWER + UPPER + DIGITS
B64 = BASE62 + "+/"
B64URL = BASE62 + "-_"
HEX = "0123456789abcdef"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def pick(r: random.Random, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet``; for alphabets with letters and digits, at
    least one of each kind the alphabet has (as a generated key almost always does)."""
    while True:
        value = "".join(r.choice(alphabet) for _ in range(n))
        kinds = [k for k in (LOWER, UPPER, DIGITS) if set(k) & set(alphabet)]
        if n < 8 or all(set(value) & set(k) for k in kinds):
            return value


def password(r: random.Random) -> str:
    """A password as people pick them or managers make them: letters, digits, ``_-.``."""
    while True:
        value = pick(r, BASE62, r.randint(9, 14)) + r.choice("_-.") + pick(r, BASE62, 3)
        if value[-1].isalnum():
            return value


def b64_of(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def b64url_of(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def jwt(r: random.Random, claims: dict[str, object] | None = None) -> str:
    header = b64url_of({"alg": "HS256", "typ": "JWT"})
    body = claims or {"sub": str(r.randint(10**5, 10**6)), "name": "Dana", "iat": 1748764800}
    return f"{header}.{b64url_of(body)}.{pick(r, B64URL, 43)}"


def pem(r: random.Random, label: str, lines: int, head: str = "") -> str:
    body = [head + pick(r, B64, 64 - len(head))] + [pick(r, B64, 64) for _ in range(lines - 1)]
    return f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----"


def pgp_key(r: random.Random) -> str:
    body = ["lQOYBG" + pick(r, B64, 58)] + [pick(r, B64, 64) for _ in range(14)]
    return (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + "\n".join(body)
        + f"\n={pick(r, B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"
    )


def key_body(value: str) -> str:
    """The secret part of a key block: its base64 lines, without the armor."""
    return "\n".join(line for line in value.splitlines() if line and not line.startswith("-"))


# --- forms -------------------------------------------------------------------------------


def shaped(env: str, field_name: str, param: str = "token", cls: str = "Client") -> dict[str, Form]:
    """Forms for a secret with a shape of its own: it is caught wherever it stands."""
    slug = env.lower().split("_")[0]
    return {
        "bare": lambda v: f"Use {v} for the staging account, then rotate it after the demo.",
        "shell": lambda v: f'export {env}="{v}" && ./scripts/deploy.sh --stage prod',
        "json": lambda v: json.dumps(
            {"name": "billing-sync", field_name: v, "retries": 3}, indent=2
        ),
        "env": lambda v: f"# service settings\nLOG_LEVEL=info\n{env}={v}\nPORT=8080\n",
        "url": lambda v: f"GET https://api.example.net/v1/reports?{param}={v}&page=2 -> 200",
        "output": lambda v: (
            f'src/{slug}/client.py:41:    client = {cls}("{v}")\n'
            f"src/{slug}/client.py:42:    client.ping()"
        ),
    }


def keyed(env: str, field_name: str, param: str | None = None) -> dict[str, Form]:
    """Forms for a secret known only by the name it is stored under."""
    forms: dict[str, Form] = {
        "shell": lambda v: f"export {env}='{v}'\npython manage.py sync --all",
        "json": lambda v: json.dumps(
            {"region": "eu-west-1", field_name: v, "timeout": 30}, indent=2
        ),
        "env": lambda v: f"DEBUG=false\n{env}={v}\nWORKERS=4\n",
        "output": lambda v: (
            f"2025-06-01 10:42:07 DEBUG settings loaded: "
            f"{{'region': 'eu-west-1', '{field_name}': '{v}', 'timeout': 30}}"
        ),
    }
    if param is not None:
        forms["url"] = lambda v: f"curl -s 'https://api.example.net/v2/items?{param}={v}&limit=10'"
    return forms


def in_url(url: Callable[[str], str], env: str, field_name: str) -> dict[str, Form]:
    """Forms for a secret that stands inside a URL (a password, a webhook's path)."""
    return {
        "bare": lambda v: f"The service connects with {url(v)} at start-up.",
        "shell": lambda v: f'./bin/migrate --url "{url(v)}" --dry-run',
        "json": lambda v: json.dumps({field_name: url(v), "poolSize": 5}, indent=2),
        "env": lambda v: f"NODE_ENV=production\n{env}={url(v)}\n",
        "output": lambda v: f"[2025-06-01T10:42:07Z] INFO  connecting to {url(v)}\nready in 212ms",
    }


def header(name: str, scheme: str) -> dict[str, Form]:
    """Forms for a secret sent in an HTTP header (``Authorization: Basic ...``)."""
    value = (lambda v: f"{scheme} {v}") if scheme else (lambda v: v)
    return {
        "bare": lambda v: f"Call the API with the header `{name}: {value(v)}` set.",
        "shell": lambda v: f'curl -sS -H "{name}: {value(v)}" https://api.example.com/v2/items',
        "json": lambda v: json.dumps(
            {"method": "GET", "headers": {name: value(v), "Accept": "application/json"}}, indent=2
        ),
        "output": lambda v: (
            f"> GET /v2/items HTTP/1.1\n> Host: api.example.com\n> {name}: {value(v)}\n"
            "> Accept: */*\n< HTTP/1.1 200 OK"
        ),
    }


def command(template: str) -> dict[str, Form]:
    """Forms for a secret given inline to a command (``mysql -pX``)."""
    return {
        "bare": lambda v: f"I connected with `{template.format(v=v)}` and it worked.",
        "shell": lambda v: template.format(v=v),
        "json": lambda v: json.dumps({"command": template.format(v=v), "timeout": 120}),
        "output": lambda v: f"$ history | tail -3\n  510  ls -la\n  511  {template.format(v=v)}\n",
    }


def key_block(json_field: str) -> dict[str, Form]:
    """Forms for a private key block."""
    return {
        "bare": lambda v: f"Here is the deploy key you asked for:\n\n{v}\n\nKeep it out of git.",
        "shell": lambda v: (
            f"cat > ~/.ssh/deploy_key <<'EOF'\n{v}\nEOF\nchmod 600 ~/.ssh/deploy_key"
        ),
        "json": lambda v: json.dumps({"type": "service_account", json_field: v + "\n"}, indent=2),
        "env": lambda v: f'APP_ENV=prod\nSIGNING_KEY="{v}"\n',
        "output": lambda v: f"$ cat ~/.ssh/id_deploy\n{v}\n",
    }


def sts_answer(v: str) -> str:
    return json.dumps(
        {
            "Credentials": {
                "AccessKeyId": "ASIA" + "Q" * 4 + "EXAMPLE" + "7" * 5,
                "SecretAccessKey": v,
                "Expiration": "2025-06-01T11:42:07+00:00",
            },
            "AssumedRoleUser": {"Arn": "arn:aws:sts::123456789012:assumed-role/deploy/ci"},
        },
        indent=4,
    )


# --- judging -----------------------------------------------------------------------------

WINDOW = 12


def pieces(secret: str) -> list[str]:
    """The parts of a secret that must not survive: each 12-character window of each
    line of it (so a key cut in two, or a token redacted only in part, still leaks)."""
    found = []
    for segment in secret.split():
        width = min(WINDOW, len(segment))
        found += [segment[i : i + width] for i in range(len(segment) - width + 1)]
    return found


def leaked(secret: str, text: str) -> bool:
    return any(piece in text for piece in pieces(secret))


def lines_holding(text: str, secret: str) -> frozenset[int]:
    """The 1-based lines of ``text`` on which part of ``secret`` stands, with the armor
    lines of a key block."""
    parts = pieces(secret)
    lines = text.splitlines()
    found = {n for n, line in enumerate(lines, 1) if any(p in line for p in parts)}
    if found and "\n" in secret:
        first, last = min(found), max(found)
        found |= {n for n in range(first - 2, last + 2) if 0 < n <= len(lines)}
    return frozenset(found)
