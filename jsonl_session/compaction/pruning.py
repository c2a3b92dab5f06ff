"""Pruning: dropping old tool outputs from the context without a summary.

Our extension, done before summarizing is needed (as opencode's first phase): going
back from the leaf, the tool outputs of the last ``protect_turns`` user turns and
then the next ``protect_tokens`` worth of outputs are kept; every older output still
in the context becomes a candidate, except those of ``protected_tools``. Only when
the candidates add up to ``minimum_tokens`` is anything pruned. The decision is
recorded by appending a ``custom`` entry (PRUNE_MARKER_TYPE) naming the pruned
toolResult entries; no line is edited. Our context builder replaces those outputs
with a placeholder (context.py); pi ignores custom entries and keeps seeing them whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonl_session.context import context_positions, pruned_entry_ids
from jsonl_session.errors import CompactionError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.model import PRUNE_MARKER_TYPE
from jsonl_session.tokens import estimate_messages_tokens, estimate_tokens

if TYPE_CHECKING:
    from jsonl_session.session.facade import Session


@dataclass(frozen=True, slots=True)
class PruneSettings:
    protect_turns: int = 2
    protect_tokens: int = 40000
    minimum_tokens: int = 20000
    protected_tools: frozenset[str] = frozenset({"skill"})


@dataclass(frozen=True, slots=True)
class PrunePlan:
    entry_ids: list[str]
    tokens_saved: int
    candidates_tokens: int  # what the candidates hold, pruned or not (below the minimum)

    @property
    def worthwhile(self) -> bool:
        return bool(self.entry_ids)

    def to_dict(self) -> dict[str, Any]:
        return {
            "entryIds": self.entry_ids,
            "tokensSaved": self.tokens_saved,
            "candidatesTokens": self.candidates_tokens,
        }


@dataclass(frozen=True, slots=True)
class PruneResult:
    entry_id: str
    plan: PrunePlan
    tokens_before: int
    tokens_after: int


def plan_prune(path: Sequence[StoredEntry], settings: PruneSettings = PruneSettings()) -> PrunePlan:
    """Which tool outputs on ``path`` to prune (none when they save too little)."""
    already = pruned_entry_ids(path)
    turns = 0
    kept_tokens = 0
    candidates: list[str] = []
    saved = 0
    for position in reversed(context_positions(path)):
        entry = path[position]
        if entry.type != "message":
            continue
        if entry.role == "user":
            turns += 1
        if entry.role != "toolResult" or turns < settings.protect_turns:
            continue
        if entry.id in already:
            continue
        message = entry.data().get("message")
        if not isinstance(message, dict):
            continue
        tool = message.get("toolName")
        if isinstance(tool, str) and tool in settings.protected_tools:
            continue
        tokens = estimate_tokens(message)
        if kept_tokens < settings.protect_tokens:
            kept_tokens += tokens
            continue
        candidates.append(entry.id)
        saved += tokens
    if saved < settings.minimum_tokens or not candidates:
        return PrunePlan([], 0, saved)
    return PrunePlan(list(reversed(candidates)), saved, saved)


def prune(session: Session, settings: PruneSettings = PruneSettings()) -> PruneResult:
    """Prune the session's current branch; raises CompactionError when nothing is
    worth pruning (saying how much the candidates hold against the minimum)."""
    path = session.branch_path()
    revision = session.revision
    plan = plan_prune(path, settings)
    if not plan.worthwhile:
        raise CompactionError(
            f"{session.path}: nothing to prune: old tool outputs hold about "
            f"{plan.candidates_tokens} tokens, less than the minimum of "
            f"{settings.minimum_tokens}"
        )
    before = estimate_messages_tokens(session.build_context().messages)
    data = {"entryIds": plan.entry_ids, "tokensSaved": plan.tokens_saved}
    entry_id = session.append_custom(PRUNE_MARKER_TYPE, data, expect_revision=revision)
    after = estimate_messages_tokens(session.build_context().messages)
    return PruneResult(entry_id, plan, before, after)
