"""Generate large, realistic pi-format (version 3) session files for benchmarks.

Lines are what pi writes: compact JSON with pi's key order. After the header come a
model and a thinking-level change, then turns: a user message, 1-4 rounds of an
assistant message (thinking, sometimes text, 1-3 tool calls) each followed by one
tool result per call, and a final answer. Tool outputs are code- and log-like text
(quotes, newlines, tabs, backslashes, some non-ASCII) whose sizes are log-normal:
median ~300 B, p90 ~4 KB, p99 ~37 KB, cut at 50 KiB as pi's tools truncate. Every
~2,000-5,000 entries the session branches back a few turns (as /tree does). It is
compacted as pi compacts: when the active path since the last compaction's kept
point would fill the model's context window (200k tokens at ~4 bytes a token, less
pi's 16,384-token reserve), keeping the last few turns; in a 100k-entry session
that is a few hundred compactions. ``compact_every=N`` compacts every ~N entries on
the active path instead (e.g. 25,000: a few compactions, each over a huge context no
model could hold). Now and then an entry is labelled or the session renamed. A rare
word ("zebracorn") is planted in a handful of user messages, for search benchmarks.

Output is deterministic for a seed. Text comes from a pool built once per process and
sliced, so 100k entries take a few seconds.

    python benchmarks/generate.py OUT.jsonl ENTRIES [--seed N]
"""

from __future__ import annotations

import argparse
import base64
import random
import time
import uuid
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

import orjson

SEARCH_WORD = "zebracorn"
MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
PRICES = (3.0, 15.0, 0.3, 3.75)  # $ per million tokens: input, output, cache read, write
MAX_OUTPUT = 50 * 1024  # pi's tools truncate their output at 50 KiB
START_MS = 1_748_764_800_000  # 2025-06-01T08:00:00.000Z
_WORD_TEXT = (
    "parser token buffer request handler session cache index entry config router user "
    "todo payload schema migration worker queue retry timeout stream branch commit "
    "result value error option client server socket bytes offset length module test "
    "fixture assert expected actual render layout widget state reducer effect hook "
    "context build deploy lint format compile import export async await promise"
)
WORDS = tuple(_WORD_TEXT.split())
ODD = ("é", "→", "✓", "—", "naïve", "café", "über", "日本語", "€", "…", "🚀")
EXTS = (".ts", ".py", ".rs", ".go", ".tsx", ".json", ".md")
TOOLS = ("read", "bash", "edit", "write", "grep")
CODE_LINES = (  # str.format templates for _code_line
    "{ind}def {a}({b}, {c}=None) -> dict[str, int]:",
    '{ind}return {a}.{b}("{words}", {n})',
    "{ind}const {a} = await {b}('{path}');",
    "2025-06-0{d}T12:{m:02d}:07.{n:03d}Z {level} [{a}] {words} → {n}ms",
    "{path}:{n}:{m}: error TS2345: '{a}' is not assignable to \"{b}\"",
    "    at {A}.{b} ({path}:{n}:{m})",
    "{ind}# {words}",
    "{path}:{n}:{ind}{a}({b})",
    '{ind}{{"{a}": "{words}", "n": {n}, "ok": true}},',
    "{sign}{ind}{a} = {b}[{n}]  \\\\ {words}",
    "{ind}\tif ({a} === null) throw new Error(`{words}`);",
    "",
)
LABELS = ("checkpoint", "tests green", "before refactor", "wip: parser", "good state", "try B")


class Pools(NamedTuple):
    code: str  # code, logs, diffs, stack traces
    prose: str  # thinking, answers, user requests
    b64: str  # signatures


def _ident(rng: random.Random) -> str:
    a, b = rng.choice(WORDS), rng.choice(WORDS)
    return rng.choice((f"{a}_{b}", f"{a}{b.capitalize()}", a, f"{a.capitalize()}{b}"))


def _path(rng: random.Random) -> str:
    depth = rng.randint(0, 3)
    parts = ["src", *(rng.choice(WORDS) for _ in range(depth)), _ident(rng)]
    return "/".join(parts) + rng.choice(EXTS)


