"""What pi's listing rules take from a session file's lines: the header's facts (id,
cwd, parent, when created) and, folded line by line, the message count, the latest
user or assistant message time, the first user message's text and the name; with the
record of them the facts index keeps (storage/facts_index.py). Which files, and the
cache, are listing.py's; text from content is messages.py's.

Each line is decoded only for the few fields the rules need (a narrow decoder here;
format/entry.py's envelope for a line it refuses); a body is decoded for the first user
message only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, overload

import msgspec

from jsonl_session.format.entry import NotAnObject, decode_envelope, loads_object
from jsonl_session.format.ids import timestamp_to_ms
from jsonl_session.format.jsonio import NotJson
from jsonl_session.messages import joined_text

# The times a JavaScript Date holds (±8.64e15 ms, about ±275,000 years); pi's listing
# cannot show a time outside them, and neither can a datetime.
MAX_MS = 8_640_000_000_000_000
EPOCH = datetime.fromtimestamp(0, tz=UTC)


def in_range(ms: Any) -> bool:
    """A number of milliseconds a listing can show: finite and within a Date's range
    (a damaged or hostile file may hold 1e300, 2**70 or 10**400)."""
    # Python compares any int with any float exactly, and NaN with nothing: no overflow.
    return isinstance(ms, int | float) and not isinstance(ms, bool) and -MAX_MS <= ms <= MAX_MS


def from_ms(ms: int | float) -> datetime | None:
    """The time ``ms`` after the epoch, or None when no datetime holds it."""
    if not in_range(ms):
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):  # outside the platform's years
        return None


def kept_moment(ms: float) -> datetime | None:
    """`from_ms` of a time the facts kept, which was in a Date's range when kept
    (a damaged row may hold any float: a datetime that cannot hold it is none)."""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, ValueError, OSError):
        return None


class HeaderFacts(msgspec.Struct, array_like=True, gc=False):
    id: str | None
    cwd: str
    parent_session: str | None
    created_ms: float | None  # the header's time, when a Date and a datetime hold it


def header_facts(header: dict[str, Any]) -> HeaderFacts:
    timestamp = header.get("timestamp")
    created_ms = timestamp_to_ms(timestamp) if isinstance(timestamp, str) else None
    return HeaderFacts(
        header.get("id") if isinstance(header.get("id"), str) else None,
        str_or_none(header.get("cwd")) or "",
        str_or_none(header.get("parentSession")),
        float(created_ms) if created_ms is not None and from_ms(created_ms) else None,
    )


class Facts(msgspec.Struct, array_like=True, gc=False):
    """What pi's listing rules take from a run of lines; runs fold left to right."""

    count: int = 0
    latest: float | None = None
    first_message: str = ""
    name_seen: bool = False
    name: str | None = None

    def then(self, later: Facts) -> Facts:
        latest = self.latest
        if later.latest is not None:
            latest = later.latest if latest is None else max(latest, later.latest)
        return Facts(
            self.count + later.count,
            latest,
            self.first_message or later.first_message,
            self.name_seen or later.name_seen,
            later.name if later.name_seen else self.name,
        )


class ListingRecord(msgspec.Struct, array_like=True, gc=False):
    """What the facts index keeps of a file. It and its two parts are left out of
    the garbage collector (they hold only texts, numbers and each other, so never a
    cycle): a warm listing decodes 100,000 of them, whose tracking cost 3% of it."""

    header: HeaderFacts
    facts: Facts


class _ListedMessage(msgspec.Struct, gc=False):
    role: Any = None
    timestamp: Any = None


class _ListedLine(msgspec.Struct, gc=False):
    type: Any = None
    timestamp: Any = None
    name: Any = None
    message: _ListedMessage | None = None


_listed_line = msgspec.json.Decoder(_ListedLine)


def line_facts(data: bytes, start: int = 0, stop: int | None = None) -> Facts:
    """The listing facts of lines after the header. Each line is decoded on its own,
    as pi parses each (so two objects on one line, or one object over two lines, make
    bad lines, not entries), and only for the few fields the rules need. A line the
    fast decoder refuses is read by format/entry.py's slower rules, which skip what pi skips.
    Reads ``data[start:stop]`` where it lies, without copying it.

    The lines are first decoded in one call (msgspec's ``decode_lines``, a third less
    than a call a line), their values taken in turn by the lines they were read from:
    that holds while every line that is not blank starts with ``{`` and ends with
    ``}``, and there are as many values as such lines (a ``}`` is never followed by a
    ``{`` within one value, and no string holds a newline). Else, and when a line is
    refused, each line is decoded on its own."""
    size = len(data) if stop is None else stop
    try:
        values = _listed_line.decode_lines(memoryview(data)[start:size])
    except _REFUSED:
        return _facts(data, start, size, None)
    facts = _facts(data, start, size, values)
    return facts if facts is not None else _facts(data, start, size, None)


