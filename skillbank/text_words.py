"""What a word is in any script: the one rule the keyword index, experience folding and topic
names share, so "the same words" means one thing everywhere.

`re`'s `\\w` has no combining marks (Devanagari and Thai vowel signs, Arabic harakat, Hebrew
points), and NFKC leaves most of them uncomposed: with `[^\\W_]+` alone "हिन्दी" fell apart.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache


@cache
def marks() -> str:
    """A character-class body of every combining mark of the Basic Multilingual Plane (built
    once, ~6 ms, on first use rather than at import: a server's cold start pays it only when
    it first reads text)."""
    ranges: list[str] = []
    start = prev = -2
    for cp in range(0x10000):
        if unicodedata.category(chr(cp))[0] == "M":
            if cp != prev + 1:
                if start >= 0:
                    ranges.append(_char_range(start, prev))
                start = cp
            prev = cp
    ranges.append(_char_range(start, prev))
    return "".join(ranges)


def _char_range(first: int, last: int) -> str:
    return re.escape(chr(first)) + ("" if first == last else "-" + re.escape(chr(last)))


def word() -> str:
    """A word's pattern: a letter or digit of any script, then letters, digits and marks (no
    underscore, so `snake_case` is two words)."""
    return rf"[^\W_]+(?:[{marks()}]+[^\W_]*)*"


@cache
def word_pattern() -> re.Pattern[str]:
    return re.compile(word())
