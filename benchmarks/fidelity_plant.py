"""Sessions for the fidelity benchmark: ordinary work with facts planted in it.

`Writer` appends pi-shaped messages (user text, assistant text with tool calls,
tool results, commands the user ran); `Planter` plants one round of facts from one
half's templates (fidelity_phrasings.py) among filler turns and remembers each
fact's kind and token. Checking what a summary kept is fidelity.py's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fidelity_phrasings import Failure

from jsonl_session import Session

FILLER_TURNS = 24
SYLLABLES = ("ka", "zo", "ri", "mu", "ve", "lan", "tor", "qui", "bex", "dro", "sil", "nup")


@dataclass
class Fact:
    kind: str
    token: str


class Writer:
    """Appends pi-shaped messages: user text, assistant text with tool calls, results."""

    def __init__(self, session: Session, rng: random.Random) -> None:
        self.session = session
        self.rng = rng
        self.calls = 0

    def user(self, text: str) -> None:
        self.session.append_message({"role": "user", "content": text, "timestamp": 0})

    def assistant(
        self, text: str, calls: list[tuple[str, dict[str, Any]]] | None = None
    ) -> list[str]:
        ids = []
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for name, arguments in calls or []:
            self.calls += 1
            ids.append(f"call_{self.calls}")
            content.append(
                {"type": "toolCall", "id": ids[-1], "name": name, "arguments": arguments}
            )
        usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
        self.session.append_message(
            {
                "role": "assistant",
                "content": content,
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": usage,
                "stopReason": "toolUse" if calls else "stop",
                "timestamp": 0,
            }
        )
        return ids

    def result(self, call_id: str, name: str, output: str, error: bool = False) -> None:
        self.session.append_message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": output}],
                "isError": error,
                "timestamp": 0,
            }
        )

    def call(
        self, text: str, name: str, arguments: dict[str, Any], output: str, error: bool = False
    ) -> None:
        (call_id,) = self.assistant(text, [(name, arguments)])
        self.result(call_id, name, output, error)

    def user_shell(self, command: str, output: str, code: int) -> None:
        self.session.append_message(
            {
                "role": "bashExecution",
                "command": command,
                "output": output,
                "exitCode": code,
                "cancelled": False,
                "truncated": False,
                "timestamp": 0,
            }
        )

    def run(
        self,
        shape: str,
        tool: str,
        key: str,
        command: str,
        output: str,
        error: bool,
        code: int | None,
    ) -> None:
        if shape == "user-shell":
            self.user_shell(command, output, 0 if code is None else code)
        else:
            self.call("Running it.", tool, {key: command}, output, error)

    def filler_turn(self, n: int, extra: str = "") -> None:
        module = f"pkg/module_{self.rng.randint(1, 400)}.py"
        request = f"Look at {module} and tidy up the helper functions, step {n}."
        self.user(f"{request} {extra}".strip())
        size = self.rng.choice([300, 300, 800, 2500, 6000])
        self.call("Reading the module first.", "read", {"path": module}, _code(self.rng, size))
        self.call(
            "Running the unit tests.",
            "bash",
            {"command": f"pytest -q tests/unit_{n}.py"},
            f"{self.rng.randint(5, 60)} passed in 0.4s",
        )
        self.assistant(f"Tidied {module}; the tests pass.")


def _code(rng: random.Random, size: int) -> str:
    words = ["def", "return", "value", "items", "self", "for", "in", "if", "None", "result"]
    return " ".join(rng.choice(words) for _ in range(size // 5))[:size]


def _fill(value: Any, path: str) -> Any:
    if isinstance(value, str):
        return value.replace("{p}", path)
    if isinstance(value, dict):
        return {k: _fill(v, path) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, path) for v in value]
    return value


class Planter:
    """Plants one half's facts, round by round, and remembers them."""

    def __init__(
        self, writer: Writer, templates: dict[str, tuple[Any, ...]], rng: random.Random
    ) -> None:
        self.w = writer
        self.t = templates
        self.rng = rng
        self.facts: list[Fact] = []
        self.pending_fixes: list[Callable[[], None]] = []
        self.used: set[str] = set()

    def token(self) -> str:
        while True:
            word = "".join(self.rng.choice(SYLLABLES) for _ in range(3)) + str(
                self.rng.randint(10, 99)
            )
            if word not in self.used:
                self.used.add(word)
                return word

    def fact(self, kind: str) -> str:
        token = self.token()
        self.facts.append(Fact(kind, token))
        return token

    def pick(self, kind: str) -> Any:
        return self.rng.choice(self.t[kind])

    def round(self, number: int, last: bool) -> None:
        if number == 1:
            self.w.user(self.rng.choice(["/mode", "/model claude-sonnet-4-5", "/login"]))
            self.w.assistant("")
            self.w.user(self.rng.choice(["hi", "hey there!", "good morning"]))
            self.w.assistant("Hi! What would you like to work on?")
            text = self.pick("goal").replace("{x}", self.fact("goal"))
            if "{noise}" in text:
                text = text.replace("{noise}", self.fact("noise"))
            self.w.user(text)
        else:
            self.w.user(self.pick("correction").replace("{x}", self.fact("correction")))
        self.w.assistant("On it.")
        for fix in self.pending_fixes:
            fix()
        self.pending_fixes = []
        events: list[Callable[[int], None]] = [
            self.constraint,
            self.constraint,
            self.decision,
            self.decision,
            self.open_task,
            self.read,
            self.change,
            self.failing,
            lambda n: self.fixed(n, later=not last and self.rng.random() < 0.5),
            self.noise,
            self.noise,
        ]
        self.rng.shuffle(events)
        for i, event in enumerate(events):
            event(number * 100 + i)
        for n in range(FILLER_TURNS):
            self.w.filler_turn(number * 100 + 50 + n)

    def constraint(self, n: int) -> None:
        text = self.pick("constraint").replace("{x}", self.fact("constraint"))
        if self.rng.random() < 0.5:
            self.w.user(text)
            self.w.assistant("Understood.")
        else:
            self.w.filler_turn(n, extra=text)

    def decision(self, n: int) -> None:
        text = self.pick("decision").replace("{x}", self.fact("decision"))
        module = f"pkg/module_{n}.py"
        self.w.call("Reading it.", "read", {"path": module}, _code(self.rng, 400))
        if self.rng.random() < 0.5:
            self.w.assistant(text)
        else:
            self.w.call(
                f"The module is small. {text} Editing it now.",
                "edit",
                {"path": module, "oldText": "a", "newText": "b"},
                "Successfully replaced text.",
            )

    def open_task(self, n: int) -> None:
        who, text = self.pick("open task").split(":", 1)
        text = text.replace("{x}", self.fact("open task"))
        if who == "U":
            self.w.user(text)
            self.w.assistant("Noted.")
        else:
            self.w.assistant(text)

    def read(self, n: int) -> None:
        name, arguments = self.pick("file read")
        path = f"src/{self.fact('file read')}.py"
        self.w.call("", name, _fill(arguments, path), _code(self.rng, 600))

    def change(self, n: int) -> None:
        name, arguments = self.pick("file changed")
        path = f"src/{self.fact('file changed')}.py"
        self.w.call("Changing it.", name, _fill(arguments, path), "Done.")

    def failing(self, n: int) -> None:
        failure: Failure = self.pick("failing command")
        command = failure.command.replace("{x}", self.fact("failing command"))
        self.w.run(
            failure.shape,
            failure.tool,
            failure.key,
            command,
            failure.output,
            failure.is_error,
            failure.exit_code,
        )

    def fixed(self, n: int, later: bool) -> None:
        failure, passing, shape = self.pick("fixed command")
        token = self.token()
        self.w.run(
            failure.shape,
            failure.tool,
            failure.key,
            failure.command.replace("{x}", token),
            failure.output,
            failure.is_error,
            1,
        )

        def fix() -> None:
            self.facts.append(Fact("fixed command", token))
            self.w.assistant("That should fix it.")
            self.w.run(
                shape,
                "bash",
                "command",
                passing.replace("{x}", token),
                "all good\nexit code 0",
                False,
                0,
            )

        if later:
            self.pending_fixes.append(fix)
        else:
            self.w.filler_turn(n)
            fix()

    def noise(self, n: int) -> None:
        who, text = self.pick("noise").split(":", 1)
        text = text.replace("{x}", self.fact("noise"))
        if who == "U":
            self.w.user(text)
            self.w.assistant("Sure.")
        elif who == "A":
            module = f"pkg/module_{n}.py"
            self.w.call(text, "read", {"path": module}, _code(self.rng, 300))
        elif who == "$":
            self.w.call("", "bash", {"command": text}, "a.py\nb.py\n")
        else:
            self.w.call("", "bash", {"command": text}, "Command exited with code 1", True)
