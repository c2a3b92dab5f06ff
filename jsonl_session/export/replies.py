"""What the export's header reads from every assistant reply it shows: how many tool
calls the reply makes and the usage it reports, added up (`reply_figures`).

Owns reading the replies' lines a batch at a time and decoding only those two things
(the blocks' types, and the four counts and the cost's total of the usage; the texts,
thoughts and arguments around them are skipped, not built), so the figures cost a
fraction of decoding the session. A line of another shape (content that is not a list
of objects, a usage that is not an object, bytes that are not UTF-8, an integer beyond
64 bits, which the dict way reads as a float) is decoded whole, as `StoredEntry.data`
decodes it, so the figures are the same either way. `figures_in_worker` is the same
for a worker process (the export's header is then made while it reads). Wording the
figures is plan.py's.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from jsonl_session.format.entry import StoredEntry, line_blocks, loads_object
from jsonl_session.format.walk import finite_number
from jsonl_session.storage.columns import EntryColumns

_BATCH = 1024  # replies whose lines are read from disk at once
TOKEN_KEYS = ("input", "output", "cacheRead", "cacheWrite")


@dataclass(slots=True)
class ReplyFigures:
    """The replies' tool calls, the tokens their usage reports (by key of
    `TOKEN_KEYS`) and its cost, added up in the replies' order. ``costs``: each
    reply's cost in turn, when kept (figures read in parts, `then`)."""

    calls: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KEYS, 0))
    cost: float = 0.0
    costs: list[float] | None = None

    def then(self, later: ReplyFigures) -> None:
        """Add the figures of the replies shown after these (``later``, read with its
        costs kept): the cost is then the sum one pass over them all adds up, in the
        same order, to the last bit."""
        if later.costs is None:
            raise ValueError("the later figures were read without their costs")
        self.calls += later.calls
        for key, count in later.tokens.items():
            self.tokens[key] += count
        # one by one in their order (a float sum depends on it), in C
        self.cost = functools.reduce(operator.add, later.costs, self.cost)
        if self.costs is not None:
            self.costs.extend(later.costs)


class _Block(msgspec.Struct, gc=False):
    type: Any = None


class _Usage(msgspec.Struct, rename="camel", gc=False):
    input: Any = None
    output: Any = None
    cache_read: Any = None
    cache_write: Any = None
    cost: Any = None


class _Reply(msgspec.Struct, gc=False):
    content: list[_Block] | str | None = None
    usage: _Usage | None = None


class _ReplyLine(msgspec.Struct, gc=False):
    id: Any = None  # (checks the line is still the reply's)
    message: _Reply | None = None


_reply_decoder = msgspec.json.Decoder(_ReplyLine)
_EXACT = 2**53  # the integers finite_number keeps
_LOW, _HIGH = -(2**63), 2**64 - 1  # the integers the dict way reads as integers


class _DictWay(Exception):
    """A value the dict way reads otherwise: the line is decoded whole."""


def reply_figures(replies: Sequence[StoredEntry], *, keep_costs: bool = False) -> ReplyFigures:
    """The figures of ``replies`` (assistant message entries, in the order shown);
    ``keep_costs``: with each reply's cost (`ReplyFigures.costs`)."""
    out = ReplyFigures(costs=[] if keep_costs else None)
    for start in range(0, len(replies), _BATCH):
        for run, block, at in line_blocks(replies[start : start + _BATCH]):
            if block is None:
                _add_reply(out, run[0].raw)
                continue
            view = memoryview(block)
            for reply in run:
                if reply.inline is not None:
                    _add_reply(out, reply.raw)
                    continue
                # Decoded where it lies in the block, not cut out of it: the id decoded
                # with the figures tells that the line is still the reply's, as
                # `StoredEntry.checked` would (which any other line goes through).
                begin = reply.offset - at
                end = begin + reply.length
                if end <= len(block) and block[end : end + 1] in _LINE_ENDS:
                    line = view[begin:end]
                    try:
                        decoded = _reply_decoder.decode(line)
                    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                        decoded = None
                    if (
                        decoded is not None
                        and decoded.id == reply.id
                        and decoded.message is not None
                    ):
                        _add_decoded(out, decoded.message, line)
                        continue
                _add_reply(out, reply.checked(block, begin))
    return out


