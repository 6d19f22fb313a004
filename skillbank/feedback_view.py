"""An experience's feedback as the memory block shows it, beside the rules learnt from it.

Why (hunt, session 20): run 1's feedback "Write SQL keywords in lowercase." and run 2's "From
now on write SQL keywords in uppercase." became guidelines, the second superseding the first,
yet the block for the next SQL task showed the uppercase rule as a guideline *and* both
feedbacks verbatim on the experiences' lines: the agent was told the superseded instruction
after all, and the current one twice. A feedback that was learnt as guidelines is shown
without the sentences whose rule was superseded or retired, and without those whose rule the
block already shows, which it points to instead ("learnt as [gl-...]"). What the feedback
says besides its rules stays.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

#: Statuses whose rule the agent must not be told again.
_GONE = frozenset({"superseded", "retired"})


def _said_by(g: Any, feedback: str) -> list[str]:
    """The sentences of `feedback` that `g` was learnt from ("" when they cannot be found in
    it: an agent's own wording passed as ``rules=``, which stands for the whole feedback)."""
    out = []
    for source in getattr(g, "sources", None) or ():
        if getattr(source, "critique", None) != feedback:
            continue
        said = " ".join(str(getattr(source, "sentence", None) or "").split())
        out.append(said if said and said in feedback else "")
    return out


def feedback_line(feedback: str, learnt: Iterable[Any], shown: set[str]) -> str:
    """What the block prints after "Feedback:" for an experience whose feedback is
    `feedback`, given the guidelines `learnt` from it and the guideline ids `shown` in the
    block; "" when nothing is left to say."""
    flat = " ".join(feedback.split())
    text, pointers, whole = flat, [], False
    for g in learnt:
        status = getattr(g, "status", "active")
        if g.id in shown and status not in _GONE:
            pointers.append(g.id)
        elif status not in _GONE:
            continue  # a rule in force that the block does not show: its words stay
        for said in _said_by(g, feedback):
            if said:
                text = text.replace(said, " ")
            else:
                whole = True
    text = "" if whole else " ".join(text.split())
    if not re.search(r"[A-Za-z]{3,}", text):
        text = ""
    if pointers:
        ids = ", ".join(f"[{gid}]" for gid in dict.fromkeys(pointers))
        text = f"{text} (learnt as {ids})" if text else f"learnt as {ids}"
    return text


def feedback_view(bank: Any, record: Any, shown: set[str]) -> str | None:
    """`record`'s feedback for its line in the block, or None to print it as it is (nothing
    was learnt from it, or the memory cannot say)."""
    feedback = getattr(record, "feedback", None)
    learnt_from = getattr(getattr(bank, "guidelines", None), "learnt_from", None)
    if not feedback or learnt_from is None:
        return None
    learnt = learnt_from(feedback)  # the caller's namespaces, as the experience was recalled
    return feedback_line(feedback, learnt, shown) if learnt else None
