"""The phrasings the fidelity benchmark plants facts in (benchmarks/fidelity.py).

Each kind of fact has many templates, written as people and agents really phrase
things: lowercase and sloppy, with and without the marker words a summarizer might
look for, bare or wrapped in Markdown. ``{x}`` is replaced by a token unique to the
fact, so a summary keeps the fact when the token is found in the right section.

`split` divides every kind's templates into a tuned half and a held-out half by a
fixed seed. The split was decided before any tuning and must not change: the
held-out half measures phrasings the summarizer was not adjusted to.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal

SPLIT_SEED = 15

# The user's first substantive request (round 1), after a slash command and a greeting.
GOALS = (
    "Add CSV export to the {x} report.",
    "can you make the {x} importer faster? it takes ages on big inputs",
    "I want the {x} command to print JSON when --json is given.",
    "hey, the {x} page crashes when the list is empty. fix it please",
    "Please migrate {x} from callbacks to async/await.",
    "We need a retry policy for the requests {x} makes.",
    "Refactor {x} so that all three modes share one session object.",
    "help me figure out why {x} leaks memory after a few hours:\n\n```\n"
    "MemoryError: cannot allocate {noise}\n  at worker.run (worker.js:88)\n```",
    "read src/{x}.py in full, then add type hints to every public function",
    "The {x} job times out on Mondays; find out why and fix it.",
)

# Later corrections of the goal (rounds 2 and on).
CORRECTIONS = (
    "Actually, make {x} write to a file instead.",
    "Change of plan: {x} should go through the queue.",
    "wait, no. the {x} flag should be opt-in",
    "Scratch that, put {x} behind a feature flag.",
    "Instead, let's do the {x} part first.",
    "no, I meant the {x} endpoint, not the UI",
    "Correction: {x} is the module to change, not main.",
    "ok now also support {x} in the exporter",
    "hmm, rather than patching it, rewrite {x} from scratch",
    "Let's switch focus to {x} for now.",
)

# Rules and preferences the user sets, alone or inside a longer message.
CONSTRAINTS = (
    "Never touch the {x} module.",
    "You must keep {x} backwards compatible.",
    "Keep the {x} API compatible with version 2.",
    "Don't rename anything in {x}.",
    "Please use {x} for all HTTP calls.",
    "Only change files under {x}/.",
    "Avoid adding dependencies to {x}.",
    "I prefer {x} over the standard logger.",
    "Do it without changing the {x} schema.",
    "Make sure {x} still runs on Python 3.9.",
    "Tabs, not spaces, in {x}.",
    "Leave {x} alone.",
    "{x} is off limits.",
    "No new dependencies in {x}, please.",
    "Stick with {x} for the tests.",
    "I'd rather you didn't refactor {x}.",
    "Always run {x} before committing.",
    "We can't break {x}: other teams import it.",
    "Use {x} rather than print statements.",
    "The {x} output has to stay byte-for-byte identical.",
    "nothing in {x} should change its public signature",
    "under no circumstances push to {x}",
    "stay away from {x}, it's generated code",
    "**never** log the {x} token",
    "DON'T touch {x}!",
    "{x} stays as it is.",
)

# Decisions the assistant states.
DECISIONS = (
    "I'll use {x} instead of the hand-written parser.",
    "Decided to go with {x} for caching.",
    "Going with {x}: it handles retries already.",
    "Switching to {x} because the old client leaks sockets.",
    "The fix is to call {x} before the loop starts.",
    "Root cause: {x} reads the config before it is loaded.",
    "I chose {x} over Redis since it needs no server.",
    "We'll store timestamps as {x} from now on.",
    "Using {x} here rather than a thread pool.",
    "The plan is to replace the regex with {x}.",
    "{x} is the better fit, so I moved the logic there.",
    "I opted for {x} to keep the diff small.",
    "The problem was that {x} swallowed the exception; it now re-raises.",
    "Best option: {x}, which keeps the API unchanged.",
    "I went with {x} because it is already a dependency.",
    "Settled on {x} as the serialization format.",
    "**Decision:** keep {x} as the single source of truth.",
    "## Approach\n\nI'm routing everything through {x}, since it already validates input.",
)

# Work left open, said by the user (U) or the assistant (A).
OPEN_TASKS = (
    "U:TODO: add a retry to {x} later.",
    "U:We still need to port {x}.",
    "A:Still to do: wire {x} into the CLI.",
    "A:Remaining:\n- update the {x} docs\n- bump the version",
    "U:Don't forget to update {x} afterwards.",
    "A:Next step: benchmark {x}.",
    "U:Can you also add tests for {x} once this works?",
    "A:{x} is not done yet; it needs the new schema.",
    "U:Later we should split {x} into two modules.",
    "A:Open question: should {x} be async?",
    "U:follow-up: document {x}",
    "A:I haven't migrated {x} yet.",
)

# Files read: (tool name, arguments) with {p} for the path (or a bash command).
READS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("read", {"path": "{p}"}),
    ("read_file", {"file_path": "{p}"}),
    ("Read", {"file_path": "{p}"}),
    ("view", {"path": "{p}"}),
    ("bash", {"command": "cat {p}"}),
    ("bash", {"command": "sed -n '1,80p' {p}"}),
    ("str_replace_based_edit_tool", {"command": "view", "path": "{p}"}),
    ("bash", {"command": "head -50 {p}"}),
)

# Files changed, the same way.
CHANGES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("edit", {"path": "{p}", "oldText": "a = 1", "newText": "a = 2"}),
    ("write", {"path": "{p}", "content": "print('hi')\n"}),
    ("Edit", {"file_path": "{p}", "old_string": "x", "new_string": "y"}),
    ("str_replace_based_edit_tool", {"command": "str_replace", "path": "{p}", "old_str": "a"}),
    ("apply_patch", {"input": "*** Begin Patch\n*** Update File: {p}\n@@\n-a\n+b\n*** End Patch"}),
    ("bash", {"command": "sed -i 's/old/new/' {p}"}),
    ("bash", {"command": "cat > {p} <<'EOF'\nVALUE = 1\nEOF"}),
    ("create_file", {"filePath": "{p}", "content": "x"}),
    ("multi_edit", {"file_path": "{p}", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("write_file", {"path": "{p}", "content": "x"}),
)

Shape = Literal["tool", "user-shell"]


@dataclass(frozen=True)
class Failure:
    """A command that fails: how it is run, what it prints, how failure shows."""

    shape: Shape
    tool: str
    key: str  # the argument holding the command
    command: str
    output: str
    is_error: bool
    exit_code: int | None = None  # for a command the user ran (bashExecution)


# Commands that fail and are never fixed.
FAILING = (
    Failure(
        "tool",
        "bash",
        "command",
        "pytest tests/test_{x}.py",
        "E   AssertionError: totals differ\n1 failed in 0.3s\nexit code 1",
        True,
    ),
    Failure(
        "tool",
        "shell",
        "cmd",
        "npm run build:{x}",
        "src/a.ts(3,1): error TS2322: Type 'string' is not assignable.\nCommand exited with code 2",
        True,
    ),
    Failure("user-shell", "", "", "make {x}", "make: *** No rule to make target.  Stop.", True, 2),
    Failure(
        "tool", "Bash", "command", "cargo test {x}", "test result: FAILED. 0 passed; 1 failed", True
    ),
    Failure(
        "tool", "bash", "command", "go test ./{x}/...", "--- FAIL: TestRun\nexit status 1", False
    ),
    Failure(
        "tool", "exec", "command", "node scripts/{x}.js", "Error: Cannot find module 'yaml'", True
    ),
)

# Commands that fail, then pass: (the failing run, the passing run's command and shape).
FIXED: tuple[tuple[Failure, str, Shape], ...] = (
    (FAILING[0], "pytest tests/test_{x}.py", "tool"),
    (
        Failure(
            "tool", "bash", "command", "cd /repo && npm test -- {x}", "1 failing\nexit code 1", True
        ),
        "npm test -- {x}",
        "tool",
    ),
    (
        Failure("tool", "bash", "command", "pytest -x tests/{x}_test.py", "1 failed\nexit 1", True),
        "pytest -x tests/{x}_test.py 2>&1 | tail -5",
        "tool",
    ),
    (
        Failure("tool", "bash", "command", "ruff check src/{x}", "F401 unused import", True),
        "ruff check src/{x}",
        "user-shell",
    ),
    (
        Failure("tool", "bash", "command", "tsc --noEmit -p {x}", "error TS2304", True),
        "npx tsc --noEmit -p {x}",
        "tool",
    ),
    (
        Failure("tool", "bash", "command", "make test-{x}", "make: *** [test] Error 1", True),
        "make test-{x}",
        "tool",
    ),
)

# Narration, markup and routine work: nothing of these may reach a summary.
# A: assistant text, U: user text, $: a routine command that succeeds, !: one that
# exits 1 with no output worth noting.
NOISE = (
    "A:Let me look at how {x} is wired up.",
    "A:Now let me check where {x} is called.",
    "A:## Investigating {x}\n\nReading the code.",
    "A:I'll search for {x} in the tests:",
    "A:Perfect! Now I'll look into {x}.",
    "A:Great, that worked. Next I'll open {x}.",
    "$:ls {x}/",
    "!:grep -rn {x} src/",
    "U:/model {x}",
    "A:Looking at {x} now.",
    "U:thanks! {x} looks good",
    "A:Hmm, {x} might be involved. Let me check.",
)

KINDS: dict[str, tuple[Any, ...]] = {
    "goal": GOALS,
    "correction": CORRECTIONS,
    "constraint": CONSTRAINTS,
    "decision": DECISIONS,
    "open task": OPEN_TASKS,
    "file read": READS,
    "file changed": CHANGES,
    "failing command": FAILING,
    "fixed command": FIXED,
    "noise": NOISE,
}

Half = Literal["tuned", "held-out"]


def split(half: Half) -> dict[str, tuple[Any, ...]]:
    """Every kind's templates for one half: shuffled with SPLIT_SEED, the first
    half (rounded up) tuned, the rest held out."""
    chosen: dict[str, tuple[Any, ...]] = {}
    rng = random.Random(SPLIT_SEED)
    for kind, templates in KINDS.items():
        order = list(range(len(templates)))
        rng.shuffle(order)
        cut = (len(order) + 1) // 2
        picked = order[:cut] if half == "tuned" else order[cut:]
        chosen[kind] = tuple(templates[i] for i in sorted(picked))
    return chosen
