"""The `Redactor`: replaces each secret finding.py finds in a text with
``[REDACTED:<kind>]`` and counts what it replaced, by kind.

How a text is searched (the rules of shapes.py and context.py, run only where their
anchors and gates say they may find something, their finds merged) is finding.py's,
imported the first time a redactor searches a text: a disabled redactor, which most
exports and views hold, never loads the rules. The text is rebuilt once, from the
stretches between the secrets.

Beyond texts: `Redactor.value` redacts every string of a JSON value (a string stored
under a key that names a secret goes whole; image data and the structure of entries
— ids, types, timestamps, signatures — are left alone), `Redactor.line` a JSON line
(the same bytes back when it holds no secret). Which texts of a session go through
it is decided by the callers: export/ and views/ on the way out, session/ on the way
in (``Session.create(..., redact=True)``), storage's forks and dialects' conversions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from jsonl_session.format.jsonio import decode_any, dumps
from jsonl_session.redaction.judge import SHORTEST, is_secret, key_kind, strength_for

if TYPE_CHECKING:
    from jsonl_session.redaction.shapes import Span
    from jsonl_session.redaction.spread import Helpers

PLACEHOLDER = "[REDACTED:{kind}]"
Finder = Callable[[str, "Helpers | None"], "list[Span]"]
"""finding.py's `find_secrets`: a text's secrets, with helpers for a huge one."""

# Keys whose string values are structure, never secrets: an entry's envelope and
# references, roles and model names, and opaque signatures (changing one would only
# make it unusable; a secret never goes there).
_STRUCTURE = frozenset(
    {
        "type", "id", "parentId", "timestamp", "role", "api", "provider", "model", "modelId",
        "stopReason", "toolCallId", "toolName", "thinkingSignature", "textSignature",
        "signature", "responseId", "responseModel", "firstKeptEntryId", "fromId", "targetId",
        "customType", "mimeType", "media_type", "thinkingLevel", "uuid", "parentUuid",
        "sessionId", "requestId", "call_id", "encrypted_content",
    }
)  # fmt: skip
_IMAGE_TYPES = frozenset({"image", "base64", "input_image"})
# Keys whose value is a header's (``{"Authorization": "Basic …"}``): judged as the
# header line would be.
_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


class Redactor:
    """Replaces secrets with ``[REDACTED:<kind>]`` and counts them by kind.

    One redactor serves a whole export (or a session's writes), so ``counts`` covers
    everything it was given. A disabled redactor returns its input unchanged and
    counts nothing. ``helpers``: an executor of worker processes (a
    ``ProcessPoolExecutor``) that may make a huge text's keyword scans while this
    process runs the other rules (spread.py): the same secrets, found sooner.
    """

    def __init__(self, enabled: bool = True, *, helpers: Helpers | None = None) -> None:
        self.enabled = enabled
        self.helpers = helpers
        self.counts: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> dict[str, int]:
        """Counts by kind, kinds sorted."""
        return {kind: self.counts[kind] for kind in sorted(self.counts)}

    @cached_property
    def _find(self) -> Finder:
        """finding.py's `find_secrets`, imported when this redactor first searches a
        text: compiling the rules' patterns takes about 20 ms, which a command that
        redacts nothing (most exports, textconv) should not pay."""
        from jsonl_session.redaction.finding import find_secrets

        return find_secrets

    def text(self, text: str) -> str:
        """``text`` with every secret replaced."""
        pieces = self.text_pieces(text)
        return pieces if isinstance(pieces, str) else "".join(pieces)

    def text_pieces(self, text: str) -> str | list[str]:
        """``text`` with every secret replaced: ``text`` itself when it holds none;
        else in pieces whose join is `text`'s, the stretches kept (each as narrow as
        its own characters allow) and the placeholders. A caller that writes them
        one by one never builds the whole text again, which for a huge text holding
        one emoji takes four bytes a character."""
        if not self.enabled or len(text) < SHORTEST:
            return text
        spans = self._find(text, self.helpers)
        if not spans:
            return text
        pieces: list[str] = []
        at = 0
        for start, end, kind, _ in spans:
            _slice(pieces, text, at, start)
            pieces.append(PLACEHOLDER.format(kind=kind))
            self.counts[kind] += 1
            at = end
        _slice(pieces, text, at, len(text))
        return pieces

    def value(self, value: Any) -> Any:
        """A JSON value with every string redacted (a copy; ``value`` itself when it
        holds no secret); a string stored under a key that names a secret
        (``"password": "..."``) is replaced whole. Image data and entry structure (see
        ``_STRUCTURE``) are left as they are; a thinking block whose text changed loses
        its signature, which would no longer match it."""
        if not self.enabled:
            return value
        if isinstance(value, str):
            return self.text(value)
        if not isinstance(value, dict | list) or not _may_hold_secrets(value, self._find):
            return value
        before = self.total
        root = _copy(value)
        pending: list[dict[str, Any] | list[Any]] = [root]
        while pending:  # iterative: JSON may nest deeper than the recursion limit
            container = pending.pop()
            if isinstance(container, list):
                for index, item in enumerate(container):
                    if isinstance(item, str):
                        container[index] = self.text(item)
                    elif isinstance(item, dict | list):
                        container[index] = copy = _copy(item)
                        pending.append(copy)
            else:
                self._dict(container, pending)
        return root if self.total != before else value

    def line(self, raw: bytes) -> bytes:
        """A JSON line (an entry, or another agent's record) with its secrets replaced;
        ``raw`` itself when there were none."""
        if not self.enabled:
            return raw
        before = self.total
        redacted = self.value(decode_any(raw))
        return raw if self.total == before else dumps(redacted)

    def _dict(self, container: dict[str, Any], pending: list[dict[str, Any] | list[Any]]) -> None:
        image = _is_image(container)
        thinking = container.get("thinking")
        for key, item in container.items():
            if isinstance(item, str):
                if key in _STRUCTURE or (image and key == "data"):
                    continue
                container[key] = self._keyed(key, item)
            elif isinstance(item, dict | list):
                container[key] = copy = _copy(item)
                pending.append(copy)
        if isinstance(thinking, str) and container.get("thinking") != thinking:
            container.pop("thinkingSignature", None)
            container.pop("signature", None)

    def _keyed(self, key: str, item: str) -> str:
        redacted = self.text(item)
        if redacted != item:
            return redacted
        if key.lower() in _HEADERS:
            line = self.text(f"{key}: {item}")
            return line[len(key) + 2 :]
        kind = _key_kind(key)
        if kind is not None and is_secret(item, strength=strength_for(key, kind)):
            self.counts[kind] += 1
            return PLACEHOLDER.format(kind=kind)
        return item


# The longest piece a text is copied in when rebuilt. Measured on a 200 MiB text with
# an emoji here and there: rebuilt from two slices of 100 M characters it took twice as
# long as from slices of a million (a slice is stored as narrow as its own characters
# allow, and huge ones are each allocated and faulted in whole).
_PIECE = 1 << 20


def _slice(pieces: list[str], text: str, start: int, end: int) -> None:
    """Appends ``text[start:end]`` to ``pieces``, in pieces of at most ``_PIECE``."""
    if end - start <= _PIECE:
        pieces.append(text[start:end])
    else:
        pieces += [text[at : min(at + _PIECE, end)] for at in range(start, end, _PIECE)]


def _may_hold_secrets(value: dict[str, Any] | list[Any], find: Finder) -> bool:
    """Whether the walk in `Redactor.value` could change anything: a string under a key
    that names a secret, or a secret in the strings it would look at. Those strings are
    searched joined, once, which is much faster than one by one; a separator no rule
    reads across (a NUL between newlines) keeps them apart. Strings of `_APART` or
    more characters in all are not searched here: the walk searches each of them
    anyway, and a huge text holding a secret would be searched twice."""
    texts: list[str] = []
    pending: list[dict[str, Any] | list[Any]] = [value]
    while pending:
        container = pending.pop()
        if isinstance(container, list):
            for item in container:
                if isinstance(item, str):
                    texts.append(item)
                elif isinstance(item, dict | list):
                    pending.append(item)
            continue
        image = _is_image(container)
        for key, item in container.items():
            if isinstance(item, str):
                if key in _STRUCTURE or (image and key == "data"):
                    continue
                if _key_kind(key) is not None or key.lower() in _HEADERS:
                    return True
                texts.append(item)
            elif isinstance(item, dict | list):
                pending.append(item)
    if sum(map(len, texts)) >= _APART:
        return True
    return bool(find(_SEPARATOR.join(texts), None))


_SEPARATOR = "\n\0\n"
_APART = 1 << 20
_KEY_KINDS: dict[str, str | None] = {}


def _key_kind(key: str) -> str | None:
    """key_kind, remembered: the same few keys come back in every entry."""
    try:
        return _KEY_KINDS[key]
    except KeyError:
        if len(_KEY_KINDS) > 10_000:
            _KEY_KINDS.clear()
        kind = _KEY_KINDS[key] = key_kind(key)
        return kind


def _copy(value: dict[str, Any] | list[Any]) -> dict[str, Any] | list[Any]:
    return dict(value) if isinstance(value, dict) else list(value)


def redactor_for(
    redact: bool | Redactor | None, default: Redactor | None = None
) -> Redactor | None:
    """The redactor a ``redact=`` option asks for: a new one for True, the one given,
    none for False, ``default`` for None."""
    if redact is None:
        return default
    if isinstance(redact, Redactor):
        return redact if redact.enabled else None
    return Redactor() if redact else None


def redact_text(text: str) -> tuple[str, dict[str, int]]:
    """``text`` with its secrets replaced, and how many of each kind were replaced."""
    redactor = Redactor()
    return redactor.text(text), redactor.summary()


def _is_image(container: dict[str, Any]) -> bool:
    kind = container.get("type")
    return isinstance(kind, str) and kind in _IMAGE_TYPES
