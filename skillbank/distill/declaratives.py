"""Plain-language corrections, said as news rather than as orders, read as imperative rules.

People announce a change the way they would tell a colleague: "We changed the confidentiality
term to five years.", "We moved the weekly report to Mondays.", "We switched from Jest to
Vitest for unit tests.", "The confidentiality term is five years now, not three.", "No more
Jest; use Vitest.", "polars is our standard now". None of them starts with an imperative, so
each was ignored as "praise" and the rule it replaced kept being served (learning-loop hunt,
session 20, defect 3). Each shape here has one fixed rewrite, tried before the imperative test:

* "we changed / set / updated / raised / lowered X to Y" -> "Set X to Y";
* "we moved X to Y" -> "Move X to Y"; "we switched X to Y" -> "Switch X to Y";
* "we switched / moved / migrated / changed from Z to Y (for W)" -> "Use Y instead of Z (for W)";
* "X is Y now, not Z" / "X is now Y" -> "Make X Y, not Z" (a news sentence without a rejected
  value needs a number in Y: "The build is green now." is a report, not a rule);
* "X is our standard / default now" -> "Use X";
* "no more X" -> "Do not use X" ("no more X-ing Y" -> "Stop X-ing Y").

The change cue stays in the critique sentence, which :func:`skillbank.distill.supersession.
overrules` reads ("we changed", "no more", "is ... now", "actually").
"""

from __future__ import annotations

import re

from skillbank.distill.rewrite import (_DISCOURSE_RE, _FINITE_RE, _NO_IDIOMS, _guard, _np_ok,
                                       _obj_np, _strip_np)
from skillbank.distill.text import _finish, _words

_SET_VERBS = {"changed": "Set", "set": "Set", "updated": "Set", "raised": "Set",
              "lowered": "Set", "increased": "Set", "reduced": "Set", "bumped": "Set",
              "moved": "Move", "switched": "Switch", "shifted": "Move"}

_WE_CHANGED_RE = re.compile(
    r"^we(?:'ve| have)?\s+(?:now\s+|just\s+|recently\s+)?(?P<verb>" + "|".join(_SET_VERBS) + r")"
    r"\s+(?P<x>.+?)\s+(?:from\s+(?P<z>.+?)\s+)?to\s+(?P<y>.+)$", re.I)
_WE_SWITCHED_RE = re.compile(
    r"^we(?:'ve| have)?\s+(?:now\s+|just\s+|recently\s+)?(?:switched|moved|migrated|changed)"
    r"(?:\s+over)?\s+from\s+(?P<z>.+?)\s+to\s+(?P<y>[^,]+?)"
    r"(?P<tail>\s+(?:for|in|on|across|when|within)\s+.+)?$", re.I)
_IS_NOW_RE = re.compile(
    r"^(?P<x>.+?)\s+(?:is|are)\s+(?P<now1>now\s+)?(?P<y>.+?)(?P<now2>\s+now)?"
    r"(?P<not>,?\s+(?:not|instead of|rather than)\s+.+)?$", re.I)
_STANDARD_RE = re.compile(
    r"^(?P<x>.+?)\s+(?:is|are)\s+(?:now\s+)?(?:our|the)\s+(?:new\s+)?(?:team\s+)?"
    r"(?:standard|default|convention|go-to|choice|tool of choice)(?:\s+now)?$", re.I)
_NO_MORE_RE = re.compile(r"^no\s+more\s+(?P<x>.+)$", re.I)
#: What "no more ..." closes a review with, rather than bans.
_CLOSINGS = frozenset("questions question feedback thoughts remarks nits points".split())
#: Praise or a report of what a fix did: "No more bugs in the parser, nice work." and "No more
#: flaky tests since your fix." are good news, not bans (review of session 20: they became "Do
#: not use bugs ..." and superseded "Use tabs for indentation in Makefiles."). Not "since" or
#: "after the" alone, nor thanks: "No more Friday deploys since the outage.", "No more deploys
#: after the code freeze." and "No more emails to the whole company, thanks." are bans (second
#: review).
_NEWS_RE = re.compile(
    r"\b(?:nice|great|good|excellent|awesome|brilliant|lovely|perfect|amazing|wonderful|"
    r"fantastic|superb|kudos|well done|love|glad|happy|yay|finally|thanks to (?:you|your)|"
    r"(?:since|after) (?:you|your|(?:the|this|that) (?:fix|change|patch|refactor|update|"
    r"rewrite|pr|commit)))\b", re.I)
#: What goes away when work is done well: an outcome, not a tool or a practice to ban. Only the
#: head of the phrase is read ("hotfixes without a ticket", "conflict markers committed to
#: main" and "error codes in the responses" are practices: second review).
_OUTCOMES = frozenset(
    "bug error issue problem failure complaint crash flake warning incident regression outage "
    "typo mistake headache glitch hiccup breakage downtime leak conflict timeout delay".split())
_BAD_STATES = frozenset("flaky failing broken".split())
#: Where a "No more …" phrase's head ends: a preposition, a participle, a clause.
_HEAD_END = re.compile(r"\s(?:in|on|at|for|from|to|with|without|since|after|before|during|"
                       r"across|when|unless|until|\w+ed)\b|[;,:(]", re.I)
