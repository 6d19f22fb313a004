"""When two rules are one: the evidence a merge needs, and the plan for one candidate rule.

A wrong merge is worse than a duplicate: it silently deletes advice and tells the agent something
no critic said. So a merge needs strong evidence, beyond the distiller saying "same":

* the same action on the same object: the same main verb, the same polarity and mostly the same
  objects, against the guideline's text or any wording that reinforced it ("Add tests." and "Add
  tests for edge cases." are one rule; "Use British spelling." and "Use parameterised queries."
  share only a verb), or
* a paraphrase above a high bar of the matching similarity (``paraphrase_bar``).

When unsure the memory keeps both and links them as ``related``. Rules from one critique are
never merged into each other at all (the caller skips what the critique already touched).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from skillbank.distill.relations import same_action_object

#: Matching similarity (profile cosine + TF-IDF overlap, capped at 1) above which two rules are
#: taken as paraphrases without the same action and object. The distiller's own "same" floor
#: (settings.merge_threshold) is far lower; see docs/benchmarks.md for what each bar costs.
PARAPHRASE_BAR = 0.8


@dataclass
class Plan:
    """What the neighbours of one candidate rule say about it."""

    same: tuple[float, str, str] | None = None  # (similarity, guideline id, evidence)
    contradicted: list[tuple[float, str]] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)  # guideline id -> the words that decided
    note: str = ""
    confirms: str | None = None  # a pending (untrusted) rule a trusted restatement replaces


def merge_evidence(text: str, members: Sequence[tuple[str, str | None, str | None]],
                   similarity: float, bar: float = PARAPHRASE_BAR) -> str | None:
    """Why `text` may merge into a guideline whose wordings are `members`, or None."""
    for rule, _sentence, _critique in members:
        if rule:
            why = same_action_object(text, rule)
            if why:
                return why
    if similarity >= bar:
        return f"a paraphrase: similarity {similarity:.2f} >= {bar:.2f}"
    return None


def same_wording(a: str, b: str) -> bool:
    """The same rule text up to case, spacing and punctuation (the distiller's dedup key)."""
    from skillbank.distill.text import _key

    return bool(_key(a)) and _key(a) == _key(b)
