"""Write COUNT random sessions with this library's API, for a randomised differential
test against pi 1.5.2 (pi reads them with tools/pi15/oracle.mjs; random_corpus.mjs
writes the other direction).

    python tests/compat/golden/pi15/random_ours.py OUT_DIR [COUNT=40] [SEED=1]

Each session (30-150 entries, ours-random-NNN.jsonl) mixes: user / assistant /
tool-result messages (text, thinking, read/write/edit/bash/grep tool calls with paths,
user images) and bash executions; a full system prompt (sections + tools, given in
pi's, Anthropic's or OpenAI's shapes) and later patches (sections replaced or removed
with None, tools added, redefined or removed by name or definition); context edits
(None, a string, blocks; edits of edited entries; on several branches) and restores;
usage entries of known and unknown kinds; compactions keeping from a random earlier
path entry, a label on the path or an entry on another branch, retain-none, with or
without usage and details, and our own `compact` with the extractive summarizer;
branch summaries to ancestors, entries on other branches or the root
(`branch_with_summary`, `summarize_branch`) and one left in place
(`append_branch_summary`); labels set, changed and cleared; session names; model and
thinking changes; custom messages and entries; prunes (`prune`); moves to random
earlier entries (`branch`, which writes a leaf marker); failed assistant replies
(stopReason "error", zero usage) each followed by the edit that omits it. Texts hold a
few non-ASCII words (an emoji among them).

The choices come from random.Random seeded by SEED and the session's number; ids and
entry times are the library's, new on every run.
"""

from __future__ import annotations

import random
import shutil
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

from jsonl_session import (
    CompactionError,
    CompactionSettings,
    ExtractiveSummarizer,
    PruneSettings,
    Session,
    StoredEntry,
    compact,
    prune,
    summarize_branch,
)

TEXT_WORDS = (
    "the cache key module build test fails passes because config parser token stream "
    "buffer request handler schema invoice billing migration index query retry timeout "
    "worker queue lock file path branch commit review deploy release error warning value "
    "café naïve 数据 🚀"
)
WORDS = TEXT_WORDS.split()
PATHS = [
    "src/a.ts",
    "src/b.ts",
    "src/cache.ts",
    "src/db/schema.sql",
    "README.md",
    "package.json",
    "test/a.test.ts",
    "docs/notes.md",
]
IMAGE = {
    "type": "image",
    "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "mimeType": "image/png",
}
TEXT_SIZES = {"tiny": (1, 3), "short": (5, 40), "medium": (80, 300), "long": (600, 2500)}
SECTION_NAMES = ["preamble", "cwd", "style", "skills", "notes", "rules"]
MS = 1_795_000_000_000


def tool(name: str, description: str, props: list[str]) -> dict[str, Any]:
    properties = {p: {"type": "string"} for p in props}
    schema = {"type": "object", "properties": properties, "required": props}
    return {"name": name, "description": description, "parameters": schema}


TOOLS = [
    tool("read", "Read a file.", ["path"]),
    tool("write", "Write a file.", ["path", "content"]),
    tool("edit", "Edit a file.", ["path", "oldText", "newText"]),
    tool("bash", "Run a shell command.", ["command"]),
    tool("grep", "Search files.", ["pattern"]),
]
EDITABLE_ROLES = ("user", "assistant", "toolResult")


def usage(tokens_in: int, tokens_out: int, cache_read: int = 0) -> dict[str, Any]:
    """Usage as pi records it; costs are Python floats, so no tokens cost 0.0 (which
    JSON.stringify would spell 0)."""
    cost = {"input": tokens_in / 1e6, "output": tokens_out / 1e6, "cacheRead": 0}
    cost |= {"cacheWrite": 0, "total": (tokens_in + tokens_out) / 1e6}
    return {
        "input": tokens_in,
        "output": tokens_out,
        "cacheRead": cache_read,
        "cacheWrite": 0,
        "totalTokens": tokens_in + tokens_out + cache_read,
        "cost": cost,
    }


