"""Critique sentence -> rules: clause splitting around the shape rewrites of ``rewrite``.

A sentence is cut at strong joints (";", a label's colon), then at weak ones (", but", ", so"),
and each piece goes through :func:`skillbank.distill.rewrite._rewrite`; compound imperatives
("Use X, and label Y") are split so that one critique sentence never folds two instructions into
one rule.
"""

from __future__ import annotations

import re

from skillbank.distill.declaratives import declared_change
from skillbank.distill.rewrite import _guard, _rewrite, _starts_imperative
from skillbank.distill.sentences import _protect, _restore
from skillbank.distill.text import _finish, _words
from skillbank.distill.vocabulary import _DETERMINERS, _PREPOSITIONS, _VERBS, SETTING_LEADS


# Clause splitting ------------------------------------------------------------------------------

#: Joints after which the rest of a sentence is a reason or an aside, not part of the advice.
_WEAK_SPLIT_RE = re.compile(
    r",\s+(?:but|so|because|since|though|although|which|as|whereas|while|otherwise)\s+|"
    r"\s+(?:but|whereas)\s+|\s+[—–]\s+|\s+--\s+",
    re.I,
)
#: ", and" before an independent clause (it has its own verb), or "and never / and doesn't".
_AND_CLAUSE_RE = re.compile(
    r",\s+and\s+(?=(?:\S+\s+){0,5}?(?:is|are|was|were|has|have|had|should|must|needs?|isn't|aren't|"
    r"doesn't|don't|didn't|won't|can't|never)\b)|"
    r",\s+and\s+(?=(?:it|they|this|that|there|he|she|we|you|i|nothing|everything|nobody)\b)|"
    r"\s+and\s+(?=(?:never|doesn't|does not|don't|didn't)\b)|"
    r"\s+and\s+(?=(?:nothing|everything|nobody|none|it|this|that|they|there)\s+(?:is|are|was|were|isn't|aren't)\b)",
    re.I,
)


#: Where a second imperative may start: ", and", " and", ";" or a bare comma, an optional
#: adverb of the imperative's head ("always", "also"; not "then": "Apologise first and then
#: explain ..." is one sequence), the word, and the word after it.
_JOINT_RE = re.compile(r"(?P<joint>,\s*and|\s+and|;|,)\s+(?:(?P<adverb>always|also|please)"
                       r"\s+)?(?P<word>\w+)(?=\s+(?P<next>\w+))?", re.I)
#: Verbs that are as often nouns after "and" ("... the name and number of ...").
_NOUN_LIKE = frozenset("set order number state name list test type log restore install".split())


def _names_a_thing(m: re.Match[str]) -> bool:
    """A capitalised word after "and" or a comma is a name, not a second imperative: "Use tabs
    for indentation in Makefiles and Go files." gave the rules "... in Makefiles." and "Go
    files." (learning-loop hunt #8), and a later correction about Go files then retired the
    Makefile rule. After ";" a capital may still open a clause of its own, and so may a
    capitalised verb with a determiner after it ("..., and Check the layout")."""
    word = m.group("word")
    return (m.group("joint").strip() != ";" and not m.group("adverb")
            and word[:1].isupper() and word != "I"
            and (m.group("next") or "").lower() not in _DETERMINERS)


#: A part that ends in "and, <setting>," (the joint after it is the setting's comma).
_AND_SETTING_END_RE = re.compile(r",?\s+and,\s+(?P<setting>[^,]{3,80})$", re.I)


def _after_and_setting(left: str) -> bool:
    """Whether `left` ends in "and, <setting>" ("Use UTC everywhere and, in log lines")."""
    m = _AND_SETTING_END_RE.search(left)
    return bool(m and _setting(m.group("setting")))


