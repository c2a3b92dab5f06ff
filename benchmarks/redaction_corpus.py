"""The redaction corpus: secrets of many types in every placement that makes sense
for them (redaction_secrets.py, built from redaction_forms.py), and look-alikes that
must be left alone: placeholders (``YOUR_API_KEY``, ``sk-...``, ``<token>``),
references (``$TOKEN``, ``${{ secrets.X }}``), code (``password = getpass()``),
commands that prompt for a password, and random-looking values that are no secret
(git SHAs, UUIDs, hashes, base64 image data, entry and tool-call ids, paths, words).

``secret_cases()`` and ``lookalike_cases()`` give the cases, the same for a seed;
benchmarks/redaction.py measures them and tests/views/test_redaction.py holds the
redactor to them. Run from anywhere: ``sys.path`` needs this folder only.
"""

from __future__ import annotations

import base64
import json
import random
import uuid

from redaction_forms import (
    B64,
    B64URL,
    BASE62,
    HEX,
    PLACEMENTS,
    Case,
    Form,
    Kind,
    b64url_of,
    lines_holding,
    pick,
)
from redaction_secrets import secret_kinds


def secret_cases(seed: int = 7) -> list[Case]:
    """Every secret type in each of its placements, a fresh value for each case."""
    rng = random.Random(seed)
    cases = []
    for kind in secret_kinds():
        for placement in PLACEMENTS:
            form = kind.forms.get(placement)
            if form is None:
                continue
            value = kind.make(rng)
            text, secret = form(value), kind.secret(value)
            lines = lines_holding(text, secret)
            assert lines, f"{kind.name}/{placement}: the form lost its secret"
            cases.append(Case(kind.name, placement, text, secret, lines, kind.category))
    return cases


def lookalike_cases(seed: int = 7) -> list[Case]:
    """Every look-alike in each of its placements."""
    rng = random.Random(seed)
    cases = []
    for kind in lookalike_kinds():
        for placement in PLACEMENTS:
            form = kind.forms.get(placement)
            if form is not None:
                text = form(kind.make(rng))
                cases.append(Case(kind.name, placement, text, None, category=kind.category))
    return cases


def _fixed(**texts: str) -> dict[str, Form]:
    """Forms that hold fixed texts (the look-alike is in the text itself)."""
    return {placement: (lambda _, text=text: text) for placement, text in texts.items()}


def _png(rng: random.Random) -> str:
    head = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAA")
    body = head + bytes(rng.randrange(256) for _ in range(600))
    return base64.b64encode(body).decode()


