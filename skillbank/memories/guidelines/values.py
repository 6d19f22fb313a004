"""When two rules are one rule with another value: a number, a position, the thing after a
preposition (hunt, session 20).

"Put the summary at the end of the report." then "Put the summary at the top of the report
instead." was merged into the old rule (the same action 'put' on 'report', 'summary'), and the
block kept serving "... at the end ...": the user's newest word was lost. "Limit commit subject
lines to 72 characters." then "Commit subject lines must be at most 50 characters now." merged
too ("a paraphrase: similarity 1.00"). The template check of ``decisions.other_values`` missed
both: a trailing "instead" or "now" is a word added (another form, not another value), and the
second pair is worded differently around its number.

So a candidate is compared with a rule's value slots *before* any merge is weighed, with its
change cues set aside:

* **template**: the same words in the same places but for one or more slots filled otherwise
  (``decisions.other_values``: "... on Mondays" / "... on Thursdays");
* **number**: both rules give a number of one unit ("50 characters" / "72 characters") and say
  mostly the same things besides;
* **position**: both name a position or order (top, end, first, last, before ...) and differ
  there, saying mostly the same things besides.

What happens then (``learning._plan``): one value changed and a change cue in what the user said
("instead", "now", "from now on", "actually" ...) is a correction, so the newer rule supersedes;
otherwise the two are kept as two rules linked as related (docs/api.md: the same words with other
values are never one rule).
"""

from __future__ import annotations

import re

from skillbank.distill.cues import cue_scope
from skillbank.distill.relations import _action, _content
from skillbank.distill.relations import _plain
from skillbank.distill.rule_numbers import _numbers, _unit_kinds, _units
from skillbank.distill.supersession import CHANGE_RE
from skillbank.distill.value_kinds import POSITIONS, same_kind
from skillbank.memories.guidelines.decisions import other_values, same_wording

#: Words that only announce a change ("... at the top instead.", "... 50 characters now."),
#: set aside before two rules' values are compared. "instead of" names the old side: that is
#: ``supersession.overrules``' reading, not a cue.
_CUE_WORDS = re.compile(
    r"\b(?:from now on|going forward|moving forward|these days|from today|as of (?:today|now)|"
    r"any ?more|actually|instead(?!\s+of\b)|now)\b", re.I)

#: Share of the smaller rule's other content words (besides its values) the two must share.
SAME_MATTER = 0.6


def change_cue(said: str) -> str | None:
    """The change cue in what the user said ("instead", "now", "from now on" ...), or None."""
    found = _CUE_WORDS.search(said or "") or CHANGE_RE.search(said or "")
    return found.group(0).lower() if found else None


def rule_cue(new: str, said: str) -> str | None:
    """The change cue of the rule `new` in the sentence `said`, read from the rule's own clause
    (``cues.cue_scope``); None for an additional rule ("too", "as well", "also")."""
    scope = cue_scope(said, new)
    return change_cue(scope) if scope is not None else None


def _uncued(rule: str) -> str:
    """`rule` without its change cues and the commas they leave ("Actually, put ..." -> "put")."""
    text = _CUE_WORDS.sub(" ", _plain(rule))
    text = re.sub(r"^[\s,;:]+|\s+(?=[,.;:!?])", "", text)
    return " ".join(re.sub(r",\s*,", ",", text).split())


def _positions(rule: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z]+", rule.lower()) if w in POSITIONS)


def _same_matter(new: str, old: str) -> bool:
    """The two say mostly the same things besides their values (numbers and positions are not
    content words): at least SAME_MATTER of the smaller side, and either the same main verb or
    two shared words ("Commit subject lines must be at most 50 ..." / "Limit commit subject
    lines to 72 ...")."""
    mine = {w for w in _content(new) if not w[:1].isdigit()}
    theirs = {w for w in _content(old) if not w[:1].isdigit()}
    common = mine & theirs
    smaller = min(len(mine), len(theirs))
    if not common or len(common) < SAME_MATTER * smaller:
        return False
    return len(common) >= 2 or (_action(new) is not None and _action(new) == _action(old))


def _pair(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> tuple[str, str]:
    """The values each side has that the other lacks (all of a side's when it lacks none)."""
    return " ".join(sorted(a - b) or sorted(a)), " ".join(sorted(b - a) or sorted(b))


def _number_slot(new: str, old: str) -> list[tuple[str, str]]:
    a, b = _numbers(new), _numbers(old)
    if not a or not b or a == b:
        return []
    units_a, units_b = _units(new), _units(old)
    if not (units_a & units_b or _unit_kinds(units_a) & _unit_kinds(units_b)):
        return []  # "... 30 seconds" and "... 1000 rows" are two limits, not one changed
    if not _same_matter(new, old):
        return []
    return [_pair(a, b)]


def _position_slot(new: str, old: str) -> list[tuple[str, str]]:
    a, b = _positions(new), _positions(old)
    if not a or not b or a == b or not _same_matter(new, old):
        return []
    return [_pair(a, b)]


def changed_values(new: str, old: str) -> list[tuple[str, str]]:
    """The values `new` gives where `old` gives others, as (new, old) pairs; [] when the two are
    not one rule with other values (the same rule, or two rules about other things)."""
    a, b = _uncued(new), _uncued(old)
    if not a or not b or same_wording(a, b):
        return []
    return other_values(a, b) or _number_slot(a, b) or _position_slot(a, b)


def value_change(new: str, old: str, said: str) -> tuple[str, bool] | None:
    """(why, supersedes) when `new` is `old` with other values, else None. `said`: the critique
    sentence `new` came from, where a change cue may stand that the rule's text dropped. One
    value changed with a cue supersedes; several values, or no cue, are two rules."""
    values = changed_values(new, old)
    if not values:
        return None
    shown = ", ".join(f"{n!r} for {o!r}" for n, o in values)
    cue = rule_cue(new, said)
    # Only a value changes ("Mondays" for "Thursdays", "50" for "72", "top" for "end"); a slot
    # filled with another thing is the rule's subject ("linter" for "unit tests"): a new rule.
    if cue and len(values) == 1 and same_kind(*values[0]):
        return f"changed value: {shown}, announced by {cue!r}", True
    why = f"the same rule with other values ({shown})"
    if len(values) == 1:  # the words cannot tell a new value from another thing
        why += ("; if the new value replaces the old one, say so ('instead', 'from now on') "
                "or learn it again with replaces=<that id>")
    return why, False
