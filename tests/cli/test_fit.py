"""fit(): a title cut to the cells it may take, as rich measures and cuts it, by
faster means for the text most titles are made of."""

from __future__ import annotations

import random

import pytest
from rich.cells import cell_len, set_cell_size

from jsonl_session.cli.cells import fit

# Characters fit() measures itself: one cell each, or a grapheme of their own.
OWN_RANGES = [
    (0x20, 0x7E), (0xA0, 0x2FF), (0x370, 0x482), (0x2010, 0x2027), (0x2030, 0x205E),
    (0x20A0, 0x20C0), (0x2190, 0x21FF), (0x2600, 0x27BF), (0x3000, 0x3029),
    (0x3030, 0x303F), (0x3041, 0x3096), (0x309B, 0x30FF), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3), (0xFF01, 0xFF60), (0x1F300, 0x1F3FA), (0x1F400, 0x1F64F),
    (0x1F680, 0x1F6FF), (0x1F900, 0x1F9FF),
]  # fmt: skip
OWN = [chr(code) for first, last in OWN_RANGES for code in range(first, last + 1)]
# Characters that join others into one grapheme: rich measures text holding them.
JOINING = ["\u0301", "\u200d", "\ufe0f", "\U0001f3fd", "\U0001f1fa", "\u3099", "\u302a"]


def as_rich_cuts(text: str, width: int) -> str:
    """What fit() gives, computed by rich alone."""
    head = text[: 4 * width + 4]
    if len(head) == len(text) and cell_len(text) <= width:
        return text
    if width < 2:
        return "…" if width == 1 else ""
    return set_cell_size(head, width - 1).rstrip(" ") + "…"


@pytest.mark.parametrize("seed", range(4))
def test_titles_of_any_mix_of_scripts_and_emoji_are_cut_where_rich_cuts_them(
    seed: int,
) -> None:
    rng = random.Random(seed)
    for _ in range(250):
        pool = rng.choice([OWN, OWN + JOINING, list("abc de ")])
        text = "".join(
            rng.choice(pool) if rng.random() < 0.6 else rng.choice("abc de ")
            for _ in range(rng.randint(0, 200))
        )
        width = rng.randint(0, 80)
        assert fit(text, width) == as_rich_cuts(text, width), (text, width)


def test_each_character_measured_without_rich_is_as_wide_as_rich_says() -> None:
    for character in random.Random(7).sample(OWN, 1500):
        for width in (1, 2, 3, 4):
            text = character * 3
            assert fit(text, width) == as_rich_cuts(text, width), (character, width)
