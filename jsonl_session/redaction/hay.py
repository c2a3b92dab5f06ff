"""The text the rules search, prepared once per text: `Hay` holds an ASCII image of it
(one byte per character, so a place in the image is the same place in the text) and
that image with its letters lowercased, and finds in them where a rule's literal word
stands (`Probe`) or whether it stands anywhere (`Hay.has`).

Why bytes: a regex or ``in`` over a str of wide characters (one emoji makes every
character four bytes) or ``text.lower()`` over all of it cost far more than the same
search over bytes; and a search whose pattern starts with a literal is one of the
fastest things ``re`` does, so each probe starts at the rarest character of its word
and looks back for the rest.

Matching keywords without regard to case over the lowercased image and then matching
the rule's pattern with IGNORECASE at each place gives what matching the lowercased
text would, except for four characters that case-fold onto ASCII letters
(U+0130, U+0131, U+017F, U+212A).
A text holding one of those is searched as before: over ``text.lower()`` when that
kept every character in place, else over the text with IGNORECASE patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Non-ASCII characters that lowercase or case-fold onto an ASCII letter (all of them:
# every code point was tried against [a-z] with IGNORECASE and against str.lower).
_FOLDS_ONTO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")
# ASCII characters from the rarest to the most common in code, logs and prose (counted
# in the benchmarks' text): a probe's search starts at the rarest character of its word.
_RARITY = "+j#>{}z;\\98`[]-67'1q43v5_=,0)(2kwbg/x.\"h:ypfmdlucinasort e"


def _rank(char: str) -> int:
    at = _RARITY.find(char.lower())
    return at if at != -1 else 0


class Probe:
    """Where a literal ``word`` stands, followed by what ``ahead`` (a regex) matches:
    the places a rule's pattern can start at. Case is ignored if ``folded``."""

    __slots__ = ("back", "exact", "fast", "folded", "ignoring_case", "word")

    def __init__(self, word: str, ahead: str = "", *, folded: bool = True) -> None:
        self.word, self.folded = word, folded
        tail = f"(?={ahead})" if ahead else ""
        # the search starts at the rarest character and checks the rest behind it
        self.back = min(range(len(word)), key=lambda index: _rank(word[index]))
        behind = f"(?<={re.escape(word)})" if self.back else ""
        fast = re.escape(word[self.back :]) + behind + tail
        self.fast = re.compile(fast.encode("ascii"))
        plain = re.escape(word) + tail
        self.exact = re.compile(plain)
        self.ignoring_case = re.compile(plain, re.IGNORECASE)


class Hay:
    """A text prepared for the rules' searches (see the module's docstring)."""

    __slots__ = ("_lowered", "_shifted", "fast", "image", "low", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        # non-ASCII characters become "?": no rule's literal holds one
        self.image = text.encode("ascii", "replace")
        self.fast = text.isascii() or not any(char in text for char in _FOLDS_ONTO_ASCII)
        self._lowered: str | None = None
        self._shifted = False
        if self.fast:
            self.low = self.image.lower()
        else:
            self.low = b""
            lowered = text.lower()
            self._shifted = len(lowered) != len(text)
            self._lowered = lowered

    def has(self, probe: Probe) -> bool:
        """Whether ``probe``'s word occurs (in the text lowercased, if folded)."""
        if self.fast:
            return probe.fast.search(self.low if probe.folded else self.image) is not None
        assert self._lowered is not None
        return probe.word in (self._lowered if probe.folded else self.text)

    def hits(self, probe: Probe) -> Iterator[int]:
        """The places (in characters) where ``probe``'s word starts."""
        if self.fast:
            back = probe.back
            for fast in probe.fast.finditer(self.low if probe.folded else self.image):
                yield fast.start() - back
            return
        if not probe.folded:
            found = probe.exact.finditer(self.text)
        elif self._shifted:
            found = probe.ignoring_case.finditer(self.text)
        else:
            assert self._lowered is not None
            found = probe.exact.finditer(self._lowered)
        for match in found:
            yield match.start()

    def matches(
        self, patterns: tuple[re.Pattern[str], re.Pattern[str]], probe: Probe
    ) -> Iterator[re.Match[str]]:
        """What ``finditer`` of a keyword pattern (exact, ignoring case; see `_both`
        in context.py) over the text lowercased would give: the pattern is tried where
        its word stands, and not inside a match already given."""
        exact, ignoring_case = patterns
        if self.fast or self._shifted:
            subject, pattern = self.text, ignoring_case
        else:
            assert self._lowered is not None
            subject, pattern = self._lowered, exact
        end = 0
        for at in self.hits(probe):
            if at < end:
                continue
            match = pattern.match(subject, at)
            if match is not None:
                end = match.end()
                yield match

    def folded_group(self, match: re.Match[str], name: str) -> str | None:
        """A group of a match from `matches`, as the lowercased text has it (the text
        itself when lowercasing shifted it, as the IGNORECASE search did before)."""
        value = match[name]
        if value is None or self._shifted:
            return value
        return value.lower()
