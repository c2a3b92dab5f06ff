"""Which tool call a tool result of the HTML export answers, whichever process
renders the result.

Owns the rule: a result answers a call of the assistant message it follows, its
nearest ancestor that is an assistant message (pi writes the results of a message's
calls right after it), found by that call's id. The rule looks at the tree only, never
at what the page rendered before, so a worker process rendering a slice of the page
finds the call one process finds: `CallFinder.slice_context` tells each slice, for
each result, where the calls it looks in are (an earlier entry of the slice, or the
calls themselves). What a result shows of its call is html_parts.py's; the page is
html.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from jsonl_session.export.html_parts import CallSeen, PartRenderer, calls_made
from jsonl_session.format.entry import StoredEntry
from jsonl_session.views.redact import Redactor
from jsonl_session.views.transcript import EntryView, view_entry

CallsSaid = int | dict[str, CallSeen] | None
"""What a worker is told of a result: the line of the earlier entry of its slice whose
calls it answers, or those calls, or None (not a result)."""


class CallFinder:
    """Finds the calls a result looks in: those its renderer remembers of the message
    it follows, else read again from the session (a message not rendered yet, or
    rendered by another process)."""

    def __init__(self, get: Callable[[str], StoredEntry | None], redact: bool) -> None:
        self._get = get
        # the page counts each secret where it shows it: reading a message again
        # for its calls must not count its secrets twice
        self._redactor = Redactor(enabled=redact)
        self._last: tuple[StoredEntry | None, StoredEntry | None] = (None, None)

    def call(self, view: EntryView, parts: PartRenderer) -> CallSeen | None:
        """The call ``view`` (a tool result) answers, if any."""
        if view.kind != "tool-result":
            return None
        return self.answered(view.entry, view.answers, parts)

    def answered(self, entry: StoredEntry, ref: str, parts: PartRenderer) -> CallSeen | None:
        """The call of id ``ref`` that ``entry``, a tool result, answers, if any."""
        if not _is_result(entry):
            return None
        caller = self.caller(entry)
        return self.calls_of(caller, parts).get(ref) if caller is not None else None

    def caller(self, entry: StoredEntry) -> StoredEntry | None:
        """The assistant message ``entry`` follows: its nearest ancestor that is one."""
        last, last_caller = self._last
        seen: set[str] = set()
        parent = entry.parent_id
        found: StoredEntry | None = None
        while parent is not None and parent not in seen:
            seen.add(parent)
            ancestor = self._get(parent)
            if ancestor is None:
                break
            if ancestor is last:  # the results of one message follow one another
                found = last_caller
                break
            if _is_message_of(ancestor, "assistant"):
                found = ancestor
                break
            parent = ancestor.parent_id
        self._last = (entry, found)
        return found

    def calls_of(self, caller: StoredEntry, parts: PartRenderer) -> dict[str, CallSeen]:
        made = parts.calls.get(caller.line)
        if made is None:
            made = calls_made(view_entry(caller, self._redactor))
        return made

    def slice_context(self, parts: PartRenderer) -> Callable[[Sequence[StoredEntry]], list[Any]]:
        """For views/slices.py: what each entry of a slice is told (`CallsSaid`)."""

        def said(entries: Sequence[StoredEntry]) -> list[Any]:
            position = {entry.line: index for index, entry in enumerate(entries)}
            told: list[CallsSaid] = []
            for index, entry in enumerate(entries):
                caller = self.caller(entry) if _is_result(entry) else None
                if caller is None:
                    told.append({} if _is_result(entry) else None)
                elif position.get(caller.line, index) < index:
                    told.append(caller.line)
                else:
                    told.append(self.calls_of(caller, parts))
            return told

        return said


def call_told(said: CallsSaid, view: EntryView, parts: PartRenderer) -> CallSeen | None:
    """In a worker: the call ``view`` answers, from what its slice was told."""
    if said is None or view.kind != "tool-result":
        return None
    return told_call(said, view.answers, parts)


def told_call(said: CallsSaid, ref: str, parts: PartRenderer) -> CallSeen | None:
    """In a worker: the call of id ``ref`` a tool result answers, from what its slice
    was told of it (``said``)."""
    if said is None:
        return None
    calls = parts.calls.get(said, {}) if isinstance(said, int) else said
    return calls.get(ref)


def _is_result(entry: StoredEntry) -> bool:
    return _is_message_of(entry, "toolResult")


def _is_message_of(entry: StoredEntry, role: str) -> bool:
    return entry.type == "message" and entry.role == role