#: History and one-off arrangements are no standing rule (review of session 20: "We switched
#: from Python 2 to Python 3 years ago." and "We moved the meeting to Room 4 for today only."
#: became rules).
_ONCE_RE = re.compile(
    r"\b(?:ago|yesterday|last (?:year|month|week|quarter|time|sprint|night)|earlier this \w+|"
    r"back in|for (?:today|this week|this sprint|this release|now)(?: only)?|today only|"
    r"this time|just this once|for once|once only|in \d{4})\b", re.I)
#: What a "X is Y now" news sentence may set without naming the old value: a setting, not a
#: measured state ("The latency is 20 ms now." and "The team is 12 people now." are reports).
_SETTINGS = frozenset(
    "term period window limit timeout deadline day days format style size length cap quota "
    "interval frequency threshold budget retention schedule cadence version port width "
    "indent indentation rate ttl expiry duration notice policy minimum maximum max min".split())
_NUMBER_RE = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
                        r"fifteen|twenty|thirty|fifty|hundred)\b", re.I)


def declared_change(clause: str) -> str | None:
    """The clause as an imperative rule when it announces a change of practice, else None."""
    c = clause.strip().rstrip(" .!")
    prev = None
    while prev != c:
        prev = c
        c = _DISCOURSE_RE.sub("", c).strip()
    if _ONCE_RE.search(c):
        return None  # history or a one-off ("... years ago", "... for today only")
    for shape in (_we_switched, _we_changed, _our_standard, _no_more, _is_now):
        rule = shape(c)
        if rule:
            return _guard(_finish(rule))
    return None


def _we_switched(c: str) -> str | None:
    m = _WE_SWITCHED_RE.match(c)
    if not m or not _short(m.group("z")) or not _short(m.group("y")):
        return None
    return f"Use {m.group('y')} instead of {m.group('z')}{m.group('tail') or ''}"


def _we_changed(c: str) -> str | None:
    m = _WE_CHANGED_RE.match(c)
    if not m or not _np_ok(_strip_np(m.group("x")), allow_deictic=False) \
            or not _short(m.group("y")):
        return None
    verb = _SET_VERBS[m.group("verb").lower()]
    rule = f"{verb} {_obj_np(m.group('x'))} to {m.group('y')}"
    return rule + (f" instead of {m.group('z')}" if m.group("z") else "")


def _our_standard(c: str) -> str | None:
    m = _STANDARD_RE.match(c)
    x = m.group("x") if m else ""
    return f"Use {_obj_np(x)}" if m and _np_ok(_strip_np(x), allow_deictic=False) else None


def _no_more(c: str) -> str | None:
    m = _NO_MORE_RE.match(c)
    # A closing courtesy is no part of the ban ("No more emails to the whole company, thanks.")
    x = re.sub(r",?\s+(?:thanks|thank you|please|cheers)\W*$", "", m.group("x"),
               flags=re.I) if m else ""
    if not m or not 1 <= len(_words(x)) <= 6 or _FINITE_RE.search(x):
        return None
    if x.split()[0].strip(",.;:!").lower() in _NO_IDIOMS | _CLOSINGS:
        return None  # "No more comments.", "No more questions from me."
    if _NEWS_RE.search(c) or _names_outcome(x):
        return None  # "No more tabs issues in Makefiles, great.": news of a fix, not a ban
    if x.split()[0].lower().endswith("ing"):
        return f"Stop {x}"  # "No more mocking the database" -> "Stop mocking the database"
    return f"Do not use {x}"


def _names_outcome(x: str) -> bool:
    """Whether `x`'s head names an outcome ("bugs", "tabs issues", "flaky tests") rather than a
    tool or a practice ("Moment.js", "floats in the price columns", "hotfixes without a
    ticket")."""
    head = _HEAD_END.split(x, maxsplit=1)[0]
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", head)]
    if not words:
        return False
    noun = words[-1]
    return any(w in _BAD_STATES for w in words) or any(
        form in _OUTCOMES for form in (noun, noun.rstrip("s"), noun.removesuffix("es")))


def _is_now(c: str) -> str | None:
    """ "X is Y now, not Z" -> "Make X Y, not Z": only with "now" and a rejected old value or a
    number ("The confidentiality term is five years now."), never a bare state ("The build is
    green now.", "The tone is better now")."""
    m = _IS_NOW_RE.match(c)
    if not m or not (m.group("now1") or m.group("now2")):
        return None
    x, y, rejected = _strip_np(m.group("x")), m.group("y").strip(), m.group("not") or ""
    if not _np_ok(x, allow_deictic=False, max_words=6) or not _short(y) \
            or x.split()[0].lower() in ("it", "this", "that", "there", "everything"):
        return None
    if not rejected and (not _NUMBER_RE.search(y) or re.search(r"\w+er$", y)
                         or not _names_setting(x)):
        return None  # a measured state: "The latency is 20 ms now." (review of session 20)
    if re.match(r"(?:up|down)\b", y, re.I):
        return None  # "Revenue is up 10% now.": a trend, not a setting
    return f"Make {_obj_np(x)} {y}{rejected}"


def _names_setting(x: str) -> bool:
    """Whether `x` names a setting one may set ("the refund window", "the retention period")."""
    return any(w in _SETTINGS for w in re.findall(r"[a-z]+", x.lower()))


def _short(phrase: str, limit: int = 8) -> bool:
    """A value or a name, not a clause: a few words without a verb of their own."""
    return 1 <= len(_words(phrase)) <= limit and not _FINITE_RE.search(phrase)
