"""Rules that stand alone: a split never leaves a rule without its subject, and a rule's
"when" names the kind of task, not the one task it came from.

"Never put SQL in f-strings; use bound parameters." split in two gave "Use bound parameters."
with no word of SQL, and "Never load the file in one go; always stream it in chunks." gave
"Always stream it in chunks." (stream what?). A negation followed by its alternative is one
instruction: the second half only makes sense with the first. Two instructions that each stand
alone ("Use at least 24 pt text on slides; never paste screenshots of code.") stay apart.
"""

from __future__ import annotations

import re

from skillbank.distill.relations import _action, _objects, _polarity

_PRONOUN = re.compile(r"\b(?:it|them|this|that|these|those|one)\b", re.I)


def needs_previous(first: str, second: str) -> bool:
    """Whether `second` is the alternative `first` asks for, and means nothing alone: the first
    rejects something, the second asks for something, and the second either points back
    ("stream it") or names nothing of the first's subject ("use bound parameters")."""
    if _polarity(first) >= 0 or _polarity(second) < 0:
        return False
    if _PRONOUN.search(second):
        return True
    # An alternative is chosen, not done: "use bound parameters", "prefer X", "... instead".
    # A second action of its own ("log the error with its traceback") stands alone.
    if _action(second) not in _CHOOSING and not re.search(r"\binstead\b", second, re.I):
        return False
    mine = _objects(second, _action(second))
    theirs = _objects(first, _action(first))
    return bool(mine) and not (mine & theirs)


_CHOOSING = frozenset("use prefer choose pick switch opt rely stick go".split())


def keep_subjects(rules: list[str]) -> list[str]:
    """Join each alternative to the negation it completes ("Never X; use Y.")."""
    out: list[str] = []
    for rule in rules:
        if out and needs_previous(out[-1], rule):
            out[-1] = f"{out[-1].rstrip(' .')}; {rule[:1].lower()}{rule[1:]}"
        else:
            out.append(rule)
    return out


#: A pronoun after a preposition points back ("Use AbortController for it.", "Avoid citations
#: in it."); right after the verb it is often the answer itself ("Keep it under 200 words.").
_POINTS_BACK = re.compile(r"\b(?:for|in|on|to|with|from|of|about|into|inside|within|without)\s+"
                          r"(?:it|them|these|those)\b", re.I)
#: A pronoun subject held to a duty ("It should be ...", "They must ..."); not a dummy "it"
#: ("It would be better to report ...").
_SUBJECT_PRONOUN = re.compile(r"^\W*(?:it|they|this|these|those)\s+(?:should|must|needs?|has to|"
                              r"have to|ought|shouldn't|mustn't|can't|cannot|may not)\b", re.I)
_EACH = re.compile(r"\b(?:each|every)\s+\w", re.I)
_POSSESSIVE = re.compile(r"\b(?:their|its)\b", re.I)


#: "there" as a place named before ("...in the billing channel; always announce billing deploys
#: there."), not the "there" of "there is/are" ("Make sure there are tests.").
_THERE = re.compile(r"\bthere\b(?!\s*(?:is|are|was|were|'s|’s|isn't|aren't|wasn't|weren't|will|"
                    r"would|should|must|may|might|can|could|shall|has|have|had|seems?|appears?|"
                    r"remains?|exists?|needs?|ought)\b)", re.I)
#: An act named before: "Always do that before a migration.", "Never do so.", "Always check this.",
#: "Do it before every commit." ("do it" only with when: "Never do it by hand" is not read back).
_DO_THAT = re.compile(r"\bdo\s+(?:that|this|so)\b|\bdo\s+it(?=\s+(?:before|after|when|whenever|once|"
                      r"every|each|first|again)\b)", re.I)
_ENDS_IN_THAT = re.compile(r"\b(?:that|this)\W*$", re.I)


def points_to_sentence(rule: str) -> bool:
    """Whether `rule` names its place or its act only by pointing back ("there", "do that", a
    trailing "that"/"this"): alone, "Always do that before a migration." and "Always announce
    billing deploys there." were stored as active rules with no meaning (hunt-lcteam #2,
    session 36). Such a rule joins the rule before it, is read from the sentence before it
    (:func:`resolve_reference`), or is reported as not read.

    A pointer after a clause of the rule's own points to that clause: "Do not hardcode
    credentials; use the vault for that." and "Never edit generated files; regenerate them
    instead of doing that." are whole rules (review 1, session 36: they were reported not
    read)."""
    for pointer in (_THERE, _DO_THAT, _ENDS_IN_THAT):
        found = pointer.search(rule)
        if found and not _own_clause(rule[:found.start()]):
            return True
    return False


