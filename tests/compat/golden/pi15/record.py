"""Keep what pi 1.5.2 recorded for the pi 1.5 corpus as goldens the tests read.

    node tests/compat/golden/pi15/write_corpus.mjs tests/compat/golden/pi15/corpus
    node ../shared/tools/pi15/oracle.mjs tests/compat/golden/pi15/corpus /tmp/pi15-expected
    python tests/compat/golden/pi15/record.py /tmp/pi15-expected

For each corpus file, `expected/<name>.json.xz` holds, from the oracle's output: pi's
leaf, session name and labels; for every entry, the context pi builds there (as JSON:
the tests compare it with ours through the same JSON.stringify-like encoder, key order
included) and the projection's sources (entry id, type, how many messages);
for every leaf, the current system message, its text and the tool names; and pi's
estimate of each message of the context at the leaf, and of the whole context there;
the forks pi writes from every leaf (createBranchedSession) and of the whole file
(forkFrom); the file's listing fields and how many sessions pi's list(cwd, dir)
finds for the header's cwd and for another. The oracle records more (plans at the
default leaf); the tests of plans read planning.json.xz instead.

Compaction plans at every entry come from a script of their own:

    node tests/compat/golden/pi15/record_plans.mjs /tmp/pi15-plans.json FILE.jsonl ...
    python tests/compat/golden/pi15/record.py --plans /tmp/pi15-plans.json

keeps them as `planning.json.xz` (README.md there lists the files it was run on).
"""

from __future__ import annotations

import json
import lzma
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEPT = (
    "pi_version",
    "leaf_id",
    "session_name",
    "labels",
    "projection_by_entry",
    "estimate_tokens",
    "estimate_context",
    "forks",
    "list_info",
    "list_info_mtime_dependent",
    "list_cwd_filter",
)


def keep_plans(recorded: Path) -> None:
    data = json.loads(recorded.read_text(encoding="utf-8"))
    text = json.dumps(data, ensure_ascii=False, indent=0, sort_keys=False) + "\n"
    target = HERE / "planning.json.xz"
    target.write_bytes(lzma.compress(text.encode("utf-8"), preset=9))
    print(target.relative_to(HERE), len(text), "bytes")


def main() -> None:
    if sys.argv[1] == "--plans":
        keep_plans(Path(sys.argv[2]))
        return
    folder = "expected"
    if sys.argv[1] == "--into":  # e.g. expected-converted (write_converted.py)
        folder = sys.argv[2]
        del sys.argv[1:3]
    source = Path(sys.argv[1])
    out = HERE / folder
    out.mkdir(exist_ok=True)
    for recorded in sorted(source.glob("*.json")):
        data = json.loads(recorded.read_text(encoding="utf-8"))
        golden = {key: data.get(key) for key in KEPT}
        golden["contexts_by_entry"] = data["contexts_by_entry"]
        golden["system_by_leaf"] = {
            leaf: expected["system"] for leaf, expected in data["provider_expect_by_leaf"].items()
        }
        text = json.dumps(golden, ensure_ascii=False, indent=1, sort_keys=False) + "\n"
        target = out / f"{recorded.stem}.json.xz"
        target.write_bytes(lzma.compress(text.encode("utf-8"), preset=9))
        print(target.relative_to(HERE), len(text), "bytes")


if __name__ == "__main__":
    main()
