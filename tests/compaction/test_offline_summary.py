"""What the offline summary holds, rule by rule, on session files compacted on disk:
the goal in the user's words, constraints in any phrasing kept across compactions,
decisions, files read and changed, failing and fixed commands, open tasks, and no
narration or markup. Each test writes a real session in tmp_path, compacts it with
the offline summarizer and reads the compaction entry back from the file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from builders import compaction_assistant as assistant
from builders import compaction_result as result
from builders import compaction_user as user

from jsonl_session import Session
from jsonl_session.compaction import CompactionSettings, ExtractiveSummarizer, compact

SETTINGS = CompactionSettings(keep_recent_tokens=1)


def shell(call_id: str, command: str, text: str = "Read the code.") -> dict[str, Any]:
    return assistant(text, (call_id, "bash", {"command": command}))


def compacted(tmp_path: Path, messages: list[dict[str, Any]], name: str = "s") -> str:
    """Append ``messages`` and a closing "thanks" to the session file ``name`` (made
    when missing), compact everything before the "thanks", and give the summary as
    the file now holds it."""
    path = tmp_path / f"{name}.jsonl"
    if path.exists():
        session = Session.open(path)
    else:
        session = Session.create(cwd="/proj", path=path, fsync="never")
    for message in [*messages, user("thanks")]:
        session.append_message(message)
    compact(session, ExtractiveSummarizer(), SETTINGS)
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert last["type"] == "compaction"
    return str(last["summary"])


def section(summary: str, title: str) -> list[str]:
    """The items under a heading, bullets and numbers taken off."""
    lines = summary.split(f"{title}\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return [re.sub(r"^(?:- \[[ x]\] |- |\d+\. )", "", line) for line in lines if line]


class TestTheGoal:
    def test_is_the_first_request_in_the_users_words_after_slash_commands_and_greetings(
        self, tmp_path: Path
    ) -> None:
        summary = compacted(
            tmp_path,
            [
                user("/model claude-sonnet-4-5"),
                assistant(""),
                user("hi there!"),
                assistant("Hi! What are we doing?"),
                user("make the exporter stream rows instead of loading the whole table"),
                assistant("On it."),
            ],
        )
        assert section(summary, "## Goal")[0] == (
            "make the exporter stream rows instead of loading the whole table"
        )
        assert "/model" not in summary and "hi there" not in summary

    def test_leaves_out_a_pasted_log_but_keeps_the_request_around_it(self, tmp_path: Path) -> None:
        request = (
            "the nightly import dies with this:\n\n"
            "Traceback (most recent call last):\n"
            '  File "import.py", line 3, in <module>\n'
            "KeyError: 'customer_id'\n\n"
            "fix it so rows without a customer are skipped"
        )
        summary = compacted(tmp_path, [user(request), assistant("Looking.")])
        goal = section(summary, "## Goal")[0]
        assert goal == (
            "the nightly import dies with this: fix it so rows without a customer are skipped"
        )
        assert "Traceback" not in summary

    def test_keeps_later_corrections_and_additions_after_it(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Add a CSV export to the billing report."),
                assistant("Adding it."),
                user("Actually, make it write Parquet instead."),
                assistant("Switching."),
                user("no, I meant the nightly report, not the weekly one"),
                assistant("Right."),
                user("also add a --since flag to the export command"),
                assistant("Adding the flag."),
                user("Now run the whole test suite please."),
                assistant("Running."),
            ],
        )
        assert section(summary, "## Goal") == [
            "Add a CSV export to the billing report.",
            "Correction: Actually, make it write Parquet instead.",
            "Correction: no, I meant the nightly report, not the weekly one",
            "Also: also add a --since flag to the export command",
        ]
        assert section(summary, "### In Progress") == [
            "Latest request: Now run the whole test suite please."
        ]

    def test_stays_the_first_request_after_more_compactions(self, tmp_path: Path) -> None:
        compacted(tmp_path, [user("Port the CLI from argparse to Typer."), assistant("Porting.")])
        compacted(tmp_path, [user("Now the help texts, please."), assistant("Done.")])
        summary = compacted(tmp_path, [user("And the shell completion."), assistant("Done.")])
        assert section(summary, "## Goal") == [
            "Port the CLI from argparse to Typer.",
            "Later: Now the help texts, please.",
        ]
        assert section(summary, "### In Progress") == ["Latest request: And the shell completion."]


class TestConstraints:
    @pytest.mark.parametrize(
        "said",
        [
            "You must not change the wire format.",
            "never commit generated files",
            "Don't add new dependencies.",
            "Keep the config loader compatible with YAML 1.1 files.",
            "Only edit files under src/api.",
            "Avoid global state in the scheduler.",
            "I prefer dataclasses over dicts for records.",
            "Please use httpx for the client.",
            "Do the migration without touching the users table.",
            "Make sure it still builds on Windows.",
            "Spaces, not tabs.",
            "The public functions stay as they are.",
            "We can't drop Python 3.10 yet: the CI images use it.",
            "no print statements in library code!",
        ],
    )
    def test_are_found_in_many_phrasings(self, tmp_path: Path, said: str) -> None:
        summary = compacted(
            tmp_path,
            [user("Clean up the scheduler module."), assistant("Sure."), user(said)],
        )
        assert section(summary, "## Constraints & Preferences") == [said]

    @pytest.mark.parametrize(
        "said",
        [
            "I don't think the cache is the problem.",
            "It always crashes on the second run.",
            "the tests should be fine now",
            "why does it only fail on CI?",
        ],
    )
    def test_remarks_and_questions_are_not_constraints(self, tmp_path: Path, said: str) -> None:
        summary = compacted(tmp_path, [user("Fix the scheduler."), assistant("Ok."), user(said)])
        assert section(summary, "## Constraints & Preferences") == ["(none)"]

    def test_survive_repeated_compactions_once_each(self, tmp_path: Path) -> None:
        compacted(
            tmp_path,
            [user("Rework the storage layer. Keep the file format compatible with v2.")],
        )
        compacted(tmp_path, [user("Never block the event loop."), assistant("Noted.")])
        summary = compacted(
            tmp_path, [user("Keep the file format compatible with v2."), assistant("Yes.")]
        )
        assert section(summary, "## Constraints & Preferences") == [
            "Keep the file format compatible with v2.",
            "Never block the event loop.",
        ]


class TestDecisions:
    def test_are_the_choices_the_assistant_states(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Speed up the search."),
                assistant(
                    "I'll use a trigram index instead of scanning every row. "
                    "The root cause was a missing index on `entries.text`."
                ),
            ],
        )
        assert section(summary, "## Key Decisions") == [
            "I'll use a trigram index instead of scanning every row.",
            "The root cause was a missing index on `entries.text`.",
        ]

    def test_headings_narration_and_guesses_are_not_decisions(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Speed up the search."),
                assistant(
                    "## Root Cause Analysis\n\n"
                    "Let me look at how the query is built instead of guessing.\n"
                    "Maybe the planner picks a scan rather than the index.\n"
                    "The fix is:\n"
                ),
            ],
        )
        assert section(summary, "## Key Decisions") == ["(none)"]


class TestFiles:
    def test_files_changed_by_other_tools_and_shell_commands_are_listed(
        self, tmp_path: Path
    ) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Rename the setting everywhere."),
                assistant(
                    "Editing.",
                    ("e1", "Edit", {"file_path": "src/a.py", "old_string": "x", "new_string": "y"}),
                    (
                        "e2",
                        "apply_patch",
                        {"input": "*** Begin Patch\n*** Update File: src/b.py\n"},
                    ),
                ),
                result("e1", "Edit", "ok"),
                result("e2", "apply_patch", "ok"),
                shell("s1", "cd /proj && sed -i '' 's/old_name/new_name/g' src/c.py"),
                result("s1", "bash", ""),
            ],
        )
        done = section(summary, "### Done")
        for path in ("src/a.py", "src/b.py", "/proj/src/c.py"):
            assert f"Changed `{path}`" in done
        assert "s/old_name" not in summary

    def test_files_in_pis_lists_are_not_repeated_in_the_body(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Fix the parser."),
                assistant(
                    "Reading and fixing.",
                    ("r1", "read", {"path": "src/parser.py"}),
                    ("e1", "edit", {"path": "src/lexer.py", "oldText": "a", "newText": "b"}),
                ),
                result("r1", "read", "code"),
                result("e1", "edit", "ok"),
            ],
        )
        body, _, lists = summary.partition("<read-files>")
        assert "src/parser.py" in lists and "<modified-files>\nsrc/lexer.py" in lists
        assert "parser.py" not in body and "lexer.py" not in body

    def test_files_read_through_the_shell_are_named(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("What does the config say?"),
                shell("s1", "head -40 conf/app.toml | grep timeout"),
                result("s1", "bash", "timeout = 3"),
            ],
        )
        assert "Read `conf/app.toml`" in section(summary, "## Critical Context")


class TestCommands:
    def test_a_failing_command_is_blocked_with_its_error(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Make the build pass."),
                shell("b1", "npm run build 2>&1 | tail -20"),
                result(
                    "b1",
                    "bash",
                    "> app@1.0.0 build\nsrc/a.ts(3,1): error TS2322: Type 'string' is not "
                    "assignable to type 'number'.\n\nCommand exited with code 2",
                    error=True,
                ),
            ],
        )
        assert section(summary, "### Blocked") == [
            "`npm run build` exit 2: src/a.ts(3,1): error TS2322: Type 'string' is not "
            "assignable to type 'number'."
        ]

    def test_a_command_that_passes_after_a_compaction_moves_to_done(self, tmp_path: Path) -> None:
        first = compacted(
            tmp_path,
            [
                user("Fix the flaky test."),
                shell("t1", "cd /proj && python -m pytest -q tests/test_sync.py"),
                result("t1", "bash", "E   TimeoutError: sync hung\n1 failed\nexit code 1"),
            ],
        )
        assert section(first, "### Blocked")[0].startswith("`python -m pytest -q tests/test_sync")
        second = compacted(
            tmp_path,
            [
                assistant(
                    "Fixed the lock.", ("t2", "bash", {"command": "pytest tests/test_sync.py"})
                ),
                result("t2", "bash", "3 passed\nexit code 0"),
            ],
        )
        assert section(second, "### Blocked") == ["(none)"]
        assert section(second, "### Done") == [
            "`pytest tests/test_sync.py` passes now (it failed before: exit 1: "
            "E TimeoutError: sync hung)"
        ]

    def test_routine_commands_are_never_listed(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Where is the retry logic?"),
                shell("l1", "ls -la src/"),
                result("l1", "bash", "a.py\nb.py"),
                shell("g1", 'grep -rn "retry\\|backoff" src/'),
                result("g1", "bash", "Command exited with code 1", error=True),
                shell("g2", "git status && git log --oneline -3"),
                result("g2", "bash", "clean"),
            ],
        )
        assert "Ran `" not in summary and "ls -la" not in summary and "grep" not in summary
        assert section(summary, "### Blocked") == ["(none)"]


class TestOpenTasks:
    def test_todos_still_needs_and_remaining_lists_are_next_steps(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Ship the new importer. TODO: document the CSV dialect."),
                assistant(
                    "The importer works.\n\nRemaining:\n- wire it into the CLI\n- add a changelog "
                    "entry\n\nWe still need to migrate the old fixtures."
                ),
            ],
        )
        assert section(summary, "## Next Steps") == [
            "TODO: document the CSV dialect.",
            "We still need to migrate the old fixtures.",
            "wire it into the CLI",
            "add a changelog entry",
        ]

    def test_offers_and_narration_are_not_tasks(self, tmp_path: Path) -> None:
        summary = compacted(
            tmp_path,
            [
                user("Ship the new importer."),
                assistant(
                    "Next, let me check the remaining call sites.\n"
                    "Want me to handle the follow-up cleanup too?"
                ),
            ],
        )
        assert section(summary, "## Next Steps") == ["(none)"]


class TestNoNarrationOrMarkup:
    def test_no_item_holds_markdown_or_narration(self, tmp_path: Path) -> None:
        reply = (
            "## Summary\n\n"
            "Let me explain what changed.\n\n"
            "**Decision:** we'll use `orjson` instead of `json` for speed.\n\n"
            "```python\nimport orjson  # we must never use json here\n```\n\n"
            "| file | change |\n|---|---|\n| a.py | switched to orjson |\n"
        )
        summary = compacted(tmp_path, [user("Speed up the dumps."), assistant(reply)])
        body = summary.partition("<read-files>")[0]
        items = [line for line in body.splitlines() if line and not line.startswith("#")]
        assert not [line for line in items if re.search(r"\*\*|```|\|", line)]
        assert "Let me" not in body and "import orjson" not in body
        assert section(summary, "## Key Decisions") == [
            "Decision: we'll use `orjson` instead of `json` for speed."
        ]

    def test_a_models_summary_is_read_back_without_its_code_blocks_and_tables(
        self, tmp_path: Path
    ) -> None:
        path = tmp_path / "m.jsonl"
        session = Session.create(cwd="/proj", path=path, fsync="never")
        session.append_message(user("Refactor the modes."))
        first = session.append_message(assistant("Refactoring."))
        model_summary = (
            "# Checkpoint\n\n## Goal\nRefactor the modes into one **session** object.\n\n"
            "## User Preferences\n- **E2E tests only** - no unit tests\n\n"
            "## Completed\n| WP | Status |\n|----|----|\n| WP1 | done |\n\n"
            "### Layout\n```\nsrc/\n├── core/\n```\n\n## Next Steps\n1. Move the theme files\n"
        )
        session.append_compaction(model_summary, first, 1000)
        summary = compacted(tmp_path, [user("Go on."), assistant("Moving them.")], name="m")
        assert section(summary, "## Goal")[0] == "Refactor the modes into one session object."
        assert section(summary, "## Constraints & Preferences") == [
            "E2E tests only - no unit tests"
        ]
        assert "Move the theme files" in section(summary, "## Next Steps")
        assert "WP1" not in summary and "├──" not in summary and "```" not in summary