def lookalike_kinds() -> list[Kind]:
    """Things that look like secrets and are not."""
    k: list[Kind] = []
    none = lambda rng: ""  # noqa: E731 (the text is fixed)

    def add(name: str, category: str, make: object, forms: dict[str, Form]) -> None:
        k.append(Kind(name, category, make, forms))  # type: ignore[arg-type]

    held = "placeholders"
    add(
        "ellipsis-placeholders",
        held,
        none,
        _fixed(
            bare="Keys look like sk-proj-... or sk-ant-api03-...; put yours in .env.",
            shell='export ANTHROPIC_API_KEY="sk-ant-..."\nexport OPENAI_API_KEY=sk-...',
            json='{\n  "apiKey": "sk-...",\n  "githubToken": "ghp_..."\n}',
            env="OPENAI_API_KEY=sk-...\nSLACK_BOT_TOKEN=xoxb-...\nAWS_ACCESS_KEY_ID=AKIA...\n",
            output="README.md:12:export GROQ_API_KEY=gsk_...\n"
            "README.md:13:export XAI_API_KEY=xai-...",
        ),
    )
    add(
        "masked-values",
        held,
        none,
        _fixed(
            bare="The key ends in ****a1b2, and the password shown is ********.",
            shell="export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            json='{"password": "********", "apiKey": "sk-proj-XXXXXXXXXXXXXXXXXXXXXXXX"}',
            env="AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX\nAWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxx\n",
            output="token=•••••••• (hidden)\napi_key: [REDACTED:api-key]\nsecret: [REDACTED]",
        ),
    )
    add(
        "named-placeholders",
        held,
        none,
        _fixed(
            bare="Replace YOUR_API_KEY with the key from the dashboard.",
            shell='curl -H "Authorization: Bearer <token>" https://api.example.com/v1/me',
            json='{"apiKey": "YOUR_API_KEY", "password": "<your-password>", "token": "REPLACE_ME"}',
            env="OPENAI_API_KEY=your-api-key-here\nDB_PASSWORD=changeme\nSECRET_KEY=change-me\n",
            output="postgresql://<user>:<password>@localhost:5432/<db>",
        ),
    )
    add(
        "env-references",
        held,
        none,
        _fixed(
            bare="CI reads ${{ secrets.NPM_TOKEN }} and passes it on as $NODE_AUTH_TOKEN.",
            shell='PGPASSWORD=$PGPASS psql -h db\ncurl -u "$CI_USER:$CI_PASS" https://ci.example.com\n'
            'mysql -u root -p"$MYSQL_PWD" shop\nmongodump --password "$MONGO_PASSWORD"',
            json='{"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "password": "%DB_PASSWORD%"}}',
            env="DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app\nAPI_KEY=${API_KEY}\n",
            output='headers: {"Authorization": "Bearer $TOKEN"}\ntoken: {{ .Values.token }}',
        ),
    )
    code = "code"
    add(
        "code-references",
        code,
        none,
        _fixed(
            bare='It reads `api_key = os.environ["OPENAI_API_KEY"]` and `password = getpass()`.',
            shell="python -c 'import os; token = os.getenv(\"GH_TOKEN\"); print(bool(token))'",
            json='{"password": null, "token": "", "apiKey": false, "secret": "secret"}',
            output="src/auth.py:10:def login(username: str, password: str) -> Session:\n"
            "src/auth.py:11:    self.password = password\n"
            "src/auth.py:12:    client = Client(api_key=api_key, token=access_token)\n"
            "src/auth.ts:4:const token = process.env.GITHUB_TOKEN;\n"
            "src/auth.ts:5:  password: hashedPassword,\n"
            'src/auth.py:13:    headers = {"Authorization": f"Bearer {token}"}\n'
            "src/auth.py:14:    secret_key = settings.SECRET_KEY\n"
            "src/auth.py:15:    token: str = Field(...)",
        ),
    )
    add(
        "prompting-commands",
        code,
        none,
        _fixed(
            bare="Run `mysql -u root -p shop` and type the password when asked.",
            shell='echo "$PAT" | docker login ghcr.io -u ci --password-stdin\n'
            "psql --no-password -h db app\ncurl -u deploy https://ci.example.com/api\n"
            "ssh -p 2222 deploy@10.0.4.12",
            json='{"command": "mysqldump -u backup -p --all-databases"}',
            output="$ history | tail -2\n  601  mysql -u root -p\n"
            "  602  sshpass -e ssh deploy@host",
        ),
    )
    add(
        "token-counts-and-settings",
        code,
        none,
        _fixed(
            bare="The reply used max_tokens=4096 and a token: it counts as one.",
            shell="python train.py --max-tokens 4096 --tokenizer cl100k_base",
            json='{"inputTokens": 12345, "outputTokens": 678, "maxTokens": 8192, '
            '"passwordMinLength": 12, "tokenExpirySeconds": 3600}',
            env="TOKEN_EXPIRY_SECONDS=3600\nPASSWORD_RESET_TIMEOUT=900\nSECRET_VERSION=3\n",
            output="usage: input_tokens=1534 output_tokens=211 cache_read_tokens=90112\n"
            "Total tokens: 91857",
        ),
    )
    add(
        "prose-about-secrets",
        code,
        none,
        _fixed(
            bare="The token: it is refreshed hourly. The secret: rotate it monthly. "
            "Password: see the team vault. It uses Bearer authentication.",
            output="Rotated the secret; the old one expires tomorrow. API key: set it in Settings.",
        ),
    )
    ids = "ids and hashes"
    add(
        "git-sha",
        ids,
        lambda rng: pick(rng, HEX, 40),
        {
            "bare": lambda v: f"The fix landed in commit {v} on main.",
            "shell": lambda v: f"git show {v} --stat && git revert --no-edit {v[:12]}",
            "json": lambda v: json.dumps({"sha": v, "ref": "refs/heads/main"}),
            "output": lambda v: f"commit {v}\nAuthor: Dana <dana@example.com>\n\n    Fix parser",
        },
    )
    add(
        "uuid",
        ids,
        lambda rng: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        {
            "bare": lambda v: f"The request id was {v}.",
            "json": lambda v: json.dumps({"id": v, "sessionId": v, "traceId": v.replace("-", "")}),
            "env": lambda v: f"INSTANCE_ID={v}\n",
            "output": lambda v: f"Created session {v} in ~/.pi/agent/sessions/{v}.jsonl",
        },
    )
    add(
        "sha256-hashes",
        ids,
        lambda rng: pick(rng, HEX, 64),
        {
            "bare": lambda v: f"The tarball's sha256 is {v}.",
            "shell": lambda v: f"echo '{v}  app.tar.gz' | sha256sum -c -",
            "json": lambda v: json.dumps({"digest": f"sha256:{v}", "size": 1024}),
            "output": lambda v: f"{v}  dist/app.tar.gz\nimage@sha256:{v}\n--hash=sha256:{v}",
        },
    )
    add(
        "integrity-hashes",
        ids,
        lambda rng: pick(rng, B64, 86) + "==",
        {
            "json": lambda v: json.dumps(
                {
                    "resolved": "https://registry.npmjs.org/x/-/x-1.0.0.tgz",
                    "integrity": f"sha512-{v}",
                },
                indent=2,
            ),
            "output": lambda v: f'<script src="app.js" integrity="sha512-{v}"></script>',
        },
    )
    add(
        "base64-image-data",
        ids,
        _png,
        {
            "bare": lambda v: f"![screenshot](data:image/png;base64,{v})",
            "json": lambda v: json.dumps({"type": "image", "data": v, "mimeType": "image/png"}),
            "output": lambda v: f'<img src="data:image/png;base64,{v}" alt="chart">',
        },
    )
    add(
        "base64-file-content",
        ids,
        lambda rng: base64.b64encode(
            b"# settings\nport = 8080\nlog_level = 'debug'\nworkers = 4\n"
        ).decode(),
        {
            "shell": lambda v: f"echo '{v}' | base64 -d > settings.toml",
            "json": lambda v: json.dumps(
                {"path": "settings.toml", "content": v, "encoding": "base64"}
            ),
        },
    )
    add(
        "session-and-tool-ids",
        ids,
        lambda rng: pick(rng, BASE62, 24),
        {
            "bare": lambda v: f"Entry a1b2c3d4 (parent 9f8e7d6c) answered tool call toolu_01{v}.",
            "json": lambda v: json.dumps(
                {
                    "id": f"msg_01{v}",
                    "toolCallId": f"call_{v}|fc_{v.lower()}",
                    "requestId": f"req_011C{v}",
                    "parentId": "9f8e7d6c",
                }
            ),
            "output": lambda v: f"chatcmpl-{v[:20]}AbCd\nresp_{pick(random.Random(v), HEX, 48)}",
        },
    )
    add(
        "ssh-public-material",
        ids,
        lambda rng: pick(rng, B64, 43),
        {
            "bare": lambda v: f"The host key fingerprint is SHA256:{v}.",
            "env": lambda v: (
                f"DEPLOY_PUBLIC_KEY=ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{v[:43]} ci@acme\n"
            ),
            "output": lambda v: (
                f"256 SHA256:{v} ci@acme (ED25519)\n-----BEGIN PUBLIC KEY-----\n"
                f"MCowBQYDK2VwAyEA{v}\n-----END PUBLIC KEY-----\n-----BEGIN CERTIFICATE-----\n"
                f"MIIBszCCAVmgAwIBAgIU{v}\n-----END CERTIFICATE-----"
            ),
        },
    )
    add(
        "jwt-header-only",
        ids,
        lambda rng: b64url_of({"alg": "RS256", "typ": "JWT"}),
        {
            "bare": lambda v: f"A token starts with its header, e.g. {v}, then a dot.",
            "json": lambda v: json.dumps({"exampleHeader": v}),
        },
    )
    web = "other public values"
    add(
        "urls-without-passwords",
        web,
        none,
        _fixed(
            bare="Clone https://dana@github.com/acme/api.git or git@github.com:acme/api.git.",
            shell="curl 'http://localhost:8080/api/items?page=2&sort=desc&token='",
            json='{"dsn": "postgres://localhost:5432/app", "redis": "redis://cache:6379/0"}',
            env="DATABASE_URL=postgresql://app@db.internal:5432/app\nAPI_BASE=https://api.example.com\n",
        ),
    )
    add(
        "stripe-publishable-key",
        web,
        lambda rng: f"pk_live_{pick(rng, BASE62, 99)}",
        {
            "bare": lambda v: f"The checkout page embeds the publishable key {v}.",
            "output": lambda v: f"<script>Stripe('{v}')</script>",
        },
    )
    add(
        "aws-resource-names",
        web,
        none,
        _fixed(
            bare="The role is arn:aws:iam::123456789012:role/deploy in account 123456789012.",
            json='{"RoleArn": "arn:aws:iam::123456789012:role/deploy", "RoleSessionName": "ci"}',
        ),
    )
    add(
        "paths-and-names",
        web,
        none,
        _fixed(
            bare="It reads ~/.ssh/id_ed25519, ~/.aws/credentials and src/auth/token_refresh.py.",
            shell="export GOOGLE_APPLICATION_CREDENTIALS=/home/dev/.config/gcloud/adc.json",
            env="PWD=/home/dev/projects/api\nOLDPWD=/home/dev\nSSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1\n",
            output="secretKeyRef:\n  name: db-secret\n  key: password\n"
            "pod/api-7d9f8b6c5d-x2x9k Running",
        ),
    )
    add(
        "long-words-and-identifiers",
        web,
        none,
        _fixed(
            bare="internationalization counterrevolutionaries getAccessTokenFromRefreshTokenAsync",
            output="tests/test_tokens.py::TestTokenRefresh::test_refresh_token_rotation PASSED\n"
            "main.3f2a9c1b.chunk.js  v2.31.0-rc.1+build.20250601  node:20.11.1-bookworm-slim",
        ),
    )
    return k


def _self_check() -> None:
    """Every base64 alphabet the corpus uses is one a value maker relies on."""
    assert set(B64URL) - set(B64) == {"-", "_"}