def _words(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.15:
        words.insert(rng.randrange(len(words) + 1), rng.choice(ODD))
    return " ".join(words)


def _code_line(rng: random.Random) -> str:
    a, b, c = _ident(rng), _ident(rng), _ident(rng)
    n, m = rng.randint(1, 999), rng.randint(0, 59)
    return rng.choice(CODE_LINES).format(
        ind="    " * rng.randint(0, 3),
        a=a,
        b=b,
        c=c,
        A=a.capitalize(),
        n=n,
        m=m,
        d=n % 9 + 1,
        words=_words(rng, rng.randint(2, 9)),
        path=_path(rng),
        level=rng.choice(("INFO", "DEBUG", "WARN", "ERROR")),
        sign=rng.choice("+- "),
    )


@cache
def _pools() -> Pools:
    """A fixed pool of text, built once per process; sessions slice it at random."""
    rng = random.Random(20250601)
    code: list[str] = []
    size = 0
    while size < 2 * MAX_OUTPUT + 1_000_000:
        code.append(_code_line(rng))
        size += len(code[-1]) + 1
    prose = [f"{_words(rng, rng.randint(6, 18)).capitalize()}." for _ in range(20_000)]
    for i in range(0, len(prose), 7):
        prose[i] += f" See `{_path(rng)}`."
    b64 = base64.b64encode(rng.randbytes(48_000)).decode()
    return Pools("\n".join(code), " ".join(prose), b64)


def _slice(rng: random.Random, pool: str, size: int, sep: str = "\n") -> str:
    """``size`` characters of ``pool``, from just after a ``sep`` when one is near."""
    at = rng.randrange(len(pool) - size - 300)
    found = pool.find(sep, at, at + 300)
    start = found + len(sep) if found >= 0 else at
    return pool[start : start + size]


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def _percentile(sorted_values: list[int], q: float) -> int:
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


class Turn(NamedTuple):
    user_id: str
    end_id: str
    path_pos: int  # entries on the active path up to and including end_id
    path_bytes: int  # bytes of those entries


CONTEXT_BYTES = 4 * (200_000 - 16_384)


class _Writer:
    """Appends entries in pi's shapes and keeps the state of the active path."""

    def __init__(self, rng: random.Random, limit: int, out: BinaryIO) -> None:
        self.rng, self.limit, self.out, self.pools = rng, limit, out, _pools()
        self.count = 0  # entries written
        self.bytes = 0  # bytes written, header included
        self.ids: set[str] = set()
        self.leaf: str | None = None
        self.ms = START_MS + rng.randrange(10**10)
        self.path_pos = 0
        self.path_bytes = 0
        self.output_sizes: list[int] = []
        self.files: list[str] = []

    def prose(self, low: int, high: int) -> str:
        return _slice(self.rng, self.pools.prose, self.rng.randint(low, high), ". ")

    def code(self, low: int, high: int) -> str:
        return _slice(self.rng, self.pools.code, self.rng.randint(low, high))

    def full(self) -> bool:
        return self.count >= self.limit

    def write(self, line: dict[str, Any]) -> int:
        written = self.out.write(orjson.dumps(line) + b"\n")
        self.bytes += written
        return written

    def new_id(self) -> str:
        while True:
            value = f"{self.rng.getrandbits(32):08x}"
            if value not in self.ids:
                self.ids.add(value)
                return value

    def entry(self, kind: str, fields: dict[str, Any], wait_ms: tuple[int, int]) -> str:
        self.ms += self.rng.randint(*wait_ms) if wait_ms[1] else 0
        entry_id = self.new_id()
        head = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": _iso(self.ms)}
        self.path_bytes += self.write(head | fields)
        self.count += 1
        self.leaf = entry_id
        self.path_pos += 1
        return entry_id

    def message(self, message: dict[str, Any], wait_ms: tuple[int, int]) -> str:
        self.ms += self.rng.randint(*wait_ms)
        message["timestamp"] = self.ms - self.rng.randint(5, 40)  # made just before saving
        return self.entry("message", {"message": message}, (0, 0))

    def user(self, planted: bool) -> str:
        text = self.prose(30, 600)
        if planted:
            words = text.split(" ")
            words.insert(self.rng.randrange(len(words) + 1), SEARCH_WORD)
            text = " ".join(words)
        content = [{"type": "text", "text": text}]
        return self.message({"role": "user", "content": content}, (8_000, 180_000))

    def assistant(self, calls: list[dict[str, Any]], text: bool) -> str:
        rng, pools = self.rng, self.pools
        content: list[dict[str, Any]] = [
            {
                "type": "thinking",
                "thinking": self.prose(40, 1200),
                "thinkingSignature": _slice(rng, pools.b64, rng.randint(200, 900)),
            }
        ]
        if text or not calls:
            content.append({"type": "text", "text": self.prose(20, 900)})
        content += calls
        keys = ("input", "output", "cacheRead", "cacheWrite")
        tokens = [rng.randint(20, 3000), rng.randint(30, 2500), rng.randint(0, 150_000)]
        tokens.append(rng.randint(0, 6000))
        cost = {k: round(n * p / 1e6, 6) for k, n, p in zip(keys, tokens, PRICES, strict=True)}
        cost["total"] = round(sum(cost.values()), 6)
        usage = dict(zip(keys, tokens, strict=True)) | {"totalTokens": sum(tokens), "cost": cost}
        message = {
            "role": "assistant",
            "content": content,
            **MODEL,
            "usage": usage,
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": 0,
            "responseId": "msg_01" + _slice(rng, pools.b64, 22).replace("+", "x").replace("/", "y"),
        }
        return self.message(message, (2_000, 40_000))

    def tool_call(self) -> dict[str, Any]:
        rng, pools = self.rng, self.pools
        name = rng.choice(TOOLS)
        path = rng.choice(self.files) if self.files and rng.random() < 0.5 else _path(rng)
        self.files.append(path)
        arguments: dict[str, Any]
        if name == "read":
            arguments = {"path": path}
        elif name == "bash":
            arguments = {"command": f"npm test -- {path} 2>&1 | tail -n {rng.randint(5, 200)}"}
        elif name == "edit":
            old, new = self.code(20, 400), self.code(20, 400)
            arguments = {"path": path, "oldText": old, "newText": new}
        elif name == "write":
            arguments = {"path": path, "content": self.code(100, 4000)}
        else:
            arguments = {"pattern": rng.choice(WORDS), "path": path.rsplit("/", 1)[0]}
        call_id = "toolu_01" + _slice(rng, pools.b64, 22).replace("+", "a").replace("/", "b")
        return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}

    def tool_result(self, call: dict[str, Any]) -> None:
        size = min(MAX_OUTPUT, max(1, int(self.rng.lognormvariate(5.67, 2.08))))
        output = _slice(self.rng, self.pools.code, size)
        self.output_sizes.append(len(output.encode()))
        message = {
            "role": "toolResult",
            "toolCallId": call["id"],
            "toolName": call["name"],
            "content": [{"type": "text", "text": output}],
            "isError": False,
        }
        self.message(message, (50, 4_000))

    def compaction(self, first_kept: str) -> None:
        rng = self.rng
        recent = self.files[-60:]
        read = sorted(set(rng.sample(recent, min(len(recent), rng.randint(1, 12)))))
        modified = sorted(set(rng.sample(recent, min(len(recent), rng.randint(0, 6)))))
        progress = "\n".join(f"- {p}: {_words(rng, 6)}" for p in modified or read)
        summary = (
            f"## Goal\n{self.prose(80, 300)}\n\n"
            f"## Progress\n{progress}\n\n## Next\n- {_words(rng, 8)}"
        )
        fields = {
            "summary": summary,
            "firstKeptEntryId": first_kept,
            "tokensBefore": rng.randint(120_000, 190_000),
            "details": {"readFiles": read, "modifiedFiles": modified},
            "fromHook": False,
        }
        self.entry("compaction", fields, (500, 30_000))


