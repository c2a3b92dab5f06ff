"""Helpers for an agent loop: compact after a turn when the window fills up, and
recover once from a context-overflow error.

`is_context_overflow` recognises the errors the Anthropic and OpenAI SDKs raise when
a request is larger than the model's window (and the same messages as text, for
other clients); `auto_compact` is the check to run after each turn; and
`call_with_overflow_recovery` sends the context, compacts on overflow, and sends
once more. Nothing here runs on its own: the agent calls these.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from jsonl_session.compaction.execute import CompactionResult, compact
from jsonl_session.compaction.planning import (
    DEFAULT_SETTINGS,
    CompactionSettings,
    prepare_compaction,
    should_compact,
)
from jsonl_session.compaction.summarizers import Summarizer
from jsonl_session.context import SessionContext
from jsonl_session.errors import CompactionError
from jsonl_session.tokens import estimate_projected_context_tokens

if TYPE_CHECKING:
    from jsonl_session.session.facade import Session

T = TypeVar("T")

# What providers say when the request is larger than the window (facts about their
# error texts: Anthropic "prompt is too long", "input length and `max_tokens` exceed
# context limit" and 413 "request_too_large"; OpenAI
# "context_length_exceeded", "exceeds the context window", "maximum context length").
_OVERFLOW = re.compile(
    r"prompt is too long|request_too_large|exceeds the context window|exceeds? context limit|"
    r"maximum context length|context[_ ]length[_ ]exceeded|input is too long|"
    r"too many (?:input )?tokens|token limit exceeded|reduce the length of the messages",
    re.IGNORECASE,
)
_NOT_OVERFLOW = re.compile(r"rate limit|too many requests", re.IGNORECASE)


def is_context_overflow(error: BaseException | str) -> bool:
    """Whether an SDK's HTTP error (or an error message) says the context is too
    large. Exceptions that are not HTTP errors (no ``status_code``) never are."""
    if isinstance(error, str):
        return bool(_OVERFLOW.search(error)) and not _NOT_OVERFLOW.search(error)
    status = getattr(error, "status_code", None)
    if not isinstance(status, int) or status == 429:
        return False
    if status == 413 or getattr(error, "code", None) == "context_length_exceeded":
        return True
    texts = [str(error), str(getattr(error, "message", ""))]
    body = getattr(error, "body", None)
    if body is not None:
        texts.append(str(body))
    return any(is_context_overflow(text) for text in texts if text)


def context_tokens(session: Session) -> int:
    """The current context's size as pi 1.5 measures it to decide on compacting: the
    last usage plus estimates, or all estimated once an edit or a compaction came
    after that usage."""
    return estimate_projected_context_tokens(session.projection(), session.branch_path()).tokens


def auto_compact(
    session: Session,
    context_window: int,
    summarizer: Summarizer | None = None,
    settings: CompactionSettings = DEFAULT_SETTINGS,
    instructions: str | None = None,
) -> CompactionResult | None:
    """Run after each turn: compact when the context leaves less than the reserve
    free in ``context_window``; None when no compaction was needed or possible."""
    if not should_compact(context_tokens(session), context_window, settings):
        return None
    plan = prepare_compaction(session.branch_path(), settings)
    if plan is None:
        return None  # everything is recent: a summary would not make room
    return compact(session, summarizer, settings, instructions)


def call_with_overflow_recovery(
    session: Session,
    call: Callable[[SessionContext], T],
    summarizer: Summarizer | None = None,
    settings: CompactionSettings = DEFAULT_SETTINGS,
    instructions: str | None = None,
) -> T:
    """``call(context)``; when it raises a context-overflow error, compact and call
    once more with the new context. A second overflow propagates, as does a failure
    to compact (CompactionError, with the overflow as its cause)."""
    try:
        return call(session.build_context())
    except Exception as exc:
        if not is_context_overflow(exc):
            raise
        overflow = exc
    try:
        compact(session, summarizer, settings, instructions)
    except CompactionError as failure:
        raise CompactionError(
            f"the context overflowed and could not be compacted: {failure}"
        ) from overflow
    return call(session.build_context())
