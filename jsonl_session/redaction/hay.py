"""The text the rules search, prepared once per text: `Hay` holds an ASCII image of it
(one byte per character, so a place in the image is the same place in the text) and
that image with its letters lowercased, and finds in them where a rule's literal word
stands (`Probe`) or whether it stands anywhere (`Hay.has`). `gate` writes a word as
a pattern over the lowercased image that takes one character (and as one that does
not, for gate_set.py): finding.py joins the rules' gates into the one scan that picks
which rules a short text needs (which rule has which gates is shapes.py's and
context.py's).

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
from typing import NamedTuple, Protocol

# Non-ASCII characters that lowercase or case-fold onto an ASCII letter (all of them:
# every code point was tried against [a-z] with IGNORECASE and against str.lower).
_FOLDS_ONTO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")
# ASCII characters from the rarest to the most common in code, logs and prose (counted
# in the benchmarks' text): a probe's search starts at the rarest character of its word.
_RARITY = "+j#>{}z;\\98`[]-67'1q43v5_=,0)(2kwbg/x.\"h:ypfmdlucinasort e"


# The characters gates take, in the order a word's is chosen: the scan of all gates
# stops wherever one of them stands, so the fewer and rarer they are the better, and
# a word takes one that other words take too before a rarer one of its own ("pwd" and
# "pass" both take "p", "mysql" and "sntry" "y"). A word with none takes its rarest.
_GATE_CHARS = "z-1_kgb:hypc"


# Up to this many characters a text is short: its rules are picked by one scan of
# their gates (finding.py), and a word's ``in`` costs less than starting a regex
# search, so words are looked for with ``in`` before a probe or group runs. A long
# text's rules are picked by their anchors: a few scans for literals cost less there.
_SHORT = 16_384


def _rank(char: str) -> int:
    at = _RARITY.find(char.lower())
    return at if at != -1 else 0


def _gate_rank(char: str) -> int:
    at = _GATE_CHARS.find(char)
    return at if at != -1 else len(_GATE_CHARS) + _rank(char)


def commonness(char: str) -> int:
    """Where the scan of all gates should try ``char``'s branch: the most common
    characters first (at each place the scan stops, it tries the branches in turn)."""
    return -_gate_rank(char)


class Gate(NamedTuple):
    """Where a rule could find a secret in a short text, as two patterns over its
    lowercased image that match in the same texts (`gate` makes both)."""

    pattern: str
    """Takes one character only, the rest looked at behind and ahead: finding.py's
    one `re` scan of every gate."""
    plain: str
    """The word, then what follows it: gate_set.py's scan of every gate at once."""


def gate(word: str, ahead: str = "") -> Gate:
    """Where ``word`` (lowercased) stands followed by what ``ahead`` matches. Its
    ``pattern`` takes the first of ``_GATE_CHARS`` in the word, with the rest looked
    at behind and ahead: finding.py joins such patterns into the one scan that picks
    the rules worth running on a short text; taking one character each, no match
    hides another's."""
    word = word.lower()
    at = min(range(len(word)), key=lambda index: _gate_rank(word[index]))
    behind = f"(?<={re.escape(word[: at + 1])})" if at else ""
    tail = f"(?:{ahead})" if ahead else ""
    rest = re.escape(word[at + 1 :]) + tail
    pattern = re.escape(word[at]) + behind + (f"(?={rest})" if rest else "")
    return Gate(pattern, re.escape(word) + tail)


class Anchor(Protocol):
    """What must be in a text for a rule to be tried."""

    def present(self, hay: Hay) -> bool: ...


class Probe:
    """Where a literal ``word`` stands, followed by what ``ahead`` (a regex) matches:
    the places a rule's pattern can start at. Case is ignored if ``folded``. With
    ``via``, the fast path takes the places from a branch of a `Group` instead."""

    __slots__ = (
        "ahead", "back", "exact", "fast", "folded", "gate", "ignoring_case", "via", "word",
        "word_bytes",
    )  # fmt: skip

    def __init__(
        self, word: str, ahead: str = "", *, folded: bool = True, via: Branch | None = None
    ) -> None:
        self.word, self.ahead, self.folded, self.via = word, ahead, folded, via
        # where it hits, in the lowercased image (``ahead`` reads lowercased text)
        assert folded or not ahead
        self.gate = gate(word, ahead)
        self.word_bytes = word.encode("ascii")
        tail = f"(?={ahead})" if ahead else ""
        # the search starts at the rarest character (with one more after it: re checks
        # a literal prefix inline, but calls its matcher at each place a one-character
        # prefix stands) and checks the rest behind it
        starts = range(max(1, len(word) - 1))
        self.back = min(starts, key=lambda index: _rank(word[index]))
        behind = f"(?<={re.escape(word)})" if self.back else ""
        fast = re.escape(word[self.back :]) + behind + tail
        self.fast = re.compile(fast.encode("ascii"))
        plain = re.escape(word) + tail
        self.exact = re.compile(plain)
        self.ignoring_case = re.compile(plain, re.IGNORECASE)

    def present(self, hay: Hay) -> bool:
        return hay.has(self)


class Group:
    """Several literals looked for in one scan (each scan of a whole text costs about
    as much as the next): ``pattern`` starts with ``literal``, which they share, and
    each of its branches is a capture group."""

    __slots__ = ("folded", "literal", "pattern")

    def __init__(self, literal: str, pattern: str, *, folded: bool) -> None:
        self.literal = literal.encode("ascii")
        self.pattern = re.compile(re.escape(literal).encode("ascii") + pattern.encode("ascii"))
        self.folded = folded

    def branch(self, index: int, back: int = 0) -> Branch:
        return Branch(self, index, back)


