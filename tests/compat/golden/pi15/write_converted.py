"""Convert the Claude Code and Codex fixtures to pi sessions, for pi 1.5.2 to read.

    python tests/compat/golden/pi15/write_converted.py /tmp/pi15-converted
    node ../shared/tools/pi15/oracle.mjs /tmp/pi15-converted /tmp/pi15-converted-out
    python tests/compat/golden/pi15/record.py --into expected-converted /tmp/pi15-converted-out

tests/dialects/test_converted_in_pi.py converts them again and checks that what pi
built from each converted file is the context we build from the original, at
every entry. Each output is named after its source (CONVERTED maps them).
"""

from __future__ import annotations

import sys
from pathlib import Path

from jsonl_session import convert

ROOT = Path(__file__).resolve().parents[4]
FIXTURES = ROOT / "fixtures"
CONVERTED = {
    "claude-main": "claude/projects/-home-dev-projects-todo-api/*.jsonl",
    "codex-main": "codex/sessions/2025/11/03/rollout-2025-11-03T10-15-00-*.jsonl",
    "codex-subagent": "codex/sessions/2025/11/03/rollout-2025-11-03T10-20-00-*.jsonl",
    "codex-legacy": "codex/sessions/2025/06/20/*.jsonl",
}


def source(name: str) -> Path:
    return next(FIXTURES.glob(CONVERTED[name]))


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name in CONVERTED:
        done = convert(source(name), "pi", out / f"{name}.jsonl", cache=False)
        print(done.path, *done.sub_sessions)


if __name__ == "__main__":
    main()
