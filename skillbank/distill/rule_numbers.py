"""The numbers, units and values a rule states, and when a newer rule re-sets them.

Split from ``supersession`` (which decides whether a newer rule overrules an older one): here
are the readings of a rule's values that its ``changed number`` and ``re-set value`` cases and
the guideline memory's value slots (``memories.guidelines.values``) share: "Keep functions
under 40 lines." after "... under 50 lines." is one limit changed; "... to 30 seconds of
runtime" beside "... to 1000 rows" is a second limit.
"""

from __future__ import annotations

import re

from skillbank.distill.relations import (_action, _objects, _plain, _polarity, _stem,
                                         other_direct_objects)
from skillbank.distill.value_kinds import same_kind
from skillbank.distill.vocabulary import _PREPOSITIONS, _STOPWORDS

#: A number as a rule states it: a limit, a count, a version ("50", "3.12", "0").
_NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w])")


#: Numbers a reviewer writes as words ("Keep slides to ten bullets."), read as digits.
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())} | {
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60"}
#: ... a word alone: not in a compound ("one-line") nor a larger number ("two hundred").
_NUMBER_WORD_RE = re.compile(r"(?<![\w-])(?:" + "|".join(_NUMBER_WORDS) + r")(?![\w-])"
                             r"(?!\s+(?:hundred|thousand|million))", re.I)


def _digits(rule: str) -> str:
    """The rule in plain words with its number words as digits ("ten bullets" -> "10 bullets")."""
    return _NUMBER_WORD_RE.sub(lambda m: _NUMBER_WORDS[m.group(0).lower()], _plain(rule))


def _numbers(rule: str) -> set[str]:
    return {m.group(0).rstrip(".") for m in _NUMBER_RE.finditer(_digits(rule))}


#: What a unit measures: a limit in minutes changed to hours is one limit, changed; a limit in
#: rows beside one in seconds is two.
_UNIT_KINDS = {**{u: "time" for u in "ms millisecond second sec s minute min hour hr h day d week "
                  "month year".split()},
               **{u: "size" for u in "byte b kb kib mb mib gb gib tb tib".split()},
               **{u: "length" for u in "character char letter".split()}}


_UNIT_KINDS |= {_stem(unit): kind for unit, kind in list(_UNIT_KINDS.items())}


def _unit_kinds(units: set[str]) -> set[str]:
    """What the units (stems, as `_units` gives them) measure; an unknown unit is its own."""
    return {_UNIT_KINDS.get(u, u) for u in units}


def _units(rule: str) -> set[str]:
    """Stems of the words right after the rule's numbers ("50 lines" -> line, "5 MB" -> mb)."""
    words = re.findall(r"[a-z0-9][a-z0-9.%]*", _digits(rule).lower())
    return {_stem(nxt) for num, nxt in zip(words, words[1:])
            if _NUMBER_RE.fullmatch(num.rstrip(".")) and nxt not in _STOPWORDS
            and nxt not in _PREPOSITIONS and not nxt[:1].isdigit()}


#: A value a rule may be re-set to: a number, a weekday, a month, a time of day.
_VALUE_RE = re.compile(r"\d[\w:.]*|noon|midnight|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|"
                       r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|"
                       + "|".join(_NUMBER_WORDS), re.I)
#: "2 am", "11 pm": one time of day, written as "2am".
_TIME_OF_DAY = re.compile(r"\b(\d{1,2}(?::\d{2})?)\s+([ap]m)\b", re.I)


def _chosen(rule: str) -> str:
    """The rule without the old value it rejects at its end ("..., not 14", "instead of X")."""
    return re.sub(r",?\s+(?:not|instead of|rather than)\s+[^,;]+$", "", rule.rstrip(" ."))


def resets_value(new: str, old: str) -> bool:
    """Whether `new` re-sets the value of `old`'s thing with a verb of its own: "Move the
    weekly report to Mondays." after "Send the weekly report on Fridays." (learning-loop hunt
    #3: "We moved the weekly report to Mondays." was merged into the Friday rule). Only when
    what differs is a value on both sides, so "Move the weekly report's charts to the
    appendix" changes nothing of the Friday rule.

    The old rule's verb may come back as a noun: "We moved payments deploys to Tuesdays." re-sets
    "Deploy the payments service on Mondays." (hunt of session 23: it was merged, the Monday rule
    served); then the old rule may name one more thing the news leaves out ("service"). "2 am"
    is one time of day, as "2am" is, and so are "noon" and "midnight"."""
    action = _action(_plain(new))
    if action not in ("set", "move", "change", "switch", "make"):
        return False
    new, old = _TIME_OF_DAY.sub(r"\1\2", new), _TIME_OF_DAY.sub(r"\1\2", old)
    mine = _objects(_plain(_chosen(new)), action)
    theirs = _objects(_plain(old).split(maxsplit=1)[-1], None)  # its verb may be unknown: "Hold"
    old_verb = _action(_plain(old))
    named_verb = old_verb is not None and old_verb in mine - theirs
    ours = mine - theirs - ({old_verb} if named_verb else set())
    others = theirs - mine
    values = {w for w in others if _VALUE_RE.fullmatch(w)}
    # One kind on both sides: "by 10am" is not re-set by "to Mondays" (review of session 20).
    return (bool(ours) and bool(values) and same_kind(ours, values)
            and all(_VALUE_RE.fullmatch(w) for w in ours)
            and len(others - values) <= (1 if named_verb and mine & theirs else 0))


def other_limits(new: str, old: str) -> bool:
    """Both rules set a number, of units that measure other things: "Limit ad-hoc queries to
    30 seconds of runtime." is a second limit beside "... to 1000 rows.", neither a change nor a
    paraphrase; "... 1 hour" after "... 5 minutes" is the same limit changed."""
    a, b = _units(new), _units(old)
    return (bool(a) and bool(b) and not a & b and not _unit_kinds(a) & _unit_kinds(b)
            and _numbers(new) != _numbers(old))


def number_change(new: str, old: str) -> str | None:
    """Why `new` replaces `old` by a changed number, or None.

    "Keep functions under 40 lines." after "Keep functions under 50 lines." is the same action on
    the same objects, so it was merged and the new limit lost (issue #25 item 5). A rule that
    says the same thing with another number (a limit, a count, a version) replaces the older
    one: the same main verb and polarity, mostly the same objects besides the numbers (as
    ``same_action_object`` reads them), and each rule has a number the other lacks. The same
    numbers, or numbers only added ("... and 4 arguments"), are no replacement."""
    a, b = _numbers(new), _numbers(old)
    if not a or not b or a <= b or b <= a:
        return None
    if other_limits(new, old):
        return None  # "... to 30 seconds of runtime" is another limit than "... to 1000 rows"
    if other_direct_objects(_plain(new), _plain(old)):
        return None  # "Offer a discount code for ... 7 days" is not "Offer a refund ... 14 days"
    action = _action(_plain(new))
    if action is None or action != _action(_plain(old)):
        return None
    if _polarity(_plain(new)) != _polarity(_plain(old)):
        return None
    mine = {w for w in _objects(_digits(new), action) if not w[:1].isdigit()}
    theirs = {w for w in _objects(_digits(old), action) if not w[:1].isdigit()}
    common = mine & theirs
    if not common or len(common) < 0.6 * min(len(mine), len(theirs)):
        return None
    if (mine - theirs - _units(new)) and (theirs - mine - _units(old)):
        return None  # "... between top-level functions" is another place than "... methods"
    return (f"changed number: the same action {action!r} on "
            f"{', '.join(repr(w) for w in sorted(common))}, now {', '.join(sorted(a - b))} "
            f"instead of {', '.join(sorted(b - a))}")
