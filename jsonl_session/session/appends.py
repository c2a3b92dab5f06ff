"""The typed appends of a session: one public method per entry type.

Owns what each entry type takes as arguments and which entries it must refer to
(a compaction's first kept entry, a label's target); building the line is
format/building.py's, and writing it (the leaf it attaches to, the checks made under
the lock) is appender.py's. `Session` (facade.py) inherits these methods. Generating a
branch summary with a model is compaction/branching.py's `summarize_branch`;
`branch_with_summary` here appends one already written.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from jsonl_session.errors import EntryValidationError
from jsonl_session.format.building import message_line
from jsonl_session.format.model import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from jsonl_session.session.appender import Appender


class EntryAppends:
    """Appending entries of each type; ``_appender`` is the session's."""

    _appender: Appender

    def append_message(self, message: dict[str, Any] | msgspec.Struct) -> str:
        """Append an agent message (pi's shapes, as a dict or a model struct)."""
        build, role = message_line(message)
        return self._appender.append(build, flush=role == "assistant")

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._appender.append_struct(ModelChangeEntry, provider=provider, model_id=model_id)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._appender.append_struct(ThinkingLevelChangeEntry, thinking_level=thinking_level)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
        *,
        expect_revision: int | None = None,
    ) -> str:
        return self._appender.append_struct(
            CompactionEntry,
            requires=(first_kept_entry_id,),
            expect_revision=expect_revision,
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
            from_hook=from_hook,
        )

    def append_branch_summary(
        self,
        from_id: str,
        summary: str,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
    ) -> str:
        """Append a branch_summary as a child of the current leaf."""
        fields = {"from_id": from_id, "summary": summary, "details": details}
        return self._appender.append_struct(BranchSummaryEntry, from_hook=from_hook, **fields)

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
        *,
        expect_revision: int | None = None,
    ) -> str:
        """Move the leaf to ``entry_id`` (None: before the first entry) and append a
        branch_summary there; the summary entry itself records the leaf move."""
        fields = {"from_id": entry_id or "root", "summary": summary, "details": details}
        return self._appender.append_struct(
            BranchSummaryEntry,
            attach_to=(entry_id,),
            requires=() if entry_id is None else (entry_id,),
            expect_revision=expect_revision,
            from_hook=from_hook,
            **fields,
        )

    def append_custom(
        self, custom_type: str, data: Any = UNSET, *, expect_revision: int | None = None
    ) -> str:
        """Extension state: stored, never in the model context."""
        return self._appender.append_struct(
            CustomEntry, custom_type=custom_type, data=data, expect_revision=expect_revision
        )

    def append_custom_message(
        self,
        custom_type: str,
        content: str | list[Any],
        display: bool = True,
        details: Any = UNSET,
    ) -> str:
        """A message an extension adds to the model context (as a user message)."""
        return self._appender.append_struct(
            CustomMessageEntry,
            custom_type=custom_type,
            content=content,
            display=display,
            details=details,
        )

    def append_label(self, target_id: str, label: str | None = None) -> str:
        """Set (or with no text, clear) the label of an entry."""
        return self._appender.append_struct(
            LabelEntry, requires=(target_id,), target_id=target_id, label=label or UNSET
        )

    def append_session_info(self, name: str) -> str:
        """Name the session (an empty name clears it); the latest one counts."""
        if not isinstance(name, str):
            raise EntryValidationError(f"a session name must be a string, not {name!r}")
        return self._appender.append_struct(SessionInfoEntry, name=name.strip())