def pivoted(char: str, members: list[tuple[str, str]]) -> list[Branch]:
    """For each (word, ahead) of ``members``, the branch of one folded `Group` that
    finds where the word stands followed by what ``ahead`` matches, as a `Probe` of
    them would: the group takes ``char``, which each word holds, and looks behind and
    ahead of it for the rest. Give a probe its branch (``via``) and one scan of a long
    text finds all of them: a scan of a long text costs about the same whatever it
    looks for, and ``char`` is rarer than the words' own starts are common. A scan
    records one branch a place, so what stands around ``char`` must tell the members
    apart (the tests check each against its own probe)."""
    parts = []
    for word, ahead in members:
        at = word.index(char)
        behind = f"(?<={re.escape(word[: at + 1])})" if at else ""
        rest = re.escape(word[at + 1 :]) + (f"(?:{ahead})" if ahead else "")
        parts.append(behind + (f"(?={rest})" if rest else "") + "()")
    group = Group(char, f"(?:{'|'.join(parts)})", folded=True)
    return [
        group.branch(index, back=word.index(char))
        for index, (word, _) in enumerate(members, start=1)
    ]


class Branch:
    """A rule's anchor: branch ``index`` of ``group`` was found. Off the fast path a
    branch counts as found (its rule then searches the text itself): a branch only
    says its rule's pattern could match. ``back``: how far before the place the
    group's literal stands a probe's word starts (`pivoted`)."""

    __slots__ = ("back", "group", "index")

    def __init__(self, group: Group, index: int, back: int = 0) -> None:
        self.group, self.index, self.back = group, index, back

    def present(self, hay: Hay) -> bool:
        return not hay.fast or self.index in hay.scan(self.group)


class AllOf:
    """Every one of ``anchors`` is present (the cheapest, or most often absent, first)."""

    __slots__ = ("anchors",)

    def __init__(self, *anchors: Anchor) -> None:
        self.anchors = anchors

    def present(self, hay: Hay) -> bool:
        return all(anchor.present(hay) for anchor in self.anchors)


class AnyOf(AllOf):
    """One of ``anchors`` is present."""

    def present(self, hay: Hay) -> bool:
        return any(anchor.present(hay) for anchor in self.anchors)


def places_of(pattern: re.Pattern[bytes], hay: bytes | memoryview) -> dict[int, list[int]]:
    """Where ``pattern`` matches in ``hay``, by the group that matched (0 for a
    pattern without groups): a group's scan as `Hay.scan` keeps it."""
    found: dict[int, list[int]] = {}
    for match in pattern.finditer(hay):
        found.setdefault(match.lastindex or 0, []).append(match.start())
    return found


class Hay:
    """A text prepared for the rules' searches (see the module's docstring)."""

    __slots__ = ("_lowered", "_scans", "_shifted", "fast", "image", "low", "short", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        # non-ASCII characters become "?": no rule's literal holds one
        self.image = text.encode("ascii", "replace")
        self.short = len(text) <= _SHORT
        self.fast = text.isascii() or not any(char in text for char in _FOLDS_ONTO_ASCII)
        self._lowered: str | None = None
        self._shifted = False
        self._scans: dict[int, dict[int, list[int]]] = {}
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
            hay = self.low if probe.folded else self.image
            if self.short or len(probe.word) >= 8:  # find skips ahead by a long word's length
                return probe.word.encode("ascii") in hay
            return probe.fast.search(hay) is not None
        assert self._lowered is not None
        return probe.word in (self._lowered if probe.folded else self.text)

    def scan(self, group: Group) -> dict[int, list[int]]:
        """Where each branch of ``group`` matched (fast path only), scanned once."""
        found = self._scans.get(id(group))
        if found is None:
            found = self._scans[id(group)] = {}
            hay = self.low if group.folded else self.image
            if self.short and group.literal not in hay:
                return found
            found.update(places_of(group.pattern, hay))
        return found

    def make_scan(self, owner: Group | Probe) -> None:
        """Make the scan of a group, or of a probe's own word, now, if not made."""
        if isinstance(owner, Group):
            self.scan(owner)
        else:
            next(self.hits(owner), None)

    def remember_scan(self, owner: Group | Probe, places: dict[int, list[int]]) -> None:
        """Keep ``places`` as the scan of ``owner`` (fast path): where each branch of a
        group matched, or under 0 where a probe's word starts, as made in another
        process (spread.py) from the same image and pattern."""
        self._scans[id(owner)] = places

    def hits(self, probe: Probe) -> Iterator[int]:
        """The places (in characters) where ``probe``'s word starts."""
        if self.fast:
            via = probe.via
            if via is not None:
                places = self.scan(via.group).get(via.index, ())
                yield from [at - via.back for at in places] if via.back else places
                return
            found = self._scans.get(id(probe))
            if found is None:
                back = probe.back
                hay = self.low if probe.folded else self.image
                places = (
                    []
                    if self.short and probe.word_bytes not in hay
                    else [match.start() - back for match in probe.fast.finditer(hay)]
                )
                found = self._scans[id(probe)] = {0: places}
            yield from found[0]
            return
        if not probe.folded:
            matches = probe.exact.finditer(self.text)
        elif self._shifted:
            matches = probe.ignoring_case.finditer(self.text)
        else:
            assert self._lowered is not None
            matches = probe.exact.finditer(self._lowered)
        for match in matches:
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
