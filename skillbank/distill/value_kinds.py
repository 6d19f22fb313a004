"""What kind of value a word is: a number, a weekday, a month, a time of day or a position.

A rule "re-set" to another value is only a changed rule when the old and the new value are of
one kind (review of session 20): "Send the weekly report by 10am." was superseded by "We moved
the weekly report to Mondays." (a time of day "re-set" by a weekday: two settings, not one
changed), and "Run the unit tests before every commit." by "Run the linter before every commit
now." (the slot that differed was the rule's subject, not a value at all).
"""

from __future__ import annotations

import re

_WEEKDAY = re.compile(r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekdays?|weekends?", re.I)
_MONTH = re.compile(r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|"
                    r"aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?",
                    re.I)
_TIME = re.compile(r"\d{1,2}(?::\d{2})?(?:am|pm|h)|\d{1,2}:\d{2}|noon|midnight", re.I)
_NUMBER = re.compile(r"\d[\d.,]*%?|zero|one|two|three|four|five|six|seven|eight|nine|ten|"
                     r"eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|"
                     r"nineteen|twenty|thirty|forty|fifty|sixty|hundred|thousand", re.I)

#: Position and order words: the value of "where" or "when" a rule puts something.
POSITIONS = frozenset(
    "top bottom end start beginning first last front middle above below before after "
    "left right early earlier late later".split())


def value_kind(word: str) -> str | None:
    """"time", "weekday", "month", "number" or "position" for a value word, else None (a
    thing, a tool, a subject: "linter", "email")."""
    word = word.strip(".,;:!?").lower()
    for kind, pattern in (("time", _TIME), ("weekday", _WEEKDAY), ("month", _MONTH),
                          ("number", _NUMBER)):
        if pattern.fullmatch(word):
            return kind
    return "position" if word in POSITIONS else None


def kinds(words: str | list[str] | set[str] | frozenset[str]) -> set[str | None]:
    """The kinds of `words` (a string is split on blanks); None among them for a non-value."""
    items = words.split() if isinstance(words, str) else words
    return {value_kind(w) for w in items}


def same_kind(new: str | set[str] | frozenset[str], old: str | set[str] | frozenset[str]
              ) -> bool:
    """Both sides are values, of one kind each and the same kind: "Mondays"/"Thursdays",
    "50"/"72", "top"/"end"; not "10am"/"Mondays", not "linter"/"unit tests"."""
    a, b = kinds(new), kinds(old)
    return bool(a) and a == b and len(a) == 1 and None not in a
