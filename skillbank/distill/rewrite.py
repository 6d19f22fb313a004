"""Critique -> rules: clause splitting and the fixed rewrite of each advice shape into an
imperative rule (see the package docstring for the list of shapes and guards).
"""

from __future__ import annotations

import re

from skillbank.distill.morphology import _is_base_verb, _lemma
from skillbank.distill.text import _finish, _words
from skillbank.distill.vocabulary import (
    _DEICTIC,
    _DETERMINERS,
    _NOT_IMPERATIVE_NEXT,
    IRREGULAR_PAST,
    NOT_INSTRUCTION_OPENERS,
    _NOT_IMPERATIVE_THIRD,
    _NP_ADVERBS,
    _PERSON_SUBJECT,
    _PREPOSITIONS,
    _VERBS,
)


_FINITE_RE = re.compile(
    r"\b(?:is|are|was|were|has|have|had|does|do|did|can|will|would|could|isn't|aren't|wasn't|"
    r"weren't|doesn't|don't|didn't|won't|can't)\b",
    re.I,
)
_SCORE_RE = re.compile(
    r"^\s*(?:(?:overall\s+)?(?:score|rating|grade|mark)s?\s*[:=-]?\s*)?"
    r"\d+(?:\.\d+)?\s*(?:/|out of)\s*\d+(?:\.\d+)?\s*(?:overall)?[.!]?\s*$|"
    r"^\s*(?:score|rating|grade)\s*[:=-]?\s*\d+(?:\.\d+)?\s*[.!]?\s*$",
    re.I,
)
_VAGUE_WORDS = frozenset(
    "it this that these those them things thing stuff up going on better nicer good great "
    "cleaner stronger more less pop shine work right fine the a an bit little some again "
    "somehow differently".split()
)
_VAGUE_VERBS = frozenset(
    "make do fix improve change tweak polish clean rework redo keep look use try consider".split()
)
_ONE_OFF_VERBS = frozenset("fix correct update change adjust tweak get redo".split())
_NO_IDIOMS = frozenset(
    "one need problem problems issue issues change changes complaint complaints worries worry "
    "concerns concern notes comment comments way idea doubt big longer more matter such".split()
)
_PRAISE_RE = re.compile(
    r"\b(?:good|great|nice|excellent|fantastic|awesome|lovely|solid)\s+(?:job|work)\b|"
    r"\bwell done\b|\bkeep (?:it )?up\b|\bthank(?:s| you)\b",
    re.I,
)

_DISCOURSE_RE = re.compile(
    r"^(?:also|and|but|so|then|finally|either|still|however|ideally|honestly|overall|otherwise|"
    r"again|plus|oh|ok|okay|instead(?=,)|lastly|additionally|moreover|next time|in future|"
    r"in the future|going forward|from now on|for next time|for future reference|for the future|"
    r"as a rule|in general|generally|in short|ultimately|really|actually|basically)\b[,:]?\s+",
    re.I,
)


def _strip_np(np: str) -> str:
    np = np.strip().strip(",")
    np = re.sub(r"^(?:but|and|so|also|then|still|now)\s+", "", np, flags=re.I)
    return np


def _np_ok(np: str, *, allow_deictic: bool = True, max_words: int = 8) -> bool:
    """A plausible noun-phrase subject: short, no clause inside, not a person."""
    words = _words(np)
    if not words or len(words) > max_words:
        return False
    if re.search(r",|\b(?:if|when|because|since|which|who|so)\b", np, re.I):
        return False
    if _FINITE_RE.search(np) or re.search(r"\b(?:that|it|there|what|who|here|he|she)['’]s\b", np, re.I):
        return False
    first, last = words[0].lower(), words[-1].lower()
    if first in _PERSON_SUBJECT or first in ("you", "we"):
        return False
    if first in _PREPOSITIONS or (len(words) == 1 and first in _DETERMINERS):
        return False
    if last in _NP_ADVERBS:
        return False  # "billing now has to ...": a narrative, not a subject to advise about
    if not allow_deictic and first in _DEICTIC and len(words) == 1:
        return False
    return True


def _subject(np: str) -> str:
    """Drop a leading prepositional phrase before a deictic subject: 'For an API this' -> 'this'."""
    np = _strip_np(np)
    m = re.match(r"^(?:for|in|on|at|with|from|by|after|before|during|as)\b.*?\b(this|it|that|these|those)$", np, re.I)
    return m.group(1) if m else np


def _obj_np(np: str) -> str:
    """A subject noun phrase reused as an object: lower-case its article, map pronouns."""
    np = np.strip()
    low = np.lower()
    if low in ("it", "this", "that"):
        return "it"
    if low in ("these", "those", "they"):
        return "them"
    first = np.split()[0] if np.split() else ""
    if re.match(r"^(?:the|a|an|this|that|these|those|each|every|all|your|our|its|any|some)\b", np, re.I):
        return np[:1].lower() + np[1:]
    if len(first) > 1 and first[0].isupper() and first[1:].islower() and first.isalpha():
        return np[:1].lower() + np[1:]  # capitalised only because it opened the sentence
    return np