_REFUSED = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
_OPEN, _CLOSE, _CR = ord("{"), ord("}"), ord("\r")


@overload
def _facts(data: bytes, start: int, size: int, values: None) -> Facts: ...
@overload
def _facts(data: bytes, start: int, size: int, values: list[_ListedLine]) -> Facts | None: ...
def _facts(data: bytes, start: int, size: int, values: list[_ListedLine] | None) -> Facts | None:
    """`line_facts`, each line taken from ``values`` (None where they do not pair
    with the lines), or decoded on its own without them."""
    facts = Facts()
    view = memoryview(data)
    find = data.find
    decode = _listed_line.decode
    taken = 0
    while start < size:
        end = find(b"\n", start, size)
        if end < 0:
            end = size
        if values is not None:
            last = end - 1 if end > start and data[end - 1] == _CR else end
            if last <= start or data[start] != _OPEN or data[last - 1] != _CLOSE:
                if data[start:end].strip():
                    return None  # (see line_facts)
                start = end + 1  # a blank line holds no value
                continue
            if taken == len(values):
                return None
            line = values[taken]
            taken += 1
        else:
            try:
                line = decode(view[start:end])
            except _REFUSED:
                _note_odd_line(facts, data[start:end])
                start = end + 1
                continue
        message = line.message
        role, moment = (None, None) if message is None else (message.role, message.timestamp)
        if (
            line.type == "message"
            and moment.__class__ is int
            and -MAX_MS <= moment <= MAX_MS
            and role in _TIMED_ROLES
        ):
            # Most lines: folded here as _note_line would fold them, but faster.
            facts.count += 1
            latest = facts.latest
            facts.latest = moment if latest is None or moment > latest else latest
            is_user = role == "user"
        else:
            is_user = _note_line(facts, line.type, line.name, role, moment, line.timestamp)
        if is_user and not facts.first_message:  # an empty one: pi takes the next
            try:
                body = loads_object(data[start:end])
            except (NotJson, NotAnObject):
                if values is None:
                    raise
                return None  # a line of two values, paired with the first (see line_facts)
            facts.first_message = _text_of(body.get("message"))
        start = end + 1
    if values is not None and taken != len(values):
        return None
    if facts.latest is not None:
        facts.latest = float(facts.latest)
    return facts


_TIMED_ROLES = ("user", "assistant")


def _note_odd_line(facts: Facts, raw: bytes) -> None:
    """A line that is blank, not JSON, not UTF-8, or of another shape."""
    try:
        env = decode_envelope(raw)
    except (NotJson, NotAnObject):
        return  # pi skips lines it cannot parse
    name = loads_object(raw).get("name") if env.type == "session_info" else None
    is_user = _note_line(facts, env.type, name, env.role, env.message_timestamp, env.timestamp)
    if is_user and not facts.first_message:
        facts.first_message = _text_of(loads_object(raw).get("message"))


def _note_line(
    facts: Facts, kind: Any, name: Any, role: Any, message_time: Any, entry_time: Any
) -> bool:
    """Fold one line's fields into ``facts`` by pi's rules; True for a user message
    (whose text may be the first message)."""
    if kind == "session_info":
        facts.name_seen = True
        facts.name = name.strip() or None if isinstance(name, str) else None
    elif kind == "message":
        facts.count += 1
        if role == "user" or role == "assistant":
            _note_time(facts, message_time, entry_time)
            return bool(role == "user")
    return False


def _note_time(facts: Facts, message_timestamp: Any, entry_timestamp: Any) -> None:
    moment = _message_time(message_timestamp, entry_timestamp)
    if moment is not None:
        facts.latest = moment if facts.latest is None else max(facts.latest, moment)


def _message_time(message_timestamp: Any, entry_timestamp: Any) -> float | None:
    # A time no Date holds counts as none: the listing shows the other times.
    if isinstance(message_timestamp, int | float) and not isinstance(message_timestamp, bool):
        return float(message_timestamp) if in_range(message_timestamp) else None
    if isinstance(entry_timestamp, str):
        ms = timestamp_to_ms(entry_timestamp)
        return float(ms) if ms is not None and in_range(ms) else None
    return None


def _text_of(message: Any) -> str:
    # Text blocks joined by spaces, as pi's listing joins them.
    return joined_text(message.get("content"), " ") if isinstance(message, dict) else ""


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