def _split_compound(rule: str) -> list[str]:
    """"Use X and label Y." -> ["Use X.", "Label Y."] when each part is an imperative."""
    body = rule.rstrip(".")
    parts: list[str] = []
    start = 0
    for m in _JOINT_RE.finditer(body):
        word = m.group("word").lower()
        bare_comma = m.group("joint").strip() == ","
        if _names_a_thing(m):
            continue
        # After ", and" (or a bare comma) a word followed by a determiner is a second
        # imperative even when it could be a noun ("..., and state the sample size", "...,
        # answer the question first").
        verb_then_object = (m.group("joint").lstrip().startswith(",") and word.isalpha()
                            and (m.group("next") or "").lower() in _DETERMINERS
                            and not word.endswith(("ed", "ing")) and word not in _DETERMINERS
                            and (not bare_comma or word in _VERBS))
        verb = word in _VERBS and word not in _NOUN_LIKE
        after_setting = bare_comma and _after_and_setting(body[start:m.start()])
        # "... and always reference the ticket number": an adverb of the imperative's head.
        if verb_then_object or (verb and (not bare_comma or m.group("adverb") or after_setting)):
            left = body[start:m.start()]
            # "always" is part of the rule; "also" and "please" only joined it to the first.
            keep = (m.group("adverb") or "").lower() == "always"
            second = m.start("adverb") if keep else m.start("word")
            if len(_words(left)) >= 2 and len(_words(body[second:])) >= 2:
                parts.append(left)
                start = second
    parts.append(body[start:])
    if len(parts) == 1:
        return [rule]
    for i in range(len(parts) - 1):
        # "Cite your sources and, when quoting numbers, give the year": the setting after
        # "and," is the second rule's ("Cite your sources and, when quoting numbers." and
        # "Give the year they are from." were learnt, session 32).
        m = _AND_SETTING_END_RE.search(parts[i])
        if m and _after_and_setting(parts[i]):
            parts[i] = parts[i][:m.start()]
            parts[i + 1] = with_setting(parts[i + 1].strip(), m.group("setting"))
    out = []
    for p in parts:
        g = _guard(_finish(p))
        if g:
            out.append(g)
    return out or [rule]


def _clauses(sentence: str) -> list[str]:
    """Strong clause boundaries: ';' and a colon (after a short label, the label is dropped)."""
    pieces = [p for p in re.split(r"\s*;\s+", sentence) if p.strip()]
    out: list[str] = []
    for p in pieces:
        m = re.match(r"^([^:]{1,60}):\s+(.+)$", p)
        if m and not re.match(r"^\s*\S+://", p):
            left, right = m.group(1), m.group(2)
            if _starts_imperative(left.strip()):
                out.append(p)  # "Use the house style: X" keeps its explanation
            elif len(_words(left)) <= 5:
                out.append(right)
                out.append("\x00label\x00" + left)  # a label; used only if the rest gives nothing
            else:
                out.extend([left, right])
        else:
            out.append(p)
    return out


#: " and " before a clause with a subject and a verb of its own ("... and the examples are too
#: long"); cut there only after a description with its own verb (`_described_pairs`).
_AND_DESCRIPTION_RE = re.compile(
    r"\s+and\s+(?=(?:the|these|those|its|their|our|your|all|some|most|many)\s+"
    r"(?:[\w'-]+\s+){0,3}?(?:is|are|was|were|isn't|aren't|wasn't|weren't)\b)", re.I)
_FINITE_VERB_RE = re.compile(r"\b(?:is|are|was|were|isn't|aren't|wasn't|weren't)\b", re.I)


def _described_pairs(part: str) -> list[str]:
    """Two descriptions joined by a bare "and", each with its own verb, as two pieces: "The
    README is missing an install section and the examples are too long." was read as one
    "is missing" shape that swallowed the second clause, the rule "Add an install section and
    the examples are too long to the README." (hunt-loop-shared #3, session 31). Not after an
    imperative ("Make sure the header is bold and the footer is small" is one instruction)."""
    out: list[str] = []
    start = 0
    for m in _AND_DESCRIPTION_RE.finditer(part):
        left = part[start:m.start()]
        if _FINITE_VERB_RE.search(left) and not _starts_imperative(left.strip()):
            out.append(left)
            start = m.end()
    out.append(part[start:])
    return out


#: An ask after a description: " so rename ...", " and also please keep ...", " and please add",
#: " so never run ...". "also" alone is no ask: "The tests were thorough and also cover the edge
#: cases." describes the tests (review 1, session 32).
_ASK_AFTER_RE = re.compile(
    r"\s+(?:and\s+)?(?:also\s+)?(?:so|please)\s+(?:please\s+)?"
    r"(?P<head>(?:never|always|don't|do\s+not)\s+)?(?P<verb>[a-z][\w-]*)\b", re.I)


