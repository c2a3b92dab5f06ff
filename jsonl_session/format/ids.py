"""Identifiers and timestamps: entry ids, session ids (UUIDv7), ISO times.

Owns the exact text forms the format requires. Uniqueness against a file is the
caller's business (it passes the ids already taken).
"""

from __future__ import annotations

import os
import secrets
import time
import uuid
from collections.abc import Container
from datetime import UTC, datetime

ENTRY_ID_LENGTH = 8


def new_entry_id(taken: Container[str]) -> str:
    """Return 8 lowercase hex chars not in ``taken``."""
    while True:
        candidate = secrets.token_hex(ENTRY_ID_LENGTH // 2)
        if candidate not in taken:
            return candidate


def new_session_id(now_ms: int | None = None) -> str:
    """A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, random rest."""
    ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    rand_a = rand >> 68 & 0xFFF
    rand_b = rand & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return str(uuid.UUID(int=value))


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and ``Z``, as JavaScript's toISOString()."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def now_ms() -> int:
    """Now, in milliseconds since the epoch (what messages record)."""
    return time.time_ns() // 1_000_000


def now_timestamp() -> str:
    return format_timestamp(datetime.now(UTC))


def timestamp_to_ms(value: object) -> int | None:
    """Milliseconds since the epoch for an ISO string, or None when it cannot be read.

    None stands where JavaScript's ``new Date(x).getTime()`` gives NaN, which
    JSON.stringify writes as ``null``. Numbers are taken as milliseconds and null
    as the epoch, as Date does; a missing value is NaN (pass MISSING).
    """
    if value is MISSING:
        return None
    if value is None:
        return 0  # new Date(null) is the epoch
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        # abs() first: an int of any size compares exactly; NaN and infinities fail it
        return int(value) if abs(value) <= 8.64e15 else None
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        # JavaScript reads a date-time without an offset as local time; the format
        # always writes Z, so treating a bare value as UTC is the useful reading.
        parsed = parsed.replace(tzinfo=UTC)
    delta = parsed - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def file_timestamp(iso: str) -> str:
    """The timestamp as it appears in a session file name (``:`` and ``.`` become ``-``)."""
    return iso.replace(":", "-").replace(".", "-")


MISSING = object()
"""Stands for an absent key in timestamp_to_ms (JavaScript's undefined)."""
