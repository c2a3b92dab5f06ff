"""The scan of every rule's gate at once by RE2 (the google-re2 package, which the
``fast`` extra brings), when it is installed.

Owns making one RE2 set of the gates (hay.py's `Gate.plain`: a word, then what must
follow it) and the scan that says which of them match in a short text's lowercased
image. One pass of RE2's automaton costs about a quarter of finding.py's one `re`
scan of the same gates, which stops at every place a gate's character stands (common
letters among them) and tries its branches there; on a redacted export of a long
session that scan was a fifth of the time. It is also finer: only the rules whose own
gate matched run, where the `re` scan runs every rule whose gate takes a character it
found. Both run every rule that could find a secret in the text, so both find the
same (tests/redaction hold them to each other and to every rule run).

Which rules a gate stands for, and the `re` scan without RE2, are finding.py's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

SetScan = Callable[[bytes], list[int] | None]
"""The indexes of the gates that match in a lowercased image (None, or empty: none)."""

_MEMORY = 64 << 20
"""What RE2 may give the automaton (its default, 8 MiB, is already far more than the
gates' few hundred states take; a set has no slower way to fall back on)."""


def set_scan(gates: Sequence[str]) -> SetScan | None:
    """The scan of ``gates`` (`Gate.plain` patterns, as Python's `re` reads them over
    bytes), or None when google-re2 is not installed. Other packages install a module
    named ``re2`` too (pyre2, fb-re2), and a script of that name may come first on the
    path: a module without google-re2's sets, or one that refuses them, is not used."""
    try:
        import re2  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        options = re2.Options()
        options.max_mem = _MEMORY
        scan = re2.Set.SearchSet(options)
        for pattern in gates:
            scan.Add(for_re2(pattern).encode("ascii"))
        scan.Compile()
        match: SetScan = scan.Match
    except Exception:  # (whatever another module raises: the `re` scan does the work)
        return None
    return match


def for_re2(pattern: str) -> str:
    """``pattern`` as RE2 reads it to match what `re` matches over bytes: its ``\\s``
    written as the POSIX class of the same six characters (RE2's own ``\\s`` leaves out
    the vertical tab), inside a bracket or alone."""
    out: list[str] = []
    inside = False
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\" and at + 1 < len(pattern):
            escape = pattern[at : at + 2]
            if escape == "\\s":
                out.append("[:space:]" if inside else "[[:space:]]")
            else:
                out.append(escape)
            at += 2
            continue
        if char == "[" and not inside:
            inside = True
            out.append(char)
            # a "]" (after a "^") first in a bracket is one of its characters
            if pattern.startswith("^", at + 1):
                out.append("^")
                at += 1
            if pattern.startswith("]", at + 1):
                out.append("]")
                at += 1
        elif char == "]" and inside:
            inside = False
            out.append(char)
        else:
            out.append(char)
        at += 1
    return "".join(out)
