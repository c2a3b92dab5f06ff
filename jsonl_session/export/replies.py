"""What the export's header reads from every assistant reply it shows: how many tool
calls the reply makes and the usage it reports.

Owns `reply_usages`, which reads the replies' lines a batch at a time and decodes only
those two things (the blocks' types and the usage object; the texts, thoughts and
arguments around them are skipped, not built), so the facts cost a fraction of
decoding the session. A line of another shape (content that is not a list of objects,
bytes that are not UTF-8...) is decoded whole, as `StoredEntry.data` decodes it, so
the figures are the same either way. Adding them up and wording them is plan.py's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from jsonl_session.format.entry import StoredEntry, loads_object, raw_lines
from jsonl_session.format.jsonio import decode_any

_BATCH = 1024  # replies whose lines are read from disk at once


class _Block(msgspec.Struct, gc=False):
    type: Any = None


class _Reply(msgspec.Struct, gc=False):
    content: list[_Block] | str | None = None
    usage: msgspec.Raw = msgspec.Raw(b"null")


class _ReplyLine(msgspec.Struct, gc=False):
    message: _Reply | None = None


_reply_decoder = msgspec.json.Decoder(_ReplyLine)


def reply_usages(replies: Sequence[StoredEntry]) -> Iterator[tuple[int, Any]]:
    """For each assistant message entry in turn: (its tool calls, its ``usage`` value
    as the file has it, None when absent)."""
    for start in range(0, len(replies), _BATCH):
        for raw in raw_lines(replies[start : start + _BATCH]):
            yield _reply_usage(raw)


def _reply_usage(raw: bytes) -> tuple[int, Any]:
    try:
        line = _reply_decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return _decoded_usage(loads_object(raw))
    reply = line.message
    if reply is None:
        # no message (or null): as the whole line decoded would say, via _decoded_usage
        return _decoded_usage(loads_object(raw))
    content = reply.content
    calls = sum(block.type == "toolCall" for block in content) if isinstance(content, list) else 0
    usage = reply.usage
    return calls, None if bytes(usage) == b"null" else decode_any(bytes(usage))


def _decoded_usage(data: dict[str, Any]) -> tuple[int, Any]:
    """The figures of a reply decoded whole (plan.py's rule, for any shape)."""
    message = data.get("message", {})
    content = message.get("content")
    calls = 0
    if isinstance(content, list):
        calls = sum(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)
    return calls, message.get("usage")
