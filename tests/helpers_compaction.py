"""Sessions with tool outputs to compact or prune, shared by the compaction suites and
the command-line suite (test_compaction, test_pruning, test_cli_compact). Written
through the library into real files; messages from builders.py (the compaction
variants)."""

from __future__ import annotations

from pathlib import Path

from builders import compaction_assistant as assistant
from builders import compaction_result as result
from builders import compaction_user as user

from jsonl_session import Session


def work_session(tmp_path: Path, turns: int = 12, output_chars: int = 4000) -> Session:
    """A session with a goal, a constraint, edits, a failing then passing command."""
    session = Session.create(cwd="/proj", path=tmp_path / "work.jsonl", fsync="never")
    session.append_message(user("Port the exporter to async. Never block the event loop."))
    session.append_message(
        assistant(
            "I'll use asyncio.to_thread instead of a process pool.",
            ("c0", "edit", {"path": "src/export.py", "oldText": "a", "newText": "b"}),
        )
    )
    session.append_message(result("c0", "edit", "Successfully replaced text in src/export.py."))
    session.append_message(assistant("Testing.", ("c1", "bash", {"command": "pytest -q"})))
    session.append_message(result("c1", "bash", "E   TimeoutError: export hung\nexit code 1"))
    for n in range(turns):
        session.append_message(user(f"Check module {n}."))
        session.append_message(
            assistant(f"Reading {n}.", (f"r{n}", "read", {"path": f"src/m{n}.py"}))
        )
        session.append_message(result(f"r{n}", "read", "x" * output_chars))
        session.append_message(assistant(f"Module {n} is fine."))
    return session


def noisy_session(tmp_path: Path, turns: int = 8, chars: int = 4000) -> Session:
    """Each turn: a user request, one read with a big output, a short answer."""
    session = Session.create(cwd="/p", path=tmp_path / "noisy.jsonl", fsync="never")
    for n in range(turns):
        session.append_message(user(f"look at file {n}"))
        session.append_message(assistant("reading", (f"c{n}", "read", {"path": f"f{n}.py"})))
        session.append_message(result(f"c{n}", "read", f"{n}" * chars))
        session.append_message(assistant(f"file {n} read"))
    return session