def _generate(w: _Writer, entries: int, compact_every: int | None) -> dict[str, int]:
    """Write turns until ``entries`` entries are written, branching back, compacting and
    labelling on their schedules; return counts of what was written."""
    rng = w.rng
    w.entry("model_change", {"provider": MODEL["provider"], "modelId": MODEL["model"]}, (9, 30))
    if not w.full():
        w.entry("thinking_level_change", {"thinkingLevel": "medium"}, (9, 30))
    turns: list[Turn] = []
    kept_from = 0  # index in turns of the first turn after the last compaction
    compaction_pos = compaction_bytes = 0
    next_branch = rng.randint(2_000, 5_000)

    def compaction_due() -> bool:
        if compact_every is None:
            return w.path_bytes - compaction_bytes >= CONTEXT_BYTES
        return w.path_pos - compaction_pos >= next_compaction

    def next_after() -> int:
        return rng.randint(compact_every * 4 // 5, compact_every * 6 // 5) if compact_every else 0

    next_compaction = next_after()
    next_label = rng.randint(800, 3_000)
    expected_turns = max(2, entries // 20)  # a turn is at most ~18 entries
    planted = {0, *rng.sample(range(1, expected_turns), min(4, expected_turns - 1))}
    kinds = ("turns", "branches", "compactions", "labels", "names", "search_word_messages")
    counts = dict.fromkeys(kinds, 0)
    while not w.full():
        n = w.count
        back = rng.randint(2, 6)
        if n >= next_branch and len(turns) - 1 - back >= kept_from:
            turns = turns[: len(turns) - back]  # go back with /tree, continue from there
            w.leaf, w.path_pos, w.path_bytes = turns[-1].end_id, *turns[-1][2:]
            counts["branches"] += 1
            next_branch = n + rng.randint(2_000, 5_000)
        kept = rng.randint(2, 5)
        if compaction_due() and len(turns) - kept > kept_from:
            w.compaction(turns[-kept].user_id)
            counts["compactions"] += 1
            kept_from, compaction_pos = len(turns), w.path_pos
            compaction_bytes = turns[-kept - 1].path_bytes
            next_compaction = next_after()
            continue
        plant = counts["turns"] in planted
        user_id = w.user(plant)
        counts["search_word_messages"] += plant
        counts["turns"] += 1
        end_id = user_id
        for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
            if w.full():
                break
            calls = [w.tool_call() for _ in range(rng.choice((1, 1, 1, 2, 3)))]
            end_id = w.assistant(calls, text=rng.random() < 0.4)
            for call in calls:
                if not w.full():
                    w.tool_result(call)
        if w.full():
            break
        end_id = w.assistant([], text=True)
        turns.append(Turn(user_id, end_id, w.path_pos, w.path_bytes))
        if n >= next_label and not w.full():
            if rng.random() < 0.15 or counts["names"] == 0:
                name = f"{_words(rng, rng.randint(2, 5)).capitalize()}"
                w.entry("session_info", {"name": name}, (10, 2_000))
                counts["names"] += 1
            else:
                target = rng.choice((user_id, end_id))
                w.entry("label", {"targetId": target, "label": rng.choice(LABELS)}, (10, 5_000))
                counts["labels"] += 1
            next_label = n + rng.randint(800, 3_000)
    return counts


def write_session(
    path: Path | str, entries: int, seed: int = 7, compact_every: int | None = None
) -> dict[str, Any]:
    """Write a header and exactly ``entries`` entries to ``path``; return facts about it."""
    rng = random.Random(seed)
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    with open(path, "wb", buffering=1 << 20) as out:
        w = _Writer(rng, entries, out)
        created = _iso(w.ms - rng.randint(20, 900))
        header = {"type": "session", "version": 3, "id": session_id, "timestamp": created}
        w.write(header | {"cwd": "/home/u/project"})
        counts = _generate(w, entries, compact_every)
    sizes = sorted(w.output_sizes)
    return {
        "path": str(path),
        "session_id": session_id,
        "entries": w.count,
        "bytes": w.bytes,
        "last_id": w.leaf,
        "tool_outputs": len(sizes),
        **{f"output_p{q}": _percentile(sizes, q / 100) for q in (50, 90, 99)},
        "output_max": sizes[-1] if sizes else 0,
        "search_word": SEARCH_WORD,
        **counts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("entries", type=int)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--compact-every", type=int, default=None, metavar="N")
    args = parser.parse_args()
    start = time.perf_counter()
    facts = write_session(args.out, args.entries, args.seed, args.compact_every)
    seconds = time.perf_counter() - start
    print(
        f"{facts['entries']} entries, {facts['bytes'] / 2**20:.1f} MiB in {seconds:.1f} s; "
        f"{facts['turns']} turns, {facts['branches']} branches, "
        f"{facts['compactions']} compactions, {facts['labels']} labels, {facts['names']} names"
    )
    print(
        f"tool outputs: {facts['tool_outputs']}, p50 {facts['output_p50']} B, "
        f"p90 {facts['output_p90']} B, p99 {facts['output_p99']} B, max {facts['output_max']} B"
    )
    print(f"'{SEARCH_WORD}' planted in {facts['search_word_messages']} user messages")


if __name__ == "__main__":
    main()
