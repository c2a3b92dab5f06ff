"""The secret types of the redaction corpus, by category: each a value maker and the
forms it stands in (redaction_forms.py). Used through redaction_corpus.py.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from redaction_forms import (
    B64,
    B64URL,
    BASE62,
    BECH32,
    DIGITS,
    HEX,
    LOWER,
    UPPER,
    Form,
    Kind,
    b64_of,
    command,
    header,
    in_url,
    jwt,
    key_block,
    keyed,
    password,
    pem,
    pgp_key,
    pick,
    shaped,
    sts_answer,
)

R = random.Random  # for the lambdas below


def secret_kinds() -> list[Kind]:
    """Every secret type of the corpus, by category."""
    k: list[Kind] = []

    def add(name: str, category: str, make: Callable[[R], str], forms: dict[str, Form]) -> None:
        k.append(Kind(name, category, make, forms))

    ai = "model providers"
    add(
        "anthropic-api-key",
        ai,
        lambda r: f"sk-ant-api03-{pick(r, B64URL, 93)}AA",
        shaped("ANTHROPIC_API_KEY", "apiKey", "key", "Anthropic"),
    )
    add(
        "anthropic-admin-key",
        ai,
        lambda r: f"sk-ant-admin01-{pick(r, B64URL, 93)}AA",
        shaped("ANTHROPIC_ADMIN_KEY", "adminKey"),
    )
    add(
        "openai-project-key",
        ai,
        lambda r: f"sk-proj-{pick(r, B64URL, 124)}",
        shaped("OPENAI_API_KEY", "openaiKey", "api_key", "OpenAI"),
    )
    add(
        "openai-legacy-key",
        ai,
        lambda r: f"sk-{pick(r, BASE62, 20)}T3BlbkFJ{pick(r, BASE62, 20)}",
        shaped("OPENAI_API_KEY", "key"),
    )
    add(
        "openai-service-account-key",
        ai,
        lambda r: f"sk-svcacct-{pick(r, B64URL, 100)}",
        shaped("OPENAI_SVC_KEY", "serviceKey"),
    )
    add(
        "openrouter-key",
        ai,
        lambda r: f"sk-or-v1-{pick(r, HEX, 64)}",
        shaped("OPENROUTER_API_KEY", "openrouter"),
    )
    add(
        "google-api-key",
        ai,
        lambda r: f"AIza{pick(r, B64URL, 35)}",
        shaped("GEMINI_API_KEY", "geminiKey", "key"),
    )
    add("groq-key", ai, lambda r: f"gsk_{pick(r, BASE62, 52)}", shaped("GROQ_API_KEY", "groq"))
    add("xai-key", ai, lambda r: f"xai-{pick(r, BASE62, 80)}", shaped("XAI_API_KEY", "xai"))
    add(
        "perplexity-key",
        ai,
        lambda r: f"pplx-{pick(r, BASE62, 48)}",
        shaped("PPLX_API_KEY", "pplx"),
    )
    add(
        "cerebras-key",
        ai,
        lambda r: f"csk-{pick(r, LOWER + DIGITS, 48)}",
        shaped("CEREBRAS_API_KEY", "cerebras"),
    )
    add(
        "huggingface-token",
        ai,
        lambda r: f"hf_{pick(r, BASE62, 34)}",
        shaped("HF_TOKEN", "hfToken"),
    )
    add(
        "replicate-token",
        ai,
        lambda r: f"r8_{pick(r, BASE62, 37)}",
        shaped("REPLICATE_API_TOKEN", "replicate"),
    )
    add(
        "mistral-api-key",
        ai,
        lambda r: pick(r, BASE62, 32),
        keyed("MISTRAL_API_KEY", "mistralApiKey", "api_key"),
    )
    add("azure-openai-key", ai, lambda r: pick(r, HEX, 32), header("api-key", ""))

    code = "code and packages"
    add(
        "github-classic-pat",
        code,
        lambda r: f"ghp_{pick(r, BASE62, 36)}",
        shaped("GITHUB_TOKEN", "token", "access_token", "Github"),
    )
    add(
        "github-fine-grained-pat",
        code,
        lambda r: f"github_pat_{pick(r, BASE62, 22)}_{pick(r, BASE62, 59)}",
        shaped("GH_TOKEN", "githubToken"),
    )
    add(
        "github-oauth-token",
        code,
        lambda r: f"gho_{pick(r, BASE62, 36)}",
        shaped("GITHUB_OAUTH", "oauth"),
    )
    add(
        "github-app-token",
        code,
        lambda r: f"ghs_{pick(r, BASE62, 36)}",
        in_url(
            lambda v: f"https://x-access-token:{v}@github.com/acme/api.git", "REPO_URL", "remote"
        ),
    )
    add(
        "gitlab-pat",
        code,
        lambda r: f"glpat-{pick(r, B64URL, 20)}",
        shaped("GITLAB_TOKEN", "gitlab", "private_token"),
    )
    npm = shaped("NPM_TOKEN", "npmToken")
    npm["env"] = lambda v: (
        f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={v}\n"
    )
    add("npm-token", code, lambda r: f"npm_{pick(r, BASE62, 36)}", npm)
    pypi = shaped("TWINE_PASSWORD", "pypi")
    pypi["env"] = lambda v: f"[pypi]\n  username = __token__\n  password = {v}\n"
    add("pypi-token", code, lambda r: f"pypi-AgEIcHlwaS5vcmc{pick(r, B64URL, 120)}", pypi)
    add(
        "docker-hub-pat",
        code,
        lambda r: f"dckr_pat_{pick(r, B64URL, 27)}",
        shaped("DOCKERHUB_TOKEN", "docker"),
    )
    add(
        "rubygems-key",
        code,
        lambda r: f"rubygems_{pick(r, HEX, 48)}",
        shaped("GEM_HOST_API_KEY", "rubygems"),
    )
    add(
        "pulumi-token",
        code,
        lambda r: f"pul-{pick(r, HEX, 40)}",
        shaped("PULUMI_ACCESS_TOKEN", "pulumi"),
    )
    add(
        "postman-key",
        code,
        lambda r: f"PMAK-{pick(r, HEX, 24)}-{pick(r, HEX, 34)}",
        shaped("POSTMAN_API_KEY", "postman"),
    )
    add(
        "figma-token", code, lambda r: f"figd_{pick(r, B64URL, 40)}", shaped("FIGMA_TOKEN", "figma")
    )
    add(
        "sentry-auth-token",
        code,
        lambda r: f"sntrys_{pick(r, B64, 88)}",
        shaped("SENTRY_AUTH_TOKEN", "sentry"),
    )

    chat = "chat and webhooks"
    add(
        "slack-bot-token",
        chat,
        lambda r: f"xoxb-{pick(r, DIGITS, 12)}-{pick(r, DIGITS, 13)}-{pick(r, BASE62, 24)}",
        shaped("SLACK_BOT_TOKEN", "botToken"),
    )
    add(
        "slack-user-token",
        chat,
        lambda r: (
            f"xoxp-{pick(r, DIGITS, 12)}-{pick(r, DIGITS, 12)}-{pick(r, DIGITS, 13)}-"
            + pick(r, HEX, 32)
        ),
        shaped("SLACK_USER_TOKEN", "userToken"),
    )
    add(
        "slack-app-token",
        chat,
        lambda r: f"xapp-1-A{pick(r, UPPER + DIGITS, 10)}-{pick(r, DIGITS, 13)}-{pick(r, HEX, 64)}",
        shaped("SLACK_APP_TOKEN", "appToken"),
    )
    k.append(
        Kind(
            "slack-webhook",
            chat,
            lambda r: (
                f"T{pick(r, UPPER + DIGITS, 8)}/B{pick(r, UPPER + DIGITS, 10)}/"
                + pick(r, BASE62, 24)
            ),
            in_url(
                lambda v: f"https://hooks.slack.com/services/{v}", "SLACK_WEBHOOK_URL", "webhook"
            ),
            lambda v: v.rsplit("/", 1)[1],
        )
    )
    add(
        "discord-bot-token",
        chat,
        lambda r: f"{b64_of(pick(r, DIGITS, 18))}.{pick(r, B64URL, 6)}.{pick(r, B64URL, 38)}",
        shaped("DISCORD_TOKEN", "discord", "token", "Bot"),
    )
    k.append(
        Kind(
            "discord-webhook",
            chat,
            lambda r: f"{pick(r, DIGITS, 18)}/{pick(r, B64URL, 68)}",
            in_url(lambda v: f"https://discord.com/api/webhooks/{v}", "DISCORD_WEBHOOK", "hook"),
            lambda v: v.split("/", 1)[1],
        )
    )
    telegram = shaped("TELEGRAM_BOT_TOKEN", "telegram")
    telegram["url"] = lambda v: f"curl -s https://api.telegram.org/bot{v}/getUpdates"
    add(
        "telegram-bot-token",
        chat,
        lambda r: f"{pick(r, DIGITS, 10)}:AA{pick(r, B64URL, 33)}",
        telegram,
    )

    cloud = "cloud"
    add(
        "aws-access-key-id",
        cloud,
        lambda r: f"AKIA{pick(r, UPPER + '234567', 16)}",
        shaped("AWS_ACCESS_KEY_ID", "accessKeyId"),
    )
    aws = keyed("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key")
    aws["output"] = lambda v: (
        f"$ cat ~/.aws/credentials\n[default]\naws_access_key_id = AKIA{'Z' * 4}EXAMPLE{'3' * 5}\n"
        f"aws_secret_access_key = {v}\nregion = eu-west-1\n"
    )
    add("aws-secret-access-key", cloud, lambda r: pick(r, B64, 40), aws)
    add(
        "aws-sts-secret-in-json",
        cloud,
        lambda r: pick(r, B64, 40),
        {
            "json": sts_answer,
            "output": lambda v: (
                "$ aws sts assume-role --role-arn arn:aws:iam::123:role/deploy\n" + sts_answer(v)
            ),
            "bare": lambda v: (
                "The call returned " + json.dumps({"SecretAccessKey": v}) + " as expected."
            ),
            "shell": lambda v: f"aws configure set aws_secret_access_key {v} --profile ci",
        },
    )
    session = keyed("AWS_SESSION_TOKEN", "SessionToken")
    session["output"] = lambda v: json.dumps({"Credentials": {"SessionToken": v}}, indent=2)
    add("aws-session-token", cloud, lambda r: f"IQoJb3JpZ2luX2Vj{pick(r, B64, 340)}", session)
    add(
        "google-oauth-access-token",
        cloud,
        lambda r: f"ya29.{pick(r, B64URL, 150)}",
        shaped("GOOGLE_ACCESS_TOKEN", "access_token", "access_token"),
    )
    add(
        "google-oauth-refresh-token",
        cloud,
        lambda r: f"1//0{pick(r, B64URL, 100)}",
        shaped("GOOGLE_REFRESH_TOKEN", "refresh_token"),
    )
    add(
        "google-client-secret",
        cloud,
        lambda r: f"GOCSPX-{pick(r, B64URL, 28)}",
        shaped("GOOGLE_CLIENT_SECRET", "client_secret", "client_secret"),
    )
    azure = in_url(
        lambda v: (
            f"DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={v};"
            "EndpointSuffix=core.windows.net"
        ),
        "AZURE_STORAGE_CONNECTION_STRING",
        "connectionString",
    )
    azure["shell"] = lambda v: (
        f"az storage blob list --account-name acmeprod --account-key {v} -c logs"
    )
    add("azure-storage-account-key", cloud, lambda r: f"{pick(r, B64, 86)}==", azure)
    sas = "https://acmeprod.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r"
    add(
        "azure-sas-token",
        cloud,
        lambda r: f"{pick(r, BASE62, 20)}%2B{pick(r, BASE62, 18)}%2F{pick(r, BASE62, 4)}%3D",
        in_url(
            lambda v: f"{sas}&se=2025-07-01T00:00:00Z&spr=https&sig={v}", "BACKUP_SAS_URL", "sasUrl"
        ),
    )
    add(
        "digitalocean-token",
        cloud,
        lambda r: f"dop_v1_{pick(r, HEX, 64)}",
        shaped("DIGITALOCEAN_TOKEN", "doToken"),
    )
    add(
        "cloudflare-api-token",
        cloud,
        lambda r: pick(r, B64URL, 40),
        keyed("CLOUDFLARE_API_TOKEN", "apiToken"),
    )
    add(
        "vault-token",
        cloud,
        lambda r: f"hvs.CAESI{pick(r, B64URL, 90)}",
        shaped("VAULT_TOKEN", "vaultToken"),
    )
    add(
        "tailscale-auth-key",
        cloud,
        lambda r: f"tskey-auth-k{pick(r, BASE62, 10)}CNTRL-{pick(r, BASE62, 33)}",
        shaped("TS_AUTHKEY", "authKey"),
    )
    add(
        "databricks-token",
        cloud,
        lambda r: f"dapi{pick(r, HEX, 32)}",
        shaped("DATABRICKS_TOKEN", "databricks"),
    )
    add(
        "heroku-key",
        cloud,
        lambda r: f"HRKU-AA{pick(r, B64URL, 58)}",
        shaped("HEROKU_API_KEY", "heroku"),
    )
    add(
        "doppler-token",
        cloud,
        lambda r: f"dp.st.prd.{pick(r, BASE62, 43)}",
        shaped("DOPPLER_TOKEN", "doppler"),
    )

    saas = "services"
    add(
        "stripe-secret-key",
        saas,
        lambda r: f"sk_live_{pick(r, BASE62, 99)}",
        shaped("STRIPE_SECRET_KEY", "stripeKey", "key", "Stripe"),
    )
    add(
        "stripe-restricted-key",
        saas,
        lambda r: f"rk_live_{pick(r, BASE62, 99)}",
        shaped("STRIPE_RESTRICTED_KEY", "restricted"),
    )
    add(
        "stripe-webhook-secret",
        saas,
        lambda r: f"whsec_{pick(r, BASE62, 32)}",
        shaped("STRIPE_WEBHOOK_SECRET", "endpointSecret"),
    )
    add(
        "sendgrid-key",
        saas,
        lambda r: f"SG.{pick(r, B64URL, 22)}.{pick(r, B64URL, 43)}",
        shaped("SENDGRID_API_KEY", "sendgrid"),
    )
    add("twilio-api-key", saas, lambda r: f"SK{pick(r, HEX, 32)}", shaped("TWILIO_API_KEY", "sid"))
    add(
        "twilio-auth-token",
        saas,
        lambda r: pick(r, HEX, 32),
        keyed("TWILIO_AUTH_TOKEN", "authToken"),
    )
    supabase_claims = {
        "iss": "supabase",
        "ref": "qwertyuiopasdfghjklz",
        "role": "service_role",
        "iat": 1748764800,
        "exp": 2064340800,
    }
    add(
        "supabase-service-role-key",
        saas,
        lambda r: jwt(r, supabase_claims),
        shaped("SUPABASE_SERVICE_ROLE_KEY", "serviceRoleKey", "apikey", "createClient"),
    )
    add(
        "supabase-access-token",
        saas,
        lambda r: f"sbp_{pick(r, HEX, 40)}",
        shaped("SUPABASE_ACCESS_TOKEN", "supabase"),
    )
    add(
        "shopify-access-token",
        saas,
        lambda r: f"shpat_{pick(r, HEX, 32)}",
        shaped("SHOPIFY_ACCESS_TOKEN", "shopify"),
    )
    add(
        "linear-api-key",
        saas,
        lambda r: f"lin_api_{pick(r, BASE62, 40)}",
        shaped("LINEAR_API_KEY", "linear"),
    )
    add(
        "notion-token",
        saas,
        lambda r: f"ntn_{pick(r, DIGITS, 11)}{pick(r, BASE62, 35)}",
        shaped("NOTION_TOKEN", "notion"),
    )
    add(
        "atlassian-api-token",
        saas,
        lambda r: f"ATATT3xFfGF0{pick(r, B64URL, 180)}={pick(r, HEX, 8)}",
        shaped("JIRA_API_TOKEN", "jira"),
    )
    add(
        "grafana-service-account-token",
        saas,
        lambda r: f"glsa_{pick(r, BASE62, 32)}_{pick(r, HEX, 8)}",
        shaped("GRAFANA_TOKEN", "grafana"),
    )
    add(
        "datadog-api-key",
        saas,
        lambda r: pick(r, HEX, 32),
        keyed("DD_API_KEY", "datadogApiKey", "api_key"),
    )
    add(
        "new-relic-key",
        saas,
        lambda r: f"NRAK-{pick(r, UPPER + DIGITS, 27)}",
        shaped("NEW_RELIC_API_KEY", "newrelic"),
    )
    add(
        "airtable-token",
        saas,
        lambda r: f"pat{pick(r, BASE62, 14)}.{pick(r, HEX, 64)}",
        shaped("AIRTABLE_TOKEN", "airtable"),
    )
    add("mailgun-key", saas, lambda r: f"key-{pick(r, HEX, 32)}", shaped("MAILGUN_KEY", "mailgun"))
    add(
        "square-token",
        saas,
        lambda r: f"sq0atp-{pick(r, B64URL, 22)}",
        shaped("SQUARE_TOKEN", "square"),
    )

    keys = "private keys"
    add(
        "rsa-private-key",
        keys,
        lambda r: pem(r, "RSA PRIVATE KEY", 25, "MIIEpAIBAAKCAQEA"),
        key_block("private_key"),
    )
    add(
        "openssh-private-key",
        keys,
        lambda r: pem(r, "OPENSSH PRIVATE KEY", 7, "b3BlbnNzaC1rZXktdjEAAAAA"),
        key_block("key"),
    )
    add(
        "pkcs8-private-key",
        keys,
        lambda r: pem(r, "PRIVATE KEY", 4, "MIGHAgEAMBMGByqGSM49"),
        key_block("private_key"),
    )
    add("pgp-private-key", keys, pgp_key, key_block("armored"))
    add(
        "age-secret-key",
        keys,
        lambda r: f"AGE-SECRET-KEY-1{pick(r, BECH32, 58)}",
        shaped("SOPS_AGE_KEY", "ageKey"),
    )

    web = "web auth"
    add("jwt", web, jwt, shaped("AUTH_TOKEN", "accessToken", "jwt"))
    add(
        "jwt-in-cookie",
        web,
        jwt,
        {
            "bare": lambda v: (
                f"The response set `Set-Cookie: session={v}; Path=/; HttpOnly; Secure`."
            ),
            "shell": lambda v: (
                f'curl -s -b "session={v}; theme=dark" https://app.example.com/api/me'
            ),
            "json": lambda v: json.dumps(
                {"request": {"headers": [{"name": "Cookie", "value": f"session={v}; lang=en"}]}},
                indent=2,
            ),
            "output": lambda v: (
                f"> GET /api/me HTTP/1.1\n> Host: app.example.com\n> Cookie: sid={v}\n"
            ),
        },
    )
    add("bearer-token", web, lambda r: pick(r, BASE62, 40), header("Authorization", "Bearer"))
    add(
        "basic-auth-header",
        web,
        lambda r: b64_of(f"deploy:{password(r)}"),
        header("Authorization", "Basic"),
    )
    add("x-api-key-header", web, lambda r: pick(r, BASE62, 32), header("X-API-Key", ""))

    db = "databases"
    add(
        "postgres-url-password",
        db,
        password,
        in_url(
            lambda v: f"postgresql://app_user:{v}@db.internal.example:5432/app",
            "DATABASE_URL",
            "dsn",
        ),
    )
    add(
        "redis-url-password",
        db,
        password,
        in_url(lambda v: f"redis://:{v}@cache.internal.example:6379/0", "REDIS_URL", "redisUrl"),
    )
    add(
        "mongodb-url-password",
        db,
        password,
        in_url(
            lambda v: f"mongodb+srv://admin:{v}@cluster0.ab1cd.mongodb.net/prod?retryWrites=true",
            "MONGO_URI",
            "mongoUri",
        ),
    )
    add(
        "jdbc-password-param",
        db,
        password,
        in_url(
            lambda v: f"jdbc:mysql://db:3306/shop?user=shop&password={v}&useSSL=true",
            "SPRING_DATASOURCE_URL",
            "jdbcUrl",
        ),
    )

    shell = "commands and config files"
    add(
        "pgpassword-env",
        shell,
        password,
        {
            "bare": lambda v: (
                f"I ran `PGPASSWORD={v} pg_dump -h db app > app.sql` to take the dump."
            ),
            "shell": lambda v: f"PGPASSWORD={v} psql -h db.internal -U app -c 'select 1'",
            "json": lambda v: json.dumps(
                {"environment": {"PGHOST": "db", "PGPASSWORD": v}}, indent=2
            ),
            "env": lambda v: f"PGHOST=db.internal\nPGUSER=app\nPGPASSWORD={v}\n",
            "output": lambda v: f"$ env | grep ^PG\nPGHOST=db.internal\nPGPASSWORD={v}\n",
        },
    )
    add("mysql-p-flag", shell, password, command("mysql -u root -p{v} -h 127.0.0.1 shop"))
    add(
        "password-flag",
        shell,
        password,
        command("mongodump --username backup --password {v} --out /backups/nightly"),
    )
    add(
        "curl-user-password",
        shell,
        password,
        command("curl -u deploy:{v} https://ci.example.com/job/api/build"),
    )
    add(
        "sshpass-password", shell, password, command("sshpass -p '{v}' ssh deploy@10.0.4.12 uptime")
    )
    add(
        "docker-login-password",
        shell,
        password,
        command("docker login -u ci-bot -p {v} registry.example.com"),
    )
    add(
        "netrc-password",
        shell,
        password,
        {
            "bare": lambda v: f"Add `machine git.example.com login ci password {v}` to your netrc.",
            "json": lambda v: json.dumps(
                {
                    "path": "~/.netrc",
                    "content": f"machine api.example.com login deploy password {v}\n",
                }
            ),
            "env": lambda v: f"machine api.example.com\n  login deploy\n  password {v}\n",
            "output": lambda v: (
                f"$ cat ~/.netrc\nmachine api.example.com\nlogin deploy\npassword {v}\n"
            ),
        },
    )
    add(
        "docker-config-auth",
        shell,
        lambda r: b64_of(f"ci-bot:{password(r)}"),
        {
            "json": lambda v: json.dumps({"auths": {"ghcr.io": {"auth": v}}}, indent=2),
            "output": lambda v: (
                "$ cat ~/.docker/config.json\n"
                + json.dumps({"auths": {"registry.example.com": {"auth": v}}}, indent=4)
            ),
            "shell": lambda v: f'echo \'{{"auths":{{"ghcr.io":{{"auth":"{v}"}}}}}}\' > config.json',
        },
    )
    db_password = keyed("DB_PASSWORD", "password")
    db_password["bare"] = lambda v: f"In docker-compose.yml I set `POSTGRES_PASSWORD: {v}` for now."
    add("db-password", shell, password, db_password)
    add(
        "django-secret-key",
        shell,
        lambda r: "django-insecure-" + pick(r, BASE62 + "!#%^*-_=+@", 50).lstrip("!#%^*-_=+@"),
        keyed("DJANGO_SECRET_KEY", "SECRET_KEY"),
    )
    return k