#: A clause of the rule's own before a pointer, set off by ";" or a dash: what "that" / "there"
#: can point to.
_OWN_CLAUSE = re.compile(r"\w[^;\u2014]*\w\W*[;\u2014]\s*\S")


def _own_clause(before: str) -> bool:
    """Whether the words `before` a pointer hold a clause of the rule's own: one set off by ";"
    or a dash, or an instruction before a comma ("Use the vault, never anything else for
    that"). A comma after a setting is none: "In production, always do that before a
    migration." still points back (review 2, session 36)."""
    if _OWN_CLAUSE.search(before):
        return True
    from skillbank.distill.text import _words
    from skillbank.distill.vocabulary import _VERBS

    head, comma, _ = before.partition(",")
    words = [w.lower() for w in _words(head)]
    return bool(comma) and len(words) >= 2 and (words[0] in _VERBS or words[0] in (
        "always", "never", "don't", "dont"))


def instruction_points_back(text: str) -> bool:
    """Whether a sentence of `text` is an instruction that points back (`points_to_sentence`):
    "Always do that before a migration.", not praise ("Great answer, exactly like that.",
    "Thanks for doing that."), which is no rule at all (review 1, session 36)."""
    from skillbank.distill.sentences import split_sentences
    from skillbank.distill.text import _words
    from skillbank.distill.vocabulary import _VERBS

    for sentence in split_sentences(text or ""):
        words = [w.lower() for w in _words(sentence)]
        opens = bool(words) and (words[0] in _VERBS or words[0] in _INSTRUCTION_OPENERS)
        if opens and points_to_sentence(sentence):
            return True
    return False


_INSTRUCTION_OPENERS = frozenset({"always", "never", "please", "do", "don't", "dont", "make",
                                  "be", "remember", "avoid", "stop"})


#: The place a sentence ends on: "... in the billing channel.", "... in #general."
_PLACE_END = re.compile(r"\b(?:in|on|at|into)\s+(?:#[\w-]+|(?:the|our|your)\s+(?:[\w#/-]+\s+){0,3}"
                        r"[\w#/-]+)\W*$", re.I)
#: An act a reproach says was missed: "You forgot to back up the database."
_MISSED_ACT = re.compile(r"^\W*you(?:'ve| have)?\s+(?:forgot(?:ten)?\s+to|neglected\s+to|failed\s+to|"
                         r"didn't|did not)\s+(?P<act>[a-z].*?)\W*$", re.I)
#: An act a description says was not done: "The staging database was not backed up."
_NOT_DONE = re.compile(r"^\W*(?P<np>(?:the|your|our)\s+(?:[\w-]+\s+){0,3}?[\w-]+)\s+(?:(?:was|were)\s+"
                       r"(?:not|never)|wasn't|weren't)\s+(?P<verb>[a-z]+ed)(?P<particle>\s+(?:up|out|"
                       r"down|off|back|over|in))?\W*$", re.I)


def _base(participle: str, phrasal: bool) -> str | None:
    """"reviewed" -> "review"; "backed" (before "up") -> "back": a phrasal verb's head need not
    be a known verb, the particle says it is one."""
    from skillbank.distill.morphology import _lemma

    lemma = _lemma(participle)
    if lemma or not phrasal:
        return lemma
    stem = participle.lower()[:-2]
    if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsfz":
        stem = stem[:-1]  # "topped up" -> "top up"
    return stem if len(stem) >= 2 else None


def _act(before: str) -> str | None:
    """The act `before` says was missed, as a verb phrase ("back up the staging database")."""
    m = _MISSED_ACT.match(before)
    if m:
        return m.group("act")
    m = _NOT_DONE.match(before)
    if not m:
        return None
    particle = (m.group("particle") or "").strip()
    verb = _base(m.group("verb"), bool(particle))
    if not verb:
        return None
    np = re.sub(r"^(?:your|our)\s+", "the ", m.group("np"), flags=re.I)
    return f"{verb} {particle + ' ' if particle else ''}{np[:1].lower()}{np[1:]}"


def resolve_reference(rule: str, before: str | None) -> str | None:
    """`rule` read with what it points back to in `before` (the clause or sentence before it,
    itself no rule), or None when that is not clear: "there" becomes the place `before` ends on
    ("... in the billing channel"), "do that" the act it says was missed ("The staging
    database was not backed up." -> "Always back up the staging database before a
    migration."). A trailing "that"/"this" is never guessed."""
    if not before or not before.strip():
        return None
    text = rule
    if _THERE.search(text):
        place = _PLACE_END.search(before.strip())
        if not place:
            return None
        where = place.group(0).rstrip(" .;,!?:")
        text = _THERE.sub(lambda _: where[:1].lower() + where[1:], text, count=1)
    if _DO_THAT.search(text):
        act = _act(before.strip())
        if not act:
            return None
        text = _DO_THAT.sub(lambda _: act, text, count=1)
    if points_to_sentence(text) or text == rule:
        return None
    return text[:1].upper() + text[1:]


