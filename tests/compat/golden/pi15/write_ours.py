"""Write the sessions of tests/compat/golden/pi15/ours/ with this library, using every
pi 1.5 entry it can write, so pi 1.5.2 can be asked what it makes of them.

    python tests/compat/golden/pi15/write_ours.py tests/compat/golden/pi15/ours

Ids and times are new on every run: re-running it means recording pi's view again
(see tests/compat/golden/README.md).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from jsonl_session import CompactionSettings, ExtractiveSummarizer, Session, compact

READ = {"name": "read", "description": "Read a file.", "parameters": {"type": "object"}}
GREP_ANTHROPIC = {
    "name": "grep",
    "description": "Search files.",
    "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}},
}
BASH_OPENAI_CHAT = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}
EDIT_OPENAI_RESPONSES = {
    "type": "function",
    "name": "edit",
    "description": "Edit a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    "strict": False,
}
MS = 1_794_500_000_000


def usage(tokens_in: int, tokens_out: int) -> dict[str, Any]:
    cost = {"input": tokens_in / 1e6, "output": tokens_out / 1e6, "cacheRead": 0}
    cost |= {"cacheWrite": 0, "total": (tokens_in + tokens_out) / 1e6}
    return {
        "input": tokens_in,
        "output": tokens_out,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": tokens_in + tokens_out,
        "cost": cost,
    }


def user(text: str, at: int) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": MS + at}


def assistant(blocks: list[dict[str, Any]], at: int) -> dict[str, Any]:
    calls = any(block["type"] == "toolCall" for block in blocks)
    return {
        "role": "assistant",
        "content": blocks,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "thinkingLevel": "medium",
        "usage": usage(900 + at, 50),
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": MS + at,
    }


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def result(call_id: str, name: str, output: str, at: int) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": text(output),
        "isError": False,
        "timestamp": MS + at,
    }


def prompt_edits_usage(folder: Path) -> Path:
    s = Session.create(cwd="/home/dev/app", session_dir=folder, fsync="never")
    s.append_system_message(
        sections={"preamble": "You are a coding agent.", "style": "Be brief."},
        tools_added=[READ, GREP_ANTHROPIC, BASH_OPENAI_CHAT],
    )
    u1 = s.append_message(user("What fails in CI?", 1))
    a1 = s.append_message(
        assistant([{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}], 2)
    )
    r1 = s.append_message(result("c1", "bash", "x" * 3000 + "\nFAIL test_cache", 3))
    s.append_usage("classifier", "openai", "gpt-5.1-mini", usage(200, 5), note="routing")
    s.append_message(assistant(text("test_cache fails."), 4))
    s.append_context_edit(r1, "[long output elided; it ends with FAIL test_cache]")
    s.append_context_edit(a1, "I ran the tests.")
    s.append_context_edit(u1, [{"type": "text", "text": "Why does CI fail?"}])
    s.append_system_message(
        "Do not push.",
        sections={"style": None, "repo": "Repository: app"},
        tools_added=[EDIT_OPENAI_RESPONSES],
        tools_removed=["grep"],
    )
    s.append_usage("cache_warm", "anthropic", "claude-sonnet-4-5", usage(0, 0))
    kept = s.append_message(user("Fix it.", 5))
    s.append_message(assistant(text("Fixed the cache key."), 6))
    s.append_context_edit(r1, None)
    s.append_compaction("CI failed in test_cache.", kept, 4200, usage=usage(3000, 200))
    s.append_message(user("Run it again.", 7))
    s.append_message(assistant(text("All green."), 8))
    s.append_compaction("Fixed and green.", None, 5100, from_hook=True)
    s.append_message(user("Open a pull request.", 9))
    left = s.append_message(assistant(text("Opened #12."), 10))
    s.branch_with_summary(kept, "Tried a second fix, then opened #12.", usage=usage(500, 40))
    s.append_message(user("Undo the hiding.", 11))
    s.append_context_edit(u1, "What fails in CI?")  # the original content again
    s.append_message(assistant(text("Done."), 12))
    s.branch(left)
    return s.path


def compacted_by_us(folder: Path) -> Path:
    s = Session.create(cwd="/home/dev/app", session_dir=folder, fsync="never")
    s.append_system_message("Base rules.", tools_added=[READ])
    for turn in range(1, 7):
        s.append_message(user(f"Change module {turn}. " + "detail " * 200, 100 * turn))
        s.append_message(
            assistant(text(f"Module {turn} changed. " + "done " * 200), 100 * turn + 1)
        )
        if turn == 3:
            s.append_system_message(sections={"notes": "Modules are numbered."})
    compact(s, ExtractiveSummarizer(), CompactionSettings(keep_recent_tokens=600))
    s.append_message(user("Next step.", 900))
    s.append_message(assistant(text("Next step done."), 901))
    return s.path


def main() -> None:
    out = Path(sys.argv[1])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name, write in (
        ("ours-prompt-edits-usage", prompt_edits_usage),
        ("ours-compacted", compacted_by_us),
    ):
        folder = out / f".{name}"
        made = write(folder)
        made.rename(out / f"{name}.jsonl")
        shutil.rmtree(folder)
        print(name)


if __name__ == "__main__":
    main()
