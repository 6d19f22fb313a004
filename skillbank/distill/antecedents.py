"""What a rule's object pronoun names: "Run it in a transaction.", "Rotate them if they leak."

A pronoun right after the rule's verb was kept as "the answer itself" ("Keep it under 200
words."), so "Nice work on the migration! Next time run it in a transaction." stored "Run it in
a transaction.", "Never commit secrets. Rotate them if they leak." stored "Rotate them if they
leak." as a rule of its own, and "The error message is unclear; it should say which field failed
and why." stored "Make it say which field failed and why." (hunt-learnfaces #2, session 38;
issue #25: "each rule keeps its subject, pronouns resolved from the critique"). Such a pronoun is
read, in this order, from a description just before ("The error message is unclear"), joined to
the rule before it when it can only mean that rule's thing ("them" is never the one answer; "it"
after "Write the changelog ..." is the changelog), from a sentence before that is no instruction
("Nice work on the migration!"), or from the task ("Write the database migration"). Otherwise
the rule is kept as written: "Keep it under 150 words." after "Answer the question first" is
about the answer itself.
"""

from __future__ import annotations

import re

from skillbank.distill.clauses import _with_subject, asks_something, subject_of
from skillbank.distill.morphology import _lemma
from skillbank.distill.relations import _action, object_phrase
from skillbank.distill.rewrite import _PRAISE_RE

#: Verbs whose object is the thing the answer is: "it" after "Write the changelog ..." is the
#: changelog ("Answer the question first, and keep it under 150 words." is about the answer).
_MAKES = frozenset("write draft compose create build prepare produce generate design implement "
                   "rewrite redraft".split())
#: A thing named at the end of a sentence after a preposition: "Nice work on the migration!"
_LAST_NP = re.compile(r"\b(?:on|with|for|about|of|to)\s+(?P<np>(?:the|your|this|that|our|these|"
                      r"those)\s+(?:[\w-]+\s+){0,2}?[\w-]+)\W*$", re.I)
#: A task's verb and its object: "Write the database migration", "Migrate the users table".
_TASK = re.compile(r"^\W*(?P<verb>[A-Za-z]+)\s+(?P<np>(?:(?:the|a|an|our|my|your|this|that|"
                   r"these|those)\s+)?(?:[\w-]+\s+){0,3}?[\w-]+)(?=\s+(?:for|in|on|to|with|from|"
                   r"about|that|which|so|by|at|into|before|after|and|of)\b|\W*$)", re.I)


def head_pronoun(rule: str) -> str | None:
    """"it" / "them" when it is the object right after the rule's verb ("Run it in a
    transaction." -> "it"), else None."""
    action = _action(rule)
    words = re.findall(r"[A-Za-z][\w'-]*", rule)
    head = next((i for i, w in enumerate(words)
                 if (_lemma(w.lower()) or w.lower()) == action), None)
    if action is None or head is None or head + 1 >= len(words):
        return None
    nxt = words[head + 1].lower()
    return nxt if nxt in ("it", "them") else None


def object_points_back(rule: str, previous_rule: str) -> bool:
    """Whether `rule`'s object pronoun can only mean `previous_rule`'s thing, so the two are one
    rule: "them" after "Never commit secrets." ("them" is never the one answer), "it" after
    "Write the changelog in past tense." (what is written is the answer)."""
    pronoun = head_pronoun(rule)
    if pronoun is None or not object_phrase(previous_rule):
        return False
    return pronoun == "them" or _action(previous_rule) in _MAKES


def _plural(np: str) -> bool:
    last = np.split()[-1].lower()
    return last.endswith("s") and not last.endswith("ss")


def _the(np: str) -> str:
    """"your migration" -> "the migration": the rule is kept for later tasks too."""
    return re.sub(r"^(?:your|our|my|this|that|a|an)\s+", "the ", np.strip(), flags=re.I) \
        if not _plural(np) else re.sub(r"^(?:your|our|my|these|those)\s+", "the ", np.strip(),
                                       flags=re.I)


def _with(rule: str, pronoun: str, np: str | None) -> str | None:
    """`rule` with its pronoun replaced by `np`, or None when the number does not agree."""
    if not np or _plural(np) != (pronoun == "them"):
        return None
    read = _with_subject(rule, _the(np))
    return read if read != rule else None


def read_from_critique(rule: str, before: str | None) -> str | None:
    """`rule` with its object pronoun read from the text just `before` it, or None: the
    subject of a description ("The error message is unclear") or, when `before` is praise that
    asks for nothing, the thing it ends on ("Nice work on the migration!")."""
    pronoun = head_pronoun(rule)
    if pronoun is None or not before or not before.strip():
        return None
    text = before.strip()
    read = _with(rule, pronoun, subject_of(text))
    if read is None and _PRAISE_RE.search(text) and not asks_something(text):
        # Only praise names what "it" is ("Nice work on the migration!"): after "It's hard to
        # follow in the narrow column." the thing at the end is no antecedent.
        found = _LAST_NP.search(text)
        read = _with(rule, pronoun, found.group("np") if found else None)
    return read


def read_from_task(rule: str, task: str | None) -> str | None:
    """`rule` with its object pronoun read from the task, or None: what the task makes ("Write
    the database migration" -> "the database migration"), or the act itself for a verb in
    "-ate" ("Migrate the users table" -> "the migration of the users table"). Only for a rule
    the critique opens with: after a sentence of its own, "it" is mostly something that
    sentence names ("The actual fix ... doesn't show up until the fifth paragraph. Put it at
    the top." is not about the task's troubleshooting page; on the critique-guidelines set
    four of seven such readings were wrong)."""
    pronoun = head_pronoun(rule)
    found = _TASK.match(task or "")
    if pronoun is None or not found:
        return None
    verb, np = found.group("verb").lower(), found.group("np")
    if not re.match(r"^(?:the|a|an|our|my|your|this|that|these|those)\s", np, re.I):
        np = f"the {np}"  # "Draft customer email" -> "the customer email"
    if verb in _MAKES:
        return _with(rule, pronoun, np)
    if pronoun == "it" and verb.endswith("ate") and _lemma(verb) == verb and len(verb) > 4:
        return _with(rule, pronoun, f"the {verb[:-1]}ion of {_the(np)}")
    return None
