"""Why a critique, a sentence or a clause of it gave no rule: the `detail` of an `ignored` entry.

Said so the user learns what was not taken and what to do about it (pass ``rules=``, use an LLM
distiller), never a silent drop.
"""

from __future__ import annotations

from typing import Any

from skillbank.distill import RuleDistiller
from skillbank.distill.clauses import asks_something
from skillbank.distill.language import not_read
from skillbank.distill.standalone import instruction_points_back
from skillbank.memories.guidelines.files import has_words


def ignored_why(text: str, distiller: Any) -> str:
    """Why a sentence the distiller found no rule in was ignored. A Chinese or Russian critique
    was reported as "praise", which it is not and which told the user nothing (hunt-i18n #5).
    One of emoji or punctuation alone ("👍👍🔥", "!!!") gave no entry at all, where "" gets
    "empty critique" (hunt-badinput #3, session 26)."""
    if not has_words(text):
        return "no words to learn from (only symbols or emoji)"
    if isinstance(distiller, RuleDistiller) and not_read(text):
        return ("not read: written in a language the model-free distiller does not read; pass "
                "rules= or use an LLM distiller")
    if isinstance(distiller, RuleDistiller) and instruction_points_back(text):
        # "Always do that before a migration." after a sentence that names no rule and no
        # clear act or place (hunt-lcteam #2, session 36)
        return ("not read as a rule: it points back (\"there\", \"do that\", \"this\") to "
                "something the sentence before does not name as a rule; say it in full, or pass "
                "rules=")
    if isinstance(distiller, RuleDistiller) and asks_something(text):
        return ("not read as a rule: it seems to ask for something, but the model-free "
                "distiller found no instruction in it; if it is one, pass rules= or use an LLM "
                "distiller")
    return "no reusable advice (praise, a score, a one-off fix or a vague reaction)"
