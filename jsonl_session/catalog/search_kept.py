"""What a search keeps of a session file's texts: the record of its row in a search
index (storage/facts_index.py), read back whole or as a warm search reads it.

A record is laid out so that a warm search can tell from its bytes alone that no text
of a file can hold an ASCII query, without decoding it:

- byte 0: flags (`_ODD_CASE`: a text holds KELVIN SIGN or I WITH DOT ABOVE, whose
  lower cases are ASCII letters: then its bytes tell nothing);
- bytes 1-4: where the texts start, after byte 5, little-endian;
- from byte 5, one msgpack array: the session id, the number of the next line, each
  text's line, entry id, timestamp and role (`KeptPlace`), and last the texts (an
  array of strings, each one's UTF-8 after a few bytes that give its length).

Lower-casing bytes lower-cases only their ASCII letters, and by `str.lower` no other
character but those two becomes anything holding an ASCII character, so an ASCII query
is in a text's lower case only where it is in its bytes lower-cased (search_texts.py
makes the same argument of raw lines). A find across the few bytes between two texts
can only make a file be decoded that did not need it.

A search's `Sieve` looks through the records this way while most of them turn out not
to hold the query, and decodes the rest straight away once most do.

Owns the layout; what a text is and which lines give one are search_texts.py's,
matching and snippets search.py's, trusting a row the index's.
"""

from __future__ import annotations

import msgspec

from jsonl_session.catalog.search_texts import SearchText

_ODD_CASE = 1
_KELVIN, _I_DOT = "\u212a".encode(), "\u0130".encode()
_HEAD_AT = 5  # after the flags and the head's length


class KeptPlace(msgspec.Struct, array_like=True, gc=False):
    """Where a kept text is from: its line, entry id, timestamp and role."""

    line: int
    entry_id: str | None
    timestamp: str | None
    role: str


class _Kept(msgspec.Struct, array_like=True, gc=False):
    session_id: str | None
    next_number: int
    places: list[KeptPlace]
    bodies: list[str]


KeptTexts = tuple[str | None, list[KeptPlace], list[str]]
"""A record read for a search: the session id, and each text's place and text."""

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(_Kept)
_ARRAY_OF_FOUR = b"\x94"  # msgpack's head of a fixed array of four
# What an array's msgpack starts with (fixarray, array 16, array 32): where the
# texts should start, anything else is a damaged record
_ARRAY_HEADS = frozenset(bytes((head,)) for head in (*range(0x90, 0xA0), 0xDC, 0xDD))
_DAMAGED = (msgspec.MsgspecError, UnicodeDecodeError, ValueError, TypeError)


def record_of(session_id: str | None, texts: list[SearchText], next_number: int) -> bytes:
    """The record keeping ``texts`` (in line order) of a session and the number of the
    line after those read. Raises UnicodeEncodeError for a text holding a lone
    surrogate (no record can keep it: the file is read each time)."""
    places = [KeptPlace(text.line, text.entry_id, text.timestamp, text.role) for text in texts]
    head = b"".join((_ARRAY_OF_FOUR, *map(_encoder.encode, (session_id, next_number, places))))
    bodies = _encoder.encode([text.text for text in texts])
    flags = _ODD_CASE if _KELVIN in bodies or _I_DOT in bodies else 0
    return bytes((flags,)) + len(head).to_bytes(4, "little") + head + bodies


def may_hold(record: bytes, needle: bytes, probe: tuple[bytes, bytes] | None) -> bool:
    """Whether a text of ``record`` may hold ``needle`` (ASCII, lower-cased), judged on
    its bytes: False only when none can. ``probe``: a letter of it in both cases, one
    of which such a text holds (two finds of it cost less than lower-casing)."""
    start = _HEAD_AT + int.from_bytes(record[1:_HEAD_AT], "little")
    if record[:1] != b"\0" or record[start : start + 1] not in _ARRAY_HEADS:
        return True  # a text lower-cases to ASCII, or the record is damaged: decoded
    if probe and record.find(probe[0], start) < 0 and record.find(probe[1], start) < 0:
        return False
    return record.lower().find(needle, start) >= 0


def kept_texts(record: bytes) -> KeptTexts | None:
    """The session id and each text's place and text a record keeps; None for a
    record that is not one whole (damaged, cut short, of another layout)."""
    kept = _read(record)
    return (kept.session_id, kept.places, kept.bodies) if kept is not None else None


def kept_search_texts(record: bytes) -> tuple[str | None, list[SearchText], int] | None:
    """A record's session id, texts and the number of the line after those read, as
    reading the file makes them (to add what was appended since); None if damaged."""
    kept = _read(record)
    if kept is None:
        return None
    texts = [
        SearchText(place.line, place.entry_id, place.timestamp, place.role, body)
        for place, body in zip(kept.places, kept.bodies, strict=True)
    ]
    return kept.session_id, texts, kept.next_number


def _read(record: bytes) -> _Kept | None:
    if record[:1] not in (b"\0", b"\1"):
        return None
    try:
        kept = _decoder.decode(memoryview(record)[_HEAD_AT:])
    except _DAMAGED:
        return None
    return kept if len(kept.bodies) == len(kept.places) else None


_NO_TEXTS: KeptTexts = (None, [], [])


def texts_of(records: list[bytes | None], sieve: Sieve) -> KeptTexts | None:
    """The texts of a file from its records, one from each index, in line order: none
    from a record the ``sieve`` passes over; None if a record is missing or damaged."""
    found = []
    for record in records:
        if record is None:
            return None
        if sieve.may_hold(record):
            kept = kept_texts(record)
            if kept is None:
                return None
            found.append(kept)
    if len(found) < 2:
        return found[0] if found else _NO_TEXTS
    session_id = next((kept[0] for kept in found if kept[0] is not None), None)
    pairs = sorted(
        (pair for kept in found for pair in zip(kept[1], kept[2], strict=True)),
        key=lambda pair: pair[0].line,
    )
    return session_id, [place for place, _ in pairs], [body for _, body in pairs]


class Sieve:
    """Looks through a kept record's bytes for an ASCII query before it is decoded
    (`may_hold`), while that pays: once most of the first `TRIAL` records may hold it
    (a query found in most files), the rest are decoded without (which finds the same
    hits). ``needle``: the query lower-cased, as UTF-8 (None: not ASCII, every record
    decoded); ``probe``: a letter of it in both cases (see `may_hold`)."""

    TRIAL = 500

    def __init__(self, needle: bytes | None, probe: tuple[bytes, bytes] | None) -> None:
        self._needle, self._probe = needle, probe
        self._looked = self._held = 0

    def may_hold(self, record: bytes) -> bool:
        if self._needle is None:
            return True
        held = may_hold(record, self._needle, self._probe)
        self._looked += 1
        self._held += held
        if self._looked == self.TRIAL and self._held * 2 > self._looked:
            self._needle = None
        return held