def _asks_after_description(part: str) -> list[str]:
    """A description followed by an ask, as the two pieces: "the variable names were confusing
    so rename them to say what they hold" and "the docstring was wrong and also please keep
    functions under 40 lines" gave no rule for the ask (no comma before "so"; "please" after
    "and"), and no word that anything was left (session 32). The ask's "them"/"it" is the
    description's subject ("Rename the variable names ...")."""
    m = _ASK_AFTER_RE.search(part)
    if not m:
        return [part]
    left, verb = part[:m.start()], m.group("verb").lower()
    if (verb not in _VERBS or verb in _NOUN_LIKE or not _FINITE_VERB_RE.search(left)
            or _starts_imperative(left.strip())):
        return [part]
    after = _words(part[m.end("verb"):])
    if not (m.group("head") or re.search(r"\bplease\b", m.group(0), re.I)) and (
            not after or after[0].lower() in ("and", "or", "but", "yet", "too", "enough")):
        # "so" as an intensifier: "The code was so clean and readable." is praise, and was
        # learnt as the rule "Clean and readable." (review 2, session 32)
        return [part]
    ask = part[m.start("head") if m.group("head") else m.start("verb"):]
    ask = ask[:1].upper() + ask[1:]
    subject = subject_of(left)
    if subject:
        ask = _with_subject(ask, subject)
    return [left, ask]


#: "<be / keep / make ...> <quality> but": the quality is one half of the complement.
_COMPLEMENT_BEFORE_BUT = re.compile(r"\b(?:be|keep|make|stay|sound|look|feel|remain)\s+(?:\w+\s+)?"
                                    r"[\w-]+\s*$", re.I)
#: A second quality: "short", "not curt", "very clear" (up to 3 words).
_QUALITY_AFTER_BUT = re.compile(r"^\s*(?:(?:not|too|very|still|also)\s+)?[a-z-]+\W*$", re.I)


def _weak_split(clause: str) -> list[str]:
    """`clause` cut at weak joints, but not inside "warm but short": "It should be warm but
    short." gave "Make it warm." and "short" was lost without a word (hunt-learnfaces #2,
    session 38). A bare "but" between two qualities of one complement is no joint."""
    parts: list[str] = []
    start = 0
    for m in _WEAK_SPLIT_RE.finditer(clause):
        rest = clause[m.end():]
        if (m.group(0).strip().lower() == "but"
                and _COMPLEMENT_BEFORE_BUT.search(clause[start:m.start()])
                and _QUALITY_AFTER_BUT.match(rest) and _words(rest)[-1].lower() not in _VERBS):
            continue
        parts.append(clause[start:m.start()])
        start = m.end()
    parts.append(clause[start:])
    return parts


def _pieces(clause: str) -> list[str]:
    """A clause cut at weak joints, before independent ", and" clauses, between two
    descriptions joined by "and", and before an ask that follows a description."""
    out: list[str] = []
    for part in _weak_split(clause):
        if part and part.strip():
            out.extend(a for p in _AND_CLAUSE_RE.split(part) if p and p.strip()
                       for d in _described_pairs(p) if d.strip()
                       for a in _asks_after_description(d))
    return out


#: A piece that only negates what follows, "never passwords" in "Always log errors and never
#: passwords.": its verb is the one of the piece before.
_BARE_NEGATION_RE = re.compile(r"^(?P<negation>never|don't|do not)\s+(?P<rest>\S.*)$", re.I)
#: An imperative's head (after a leading setting): an optional adverb, the verb, its object.
_HEAD_RE = re.compile(r"^(?:(?:always|also|please)\s+)?(?P<verb>[a-z]+)\s+(?P<object>\S.*)$", re.I)
#: Verbs whose object takes a complement ("Keep replies short"): carried over, they misread.
_COMPLEMENT_VERBS = frozenset("keep make leave set get let have be stay".split())
#: Words that make "never X" a limit rather than a thing to leave out ("never more than 3").
_NOT_A_THING = _PREPOSITIONS | frozenset("more less fewer than too over under longer shorter "
                                         "above below again".split())