def _starts_imperative(text: str) -> bool:
    words = _words(text)
    if not words:
        return False
    if len(words[0]) > 1 and words[0].isupper():
        return False  # "JOIN ... ON keeps them apart": code or an acronym, not a verb
    first = words[0].lower()
    if first in ("always", "never"):
        # "Never use X" is advice; "never says where X comes from" is a complaint.
        nxt = words[1].lower() if len(words) > 1 else ""
        return (_is_base_verb(nxt) or nxt in ("be", "do", "let", "just", "again", "ever")
                or _plausible_base_verb(words[1] if len(words) > 1 else "", words[2:]))
    if first in ("don't", "dont"):
        return True
    if first == "do" and len(words) > 1 and words[1].lower() == "not":
        return True
    if first == "back" and len(words) > 2 and words[1].lower() == "up":  # not "Back in March"
        return words[2].lower() in _OBJECT_OPENERS  # "Back up the database ..." (session 37)
    if not _is_base_verb(first):
        return _unlisted_verb(words)
    if len(words) > 1 and words[1].lower() in _NOT_IMPERATIVE_NEXT:
        return False
    if len(words) > 2 and words[2].lower() in _NOT_IMPERATIVE_THIRD:
        return False
    if first == "thank" and len(words) > 1 and words[1].lower() == "you":
        return False
    return True


#: What an unlisted verb's object opens with: "Mask the card number", "Backfill every gap".
_OBJECT_OPENERS = _DETERMINERS | frozenset("its their this that these those my his her".split())
#: A verb soon after the first word's noun phrase: that word was no verb ("Pity the chart is").
_FINITE_SOON_RE = re.compile(
    r"^(?:\S+\s+){1,4}?(?:is|are|was|were|has|have|had|does|do|did|can|will|would|could|"
    r"isn't|aren't|wasn't|weren't|doesn't|don't|didn't|won't|can't|needs|seems|looks)\b", re.I)


def _unlisted_verb(words: list[str]) -> bool:
    """A capitalised first word that the verb list lacks, read as an imperative verb when its
    object follows ("Mask the card number to its last four digits.", "Backfill the missing
    days.", "Vendor the dependencies."). Users met such a second instruction dropped as "praise"
    (learning-loop hunt #6); a closed list never holds every verb of every trade. Not one:
    a function word, a feeling or a verdict ("Love the charts", "Shame the legend is gone"), an
    inflected form ("Masks the ...", "Loved the ...") and a word whose noun phrase has a verb of
    its own ("Pity the chart is small")."""
    first = words[0]
    low = first.lower()
    if (len(words) < 3 or not re.fullmatch(r"[A-Z][a-z]+(?:-[a-z]+)*", first)
            or low in NOT_INSTRUCTION_OPENERS or low in IRREGULAR_PAST
            or words[1].lower() not in _OBJECT_OPENERS):
        return False
    if low.endswith(("ing", "ed", "ly")) or (low.endswith("s") and not low.endswith(("ss", "us"))):
        return False
    return not _FINITE_SOON_RE.match(" ".join(words[1:]))


_NOT_VERBS_AFTER_NEVER = frozenset(
    "the a an this that these those it its they we you he she i my our your their his her "
    "been being had was were is are has have ever again once enough really mind".split())


def _plausible_base_verb(word: str, rest: list[str]) -> bool:
    """A word after "Always"/"Never" that reads as an imperative verb although it is not in the
    vocabulary ("Never hotfix production"): lowercase, not an inflected form ("says", "used",
    "going") and followed by something for it to act on. Short imperatives are rules."""
    w = word
    if not w or not w.isalpha() or not w.islower() or w in _NOT_VERBS_AFTER_NEVER or not rest:
        return False
    if (w.endswith("s") and not w.endswith("ss")) or w.endswith(("ed", "ing", "ly")):
        return False
    return True


def _guard(rule: str) -> str | None:
    """Reject imperatives that carry no reusable advice."""
    words = [w.lower() for w in _words(rule)]
    if not words:
        return None
    if words[0] in ("always", "never") and len(words) > 1:
        words = words[1:]
    elif words[:2] == ["do", "not"]:
        words = words[2:]
    if not words:
        return None
    verb, rest = words[0], words[1:]
    if not rest and verb not in ("proofread",):
        return None  # a lone verb: "Fix." "Improve."
    if verb in _VAGUE_VERBS and all(w in _VAGUE_WORDS for w in rest):
        return None  # "Make it pop.", "Keep it up.", "Fix this."
    if verb in _ONE_OFF_VERBS and rest and rest[0] in _DEICTIC:
        return None  # "Fix that row.": a one-off correction of this artefact
    if _PRAISE_RE.search(rule) and len(words) <= 6:
        return None
    return rule