_LINE_ENDS = (b"", b"\n", b"\r")


def figures_in_worker(replies: EntryColumns, keep_costs: bool = False) -> ReplyFigures:
    """`reply_figures` in a worker process, of the replies sent as columns
    (storage/columns.py), their lines read from the file (each checked to be its
    reply's, as ever); ``keep_costs``: with each reply's cost, for `ReplyFigures.then`."""
    return reply_figures(replies.entries(), keep_costs=keep_costs)


def _add_reply(out: ReplyFigures, raw: bytes) -> None:
    try:
        reply = _reply_decoder.decode(raw).message
        if reply is None:  # no message (or null): as the whole line would say
            raise _DictWay
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError, _DictWay):
        _add(out, *_decoded(loads_object(raw)))
        return
    _add_decoded(out, reply, raw)


def _add_decoded(out: ReplyFigures, reply: _Reply, raw: bytes | memoryview) -> None:
    """Add the figures of ``reply``, decoded from the line ``raw``, which is decoded
    whole when a value is one the dict way reads otherwise. Written out for the
    common reply (four integer counts, a float cost); any other takes `_add`."""
    content = reply.content
    calls = [block.type for block in content].count("toolCall") if isinstance(content, list) else 0
    usage = reply.usage
    if usage is None:
        out.calls += calls
        return
    given, made, read, written = usage.input, usage.output, usage.cache_read, usage.cache_write
    cost = usage.cost
    total = cost.get("total") if isinstance(cost, dict) else 0
    if (
        total.__class__ is float
        and -_MOST_COST < total < _MOST_COST  # (a NaN fails it too)
        and given.__class__ is made.__class__ is read.__class__ is written.__class__ is int
        and -_EXACT <= given <= _EXACT
        and -_EXACT <= made <= _EXACT
        and -_EXACT <= read <= _EXACT
        and -_EXACT <= written <= _EXACT
    ):
        out.calls += calls
        tokens = out.tokens
        tokens["input"] += given
        tokens["output"] += made
        tokens["cacheRead"] += read
        tokens["cacheWrite"] += written
        spent = total or 0.0  # (as `_add`: -0.0 counts as 0.0)
        out.cost += spent
        if out.costs is not None:
            out.costs.append(spent)
        return
    counts = (given, made, read, written)
    if any(value.__class__ is int and not _LOW <= value <= _HIGH for value in (*counts, total)):
        _add(out, *_decoded(loads_object(bytes(raw))))
        return
    _add(out, calls, counts, total)


_MOST_COST = 1e300  # finite_number's bound on a float


def _add(out: ReplyFigures, calls: int, counts: tuple[Any, ...], total: Any) -> None:
    out.calls += calls
    if not counts:
        return
    tokens = out.tokens
    for key, value in zip(TOKEN_KEYS, counts, strict=True):
        value = finite_number(value)
        tokens[key] += int(value) if value is not None else 0
    spent = float(finite_number(total) or 0.0)
    out.cost += spent
    if out.costs is not None:
        out.costs.append(spent)


def _decoded(data: dict[str, Any]) -> tuple[int, tuple[Any, ...], Any]:
    """The figures of a reply decoded whole (any shape): its tool calls, its four
    counts (none when its usage is not an object) and its cost's total."""
    message = data.get("message", {})
    content = message.get("content")
    calls = 0
    if isinstance(content, list):
        calls = sum(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return calls, (), 0
    counts = tuple(usage.get(key) for key in TOKEN_KEYS)
    cost = usage.get("cost")
    return calls, counts, cost.get("total") if isinstance(cost, dict) else 0
