"""The typed appends of a session: one public method per entry type.

Owns what each entry type takes as arguments and which entries it must refer to
(a compaction's first kept entry, a label's target); building the line is
format/building.py's, and writing it (the leaf it attaches to, the checks made under
the lock) is appender.py's. `Session` (facade.py) inherits these methods. Generating a
branch summary with a model is compaction/branching.py's `summarize_branch`;
`branch_with_summary` here appends one already written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from jsonl_session.context import project_path
from jsonl_session.errors import EntryValidationError
from jsonl_session.format.building import message_line
from jsonl_session.format.ids import now_ms, timestamp_to_ms
from jsonl_session.format.model import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
)
from jsonl_session.format.reply_hook import convert_reply
from jsonl_session.format.tools import tool_declaration, tool_reference
from jsonl_session.messages import current_system_message
from jsonl_session.session.appender import Appender


class EntryAppends:
    """Appending entries of each type; ``_appender`` is the session's."""

    _appender: Appender

    def append_message(self, message: dict[str, Any] | msgspec.Struct) -> str:
        """Append an agent message (pi's shapes, as a dict or a model struct)."""
        build, role = message_line(message)
        # pi 1.5 writes a new file at its first user or assistant message
        return self._appender.append(build, flush=role in ("user", "assistant"))

    def append_response(
        self,
        reply: Any,
        *,
        on_delta: Callable[[str, str], None] | None = None,
        provider: str | None = None,
        model: str | None = None,
    ) -> str:
        """Append a model's reply as pi's assistant message: an Anthropic ``Message``,
        an OpenAI ``ChatCompletion`` or ``Response``, a dict of one, or a stream of one
        (consumed here; ``on_delta(kind, text)`` sees it arrive). ``model`` is the model
        asked for (default: the one that answered). A stream that raises is recorded as
        far as it came (stop reason error or aborted) before the error propagates. See
        providers/streams.py."""
        options: dict[str, Any] = {"on_delta": on_delta, "model": model}
        if provider is not None:
            options["provider"] = provider
        try:
            message = convert_reply(reply, **options)
        except BaseException as error:
            # A stream that broke off (a dropped connection, Ctrl-C) still said something
            # the user may have seen: pi records it too, stopped as error or aborted.
            partial = getattr(error, "partial_reply", None)
            if isinstance(partial, dict):
                self.append_message(partial)
            raise
        return self.append_message(message)

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._appender.append_struct(ModelChangeEntry, provider=provider, model_id=model_id)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._appender.append_struct(ThinkingLevelChangeEntry, thinking_level=thinking_level)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
        *,
        usage: Any = UNSET,
        expect_revision: int | None = None,
    ) -> str:
        """Append a compaction at the leaf. ``first_kept_entry_id`` None keeps nothing
        before it (retain-none: the entry names itself). Like pi 1.5, the entry carries
        the prompt and tools in force at the leaf as its ``systemMessage`` checkpoint;
        ``usage`` is that of the call that wrote the summary."""
        checkpoint = current_system_message(self._leaf_messages())

        def complete(entry_id: str, leaf: str | None, stamp: str) -> dict[str, Any]:
            fields: dict[str, Any] = {"first_kept_entry_id": first_kept_entry_id or entry_id}
            if checkpoint is not None:
                fields["system_message"] = {**checkpoint, "timestamp": timestamp_to_ms(stamp)}
            return fields

        return self._appender.append_struct(
            CompactionEntry,
            requires=() if first_kept_entry_id is None else (first_kept_entry_id,),
            expect_revision=expect_revision,
            complete=complete,
            summary=summary,
            tokens_before=tokens_before,
            details=details,
            usage=usage,
            from_hook=from_hook,
        )

    def append_branch_summary(
        self,
        from_id: str,
        summary: str,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
        *,
        usage: Any = UNSET,
    ) -> str:
        """Append a branch_summary as a child of the current leaf."""
        fields = {"from_id": from_id, "summary": summary, "details": details, "usage": usage}
        return self._appender.append_struct(BranchSummaryEntry, from_hook=from_hook, **fields)

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: Any = UNSET,
        from_hook: bool | msgspec.UnsetType = UNSET,
        *,
        usage: Any = UNSET,
        from_id: str | None = None,
        expect_revision: int | None = None,
    ) -> str:
        """Move the leaf to ``entry_id`` (None: before the first entry) and append a
        branch_summary there (pi's branchWithSummary); the summary entry itself records
        the leaf move, and its ``fromId`` is the leaf left ("root" when there was none),
        as pi 1.5 records it, unless ``from_id`` says otherwise (pi 0.73 recorded the
        entry branched to)."""

        def complete(new_id: str, leaf: str | None, stamp: str) -> dict[str, Any]:
            return {"from_id": from_id if from_id is not None else leaf or "root"}

        return self._appender.append_struct(
            BranchSummaryEntry,
            attach_to=(entry_id,),
            requires=() if entry_id is None else (entry_id,),
            expect_revision=expect_revision,
            complete=complete,
            summary=summary,
            details=details,
            usage=usage,
            from_hook=from_hook,
        )

    def append_system_message(
        self,
        content: str | list[Any] = "",
        *,
        sections: dict[str, str | None] | None = None,
        tools_added: Sequence[Any] = (),
        tools_removed: Sequence[Any] = (),
    ) -> str:
        """Declare the prompt and tools (pi 1.5): the first one the whole prompt
        (``content`` and named ``sections``) and every tool, later ones a patch
        (a section set to None is removed). Tools may be given in pi's, Anthropic's
        or OpenAI's shapes; removed tools by name or definition."""
        message: dict[str, Any] = {"role": "system", "content": content}
        if sections:
            message["sections"] = dict(sections)
        if tools_added:
            message["toolsAdded"] = [tool_declaration(tool) for tool in tools_added]
        if tools_removed:
            message["toolsRemoved"] = [tool_reference(tool) for tool in tools_removed]
        message["timestamp"] = now_ms()
        return self.append_message(message)

    def append_context_edit(self, target_id: str, content: str | list[Any] | None) -> str:
        """Change what the entry ``target_id`` shows the model from here on, on this
        branch: ``content`` None leaves it out, else it replaces the entry's content
        (a string for an assistant message or tool result becomes one text block).
        The entry itself stays in the file, in views and in accounting."""
        role = self._editable_role(target_id)
        replacement: dict[str, Any] | None = None
        if content is not None:
            if not isinstance(content, str | list):
                raise EntryValidationError("a replacement content must be a string or a list")
            if isinstance(content, str) and role in ("assistant", "toolResult"):
                content = [{"type": "text", "text": content}]
            replacement = {"content": content}
        return self._append_edit(target_id, replacement)

    def restore_in_context(self, target_id: str) -> str:
        """Undo the edits of ``target_id`` on this branch from here on: append an edit
        whose replacement is the entry's own content, so the model sees it as written."""
        self._editable_role(target_id)
        target = self._appender.state.index.get(target_id)
        assert target is not None  # checked by _editable_role
        data = target.data()
        source = data.get("message", {}) if target.type == "message" else data
        content = source.get("content") if isinstance(source, dict) else None
        return self._append_edit(target_id, {"content": [] if content is None else content})

    def append_usage(
        self, kind: str, provider: str, model: str, usage: Any, note: str | None = None
    ) -> str:
        """Record model usage that is no assistant message (cache warming, a
        classifier, a tool's own calls): counted in totals, never in the context."""
        return self._appender.append_struct(
            UsageEntry, kind=kind, provider=provider, model=model, usage=usage, note=note or UNSET
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

    def _append_edit(self, target_id: str, replacement: dict[str, Any] | None) -> str:
        return self._appender.append_struct(
            ContextEditEntry, requires=(target_id,), target_id=target_id, replacement=replacement
        )

    def _leaf_messages(self) -> list[dict[str, Any]]:
        """The context messages at the leaf (what a compaction checkpoints)."""
        state = self._appender.state
        return [] if state.leaf is None else project_path(state.path_to(state.leaf)).messages

    def _editable_role(self, target_id: str) -> str:
        """The role of what ``target_id`` gives the model, if an edit may change it:
        a user, assistant or tool-result message, or a custom message ("custom"), on
        the active branch."""
        state = self._appender.state
        state.require(target_id)
        if state.leaf is None or all(e.id != target_id for e in state.path_to(state.leaf)):
            raise EntryValidationError(f"entry {target_id} is not on the active branch")
        target = state.index.get(target_id)
        role = target.role if target is not None and target.type == "message" else None
        if target is not None and target.type == "custom_message":
            role = "custom"
        if role not in ("user", "assistant", "toolResult", "custom"):
            raise EntryValidationError(
                f"entry {target_id} gives the model no content an edit can change "
                "(only user, assistant and tool-result messages and custom messages)"
            )
        return role
