"""Text the embedding model does not read: a cosine of it is no evidence of meaning.

all-MiniLM-L6-v2 was trained on English. Its tokenizer turns most Chinese characters into
`[UNK]` and Japanese kana, Hangul, Cyrillic, Greek, Hebrew and Arabic into single-character
pieces it learnt nothing about, so two such texts of about the same length have a cosine close
to 1.0 whatever they say. Users met it: four different Chinese rules ("no f-strings in SQL",
"commit messages in Chinese", ...) were merged into one "by meaning" at cosine 0.78-0.88, and
"迁移用户表" / "迁移订单表" (migrate the users / orders table) were folded into one experience at
0.9999995, the second run's feedback lost (hunt-i18n #1, #2). Where a decision would trust the
cosine, text that is mostly unread is decided by its words instead (as without a model).

"Unread" is decided by script, not by counting `[UNK]` tokens: "インデントはスペース四つ" (indent
with four spaces) tokenises to kana pieces with no `[UNK]` at all, and was merged into
"変数名はキャメルケース" (camelCase variable names) all the same. Latin script (accents included:
the uncased tokenizer strips them) and digits are read; every other letter, and symbols such as
emoji, are not. The share is of the model's tokens, roughly: a Latin word counts once, every
other letter or symbol once (each is one token or one piece to the model).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

#: Above this share of unread tokens a text's cosine is no evidence of its meaning. A short
#: Chinese rule naming "SQL" and "f-string" is 67% unread; an English rule quoting one
#: Japanese word ("Translate 'ログイン' as 'Sign in'.") is matched by words too, which is
#: what every rule gets without a model, never a loss.
UNREAD_SHARE = 0.3


@lru_cache(maxsize=8192)
def _read_char(ch: str) -> bool:
    """Whether the model reads this letter or digit: ASCII or Latin script."""
    return ch.isascii() or unicodedata.name(ch, "").startswith("LATIN")


def unread_share(text: str) -> float:
    """The share of `text`'s tokens (Latin words; other letters one by one) that the model does
    not read; 0.0 for a text with neither. Emoji and symbols count as neither: two emoji after
    an English task ("Ship the release notes 🚀🔥") made it "mostly unread", and the block lost
    the model's ranking and both of its rules (review, session 22)."""
    read = unread = 0
    in_word = False
    for ch in text:
        if ch.isalnum() and _read_char(ch):
            read += not in_word
            in_word = True
            continue
        if ch.isalpha():
            unread += 1  # a letter of a script the model does not read
        elif unicodedata.category(ch).startswith("M"):
            continue  # a combining accent (NFD input) belongs to the letter before it
        in_word = False
    total = read + unread
    return unread / total if total else 0.0


def mostly_unread(text: str) -> bool:
    """Whether the model's cosine of `text` says nothing of its meaning (see the module)."""
    return unread_share(text) > UNREAD_SHARE
