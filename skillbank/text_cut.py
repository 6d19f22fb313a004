"""Cutting a text to a line's length: at a word where words are spaced, by tokens where dense.

Lines in a memory block used to be cut back to their last space (`text[:limit].rsplit(" ")`).
That assumes spaced words: a Chinese lesson "教训: …300 characters…" has its only space after
the label, so the block showed "教训:…" and the lesson was gone (hunt-i18n, session 22). And a
character limit is not a token limit: 400 Chinese characters cost 400–500 tokens, where 400
English ones cost ~100, so with budgets of 60–250 tokens the block dropped every item whole.
"""

from __future__ import annotations

from skillbank.tokens import count_tokens

ELLIPSIS = "\u2026"
#: How far back a cut may go to end at a space: a fifth of the line, or a long English word
#: ("multi-series", "configuration"). A space further back would throw away most of the line
#: (an unspaced script after a short label).
WORD_BACKOFF = 0.2
LONG_WORD = 24


def cut_at_word(text: str, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """`text` in at most `limit` characters, ending with `ellipsis` where it was cut.

    Cut at the last space when it is near the end (`WORD_BACKOFF`, `LONG_WORD`), else at the
    limit."""
    if len(text) <= limit:
        return text
    head = text[:max(0, limit - len(ellipsis))]
    space = head.rfind(" ")
    if space > 0 and len(head) - space <= max(len(head) * WORD_BACKOFF, LONG_WORD):
        head = head[:space]
    return head.rstrip() + ellipsis


def within_tokens(text: str, max_tokens: int, ellipsis: str = ELLIPSIS) -> str:
    """`text` cut (as `cut_at_word` cuts) so that it costs at most `max_tokens` tokens.

    A no-op for text under the allowance, which is any line of spaced words under its character
    limit when the allowance is half that limit (English runs ~4 characters a token).
    """
    if count_tokens(text) <= max_tokens:
        return text
    low, high = 0, len(text)  # the longest head whose cut version fits
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(cut_at_word(text, middle, ellipsis)) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return cut_at_word(text, low, ellipsis) if low > len(ellipsis) else ellipsis