#: At most this many words on either side for a carried verb: a short object and a short thing.
_MAX_CARRIED_WORDS = 4


def _carried_verb(previous: str, negated: re.Match[str]) -> str | None:
    """"never passwords" after "Always log errors" as the piece "never log passwords", or None
    when the two do not stand alone that way (the verb takes a preposition or a complement,
    or either side is long)."""
    head = _HEAD_RE.match(re.split(r",\s+", previous.strip())[-1])  # after "In Makefiles, "
    if not head:
        return None
    verb = head.group("verb").lower()
    thing, rest = _words(head.group("object")), _words(negated.group("rest"))
    if (verb not in _VERBS or verb in _COMPLEMENT_VERBS
            or not 1 <= len(thing) <= _MAX_CARRIED_WORDS or not 1 <= len(rest) <= _MAX_CARRIED_WORDS
            or any(w.lower() in _NOT_A_THING for w in thing + rest)):
        return None
    return f"{negated.group('negation')} {verb} {negated.group('rest')}"


def _has_own_verb(rest: str) -> bool:
    """Whether the words after "never" start with a verb ("never guess", "never email the
    customer"): then the piece is a rule of its own, not a thing to carry a verb to (review of
    hunt-badinput #8's fix, session 26)."""
    words = _words(rest)
    return bool(words) and words[0].lower() in _VERBS


def _with_negations_kept(pieces: list[str]) -> list[str]:
    """Each piece that only negates a thing ("never passwords") given the verb of the piece
    before ("never log passwords"), or else joined back to it ("Always reply in English and
    never emojis"). Cut at "and never", "Always log errors and never passwords." gave the rule
    "Always log errors." and no rule, no report, for "never passwords": the half with no verb
    of its own was dropped (hunt-badinput #8, session 26)."""
    out: list[str] = []
    for piece in pieces:
        negated = _BARE_NEGATION_RE.match(piece.strip())
        if out and negated and _has_own_verb(negated.group("rest")):
            # "never skip them" is a rule of its own ("never guess" had "check" carried to it:
            # "Never check guess."); a lone verb is too short to stand alone, so it stays with
            # the sentence it came in ("Always check the logs and never guess.").
            if len(_words(negated.group("rest"))) == 1:
                out[-1] = f"{out[-1].rstrip()} and {piece.strip()}"
                continue
            negated = None
        if not out or not negated or declared_change(piece) or _rewrite(piece):
            out.append(piece)
            continue
        carried = _carried_verb(out[-1], negated)
        if carried:
            out.append(carried)
        else:
            out[-1] = f"{out[-1].rstrip()} and {piece.strip()}"
    return out


#: A leading phrase that says where or when the advice holds ("In commit messages, ...",
#: "For SQL migrations, ...", "When writing customer emails, ...", "If the customer is angry").
_SETTING_RE = re.compile(rf"^(?:{'|'.join(SETTING_LEADS)})\s+\S.{{1,70}}$", re.I)


def _setting(piece: str) -> str | None:
    """`piece` when it is a leading setting of the rules after it (2-10 words, itself no rule)."""
    text = piece.strip()
    if not _SETTING_RE.match(text) or not 2 <= len(_words(text)) <= 10 or _rewrite(text):
        return None
    return text


def with_setting(rule: str, setting: str | None) -> str:
    """`rule` with the setting the sentence gave it: "In commit messages, always reference the
    ticket number." A rule split out of "In commit messages, always reference the ticket
    number and keep the subject short." read "Always reference the ticket number.", which
    says nothing of commit messages (and its topic was guessed as support tickets)."""
    if not setting or not rule or setting.lower() in rule.lower():
        return rule
    first = rule.split(maxsplit=1)[0]
    keep = first == "I" or (len(first) > 1 and not first[1:].islower())  # "SQL", "README"
    return f"{setting[:1].upper()}{setting[1:]}, {rule if keep else rule[:1].lower() + rule[1:]}"