class RandomSession:
    """Appends random entries to one session until it holds about ``target`` entries."""

    def __init__(self, session: Session, rng: random.Random, big: float) -> None:
        self.s, self.rng, self.big = session, rng, big
        self.call_no = 0
        self.clock = MS
        self.labelled: set[str] = set()
        self.edited: list[str] = []
        self.live_tools: set[str] = set()

    # --- random values ---------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def weighted(self, weights: dict[str, float]) -> str:
        return self.rng.choices(list(weights), weights=list(weights.values()))[0]

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def text(self, big: float | None = None) -> str:
        """A text of a random size: mostly short, sometimes a few thousand words."""
        weight = self.big if big is None else big
        size = self.weighted({"tiny": 3, "short": 6, "medium": 3, "long": weight})
        low, high = TEXT_SIZES[size]
        return self.words(self.rng.randint(low, high)) + "."

    def now(self) -> int:
        self.clock += 450
        return self.clock

    def call(self) -> dict[str, Any]:
        self.call_no += 1
        name = self.rng.choice(["read", "read", "write", "edit", "bash", "grep"])
        path = self.rng.choice(PATHS)
        args = {
            "read": {"path": path},
            "write": {"path": path, "content": self.words(self.rng.randint(3, 60))},
            "edit": {
                "path": path,
                "oldText": self.words(self.rng.randint(1, 5)),
                "newText": self.words(self.rng.randint(1, 8)),
            },
            "bash": {"command": f"cat {path}"},
            "grep": {"pattern": self.rng.choice(WORDS)},
        }[name]
        return {"type": "toolCall", "id": f"toolu_{self.call_no}", "name": name, "arguments": args}

    # --- messages --------------------------------------------------------------

    def user(self) -> str:
        content: Any = self.text()
        if self.chance(0.15):
            content = [{"type": "text", "text": content}] + ([IMAGE] if self.chance(0.6) else [])
        return self.s.append_message({"role": "user", "content": content, "timestamp": self.now()})

    def assistant(self, calls: list[dict[str, Any]]) -> str:
        blocks: list[dict[str, Any]] = []
        if self.chance(0.3):
            signature = f"sig{self.rng.randint(1, 999)}"
            thinking = {"type": "thinking", "thinking": self.text()}
            blocks.append({**thinking, "thinkingSignature": signature})
        if not calls or self.chance(0.5):
            blocks.append({"type": "text", "text": self.text()})
        blocks += calls
        tokens_in = self.rng.randint(500, 60000)
        cache_read = self.rng.randint(0, tokens_in) if self.chance(0.3) else 0
        tokens_out = self.rng.randint(10, 900)
        spent = usage(0, 0) if self.chance(0.1) else usage(tokens_in, tokens_out, cache_read)
        stop = "toolUse" if calls else self.weighted({"stop": 20, "aborted": 1, "length": 1})
        return self.s.append_message(self.assistant_message(blocks, spent, stop))

    def assistant_message(
        self, blocks: list[Any], spent: dict[str, Any], stop: str
    ) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": blocks,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": spent,
            "stopReason": stop,
            "timestamp": self.now(),
        }

    def turn(self) -> None:
        self.user()
        for _ in range(self.rng.randint(0, 3)):
            calls = [self.call() for _ in range(self.rng.randint(1, 3))]
            self.assistant(calls)
            for c in calls:
                if self.chance(0.05):
                    continue  # a result that never came
                content = [{"type": "text", "text": self.text(self.big + 2)}]
                content += [IMAGE] if self.chance(0.05) else []
                result = {"role": "toolResult", "toolCallId": c["id"], "toolName": c["name"]}
                result |= {"content": content, "isError": self.chance(0.1), "timestamp": self.now()}
                self.s.append_message(result)
        if self.chance(0.9):
            self.assistant([])

    def failed_reply(self) -> None:
        if self.chance(0.7):
            self.user()
        blocks = [] if self.chance(0.5) else [{"type": "text", "text": ""}]
        message = self.assistant_message(blocks, usage(0, 0), "error")
        errors = ["overloaded", "rate limited", "connection reset"]
        message["errorMessage"] = self.rng.choice(errors)
        failed = self.s.append_message(message)
        self.s.append_context_edit(failed, None)
        if self.chance(0.5):
            self.assistant([])

    def bash_execution(self) -> None:
        command = f"cat {self.rng.choice(PATHS)}"
        message: dict[str, Any] = {"role": "bashExecution", "command": command}
        message["output"] = self.text(self.big + 1)
        exit_code = self.rng.choice([0, 0, 1, None])
        if exit_code is not None:
            message["exitCode"] = exit_code
        message |= {"cancelled": self.chance(0.1), "truncated": self.chance(0.1)}
        message["timestamp"] = self.now()
        if self.chance(0.3):
            message["excludeFromContext"] = self.chance(0.5)
        self.s.append_message(message)

    def tool_shape(self, tool: dict[str, Any]) -> dict[str, Any]:
        """``tool`` in pi's, Anthropic's or OpenAI's (chat or responses) shape."""
        name, description, schema = tool["name"], tool["description"], tool["parameters"]
        shape = self.rng.choice(["pi", "pi", "anthropic", "openai-chat", "openai-responses"])
        if shape == "anthropic":
            return {"name": name, "description": description, "input_schema": schema}
        if shape == "openai-chat":
            function = {"name": name, "description": description, "parameters": schema}
            return {"type": "function", "function": function}
        if shape == "openai-responses":
            return {"type": "function", **tool}
        return tool

    def system(self, first: bool) -> None:
        content = self.text(0) if self.chance(0.3 if first else 0.2) else ""
        sections: dict[str, str | None] = {}
        if first:
            for name in SECTION_NAMES:
                if self.chance(0.6):
                    sections[name] = f"{name}: {self.text()}"
        else:
            for _ in range(self.rng.randint(0, 3)):
                value = None if self.chance(0.35) else f"{self.rng.choice(WORDS)}: {self.text(0)}"
                sections[self.rng.choice(SECTION_NAMES)] = value
        if first:
            added = [t for t in TOOLS if self.chance(0.7)]
        else:
            added = [t for t in TOOLS if self.chance(0.2)]
            added = [
                {**t, "description": f"{t['description']} {self.words(3)}"}
                if self.chance(0.5)
                else t
                for t in added
            ]
        removed = [] if first else [n for n in sorted(self.live_tools) if self.chance(0.25)]
        self.live_tools -= set(removed)
        self.live_tools |= {t["name"] for t in added}
        self.s.append_system_message(
            content,
            sections=sections or None,
            tools_added=[self.tool_shape(t) for t in added],
            tools_removed=[
                name if self.chance(0.7) else next(t for t in TOOLS if t["name"] == name)
                for name in removed
            ],
        )

    # --- other entries ---------------------------------------------------------

    def editable(self) -> list[str]:
        return [
            e.id
            for e in self.s.branch_path()
            if e.type == "custom_message" or (e.type == "message" and e.role in EDITABLE_ROLES)
        ]

    def context_edit(self) -> None:
        on_branch = self.editable()
        if not on_branch:
            return
        again = [i for i in self.edited if i in on_branch]
        target = self.rng.choice(again if again and self.chance(0.3) else on_branch)
        entry = self.s.get(target)
        assert entry is not None
        role = entry.role if entry.type == "message" else "custom"
        kind = self.weighted({"omit": 3, "string": 4, "blocks": 3, "restore": 1})
        if kind == "restore":
            self.s.restore_in_context(target)
            return
        content: Any = None
        if kind == "string":
            content = "" if self.chance(0.1) else self.text(0)
        elif kind == "blocks":
            blocks = [{"type": "text", "text": self.text(0)}]
            if role in ("user", "custom") and self.chance(0.3):
                blocks.append(IMAGE)
            if role == "assistant" and self.chance(0.3):
                blocks.append(self.call())
            content = [] if self.chance(0.05) else blocks
        self.s.append_context_edit(target, content)
        self.edited.append(target)

    def file_details(self, modified: bool) -> dict[str, list[str]]:
        read = [p for p in PATHS if self.chance(0.2)]
        written = [p for p in PATHS if modified and self.chance(0.2)]
        return {"readFiles": read, "modifiedFiles": written}

    def off_path(self, path: list[StoredEntry]) -> list[StoredEntry]:
        on_path = {e.id for e in path}
        return [e for e in self.s.entries if e.id not in on_path]

    def compaction(self) -> None:
        if self.chance(0.3):
            keep = self.rng.choice([20000, 1000, 200, 50])
            with suppress(CompactionError):  # nothing to compact here
                compact(self.s, ExtractiveSummarizer(), CompactionSettings(keep_recent_tokens=keep))
            return
        path = self.s.branch_path()
        kept = self.weighted({"none": 2, "path": 6, "label": 1, "elsewhere": 1})
        pools = {
            "none": [],
            "path": path[len(path) // 3 :],
            "label": [e for e in path if e.type == "label"],
            "elsewhere": self.off_path(path),
        }
        pool = pools[kept] if pools[kept] or kept == "none" else path
        first_kept = self.rng.choice(pool).id if pool else None
        self.s.append_compaction(
            f"Summary: {self.text()}",
            first_kept,
            self.rng.randint(1000, 90000),
            **self.optional_summary_fields(0.6, modified=True),
        )

    def optional_summary_fields(self, details: float, *, modified: bool) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        if self.chance(details):
            fields["details"] = self.file_details(modified)
        hook = self.rng.choice([None, False, True])
        if hook is not None:
            fields["from_hook"] = hook
        if self.chance(0.45):
            fields["usage"] = usage(self.rng.randint(1000, 9000), self.rng.randint(50, 900))
        return fields

    def branch_summary(self) -> None:
        path = self.s.branch_path()
        where = self.weighted({"root": 2, "ancestor": 7, "elsewhere": 1})
        pool = [] if where == "root" else path
        if where == "elsewhere" and self.off_path(path):
            pool = self.off_path(path)
        to = self.rng.choice(pool).id if pool else None
        kind = self.weighted({"with": 6, "summarize": 2, "in_place": 1})
        if kind == "summarize":
            with suppress(CompactionError):  # nothing left behind to summarize
                summarize_branch(self.s, to, ExtractiveSummarizer())
            return
        summary = f"Branch summary: {self.text()}"
        fields = self.optional_summary_fields(0.5, modified=False)
        if kind == "in_place" and path:
            self.s.append_branch_summary(self.rng.choice(path).id, summary, **fields)
        else:
            self.s.branch_with_summary(to, summary, **fields)

    def label(self) -> None:
        if not self.s.entries:
            return
        kind = self.weighted({"set": 4, "change": 2, "clear": 2}) if self.labelled else "set"
        if kind == "set":
            path = self.s.branch_path()
            pool = path if path and self.chance(0.7) else self.s.entries
            target = self.rng.choice(pool).id
        else:
            target = self.rng.choice(sorted(self.labelled))
        value = None if kind == "clear" else f"{self.rng.choice(WORDS)}-{self.rng.randint(1, 99)}"
        self.s.append_label(target, value)
        if value:
            self.labelled.add(target)
        else:
            self.labelled.discard(target)

    def name(self) -> None:
        if self.chance(0.15):
            self.s.append_session_info("")
            return
        lead = self.rng.choice(["", "  ", "\n"])
        tail = self.rng.choice(["", " \n", "\r\nmore"])
        self.s.append_session_info(lead + self.words(self.rng.randint(1, 4)) + tail)

    def custom_message(self) -> None:
        content: Any = self.text() if self.chance(0.6) else [{"type": "text", "text": self.text(0)}]
        details = {"source": "ext"} if self.chance(0.3) else None
        kind = self.rng.choice(["notes", "reminder"])
        if details is None:
            self.s.append_custom_message(kind, content, self.chance(0.7))
        else:
            self.s.append_custom_message(kind, content, self.chance(0.7), details)

    def prune(self) -> None:
        settings = PruneSettings(protect_turns=1, protect_tokens=500, minimum_tokens=200)
        with suppress(CompactionError):  # nothing worth pruning
            prune(self.s, settings)

    def usage_entry(self) -> None:
        rng = self.rng
        kind = rng.choice(["cache_warm", "classifier", "title", "subagent", "x-new-kind"])
        spent = usage(rng.randint(0, 5000), rng.randint(0, 200), rng.randint(0, 50000))
        provider = rng.choice(["anthropic", "openai"])
        model = rng.choice(["claude-haiku-4-5", "gpt-5.1-mini"])
        self.s.append_usage(
            kind, provider, model, spent, self.words(3) if self.chance(0.4) else None
        )

    def model(self) -> None:
        provider = self.rng.choice(["anthropic", "openai"])
        self.s.append_model_change(provider, self.rng.choice(["claude-sonnet-4-5", "gpt-5.1"]))

    def thinking(self) -> None:
        self.s.append_thinking_level_change(self.rng.choice(["off", "low", "medium", "high"]))

    def custom(self) -> None:
        self.s.append_custom("ext-state", {"n": self.rng.randint(1, 9)})

    def system_patch(self) -> None:
        self.system(first=False)

    def branch(self) -> None:
        if self.s.entries:
            self.s.branch(self.rng.choice(self.s.entries).id)

    def reset_leaf(self) -> None:
        self.s.reset_leaf()

    def run(self, target: int) -> None:
        ops = {
            self.turn: 30,
            self.bash_execution: 2,
            self.failed_reply: 3,
            self.system_patch: 4,
            self.context_edit: 10,
            self.usage_entry: 4,
            self.compaction: 3,
            self.branch_summary: 2,
            self.label: 4,
            self.name: 1.5,
            self.model: 1.5,
            self.thinking: 1.5,
            self.custom_message: 3,
            self.custom: 1,
            self.prune: 1,
            self.branch: 4,
            self.reset_leaf: 0.2,
        }
        if self.chance(0.9):
            self.system(first=True)
        while len(self.s.entries) < target:
            self.rng.choices(list(ops), weights=list(ops.values()))[0]()


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python random_ours.py OUT_DIR [COUNT] [SEED]")
    out = Path(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for number in range(count):
        rng = random.Random(seed * 1_000_003 + number)
        name = f"ours-random-{number:03d}"
        folder = out / f".tmp-{name}"
        session = Session.create(cwd="/home/dev/app", session_dir=folder, fsync="never")
        big = rng.choice([0, 0.5, 2])
        RandomSession(session, rng, big).run(rng.randint(30, 150))
        session.flush()
        session.path.rename(out / f"{name}.jsonl")
        shutil.rmtree(folder)
        print(f"{name}: {len(session.entries)} entries")


if __name__ == "__main__":
    main()
