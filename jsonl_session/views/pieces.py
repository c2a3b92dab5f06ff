"""A rendered text as it is handed on: as text, as the UTF-8 a worker wrote
(`Utf8Piece`) or as the file it left it in (views/spool.py's `SpooledPiece`); and
the ways to take pieces on: their texts (`text_of`, `texts_of`), their bytes for a
stream (`encoded_pieces`) or for an output file that copies a spooled piece itself
(`file_pieces`), joined up to a size and a huge one never copied into a join
(`joined`, `utf8_of`, `utf8_parts`). Who renders the pieces, and where, is
views/slices.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from jsonl_session.views.spool import SpooledPiece


class Utf8Piece:
    """A piece of an export's text as a worker wrote it: UTF-8 holding no lone
    surrogate, so a file takes its bytes as they are (`text_of` gives its text). The
    process that writes the export then neither decodes it nor encodes it again."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


Piece = str | Utf8Piece | SpooledPiece


def text_of(piece: Piece) -> str:
    """``piece``'s text (a spooled one read whole: see `texts_of`)."""
    if isinstance(piece, str):
        return piece
    return (piece.take() if isinstance(piece, SpooledPiece) else piece.data).decode("utf-8")


def texts_of(pieces: Iterable[Piece]) -> Iterator[str]:
    """The texts of ``pieces``; a spooled one's in parts (`utf8_parts`)."""
    for piece in pieces:
        if isinstance(piece, SpooledPiece):
            yield from (part.decode("utf-8") for part in utf8_parts(piece.take()))
        else:
            yield text_of(piece)


def piece_size(piece: Piece) -> int:
    """``piece``'s length: characters of a text, bytes of UTF-8."""
    if isinstance(piece, str):
        return len(piece)
    return piece.size if isinstance(piece, SpooledPiece) else len(piece.data)


JOINED_CHARS = 1 << 16
"""Pieces of text are joined up to about this many characters, and a longer one is
handed on alone, never copied into a join: a text holding one emoji takes four bytes
a character, and a copy of hundreds of MB of it costs more than the rest of its
rendering."""


def joined(pieces: list[str]) -> list[str]:
    """``pieces`` with small ones joined into pieces of up to about `JOINED_CHARS`
    characters (an entry's text is then one piece, unless it is long); a longer
    piece stays as it is."""
    if sum(map(len, pieces)) < JOINED_CHARS:  # most entries: one join
        return ["".join(pieces)]
    out: list[str] = []
    run: list[str] = []
    size = 0
    for piece in pieces:
        if len(piece) >= JOINED_CHARS:
            if run:
                out.append("".join(run))
                run, size = [], 0
            out.append(piece)
            continue
        run.append(piece)
        size += len(piece)
        if size >= JOINED_CHARS:
            out.append("".join(run))
            run, size = [], 0
    if run or not out:
        out.append("".join(run))
    return out


def utf8_of(texts: list[str]) -> tuple[bytes, bool]:
    """``texts`` joined, as UTF-8, and whether that holds no lone surrogate (one is
    kept, as ``surrogatepass`` writes it). Each text is encoded on its own and the
    bytes joined: joined first, the texts of a slice would be widened to its widest
    character (four bytes each for one emoji) before being encoded."""
    chunks: list[bytes] = []
    plain = True
    for text in texts:
        try:
            chunks.append(text.encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate (rare): kept, to be decoded back
            chunks.append(text.encode("utf-8", "surrogatepass"))
            plain = False
    return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), plain


JOINED_BYTES = 1 << 16
"""Small pieces are joined up to about this many bytes for a byte stream: a write
each, not one per entry."""


def encoded_pieces(pieces: Iterable[Piece]) -> Iterator[bytes]:
    """``pieces`` as UTF-8 for a byte stream (a lone surrogate as a backslash
    escape; a worker's bytes as it wrote them), small ones joined up to about
    JOINED_BYTES; a piece that large passes on alone, not copied into a join."""
    for item in file_pieces(pieces):
        yield item if isinstance(item, bytes) else item.take()


def file_pieces(pieces: Iterable[Piece]) -> Iterator[bytes | SpooledPiece]:
    """`encoded_pieces` for a writer that copies a spooled piece's file itself (an
    output file: storage/outputs.py's `copy_from`): those pass on as they are."""
    held: list[bytes] = []
    size = 0
    for piece in pieces:
        if isinstance(piece, SpooledPiece):
            if held:
                yield b"".join(held)
                held, size = [], 0
            yield piece
            continue
        data = (
            piece.data
            if isinstance(piece, Utf8Piece)
            else piece.encode("utf-8", "backslashreplace")
        )
        if len(data) >= JOINED_BYTES:
            if held:
                yield b"".join(held)
                held, size = [], 0
            yield data
            continue
        held.append(data)
        size += len(data)
        if size >= JOINED_BYTES:
            yield b"".join(held)
            held, size = [], 0
    if held:
        yield b"".join(held)


PIECE_BYTES = 256 << 10
"""A slice's text is handed on in pieces of about this many bytes (cut after a
newline): decoded whole, a slice of text holding one emoji would take four bytes a
character at once."""


def utf8_parts(data: bytes) -> Iterator[bytes]:
    """``data`` in parts of about `PIECE_BYTES`, each cut after a newline (one byte in
    UTF-8, never part of a longer character)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start + PIECE_BYTES) + 1 or len(data)
        yield data[start:end] if start or end < len(data) else data
        start = end