#: How a reproach says it happened before: "(once / yet) again", "as usual", "for the third time".
_REPROACH_TAIL = re.compile(
    r"[\s,]+(?:(?:once|yet|all over)\s+again|again|as usual|as always"
    r"|for the (?:\w+|\d+(?:st|nd|rd|th)) time)\s*([.!?]*)\s*$", re.I)


def _unreproached(text: str) -> str:
    """The reproached thing without the reproach: "You forgot to add tests again." was stored
    and served as the rule "Add tests again." (soak hunt #7); the rule is "Add tests."."""
    return _REPROACH_TAIL.sub(r"\1", text).strip()


def _imperative_text(text: str) -> str | None:
    """The clause as an imperative, if it starts with one (after 'please' etc.)."""
    t = text.strip()
    t = re.sub(r"^(?:please|pls|kindly)\s*,?\s+", "", t, flags=re.I)
    t = re.sub(r"^(?:try to|remember to|be sure to|make sure to|don't forget to|do not forget to)\s+",
               "", t, flags=re.I)
    emphatic = re.match(r"^do\s+(?P<verb>[a-z]+)\b", t, re.I)
    if emphatic and _is_base_verb(emphatic.group("verb").lower()):
        # "do retry on 5xx errors" (after "Don't retry on 4xx errors but"): an emphatic "do" on
        # an imperative was read as no instruction and the rule was dropped without a word
        # (hunt-loop-shared #3, session 31).
        t = t[emphatic.start("verb"):]
    if not _starts_imperative(t):
        return None
    t = re.sub(r"^(?:don't|dont)\b", "Do not", t, flags=re.I)
    return _guard(_finish(t))


def _after_participle(rest: str) -> tuple[str | None, str, str]:
    """'silently skipped in CI' -> ('skip', ' in CI', 'silently'): lemma, tail, adverb."""
    m = re.match(r"^(?:(\w+ly)\s+)?([\w-]+)(.*)$", rest.strip(), re.S)
    if not m:
        return None, "", ""
    adverb, word, tail = m.groups()
    lemma = _lemma(word)
    if lemma is None:
        return None, "", ""
    return lemma, tail, adverb or ""


def _with_adverb(adverb: str, verb: str) -> str:
    return f"{adverb} {verb}" if adverb else verb


_PARTICIPLE_END = ("ed", "en", "wn", "lt", "pt", "ut", "et", "id", "ld", "ng", "ck", "ad", "ot", "it")


#: "do that/this/so/it" and when: "do that before every push", "and do it before each commit".
_DO_THAT_WHEN = re.compile(r"^(?:(?:and|but|then)\s+)?do\s+(?:that|this|so|it)\s+(?=(?:before|after|"
                           r"when|whenever|once|every|each|on|at|during|until|first|too|again)\b)",
                           re.I)


