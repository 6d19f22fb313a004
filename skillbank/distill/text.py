"""Small text helpers shared by every stage: word tokens, finishing a sentence, clipping, keys."""

from __future__ import annotations

import re

from skillbank.text_words import word_pattern


_WORD_RE = re.compile(r"[\w\u27e6\u27e7'’-]+")


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def _cap(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] if text else text


def _finish(text: str) -> str:
    """Capitalise, tidy whitespace and end with exactly one full stop."""
    text = re.sub(r"\s+", " ", text).strip()
    # A dot that opens a word is a file name or extension (".tf", ".gitignore"), not a full
    # stop: "Never hardcode passwords in .tf files" was stored as "... in.tf files".
    text = re.sub(r"\s+([,;:!?]|\.(?![.\w]))", r"\1", text)
    text = text.rstrip(" ,;:-–—")
    text = re.sub(r"[.!?。！？]+$", "", text).rstrip(" ,;:")  # never "...SQL。." (hunt-i18n #6)
    return _cap(text) + "." if text else ""


def _clip(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _key(text: str) -> str:
    """A rule's dedup key: its words (``text_words``, any script), case, spacing and
    punctuation aside.

    With `[a-z0-9]` only, every Chinese rule had the key "" (or just its "sql f string"), so two
    different ones were "the same wording" (hunt-i18n #2); with `[^\\W_]` a Devanagari word fell
    apart at its vowel signs. On ASCII text the key is what it always was.
    """
    return " ".join(word_pattern().findall(text.lower()))
