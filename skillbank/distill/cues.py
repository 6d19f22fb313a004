"""Where a rule's change cue may stand: its own clause of the critique sentence.

Review of session 20: a cue anywhere in the sentence made a compatible second rule a
correction. "Now that we publish releases, add a changelog entry to every pull request."
superseded "Add a test to every pull request." ("now that" gives a reason); "Actually, the
release notes look great, write the changelog in Markdown as well." superseded "Write the
release notes in Markdown." (the "actually" is the praise's, and "as well" adds a rule).
"""

from __future__ import annotations

import re

from skillbank.distill.relations import _content

#: "Now that we publish releases, ..." gives a reason, not a change.
_REASON_RE = re.compile(r"\bnow that\b[^,;]*", re.I)

#: "... too", "... as well", "also ...": a rule beside the old one, never a change of it.
_ADDITION_RE = re.compile(r"\b(?:too|as well|also|in addition)\b", re.I)

#: A clause that is only a cue ("Actually,", "From now on,"): it belongs to the clause after it.
_CUE_ONLY = re.compile(r"^\W*(?:actually|from now on|going forward|moving forward|"
                       r"from today|as of (?:today|now)|now)\W*$", re.I)


def _clauses(said: str) -> list[str]:
    return [c for c in re.split(r"(?<=[,;:.!?])\s+", said or "") if c.strip()]


def rule_clause(said: str, rule: str) -> str:
    """The clauses of `said` that speak of `rule` (share a content word with it), each with
    the cue-only clause before it ("Actually, put ..."); `said` itself when none does."""
    clauses = _clauses(said)
    words = set(_content(rule))
    keep = {i for i, c in enumerate(clauses) if words & set(_content(c))}
    for i in sorted(keep):
        j = i
        while j > 0 and _CUE_ONLY.match(clauses[j - 1]):
            j -= 1
            keep.add(j)
    if not keep:
        return said or ""
    return " ".join(clauses[i] for i in sorted(keep))


def cue_scope(sentence: str | None, rule: str) -> str | None:
    """The text a change cue of `rule` may be read from: its own clause of `sentence` and the
    rule, with reasons ("now that ...") set aside; None for an additional rule ("too", "as
    well", "also"), which changes nothing."""
    clause = rule_clause(sentence, rule) if sentence else ""
    if _ADDITION_RE.search(clause) or _ADDITION_RE.search(rule):
        return None
    return _REASON_RE.sub(" ", f"{clause} {rule}").strip()
