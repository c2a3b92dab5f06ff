"""Compaction: planning (planning.py), prompts and summarizers (prompts.py,
summarizers.py; the offline one in extractive.py, reading messages with gleaning.py,
wording.py and shell.py), running it (execute.py), pruning (pruning.py), branch
summaries (branching.py) and agent-loop helpers (loop.py).

Compaction never deletes history: it appends an entry that changes what later
contexts contain.
"""

import warnings
from typing import Any

from jsonl_session.compaction.branching import BranchSummaryResult, summarize_branch
from jsonl_session.compaction.execute import (
    CompactionResult,
    compact,
    output_budget,
    plan_for,
    write_summary,
)
from jsonl_session.compaction.extractive import ExtractiveSummarizer
from jsonl_session.compaction.loop import (
    auto_compact,
    call_with_overflow_recovery,
    context_tokens,
    is_context_overflow,
)
from jsonl_session.compaction.planning import (
    CompactionPlan,
    CompactionSettings,
    find_cut_point,
    prepare_compaction,
    should_compact,
)
from jsonl_session.compaction.prompts import SummaryTask, prompt_for, render_transcript
from jsonl_session.compaction.pruning import (
    PrunePlan,
    PruneResult,
    PruneSettings,
    plan_prune,
    prune,
)
from jsonl_session.compaction.summarizers import (
    AnthropicSummarizer,
    OpenAISummarizer,
    Summarizer,
    choose_summarizer,
)

__all__ = [
    "AnthropicSummarizer",
    "BranchSummaryResult",
    "CompactionPlan",
    "CompactionResult",
    "CompactionSettings",
    "ExtractiveSummarizer",
    "OpenAISummarizer",
    "PrunePlan",
    "PruneResult",
    "PruneSettings",
    "Summarizer",
    "SummaryTask",
    "auto_compact",
    "call_with_overflow_recovery",
    "choose_summarizer",
    "compact",
    "context_tokens",
    "find_cut_point",
    "is_context_overflow",
    "output_budget",
    "plan_for",
    "plan_prune",
    "prepare_compaction",
    "prompt_for",
    "prune",
    "render_transcript",
    "should_compact",
    "summarize_branch",
    "write_summary",
]


def __getattr__(name: str) -> Any:
    # The generating function was called branch_with_summary, like the Session method
    # that appends a summary already written; the old name keeps working for a while.
    if name == "branch_with_summary":
        warnings.warn(
            "jsonl_session.compaction.branch_with_summary is now summarize_branch "
            "(Session.branch_with_summary appends a summary you already have)",
            DeprecationWarning,
            stacklevel=2,
        )
        return summarize_branch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
