"""How much survives repeated compaction with the offline summarizer.

Builds sessions in which facts are planted among ordinary work: the user's goal
(after a slash command and a greeting) and later corrections, constraints and
preferences, decisions the assistant states, files read and changed through many
tools, commands that fail (some fixed later, some after a compaction), open tasks,
and noise (narration, headings, routine commands, a slash command) that must not
reach a summary. Every fact is phrased from a template (fidelity_phrasings.py) with
a token unique to it; the templates are split by a fixed seed into a tuned half and
a held-out half, and each half runs its own sessions.

Each round plants facts, adds filler turns, and compacts. After each compaction
the summary is checked: a fact is kept when its token is in the section it belongs
to (a goal under Goal, a constraint under Constraints, a failing command under
Blocked, a fixed one under Done and not Blocked, an open task under Next Steps, a
changed file in the modified files or a "changed" line; a file read anywhere); noise
leaks when its token is anywhere in the summary. The table gives, per half and
round, the share of facts planted so far that are kept, the share of noise that
leaked, summary lines holding Markdown markup, and the summary's size.

Usage: python benchmarks/fidelity.py [--rounds N] [--sessions N]
[--half tuned|held-out|both] [--kinds] [--lost]
(--lost lists lost facts and leaked noise; use it on the tuned half only.)
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fidelity_phrasings import Half, split
from fidelity_plant import FILLER_TURNS, Fact, Planter, Writer

from jsonl_session import Session
from jsonl_session.compaction import (
    CompactionSettings,
    ExtractiveSummarizer,
    compact,
)
from jsonl_session.compaction.execute import SPLIT_TURN_HEADING

SETTINGS = CompactionSettings(keep_recent_tokens=8000)

_TAGS = re.compile(r"<(read-files|modified-files)>\n(.*?)</\1>", re.DOTALL)


def sections(summary: str) -> dict[str, str]:
    """The summary's text under each heading (lowercased), and each file list."""
    found: dict[str, list[str]] = {}
    for tag, body in _TAGS.findall(summary):
        found.setdefault(tag, []).append(body)
    heading = ""
    for line in _TAGS.sub("", summary).splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip().lower()
            continue
        found.setdefault(heading, []).append(line)
    return {k: "\n".join(v).lower() for k, v in found.items()}


def _under(parts: dict[str, str], token: str, *words: str) -> bool:
    return any(token in text for name, text in parts.items() if any(w in name for w in words))


def kept(fact: Fact, summary: str, parts: dict[str, str]) -> bool:
    token = fact.token
    if fact.kind in ("goal", "correction"):
        return _under(parts, token, "goal", "original request")
    if fact.kind == "constraint":
        return _under(parts, token, "constraint")
    if fact.kind == "decision":
        return _under(parts, token, "decision")
    if fact.kind == "open task":
        return _under(parts, token, "next")
    if fact.kind == "file read":
        return token in summary.lower()
    if fact.kind == "file changed":
        lines = summary.lower().splitlines()
        return token in parts.get("modified-files", "") or any(
            token in line and re.search(r"chang|modif|edit|wrote", line) for line in lines
        )
    if fact.kind == "failing command":
        return _under(parts, token, "blocked")
    if fact.kind == "fixed command":
        return not _under(parts, token, "blocked") and _under(parts, token, "done", "progress")
    return token not in summary.lower()  # noise: kept out


def markup_lines(summary: str) -> int:
    """Lines of the summary body (not its headings or file lists) that hold Markdown."""
    body = _TAGS.sub("", summary).splitlines()
    return sum(
        1
        for line in body
        if not line.startswith("#")
        and line != SPLIT_TURN_HEADING  # execute.py's label for a split turn
        and ("**" in line or "```" in line or re.match(r"^\s*[-*\d.]+\s+(#|- )", line))
    )


def run(path: Path, half: Half, rounds: int, seed: int) -> list[dict[str, Any]]:
    session = Session.create(cwd="/bench", session_dir=path.parent, fsync="never")
    rng = random.Random(seed)
    planter = Planter(Writer(session, rng), split(half), rng)
    rows = []
    for number in range(1, rounds + 1):
        planter.round(number, number == rounds)
        result = compact(session, ExtractiveSummarizer(), SETTINGS)
        parts = sections(result.summary)
        rows.append(
            {
                "round": number,
                "facts": [(f, kept(f, result.summary, parts)) for f in planter.facts],
                "chars": len(result.summary),
                "markup": markup_lines(result.summary),
            }
        )
    return rows


def _share(flags: list[bool]) -> str:
    return f"{sum(flags)}/{len(flags)} {sum(flags) / max(len(flags), 1):>4.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--half", choices=("tuned", "held-out", "both"), default="both")
    parser.add_argument("--kinds", action="store_true", help="retention per kind of fact")
    parser.add_argument("--lost", action="store_true", help="list lost facts and leaked noise")
    args = parser.parse_args()
    halves: list[Half] = ["tuned", "held-out"] if args.half == "both" else [args.half]
    print(
        f"offline summarizer, keep_recent_tokens={SETTINGS.keep_recent_tokens}, "
        f"{FILLER_TURNS} filler turns a round, {args.sessions} sessions a half\n"
    )
    heading = ("half", "round", "facts kept", "noise leaked", "markup", "chars")
    print("{:<9} {:>5} {:>16} {:>14} {:>7} {:>7}".format(*heading))
    per_kind: dict[tuple[str, int, str], list[int]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for half in halves:
            table: dict[int, list[Any]] = {}
            for seed in range(args.sessions):
                for row in run(Path(folder) / f"{half}-{seed}.jsonl", half, args.rounds, seed):
                    table.setdefault(row["round"], []).append(row)
                    for fact, ok in row["facts"]:
                        counts = per_kind.setdefault((half, row["round"], fact.kind), [0, 0])
                        counts[0] += ok
                        counts[1] += 1
                        if args.lost and not ok and row["round"] == args.rounds:
                            print(f"  {half} session {seed}: lost {fact.kind} {fact.token}")
            for number, rows in sorted(table.items()):
                facts = [ok for r in rows for f, ok in r["facts"] if f.kind != "noise"]
                noise = [not ok for r in rows for f, ok in r["facts"] if f.kind == "noise"]
                markup = sum(r["markup"] for r in rows)
                chars = sum(r["chars"] for r in rows) // len(rows)
                print(
                    f"{half:<9} {number:>5} {_share(facts):>16} {_share(noise):>14} "
                    f"{markup:>7} {chars:>7,}"
                )
    if args.kinds:
        print(f"\n{'half':<9} {'round':>5} {'kind':<16} {'kept':>9}")
        for (half, number, kind), (ok, total) in sorted(per_kind.items()):
            if number in (1, 3, 5) or number == args.rounds:
                print(f"{half:<9} {number:>5} {kind:<16} {ok:>4}/{total:<4} {ok / total:>4.0%}")


if __name__ == "__main__":
    main()
