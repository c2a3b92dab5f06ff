"""Running a compaction: plan, summarize, append the entry, report the figures.

`compact` plans the current branch (planning.py), asks a summarizer for the history
summary (an update of the previous one when there is one) and, for a split turn, for
a summary of the turn's first part; joins them, appends the file lists in pi's
``<read-files>`` / ``<modified-files>`` form, and appends a ``compaction`` entry as a
child of the leaf. History is never deleted: the entry only changes what later
contexts contain. Output budgets come from the reserve (``output_budget``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonl_session.compaction.planning import (
    DEFAULT_SETTINGS,
    CompactionPlan,
    CompactionSettings,
    prepare_compaction,
)
from jsonl_session.compaction.prompts import NO_EARLIER_HISTORY, SummaryTask, TaskKind
from jsonl_session.compaction.summarizers import Summarizer, choose_summarizer
from jsonl_session.errors import CompactionError
from jsonl_session.tokens import estimate_messages_tokens

if TYPE_CHECKING:
    from jsonl_session.session.facade import Session

SPLIT_TURN_HEADING = "**The turn in progress (its later part is kept after this summary):**"

_BUDGET_SHARE: dict[TaskKind, float] = {"history": 0.8, "turn_prefix": 0.5, "branch": 0.25}


def output_budget(kind: TaskKind, reserve_tokens: int) -> int:
    """Most tokens a summary may take: a share of the reserve (what stays free in
    the window), so the summary and the next turn fit in it together."""
    return max(256, int(_BUDGET_SHARE[kind] * reserve_tokens))


def file_lists_text(read_files: list[str], modified_files: list[str]) -> str:
    """The file lists as pi appends them to a summary (empty when both are)."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


@dataclass(frozen=True, slots=True)
class CompactionResult:
    entry_id: str
    plan: CompactionPlan
    summary: str
    summarizer: str
    tokens_before: int  # as recorded in the entry (pi's estimate, usage-based)
    estimated_before: int  # the old context's messages, estimated one by one
    tokens_after: int  # the new context's messages, estimated one by one

    def to_dict(self) -> dict[str, Any]:
        return {
            "entryId": self.entry_id,
            "summarizer": self.summarizer,
            "tokensBefore": self.tokens_before,
            "estimatedBefore": self.estimated_before,
            "tokensAfter": self.tokens_after,
            "plan": self.plan.to_dict(),
            "summary": self.summary,
        }


def plan_for(session: Session, settings: CompactionSettings = DEFAULT_SETTINGS) -> CompactionPlan:
    """The plan for compacting the session's current branch; CompactionError when
    there is nothing to compact."""
    path = session.branch_path()
    plan = prepare_compaction(path, settings)
    if plan is None and (not path or path[-1].type == "compaction"):
        raise CompactionError(
            f"{session.path}: nothing to compact: the branch is empty or already ends "
            "with a compaction"
        )
    if plan is None:
        raise CompactionError(
            f"{session.path}: nothing to compact: everything since the last compaction "
            f"fits in keep_recent_tokens={settings.keep_recent_tokens} "
            "(lower it to compact anyway)"
        )
    return plan


def write_summary(
    plan: CompactionPlan,
    summarizer: Summarizer,
    settings: CompactionSettings = DEFAULT_SETTINGS,
    instructions: str | None = None,
) -> str:
    """The summary text for a plan, file lists included."""
    reserve = settings.reserve_tokens
    if plan.messages_to_summarize:
        history = summarized(
            summarizer,
            SummaryTask(
                "history",
                plan.messages_to_summarize,
                output_budget("history", reserve),
                previous_summary=plan.previous_summary,
                instructions=instructions,
            ),
        )
    else:
        # Nothing new before the split turn: the earlier summary still stands.
        history = _without_file_lists(plan.previous_summary) or NO_EARLIER_HISTORY
    summary = history
    if plan.is_split_turn and plan.turn_prefix_messages:
        prefix = summarized(
            summarizer,
            SummaryTask(
                "turn_prefix",
                plan.turn_prefix_messages,
                output_budget("turn_prefix", reserve),
                instructions=instructions,
            ),
        )
        summary = f"{history}\n\n---\n\n{SPLIT_TURN_HEADING}\n\n{prefix}"
    return summary + file_lists_text(plan.read_files, plan.modified_files)


def summarized(summarizer: Summarizer, task: SummaryTask) -> str:
    """The summarizer's text for ``task``; CompactionError when it is blank."""
    text = summarizer.summarize(task)
    if not text.strip():
        raise CompactionError(f"the {summarizer.name} summarizer returned an empty summary")
    return text


def _without_file_lists(summary: str | None) -> str:
    if not summary:
        return ""
    cut = min(
        (
            i
            for i in (summary.find("\n\n<read-files>"), summary.find("\n\n<modified-files>"))
            if i >= 0
        ),
        default=len(summary),
    )
    return summary[:cut].strip()


def compact(
    session: Session,
    summarizer: Summarizer | None = None,
    settings: CompactionSettings = DEFAULT_SETTINGS,
    instructions: str | None = None,
) -> CompactionResult:
    """Compact the session's current branch and append the compaction entry.

    ``summarizer`` None picks one from the environment (choose_summarizer("auto"):
    offline when no API key is set). Raises CompactionError when there is nothing
    to compact or the summarizer fails, and SessionWriteError when another program
    wrote to the file meanwhile; nothing is written then."""
    plan = plan_for(session, settings)
    revision = session.revision  # a model call can take minutes; others may write
    chosen = summarizer if summarizer is not None else choose_summarizer("auto")
    estimated_before = estimate_messages_tokens(session.build_context().messages)
    summary = write_summary(plan, chosen, settings, instructions)
    entry_id = session.append_compaction(
        summary,
        plan.first_kept_entry_id,
        plan.tokens_before,
        details={"readFiles": plan.read_files, "modifiedFiles": plan.modified_files},
        from_hook=False,
        expect_revision=revision,
    )
    after = estimate_messages_tokens(session.build_context().messages)
    return CompactionResult(
        entry_id, plan, summary, chosen.name, plan.tokens_before, estimated_before, after
    )
