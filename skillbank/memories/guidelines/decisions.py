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

from skillbank.distill.relations import (_ANTONYM_WORDS, _action, _objects, _stem,
                                         same_action_object)

#: Position and degree words ("first", "short", "more") describe an object, they are not one.
_MODIFIERS = frozenset(_stem(w) for w in _ANTONYM_WORDS) | _ANTONYM_WORDS

#: Matching similarity (profile cosine + TF-IDF overlap, capped at 1) above which two rules are
#: taken as paraphrases without the same action and object (more than half of the candidate's
#: object words must still occur in the guideline's wordings). On the critique-stream dev set,
#: merges the distiller called "same" were right 56% of the time at 0.50-0.60 and 73% at
#: 0.60-0.65, but 88% from 0.65 up (a higher bar bought no more precision);
#: settings.merge_threshold (0.5) stays the distiller's own floor.
PARAPHRASE_BAR = 0.65


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
    if similarity < bar:
        return None
    # A paraphrase speaks mostly of what the rule's wordings speak of: a candidate sharing one
    # context word ("slides", "chart") but not its object would bring an instruction of its own.
    mine = _objects(text, _action(text))
    theirs: set[str] = set()
    for rule, _sentence, _critique in members:
        if rule:
            theirs |= _objects(rule, _action(rule))
    shared = {w for w in mine & theirs if w not in _MODIFIERS}
    if not shared or len(shared) <= 0.5 * len(mine - _MODIFIERS):
        return None  # not mostly about what the rule's wordings are about
    return (f"a paraphrase: similarity {similarity:.2f} >= {bar:.2f}, sharing "
            + ", ".join(repr(w) for w in sorted(shared)))


def same_wording(a: str, b: str) -> bool:
    """The same rule text up to case, spacing and punctuation (the distiller's dedup key)."""
    from skillbank.distill.text import _key

    return bool(_key(a)) and _key(a) == _key(b)