def leans_on_previous(rule: str, sentence: str) -> bool:
    """Whether `rule` (read from critique `sentence`) means nothing without the rule before it:
    a pronoun after a preposition, a sentence whose subject is a pronoun ("It should be no more
    than 15%." -> "Make it no more than 15%."), a possessive with nothing named before it ("Use
    their last name."), or no object at all ("Apply directly."). Users met each of these stored
    and served as a rule of its own (learning-loop hunt #7)."""
    if _SUBJECT_PRONOUN.match(sentence):
        return True
    if points_to_sentence(rule):
        return True  # "there", "do that" (hunt-lcteam #2, session 36)
    if _POINTS_BACK.search(rule) and not _EACH.search(rule):
        return True  # "each metric ... next to it" names what "it" is
    action = _action(rule)
    words = re.findall(r"[A-Za-z][\w'-]*", rule)
    head = next((i for i, w in enumerate(words) if w.lower() == action), None)
    if head is None:
        return False
    rest = words[head + 1:]
    possessive = next((i for i, w in enumerate(rest) if _POSSESSIVE.fullmatch(w)), None)
    if possessive is not None and all(w.lower().endswith("ly") for w in rest[:possessive]):
        return True  # "Use their last name." (whose?), not "Address customers by their name."
    return bool(rest) and all(w.lower().endswith("ly") for w in rest)


_STOP = frozenset("""about on for with from that which who whom where when while in of regarding
    asking using after before so because by since whose than into onto per via between
    among""".split())
_SPECIFIC = frozenset("this that these those my our your their his her its the".split())
_UNITS = frozenset("kb mb gb tb k m % percent rows lines pages users items".split())


def task_kind(phrase: str, max_words: int = 6) -> str:
    """'summarising this news article about the new climate bill' -> 'summarising a news
    article': the kind of task, without what made it one task (its topic, names, sizes)."""
    words = [w for w in re.sub(r"[`'\"“”‘’]", " ", phrase).split() if w]
    out: list[str] = []
    skip_unit = False
    for number, word in enumerate(words):
        low = word.lower().strip(",;:.")
        if number and (low in _STOP or _to_a_place(low, words[number + 1:number + 2])):
            break
        if any(c.isdigit() for c in low):
            skip_unit = True
            continue
        if skip_unit and low in _UNITS:
            skip_unit = False
            continue
        skip_unit = False
        if number and low in _SPECIFIC:
            word = "a"
        if out and out[-1] == "a" and word == "a":
            continue
        out.append(word.strip(",;:."))
        if len(out) >= max_words:
            if number + 1 < len(words):  # cut inside a phrase: "rotate a leaked (key)"
                while len(out) > 2 and _MODIFIER_END.search(out[-1]):
                    out.pop()
            break
    while out and (out[-1].lower() in ("a", "an", "the", "to") or out[-1].lower() in _NUMERALS):
        out.pop()  # "drafting a mutual NDA between two" was cut after "two"
    return _articles(out)


#: Words that modify the noun after them; a cut right after one leaves the phrase open.
_MODIFIER_END = re.compile(r"(?:[^e]ed|ful|ous|able|ible)$", re.I)  # not "-ing": "shipping"


_NUMERALS = frozenset("one two three four five six seven eight nine ten both several".split())


def _to_a_place(word: str, after: list[str]) -> bool:
    """"to" before a name or a number ("a cover letter to Nature Communications"): where the
    one task goes, not part of its kind. Not "how to reset", nor "reply to the customer"."""
    if word != "to" or not after:
        return False
    nxt = after[0].strip(",;:.")
    return nxt[:1].isupper() or nxt[:1].isdigit()


_PLURAL_END = re.compile(r"[^su]s$|ies$", re.I)  # notes, slides, queries (not: class, status)
_AN_SOUND = re.compile(r"^(?:[aeio]|u(?!ni|s[eu]|ti)|[AEFHILMNORX][A-Z0-9]{0,3}$)")  # "an API", "a README", "a SQL query"


def _articles(words: list[str]) -> str:
    """"a" agreeing with the noun phrase it now opens: "drafting release notes" (not "a
    release notes"), "writing an API guide" (not "a API guide")."""
    out: list[str] = []
    for number, word in enumerate(words):
        if word == "a" and number + 1 < len(words):
            if _PLURAL_END.search(words[-1]) and words[-1][:1].islower():
                continue
            if _AN_SOUND.match(words[number + 1]):
                word = "an"
        out.append(word)
    return " ".join(out)
