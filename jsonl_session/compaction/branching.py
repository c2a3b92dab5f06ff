"""Branch summaries: leaving a branch without losing what was done on it.

`summarize_branch` takes the entries from the common ancestor of the current leaf
and the target down to the current leaf (the branch being left), keeps the newest
ones that fit the window, has a summarizer condense them, and appends a
``branch_summary`` at the target, which becomes the leaf. File lists are carried
from branch summaries already on that branch and added from its tool calls, and
are appended to the text and the entry's details as pi does. Appending a summary
already written is `Session.branch_with_summary` (pi's `branchWithSummary`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonl_session.compaction.execute import file_lists_text, output_budget, summarized
from jsonl_session.compaction.planning import DEFAULT_SETTINGS, CompactionSettings, FileOperations
from jsonl_session.compaction.prompts import SummaryTask
from jsonl_session.compaction.summarizers import Summarizer, choose_summarizer
from jsonl_session.context import as_message
from jsonl_session.errors import CompactionError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.tokens import estimate_tokens

if TYPE_CHECKING:
    from jsonl_session.session.facade import Session

DEFAULT_CONTEXT_WINDOW = 128000


@dataclass(frozen=True, slots=True)
class BranchSummaryResult:
    entry_id: str
    target_id: str | None
    common_ancestor_id: str | None
    summarized: list[str]  # ids of the entries of the branch left behind
    summary: str
    summarizer: str
    read_files: list[str]
    modified_files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "entryId": self.entry_id,
            "targetId": self.target_id,
            "commonAncestorId": self.common_ancestor_id,
            "summarized": self.summarized,
            "summarizer": self.summarizer,
            "readFiles": self.read_files,
            "modifiedFiles": self.modified_files,
            "summary": self.summary,
        }


def branch_left_behind(
    session: Session, target_id: str | None
) -> tuple[str | None, list[StoredEntry]]:
    """(common ancestor id, entries from after it down to the current leaf)."""
    leaf = session.leaf_id
    if leaf is None:
        return None, []
    old_path = session.branch_path()
    on_old = {e.id for e in old_path}
    target_path = session.branch_path(target_id) if target_id is not None else []
    ancestor = next((e.id for e in reversed(target_path) if e.id in on_old), None)
    start = 0 if ancestor is None else [e.id for e in old_path].index(ancestor) + 1
    return ancestor, old_path[start:]


def summarize_branch(
    session: Session,
    target_id: str | None,
    summarizer: Summarizer | None = None,
    *,
    instructions: str | None = None,
    settings: CompactionSettings = DEFAULT_SETTINGS,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
) -> BranchSummaryResult:
    """Summarize the branch being left, append a branch_summary at ``target_id``
    (None: before the first entry) and make it the leaf."""
    if target_id is not None:
        target_id = session.resolve_id(target_id)
    ancestor, left = branch_left_behind(session, target_id)
    messages, files = _messages_within(left, context_window - settings.reserve_tokens)
    if not messages:
        raise CompactionError(
            f"{session.path}: nothing to summarize: moving to {target_id or 'the root'} "
            "leaves no messages behind"
        )
    revision = session.revision
    chosen = summarizer if summarizer is not None else choose_summarizer("auto")
    task = SummaryTask(
        "branch",
        messages,
        output_budget("branch", settings.reserve_tokens),
        instructions=instructions,
    )
    read_files, modified_files = files.lists()
    summary = summarized(chosen, task) + file_lists_text(read_files, modified_files)
    entry_id = session.branch_with_summary(
        target_id,
        summary,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
        from_hook=False,
        expect_revision=revision,
    )
    return BranchSummaryResult(
        entry_id,
        target_id,
        ancestor,
        [e.id for e in left],
        summary,
        chosen.name,
        read_files,
        modified_files,
    )


def _messages_within(
    entries: list[StoredEntry], budget: int
) -> tuple[list[dict[str, Any]], FileOperations]:
    """The newest messages of ``entries`` that fit ``budget`` tokens, and file lists."""
    files = FileOperations()
    for entry in entries:
        if entry.type == "branch_summary":
            data = entry.data()
            if not data.get("fromHook"):
                files.add_details(data.get("details"))
    messages: list[dict[str, Any]] = []
    total = 0
    for entry in reversed(entries):
        data = entry.data() if entry.type in ("message", "custom_message", "branch_summary") else {}
        message = as_message(entry.type, data) if data else None
        if entry.type == "compaction":
            summary = entry.data().get("summary")
            message = {"role": "compactionSummary", "summary": summary} if summary else None
        if message is None:
            continue
        files.add_from(message)
        tokens = estimate_tokens(message)
        if total + tokens > budget:
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return messages, files
