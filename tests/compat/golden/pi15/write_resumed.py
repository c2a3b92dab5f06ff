"""Write tests/compat/golden/pi15/ours/ours-resumed.jsonl with `jsonl-session resume`
(real subprocesses) against the loopback API stub, so pi 1.5.2 can be asked what it
makes of a session continued here: Anthropic turns with signed and redacted thinking
and a tool call, a branch made with --leaf, then OpenAI Responses turns with reasoning
and a function call after a switch of model.

    python tests/compat/golden/pi15/write_resumed.py tests/compat/golden/pi15/ours

Ids and times are new on every run: re-running it means recording pi's view again
(see tests/compat/golden/README.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(TESTS))

from stub_api import Reply, StubApi, ToolCall  # noqa: E402

from jsonl_session import Session  # noqa: E402

READ = {
    "name": "read",
    "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def resume(stub: StubApi, path: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env |= {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    env |= {"ANTHROPIC_BASE_URL": stub.url, "OPENAI_BASE_URL": stub.url + "/v1"}
    command = [sys.executable, "-m", "jsonl_session", "resume", str(path), *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0 or stub.violations:
        raise SystemExit(f"resume {args} failed: {done.stderr}{stub.violations}")
    return done.stdout


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "ours-resumed.jsonl"
    target.unlink(missing_ok=True)
    session = Session.create(cwd="/work/resumed", path=target)
    session.append_system_message("You help with a small Python project.", tools_added=[READ])
    session.append_model_change("anthropic", "claude-test")
    session.append_message({"role": "user", "content": "Hello", "timestamp": 1_794_600_000_000})
    first_user = session.leaf_id
    with StubApi() as stub:
        stub.reply_with(
            Reply(
                text="I will read it.",
                thinking="The file is short; read it whole.",
                redacted_thinking="UkVEQUNURUQ=",
                tool_calls=[ToolCall("read", {"path": "a.py"})],
            ),
            "Then the tests come next.",
            "Another way: start from the docs.",
            Reply(
                text="Switching: reading b.py.",
                thinking="Check b.py too.",
                tool_calls=[ToolCall("read", {"path": "b.py"})],
            ),
            "Done with both.",
        )
        resume(stub, target, "Read a.py")
        resume(stub, target, "And after that?")
        resume(stub, target, "Try another way", "--leaf", str(first_user))
        resume(stub, target, "Use the other model", "--provider", "openai", "--model", "gpt-t")
        resume(stub, target, "Finish up")
    print(f"wrote {target}: {len(Session.open(target).entries)} entries")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