#: Words that say a clause asks for something, rule or not.
_ASKS_RE = re.compile(r"\b(?:please|should(?:n't)?|must(?:n't)?|needs? to|ha(?:ve|s) to|ought to|"
                      r"make sure|from now on)\b|"
                      # "never"/"always" where an imperative starts, not "you always deliver"
                      r"(?:^|\b(?:so|and|but|then)\s+)(?:never|always|don't|do not|avoid)\s+\w",
                      re.I)


def asks_something(piece: str) -> bool:
    """Whether `piece` asks for something (an imperative, "please", a modal): a clause the
    distiller reads no rule from is then reported as unread, not dropped without a word."""
    return bool(_ASKS_RE.search(piece)) or _starts_imperative(piece.strip())


def _rules_in_sentence(sentence: str, missed: list[str] | None = None) -> list[str]:
    """The rules of one sentence. A piece that asks something and gives no rule is appended to
    `missed` (when given), so the caller can say it was not read: "...; the report must list
    the totals per region" next to a rule gave that rule only, and nothing said the second
    request was dropped (session 31's left item)."""
    protected, spans = _protect(sentence, quotes=True)
    rules: list[str] = []
    label_rules: list[str] = []
    unread: list[str] = []
    for clause in _clauses(protected):
        is_label = clause.startswith("\x00label\x00")
        clause = clause.replace("\x00label\x00", "")
        target = label_rules if is_label else rules
        lead = re.match(r"^([^,]{3,80}),\s+\S", clause)
        setting = _setting(lead.group(1)) if lead else None  # for every rule of the clause
        for piece in _with_negations_kept(_pieces(clause)):
            found = declared_change(piece) or _rewrite(piece)  # "We moved X to Y" first
            if found:
                target.extend(with_setting(r, setting) for r in _split_compound(found))
                continue
            if is_label:
                continue
            # Last resort: a leading condition or aside ("If you show output, put it ...").
            sub = [p for p in re.split(r",\s+", piece) if p.strip()]
            before = len(target)
            if len(sub) > 1:
                for p in sub:
                    found = _rewrite(p)
                    if found:
                        target.extend(with_setting(r, setting) for r in _split_compound(found))
            if len(target) == before and asks_something(piece):
                unread.append(piece.strip())
    if not rules:
        rules = label_rules
    if missed is not None and rules:  # with no rule at all the sentence is reported whole
        missed.extend(_restore(u, spans) for u in unread)
    return [_restore(r, spans) for r in rules]


#: The subject of a description: "The steps are ...", "the variable names were ...".
_SUBJECT_RE = re.compile(
    r"^(?:[A-Z][a-z]+,\s+)?((?:the|these|those|your|our|all|every|each)\s+(?:[\w-]+\s+){0,3}?[\w-]+)\s+"
    r"(?:is|are|was|were|has|have|had|still|only|don't|doesn't|never|all)\b", re.I)


def subject_of(description: str) -> str | None:
    """The noun phrase a description is about, or None."""
    pm = _SUBJECT_RE.match(description.strip())
    return pm.group(1) if pm else None


def _with_subject(rule: str, subject: str) -> str:
    """`rule` with its first "them"/"it" replaced by `subject` when the number agrees."""
    m = re.search(r"\b(them|it)\b", rule)
    if not m:
        return rule
    plural = subject.split()[-1].lower().endswith("s") and not subject.split()[-1].lower().endswith("ss")
    if (m.group(1) == "them") != plural:
        return rule
    return rule[: m.start()] + subject[:1].lower() + subject[1:] + rule[m.end():]


def _resolve_pronoun(rule: str, previous: str | None) -> str:
    """'Number them.' after 'The steps are bullets.' -> 'Number the steps.' (short rules only)."""
    if not previous or len(_words(rule)) > 5:
        return rule
    subject = subject_of(previous)
    return _with_subject(rule, subject) if subject else rule


def normalise_rule(sentence: str) -> str | None:
    """A sentence as an imperative rule ("Use parameterised queries."), or None if no advice.

    A sentence holding several pieces of advice ("Use X and label Y.") comes back as one string
    of several imperative sentences; :meth:`RuleDistiller.rules_from_critique` keeps them apart.
    """
    if not sentence or not sentence.strip():
        return None
    rules = _rules_in_sentence(sentence.strip())
    if not rules:
        return None
    return rules[0] if len(rules) == 1 else " ".join(rules)
