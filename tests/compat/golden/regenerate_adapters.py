"""Write tests/compat/golden/adapters/<fixture>.jsonl: for every well-formed fixture,
every entry as leaf and each of the three formats, the request the adapter builds and
its repairs. Run it when an adapter's output changes on purpose, then read the diff:
``python tests/compat/golden/regenerate_adapters.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jsonl_session import Session
from jsonl_session.format.jsonio import dumps
from jsonl_session.providers.anthropic import to_anthropic
from jsonl_session.providers.openai import to_openai_chat, to_openai_responses

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "tests" / "compat" / "golden" / "adapters"
SYSTEM = "You are a coding agent."


def golden_lines(fixture: Path) -> Iterator[bytes]:
    """The rows for one fixture. A fixture with pi 1.5 entries keeps the prompt and
    tools its transcript declares; the others are given SYSTEM."""
    session = Session.open(fixture)
    system = None if fixture.stem.startswith("pi15-") else SYSTEM
    for entry in session.entries:
        context = session.build_context(entry.id)
        for name, request in (
            ("anthropic", to_anthropic(context, system=system)),
            ("openai-chat", to_openai_chat(context, system=system)),
            ("openai-responses", to_openai_responses(context, instructions=system)),
        ):
            row: dict[str, Any] = {"leaf": entry.id, "format": name}
            row["request"] = request.kwargs
            row["repairs"] = [r.to_dict() for r in request.repairs]
            yield dumps(row)


def fixtures() -> list[Path]:
    return [
        p for p in sorted((ROOT / "fixtures").glob("*.jsonl")) if not p.stem.startswith("damaged")
    ]


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for fixture in fixtures():
        (OUT / f"{fixture.stem}.jsonl").write_bytes(b"\n".join(golden_lines(fixture)) + b"\n")
    print(f"wrote {len(fixtures())} files to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
