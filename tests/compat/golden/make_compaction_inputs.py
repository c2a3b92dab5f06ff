"""Write the session files behind tests/compat/golden/pi-compaction/ with jsonl_session.

Every compaction, branch_summary and prune entry in them is written by our
library (compact with the offline ExtractiveSummarizer, branch_with_summary,
prune); pi 0.73.1's context for every entry of each file was then recorded (see
tests/compat/golden/README.md). Entry ids and times are new on every run, so after
re-running this, record pi's contexts again.

usage: python tests/compat/golden/make_compaction_inputs.py OUT_DIR [--all]

Without --all only the files kept in tests/compat/golden/pi-compaction/inputs/ are
written; --all also writes every fixture/keep_recent_tokens combination.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from pathlib import Path
from typing import Any

from jsonl_session import Session
from jsonl_session.compaction import (
    CompactionSettings,
    ExtractiveSummarizer,
    PruneSettings,
    branch_with_summary,
    compact,
    plan_for,
    prune,
)
from jsonl_session.errors import CompactionError

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures"
FIXTURE_NAMES = (
    "tool-calls",
    "linear",
    "compaction-one",
    "compaction-two",
    "branching",
    "bash-execution",
    "model-thinking",
    "custom-entries",
)
KEEP = (20000, 1000, 200, 50)
# (fixture, keep_recent_tokens) pairs kept in the repository
KEPT_FIXTURE_CASES = (
    ("tool-calls", 200),
    ("linear", 50),
    ("compaction-two", 1000),
    ("compaction-two", 50),
    ("branching", 50),
    ("bash-execution", 200),
    ("model-thinking", 50),
    ("custom-entries", 1000),
)
SUMMARIZER = ExtractiveSummarizer()
WORDS = [
    *("todo", "route", "handler", "test", "config", "parser", "cache", "index"),
    *("query", "schema", "user", "token", "request", "response", "error", "retry"),
    *("timeout", "buffer", "stream", "session", "entry", "branch"),
]


class Talk:
    """pi-shaped messages with deterministic content."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.clock = 1767225600000
        self.calls = 0

    def _now(self) -> int:
        self.clock += self.rng.randint(500, 20000)
        return self.clock

    def words(self, count: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(count))

    def user(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text, "timestamp": self._now()}

    def assistant(self, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {
                "input": self.rng.randint(50, 3000),
                "output": self.rng.randint(10, 500),
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": stop,
            "timestamp": self._now(),
        }

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        return {
            "type": "toolCall",
            "id": f"toolu_{self.calls:04d}",
            "name": name,
            "arguments": arguments,
        }

    def output(self, call: dict[str, Any], size: int) -> str:
        name, args = call["name"], call["arguments"]
        if name == "read":
            lines = [f"// {args['path']}"]
            while sum(len(x) + 1 for x in lines) < size:
                lines.append(f"export function {self.rng.choice(WORDS)}() {{ {self.words(6)} }}")
            return "\n".join(lines)[:size]
        if name == "bash":
            lines = [f"$ {args['command']}"]
            while sum(len(x) + 1 for x in lines) < size:
                lines.append(f"ok {self.rng.randint(1, 999)} {self.words(5)}")
            return "\n".join(lines)[:size]
        if name == "write":
            return f"Successfully wrote {len(args['content'])} bytes to {args['path']}"
        if name == "edit":
            return f"Successfully replaced text in {args['path']}."
        return self.words(max(1, size // 7))

    def result(self, call: dict[str, Any], size: int, error: bool = False) -> dict[str, Any]:
        return {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": self.output(call, size)}],
            "isError": error,
            "timestamp": self._now(),
        }

    def some_call(self, step: int) -> dict[str, Any]:
        path = f"src/{self.rng.choice(WORDS)}.ts"
        kind = ("read", "bash", "edit", "read", "write")[step % 5]
        if kind == "read":
            return self.call("read", {"path": path})
        if kind == "bash":
            return self.call("bash", {"command": f"npm test -- {self.rng.choice(WORDS)}"})
        if kind == "edit":
            return self.call("edit", {"path": path, "oldText": "a", "newText": self.words(3)})
        return self.call("write", {"path": path, "content": self.words(12)})

    def turn(
        self,
        session: Session,
        task: str,
        steps: int,
        size: tuple[int, int] = (200, 1200),
        tools: list[str] | None = None,
    ) -> list[str]:
        """A user request, ``steps`` tool rounds, a closing answer; the new ids."""
        ids = [session.append_message(self.user(f"{task}: {self.words(12)}"))]
        for step in range(steps):
            calls = [self.some_call(step)]
            if tools is not None:
                calls = [self.call(tools[step % len(tools)], {"path": f"docs/{step}.md"})]
            elif step % 3 == 2:
                calls.append(self.some_call(step + 1))
            content: list[dict[str, Any]] = [
                {"type": "thinking", "thinking": self.words(8), "thinkingSignature": "sig"},
                {"type": "text", "text": f"Step {step}: {self.words(6)}"},
                *calls,
            ]
            ids.append(session.append_message(self.assistant(content, "toolUse")))
            for call in calls:
                error = call["name"] == "bash" and self.rng.random() < 0.2
                result = self.result(call, self.rng.randint(*size), error)
                ids.append(session.append_message(result))
        answer = [{"type": "text", "text": f"Done with {task}. {self.words(15)}"}]
        ids.append(session.append_message(self.assistant(answer, "stop")))
        return ids


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, name: str, what: str) -> None:
        self.lines.append(f"{name}: {what}")
        print(f"{name}: {what}", file=sys.stderr)


def new_session(out: Path, name: str) -> Session:
    path = out / f"{name}.jsonl"
    path.unlink(missing_ok=True)
    session = Session.create("/work/project", path=path, fsync="never")
    session.flush()
    return session


def compact_logged(session: Session, keep: int, log: Log, name: str, what: str = "compact") -> bool:
    try:
        result = compact(session, SUMMARIZER, CompactionSettings(keep_recent_tokens=keep))
    except CompactionError:
        log(name, f"{what} keep={keep}: nothing to compact")
        return False
    log(
        name,
        f"{what} keep={keep}: {result.entry_id} first kept {result.plan.first_kept_entry_id} "
        f"split={result.plan.is_split_turn} previous={result.plan.previous_summary is not None}",
    )
    return True


def fixture_case(out: Path, fixture: str, keep: int, log: Log) -> None:
    """A fixture compacted, two more turns, compacted again (an update when the
    first one found something to compact)."""
    name = f"{fixture}-k{keep}"
    path = out / f"{name}.jsonl"
    shutil.copyfile(FIXTURES / f"{fixture}.jsonl", path)
    session = Session.open(path, fsync="never")
    first = compact_logged(session, keep, log, name)
    talk = Talk(seed=keep)
    talk.turn(session, "Now add pagination", steps=2, size=(300, 2500))
    talk.turn(session, "And a test for it", steps=3, size=(300, 2500))
    if not compact_logged(session, keep, log, name, "compact again") and not first:
        path.unlink()


def long_session(out: Path, log: Log) -> None:
    """Turns with many tool rounds, compacted at several leaves: at the tip, again
    after more turns (an update), on a side branch started inside a turn, and back
    on the main branch; several cuts split a turn. Ends on the side branch."""
    name = "long-session"
    session = new_session(out, name)
    talk = Talk(seed=1)
    turns = [talk.turn(session, f"Task {n}", steps=2 + n % 4) for n in range(6)]
    talk.turn(session, "Refactor the whole parser", steps=9)
    compact_logged(session, 1000, log, name)
    talk.turn(session, "Task 7", steps=3)
    talk.turn(session, "Task 8", steps=6)
    compact_logged(session, 300, log, name, "compact on main")
    tip = session.leaf_id
    assert tip is not None
    # a side branch starting after a tool result in the middle of task 3
    session.branch(turns[3][3])
    log(name, f"branch to {turns[3][3]} (inside task 3)")
    talk.turn(session, "Side task", steps=5)
    compact_logged(session, 400, log, name, "compact on side branch")
    talk.turn(session, "Side task 2", steps=2)
    compact_logged(session, 150, log, name, "compact on side branch again")
    side_tip = session.leaf_id
    assert side_tip is not None
    session.branch(tip)
    log(name, f"branch back to {tip}")
    talk.turn(session, "Task 9", steps=4)
    compact_logged(session, 20000, log, name, "compact on main (large keep)")
    compact_logged(session, 250, log, name, "compact on main")
    # the file ends with a leaf marker: pi's leaf is the marker, ours its target
    session.branch(side_tip)
    log(name, f"branch to the side branch's tip {side_tip}")


def keep_cutting_at_a_user(session: Session) -> int:
    """The smallest keep_recent_tokens whose cut falls on a user message."""
    for keep in range(20, 5000, 10):
        try:
            plan = plan_for(session, CompactionSettings(keep_recent_tokens=keep))
        except CompactionError:
            continue
        if not plan.is_split_turn and plan.messages_to_summarize:
            return keep
    raise SystemExit("no keep_recent_tokens cuts at a user message")


def chat_session(out: Path, log: Log) -> None:
    """Short turns, some with a tool call, compacted twice where the cut falls on
    a user message (no split turn)."""
    name = "chat"
    session = new_session(out, name)
    talk = Talk(seed=5)
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    session.append_thinking_level_change("low")
    for n in range(8):
        talk.turn(session, f"Question {n}", steps=n % 2, size=(100, 400))
    compact_logged(session, keep_cutting_at_a_user(session), log, name)
    session.append_thinking_level_change("high")
    for n in range(8, 12):
        talk.turn(session, f"Question {n}", steps=n % 2, size=(100, 400))
    compact_logged(session, keep_cutting_at_a_user(session), log, name, "compact again")
    talk.turn(session, "Last question", steps=0)


def branch_summaries(out: Path, log: Log) -> None:
    """branch_with_summary to an ancestor, to another branch's entry, to the root
    (None); then a compaction over a path holding branch summaries."""
    name = "branch-summaries"
    session = new_session(out, name)
    talk = Talk(seed=2)
    first = talk.turn(session, "Set up the project", steps=2)
    second = talk.turn(session, "Add the todo routes", steps=3)
    talk.turn(session, "Try an ORM", steps=3)

    def summarize(target: str | None, what: str) -> None:
        result = branch_with_summary(session, target, SUMMARIZER)
        log(
            name,
            f"branch summary to {what} {target}: {result.entry_id}, ancestor "
            f"{result.common_ancestor_id}, {len(result.summarized)} entries left behind",
        )

    summarize(second[-1], "ancestor")
    other = talk.turn(session, "Use plain SQL instead", steps=2)
    summarize(first[2], "ancestor (a tool result)")
    talk.turn(session, "Add logging", steps=2)
    summarize(other[2], "another branch's entry")
    talk.turn(session, "Finish the SQL version", steps=2)
    summarize(None, "the root")
    talk.turn(session, "Start over with a plan", steps=2)
    compact_logged(session, 200, log, name, "compact after branch summaries")
    talk.turn(session, "Continue", steps=1)


def branching_fixture_summary(out: Path, log: Log) -> None:
    """The branching fixture (leaf markers): a branch summary to another branch."""
    name = "branching-summary"
    path = out / f"{name}.jsonl"
    shutil.copyfile(FIXTURES / "branching.jsonl", path)
    session = Session.open(path, fsync="never")
    on_path = {e.id for e in session.branch_path()}
    other = next(e.id for e in session.entries if e.type == "message" and e.id not in on_path)
    result = branch_with_summary(session, other, SUMMARIZER)
    log(name, f"branch summary to {other}: {result.entry_id}")
    Talk(seed=3).turn(session, "Carry on here", steps=1)


def pruned_session(out: Path, log: Log) -> None:
    """Big tool outputs pruned, more turns, pruned again, compacted, more turns."""
    name = "prune"
    session = new_session(out, name)
    talk = Talk(seed=4)
    for n in range(4):
        talk.turn(session, f"Read module {n}", steps=3, size=(1500, 3000))
    talk.turn(session, "Load the skill", steps=1, size=(2000, 2000), tools=["skill"])
    talk.turn(session, "Read more", steps=2, size=(1500, 3000))
    settings = PruneSettings(protect_turns=2, protect_tokens=800, minimum_tokens=500)
    result = prune(session, settings)
    log(name, f"prune: {result.entry_id}, {len(result.plan.entry_ids)} outputs")
    talk.turn(session, "Read module 5", steps=3, size=(1500, 3000))
    talk.turn(session, "Read module 6", steps=2, size=(1500, 3000))
    result = prune(session, settings)
    log(name, f"prune again: {result.entry_id}, {len(result.plan.entry_ids)} outputs")
    talk.turn(session, "Summarize what we read", steps=1, size=(300, 600))
    compact_logged(session, 1500, log, name, "compact after pruning")
    talk.turn(session, "Read module 7", steps=2, size=(1500, 3000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    log = Log()
    cases = [(f, k) for f in FIXTURE_NAMES for k in KEEP] if args.all else KEPT_FIXTURE_CASES
    for fixture, keep in cases:
        fixture_case(out, fixture, keep, log)
    long_session(out, log)
    chat_session(out, log)
    branch_summaries(out, log)
    branching_fixture_summary(out, log)
    pruned_session(out, log)
    (out / "log.txt").write_text("\n".join(log.lines) + "\n")


if __name__ == "__main__":
    main()