def _rewrite(clause: str, depth: int = 0) -> str | None:  # noqa: C901 - a flat list of shapes
    """One clause -> an imperative rule text, or None when it gives no advice.

    The shapes are tried in order; the first that fits wins. Each is commented with an example.
    """
    if depth > 4:
        return None
    c = clause.strip().strip("-–—*• ").strip()
    if not c or not re.search(r"[A-Za-z]", c) or _SCORE_RE.match(c):
        return None
    question = c.rstrip().endswith("?")
    c = c.rstrip(" .!?")
    # Trailing / leading politeness and discourse markers.
    c = re.sub(r",?\s+(?:please|though|thanks|either|too|as well)$", "", c, flags=re.I)
    prev = None
    while prev != c:
        prev = c
        c = _DISCOURSE_RE.sub("", c).strip()
    c = re.sub(r"^(?:please|pls|kindly)\s*,?\s+", "", c, flags=re.I)
    if not c:
        return None
    low = c.lower()

    # Questions: only requests and "why not" suggestions carry advice.
    if question:
        # "Why not use a CTE?" / "How about adding a test?"
        m = re.match(r"^(?:why not(?: just)?|why don't you(?: just)?|how about|what about)\s+(.+)$", c, re.I)
        if m:
            inner = m.group(1)
            lemma, tail, _ = _after_participle(inner)
            if lemma and inner.split()[0].lower().endswith("ing"):
                return _imperative_text(lemma + tail)
            return _imperative_text(inner)
        # "Can you add a test for the empty case?"
        m = re.match(r"^(?:can|could|would|will)\s+(?:you|we)\s+(?:please\s+)?(?:also\s+|just\s+)?(.+)$", c, re.I)
        if m:
            return _imperative_text(m.group(1))
        return None

    # "...; do that before every push": an act named before, with when to do it. A rule that
    # points back (the distiller joins it to the rule before it); it was dropped without a word
    # ("Run the tests; do that before every push." kept "Run the tests." only, session 37).
    if _DO_THAT_WHEN.match(c):
        act = re.sub(r"^(?:and|but|then)\s+", "", c, flags=re.I)
        return _finish(act[:1].upper() + act[1:])

    # "Use X", "Never do Y", "Please add Z".
    direct = _imperative_text(c)
    if direct:
        return direct

    # "One message per slide." -> "Keep one message per slide." (a limit stated without a verb)
    m = re.match(r"^(one|a single|no more than \w+|at most \w+|\d+)\s+([\w-]+(?:\s+[\w-]+){0,3}?)"
                 r"\s+per\s+([\w-]+(?:\s+[\w-]+){0,2})$", c, re.I)
    if m:
        return _finish(f"Keep {m.group(1).lower()} {m.group(2)} per {m.group(3)}")

    # "Instead of X, Y" -> "Y instead of X".
    m = re.match(r"^instead of\s+(.+?),\s*(.+)$", c, re.I)
    if m:
        inner = _rewrite(m.group(2), depth + 1)
        if inner:
            return _finish(inner.rstrip(".") + " instead of " + m.group(1))
        if len(_words(m.group(2))) <= 8 and not _FINITE_RE.search(m.group(2)):
            return _finish(f"Use {m.group(2)} instead of {m.group(1)}")
        return None

    # "You should have used X" -> "Use X"; "We must not X" -> "Do not X".
    m = re.match(
        r"^(?:you|we)(?:'d| would)?\s+(?:really\s+|probably\s+|definitely\s+)?"
        r"(should|must|need to|needs to|ought to|have to|has to|will want to|want to|might want to|may want to)"
        r"(\s+not|n't)?\s+(?:(always|never|also|really|probably|definitely|just)\s+)?(have\s+)?(.+)$",
        c, re.I,
    )
    if m and not re.match(r"^(?:you|we)\s+(?:want|need) to know", c, re.I):
        _, neg, adv, have, rest = m.groups()
        if have:
            lemma, tail, adverb = _after_participle(rest)
            if not lemma:
                return None
            rest = lemma + tail
        base = _imperative_text(rest)
        if not base:
            return None
        body = base[:-1]
        if neg:
            return _guard(_finish("Do not " + body[:1].lower() + body[1:]))
        if adv and adv.lower() in ("always", "never"):
            return _guard(_finish(adv.capitalize() + " " + body[:1].lower() + body[1:]))
        return base
    if re.match(r"^(?:you|we)\s+(?:should|must)(?:n't| not)\b", c, re.I):
        return None

    # "It would be better to X", "Better to X", "It's best if you X".
    m = re.match(
        r"^(?:(?:it|this|that)(?:'d|'s| would| is| will)?\s+(?:be\s+)?|)(?:much |far |a lot |probably |)"
        r"(?:better|best|nicer|clearer|safer|cleaner|wiser|preferable|good|simpler|easier)\s+"
        r"(?:to|if you|if we)\s+(.+)$",
        c, re.I,
    )
    if m:
        rest = m.group(1)
        first = rest.split()[0].lower() if rest.split() else ""
        if first not in _VERBS:
            lemma, tail, _ = _after_participle(rest)
            if lemma:
                rest = lemma + tail
        return _imperative_text(rest)

    # "I'd split X", "I would suggest adding X", "I recommend you X".
    if re.match(r"^i(?:'d|\s+would|\s+suggest|\s+recommend|\s+advise|\s+propose)\b", low):
        m = re.match(
            r"^(?:i(?:'d| would)|i)\s+(?:also\s+|strongly\s+|really\s+)?"
            r"(?:(?:suggest|recommend|prefer|advise|propose)(?:\s+that)?\s+(?:you\s+|we\s+)?|"
            r"(?:rather|like)\s+(?:you\s+|us\s+)?(?:to\s+)?|)(.+)$",
            c, re.I,
        )
        if m:
            rest = m.group(1)
            first = rest.split()[0].lower() if rest.split() else ""
            if first.endswith("ing"):
                lemma, tail, _ = _after_participle(rest)
                if lemma:
                    rest = lemma + tail
            return _imperative_text(rest)
    # "My suggestion is to X".
    m = re.match(r"^(?:my\s+|one\s+|a\s+)?(?:suggestion|recommendation|advice|tip)\s+(?:is|would be)\s+(?:to\s+)?(.+)$", c, re.I)
    if m:
        return _imperative_text(m.group(1))

    # "You forgot to X" -> "X"; "You missed the tests" -> "Include the tests"; "You didn't X" -> "X".
    m = re.match(r"^you(?:'ve)?\s+(?:forgot|forgotten|neglected|failed)\s+to\s+(.+)$", c, re.I)
    if m:
        return _imperative_text(_unreproached(m.group(1)))
    m = re.match(r"^you(?:'ve)?\s+(?:forgot|forgotten|missed|left out|omitted|skipped)\s+(?:about\s+)?(.+)$", c, re.I)
    if m and len(_words(m.group(1))) <= 10:
        return _guard(_finish("Include " + _unreproached(m.group(1))))
    m = re.match(r"^you\s+(?:didn't|did not|never)\s+(.+)$", c, re.I)
    if m:
        return _imperative_text(_unreproached(m.group(1)))

    # Team conventions: "We're dropping X" -> "Drop X"; "We no longer X" -> "Do not X"; "We use X".
    m = re.match(r"^we(?:'re| are)\s+(?:now\s+)?(dropping|moving to|moving away from|switching to|standardi[sz]ing on|using)\s+(.+)$", c, re.I)
    if m:
        verb = {"dropping": "Drop", "moving to": "Move to", "moving away from": "Move away from",
                "switching to": "Switch to", "using": "Use"}.get(m.group(1).lower(), "Standardise on")
        return _guard(_finish(f"{verb} {m.group(2)}"))
    m = re.match(r"^we\s+(?:now\s+)?(?:(no longer|don't|do not|never)\s+)?(always\s+|generally\s+|usually\s+)?(\w+)(.*)$", c, re.I)
    if m and m.group(3).lower() in _VERBS:
        neg, adv, verb, tail = m.groups()
        text = verb + tail
        if neg:
            return _guard(_finish("Do not " + text))
        if adv and adv.strip().lower() == "always":
            return _guard(_finish("Always " + text))
        return _guard(_finish(text))

    # Subjectless complaint "never acknowledges X" -> "Always acknowledge X".
    m = re.match(r"^never\s+(\w+)(.*)$", c, re.I)
    if m and m.group(1).lower().endswith("s"):
        lemma = _lemma(m.group(1))
        if lemma:
            return _guard(_finish(f"Always {lemma}{m.group(2)}"))

    # "<thing> now V" (a new convention): "Replies now sign off as X" -> "Make replies sign off as X".
    m = re.match(r"^(?P<np>.+?)\s+now\s+(?P<verb>\w+)(?P<tail>.*)$", c, re.I)
    if m and _np_ok(_strip_np(m.group("np")), allow_deictic=False, max_words=6):
        lemma = _lemma(m.group("verb"))
        if lemma and m.group("verb").lower() not in ("is", "are", "has", "have"):
            return _guard(_finish(f"Make {_obj_np(_strip_np(m.group('np')))} {lemma}{m.group('tail')}"))

    # "<thing> should / must / needs to (not) ...".
    m = re.match(
        r"^(?P<np>.+?)\s+(?P<modal>should|must|needs to|need to|has to|have to|ought to|shouldn't|mustn't)"
        r"(?P<neg>\s+not|\s+never)?(?:\s+(?:always|also|really|probably|just|still|now))?\s+(?P<rest>.+)$",
        c, re.I,
    )
    if m and _np_ok(_subject(m.group("np"))):
        np = _obj_np(_subject(m.group("np")))
        neg = bool(m.group("neg")) or m.group("modal").lower().endswith("n't")
        rest = m.group("rest").strip()
        pm = re.match(r"^(?:have\s+)?been\s+(.+)$|^be\s+(.+)$", rest, re.I)
        if pm:
            after = pm.group(1) or pm.group(2)
            lemma, tail, adverb = _after_participle(after)
            first = _words(after)[0].lower() if _words(after) else ""
            if lemma and first not in _VERBS and not first.endswith("ly"):
                # Passive: "The prompts should be removed" -> "Remove the prompts".
                text = f"{_with_adverb(adverb, lemma)} {np}{tail}"
                return _guard(_finish(("Do not " if neg else "") + text))
            if lemma and first.endswith("ly"):
                text = f"{_with_adverb(adverb, lemma)} {np}{tail}"
                return _guard(_finish(("Do not " if neg else "") + text))
            # "Times must be in UTC" -> "Keep times in UTC" (a place or state, not a quality).
            if re.match(r"^(?:in|on|at(?!\s+(?:least|most))|under|within|inside|below|above)\b",
                        after, re.I):
                return _guard(_finish(("Do not " if neg else "") + f"keep {np} {after}"))
            # "Commands should be bare" -> "Make commands bare".
            return _guard(_finish(("Do not " if neg else "") + f"make {np} {after}"))
        hm = re.match(r"^have\s+(.+)$", rest, re.I)
        if hm:
            lemma, tail, _ = _after_participle(hm.group(1))
            first = _words(hm.group(1))[0].lower() if _words(hm.group(1)) else ""
            if lemma and first.endswith(_PARTICIPLE_END) and first not in _VERBS:
                rest = lemma + tail  # "should have used X": perfect tense
            # else "have" is the main verb: "Slides should have one idea each".
        verb = _words(rest)[0].lower() if _words(rest) else ""
        if not re.match(r"^[a-z-]+$", verb):
            return None
        # "Shell commands should start with $" -> "Make shell commands start with $".
        if neg:
            return _guard(_finish(f"Do not let {np} {rest}"))
        return _guard(_finish(f"Make {np} {rest}"))

    # "<thing> is missing" -> "Include <thing>"; "Missing X" -> "Include X".
    m = re.match(r"^(?P<np>.+?)\s+(?:is|are)\s+(?:still\s+|also\s+)?missing(?:\s+(?P<what>.+))?$", c, re.I)
    if m and _np_ok(_subject(m.group("np"))):
        np = _subject(m.group("np"))
        what = m.group("what")
        if what and what.split()[0].lower() in _PREPOSITIONS:
            return _guard(_finish(f"Include {_obj_np(np)} {what}"))  # "Tests are missing for X"
        if what:
            return _guard(_finish(f"Add {what} to {_obj_np(np)}"))
        if np.lower() in _DEICTIC:
            return None
        return _guard(_finish("Include " + _obj_np(np)))
    m = re.match(r"^missing\s+(.+)$", c, re.I)
    if m and len(_words(m.group(1))) <= 8:
        return _guard(_finish("Include " + m.group(1)))

    # "<thing> no longer needs X" -> "Do not require X for <thing>": read by the pattern below,
    # "Give migrations of the orders table no longer a rollback plan." (hunt-agents #2).
    # Only "no longer", an announced change: "The login endpoint does not require
    # authentication." is a complaint (it should), read below as such (review, session 23).
    m = re.match(r"^(?P<np>.+?)\s+no longer\s+(?:needs?|requires?)\s+(?P<rest>.+)$", c, re.I)
    if m and _np_ok(_subject(m.group("np"))) \
            and not _FINITE_RE.search(" ".join(_words(m.group("rest"))[:3])):
        np = _subject(m.group("np"))
        if np.lower() in _DEICTIC:
            return None  # "This no longer needs a test.": about one thing, no rule
        return _guard(_finish(f"Do not require {m.group('rest')} for {_obj_np(np)}"))

    # "<thing> needs X" -> "Give <thing> X"; "Needs a docstring" -> "Add a docstring";
    # "<thing> needs translating" -> "Translate <thing>".
    m = re.match(r"^(?:(?P<np>.+?)\s+)?(?P<verb>needs|need|deserves|deserve|could use|lacks|is lacking|are lacking)\s+(?P<rest>.+)$", c, re.I)
    if m and (m.group("np") is None or _np_ok(_subject(m.group("np")))) \
            and not _FINITE_RE.search(" ".join(_words(m.group("rest"))[:3])):
        rest = m.group("rest").strip()
        np = _subject(m.group("np") or "")
        if re.match(r"^to be\s+", rest, re.I) and np:
            return _guard(_finish(f"Make {_obj_np(np)} {rest[6:]}"))
        first = _words(rest)[0] if _words(rest) else ""
        if first.lower().endswith("ing"):
            lemma, tail, _ = _after_participle(rest)
            if lemma:
                return _guard(_finish(f"{lemma} {_obj_np(np) if np else 'it'}{tail}"))
        if not np or np.lower() in _DEICTIC:
            return _guard(_finish("Add " + rest))
        if m.group("verb").lower() in ("lacks", "is lacking", "are lacking"):
            return _guard(_finish(f"Add {rest} to {_obj_np(np)}"))
        return _guard(_finish(f"Give {_obj_np(np)} {rest}"))

    # "There is no X" -> "Add X"; "<thing> has no X" -> "Add X to <thing>"; "No X" -> "Add X".
    m = re.match(r"^there(?:'s| is| are)\s+(?:still\s+)?no\s+(.+)$", c, re.I)
    if m and _words(m.group(1)) and _words(m.group(1))[0].lower() not in _NO_IDIOMS:
        return _guard(_finish("Add " + m.group(1)))
    m = re.match(r"^(?P<np>.+?)\s+(?:has|have|had|contains?|includes?|gives?|shows?)\s+no\s+(?P<what>.+)$", c, re.I)
    if m and _np_ok(_subject(m.group("np"))) and _words(m.group("what")) \
            and _words(m.group("what"))[0].lower() not in _NO_IDIOMS:
        np = _subject(m.group("np"))
        if np.lower() in _DEICTIC:
            return _guard(_finish("Add " + m.group("what")))
        return _guard(_finish(f"Add {m.group('what')} to {_obj_np(np)}"))
    m = re.match(r"^no\s+(.+)$", c, re.I)
    if m and 1 <= len(_words(m.group(1))) <= 6 and not _FINITE_RE.search(m.group(1)):
        if _words(m.group(1))[0].lower() not in _NO_IDIOMS:
            return _guard(_finish("Add " + m.group(1)))

    # "<thing> is opened without `with`" -> "Open <thing> with `with`"; "<thing> is reported with
    # no interval" -> "Report <thing> with an interval": what was done, and what it lacked.
    m = re.match(
        r"^(?P<np>.+?)\s+(?:is|are|was|were|gets|get|got)\s+(?:(?:all|still|always|often|also)\s+)?"
        r"(?P<part>[a-z]+)\s+(?:without|with no)\s+(?P<what>.+)$", c, re.I)
    if m and _np_ok(_strip_np(m.group("np")), allow_deictic=False):
        part = m.group("part").lower()
        lemma = _lemma(part)
        if lemma and part not in _VERBS and part.endswith(_PARTICIPLE_END) \
                and _strip_np(m.group("np")).split()[0].lower() not in _DEICTIC:
            what = re.sub(r"\b(?:and|or)\s+no\s+", "and ", m.group("what").strip(), flags=re.I)
            return _guard(_finish(f"{lemma.capitalize()} {_obj_np(_strip_np(m.group('np')))} "
                                  f"with {what}"))

    # "<thing> is never closed" -> "Always close <thing>"; "<thing> isn't labelled" -> "Label <thing>".
    m = re.match(
        r"^(?P<np>.+?)\s+(?:(?:is|are|was|were)\s+(?P<how>never|not)|(?P<neg>isn't|aren't|wasn't|weren't))"
        r"\s+(?:(?:ever|always|even|properly|actually|clearly)\s+)?(?P<rest>.+)$",
        c, re.I,
    )
    if m and _np_ok(_strip_np(m.group("np")), allow_deictic=False):
        lemma, tail, adverb = _after_participle(m.group("rest"))
        first = _words(m.group("rest"))[0].lower() if _words(m.group("rest")) else ""
        if first.endswith("ly"):
            first = _words(m.group("rest"))[1].lower() if len(_words(m.group("rest"))) > 1 else ""
        if lemma and first not in _VERBS and first.endswith(_PARTICIPLE_END) and "until" not in tail.lower():
            prefix = "Always " if (m.group("how") or "").lower() == "never" else ""
            return _guard(_finish(f"{prefix}{_with_adverb(adverb, lemma)} {_obj_np(_strip_np(m.group('np')))}{tail}"))

    # "The reply never acknowledges X" -> "Always acknowledge X" (not "... never matches anything").
    m = re.match(r"^(?P<np>.+?)\s+never\s+(?P<verb>\w+s)\b(?P<tail>.*)$", c, re.I)
    if m and _np_ok(_strip_np(m.group("np")), allow_deictic=False) \
            and _strip_np(m.group("np")).split()[0].lower() not in _DEICTIC \
            and not re.match(r"^\s*(?:any|anything|nothing|everything|anyone)\b", m.group("tail"), re.I):
        lemma = _lemma(m.group("verb"))
        if lemma:
            return _guard(_finish(f"Always {lemma}{m.group('tail')}"))

    # "<thing> doesn't explain X" -> "Make <thing> explain X" (not "... doesn't show up until Y").
    m = re.match(
        r"^(?P<np>.+?)\s+(?:doesn't|does not|don't|do not|didn't|did not|won't|will not)\s+(?P<rest>.+)$",
        c, re.I,
    )
    if m and _np_ok(_strip_np(m.group("np")), allow_deictic=False) and not re.search(r"\buntil\b", m.group("rest"), re.I):
        np = _strip_np(m.group("np"))
        if np.split()[0].lower() not in _DEICTIC:
            words = _words(m.group("rest"))
            lemma = _lemma(words[0]) if words else None
            if lemma:
                tail = m.group("rest").strip()[len(words[0]):]
                return _guard(_finish(f"Make {_obj_np(np)} {lemma}{tail}"))

    # "<thing> is too long" -> "Keep <thing> concise"; "too many bullets" -> "Use fewer bullets".
    m = re.match(
        r"^(?:(?P<np>.+?)\s+(?:is|are|was|were|feels|feel|seems|seem|looks|look|reads|read|gets|get|runs|run)\s+)?"
        r"(?:a bit\s+|a little\s+|way\s+|much\s+|far\s+|slightly\s+|still\s+|just\s+|rather\s+|also\s+)*too\s+"
        r"(?P<adj>many|much|[\w-]+)(?:\s+(?P<what>.+))?$",
        c, re.I,
    )
    if m and (m.group("np") is None or _np_ok(_subject(m.group("np")))):
        np = _subject(m.group("np") or "")
        target = "the response" if not np or np.lower() in _DEICTIC else _obj_np(np)
        adj = m.group("adj").lower()
        what = (m.group("what") or "").strip()
        if adj == "many" and what:
            return _guard(_finish(f"Use fewer {what}"))
        if adj == "much" and what:
            return _guard(_finish(f"Use less {what}"))
        if adj in ("long", "verbose", "wordy", "lengthy", "rambling", "big", "large"):
            return _guard(_finish(f"Keep {target} concise"))
        if adj in ("dense", "cluttered", "busy", "complex", "complicated", "convoluted", "clever", "crowded"):
            return _guard(_finish(f"Simplify {target}"))
        if adj in ("short", "brief", "terse", "thin", "sparse"):
            return _guard(_finish(f"Give more detail in {target}"))
        if adj in ("small", "tiny"):
            return _guard(_finish(f"Make {target} larger"))
        if adj in ("slow",):
            return _guard(_finish(f"Make {target} faster"))
        if re.match(r"^[a-z-]+$", adj) and adj not in ("bad", "good", "much", "many", "late", "early"):
            return _guard(_finish(f"Make {target} less {adj}"))
        return None

    # "Nested subqueries make this hard to review" -> "Avoid nested subqueries".
    m = re.match(
        r"^(?P<np>.+?)\s+(?:make|makes|made)\s+(?:it|this|them|the \w+)\s+(?:very\s+|really\s+|much\s+|so\s+|genuinely\s+)?"
        r"(?:hard|harder|difficult|impossible|confusing)\s+to\s+\w+",
        c, re.I,
    )
    if m and _np_ok(_strip_np(m.group("np")), allow_deictic=False, max_words=10):
        return _guard(_finish("Avoid " + _obj_np(_strip_np(m.group("np")))))
    # "<thing> is hard to read" -> "Make <thing> easier to read".
    m = re.match(
        r"^(?P<np>.+?)\s+(?:is|are|was|were)\s+(?:very\s+|really\s+|quite\s+|a bit\s+|pretty\s+|genuinely\s+|so\s+)?"
        r"(?:hard|difficult|impossible|tricky)\s+to\s+(?P<verb>\w+)(?P<tail>.*)$",
        c, re.I,
    )
    if m and _np_ok(_subject(m.group("np"))):
        np = _subject(m.group("np"))
        target = "the response" if np.lower() in _DEICTIC else _obj_np(np)
        return _guard(_finish(f"Make {target} easier to {m.group('verb')}"))

    # "A numbered list would help" / "would have saved ..." -> "Use a numbered list".
    m = re.match(
        r"^(?P<np>.+?)\s+(?:would|could|might)\s+(?:really\s+|also\s+|probably\s+)?(?:have\s+)?"
        r"(?:help(?:ed)?|save[d]?|fix(?:ed)?|improve[d]?|work(?:ed)?|solve[d]?|prevent(?:ed)?|"
        r"avoid(?:ed)?|make|made|tell you|show you|catch(?:es)?|be (?:better|clearer|nicer|easier|safer|cleaner|simpler)|"
        r"been (?:better|clearer|nicer|easier|safer|cleaner|simpler)|go a long way|read better)\b",
        c, re.I,
    )
    if m and _np_ok(_strip_np(m.group("np")), allow_deictic=False, max_words=12):
        np = _strip_np(m.group("np"))
        if np.split()[0].lower() not in _DEICTIC | {"what", "which", "nothing", "anything"}:
            return _guard(_finish("Use " + _obj_np(np)))

    # "'lag on our CDN edge' could just be 'some pages are stale'" -> "Replace X with Y" (only when
    # the replacement is quoted, code or a count, so speculation like "could be noise" is left alone).
    m = re.match(r"^(?P<np>.+?)\s+(?:could|can)\s+(?:just\s+|simply\s+|easily\s+|instead\s+|also\s+)?be\s+(?P<what>.+)$", c, re.I)
    if m and _np_ok(_strip_np(m.group("np")), allow_deictic=False, max_words=14):
        what = m.group("what").strip()
        if re.match(r"^(?:\u27e6\d+\u27e7|\d|(?:one|two|three|four|five|a single|separate)\b)", what, re.I):
            return _guard(_finish(f"Replace {_obj_np(_strip_np(m.group('np')))} with {what}"))

    # "<X> rather than <Y>" without a verb -> "Use X rather than Y".
    m = re.match(r"^(?P<a>.+?),?\s+(?:rather than|instead of)\s+(?P<b>.+)$", c, re.I)
    if m and len(_words(m.group("a"))) <= 8 and not _FINITE_RE.search(m.group("a")) \
            and not _narration(m.group("a")) \
            and not re.search(r"\b(?:should|must|need|needs)\b", c, re.I):
        return _guard(_finish(f"Use {_obj_np(m.group('a'))} rather than {m.group('b')}"))

    # "Decision and impact first" -> "Put decision and impact first".
    m = re.match(r"^(?P<np>[^,]+?)\s+(?:first|up front|upfront|at the top|on top)$", c, re.I)
    if m and _np_ok(m.group("np"), allow_deictic=False, max_words=6) \
            and not _verb_then_object(m.group("np")):
        return _guard(_finish(f"Put {_obj_np(m.group('np'))} first"))
    return None


def _narration(text: str) -> bool:
    """A past-tense verb and its object ("Ran the tests locally", "Deleted the branch"): what
    was done, not a thing to use: "Ran the tests locally instead of on CI." was learnt as "Use
    ran the tests locally rather than on CI." (review 1, session 32). "Signed commits" (a
    participle before a noun) is a thing."""
    words = [w.lower() for w in _words(text)]
    return (len(words) > 1 and words[1] in _OBJECT_OPENERS
            and (words[0] in IRREGULAR_PAST or words[0].endswith("ed")))


def _verb_then_object(np: str) -> bool:
    """"Rotated the wrong key" is a verb and its object, a narration, not a noun phrase to put
    first: "Rotated the wrong key first." (a thread's failure feedback) was learnt as the rule
    "Put rotated the wrong key first.", which orders the mistake (hunt-threads #4, session 32);
    "Wrote the tests first." was kept as a rule as written (`_unlisted_verb`: IRREGULAR_PAST).
    "Decision and impact first", "All the caveats first" stay rules."""
    words = [w.lower() for w in _words(np)]
    return len(words) > 1 and words[0] not in _OBJECT_OPENERS and words[1] in _OBJECT_OPENERS
