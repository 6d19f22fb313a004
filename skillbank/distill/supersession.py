"""When a newer instruction overrules an older one, read from plain language (no model).

People correct their own rules in passing: "Use 'must' instead of 'shall' for obligations",
"Tests now go beside the code they test, not in a separate tests/ folder", "Stop using tabs;
indent Python with 4 spaces", "From now on, sign replies as the team", "We changed our commit
convention: write commit messages in the imperative mood". Read as paraphrases (they share most
words with the rule they replace), each was merged into the old rule and the user's newest word
was lost. This module says when a new rule *overrules* an old one, before any merge is weighed:

* **rejection**: the new rule rejects (``instead of``, ``not``, ``rather than``, ``stop``,
  ``never``, ``no longer`` ...) something the old rule asks for, or asks for what the old one
  rejects, and the two are about the same things (at least half of the smaller rule's content
  words shared). Quoted words count here: in "Use 'must' instead of 'shall'" the quotes *are* the
  subject.
* **announced change**: the critique sentence announces a change ("from now on", "we changed",
  "no longer", "going forward", "switch to", "as of today", "no more", "is ... now",
  "actually") and the new rule has the same action (or re-sets a value, ``rule_numbers.resets_value``)
  on the same subject as the old one but asks for something else (the old rule's objects are not
  all in the new one: "Add tests for edge cases from now on" refines "Add tests", it does not
  overrule it).
* **changed number**: the same action on mostly the same objects with another number ("Keep
  functions under 40 lines" after "... under 50 lines"; a limit, a count, a version), see
  ``rule_numbers.number_change``.
* **negated action**: the same main verb, opposite polarity, and the negation names nothing the
  other rule does not ("Never deploy on Fridays" after "Deploy on Friday afternoons"), see
  :func:`negated_action`.

A negation or replacement is therefore never "the same rule": the caller supersedes the old one
and the newer instruction is the one served. The other way round matters as much: a rule that
only *names* an older rule's things does not retire it. A negation after a verb that is not
one of choosing forbids its action ("Never rename a column of the orders table" does not
overrule "Write the orders table migration in British English", :func:`names_more`); asides,
stated purposes, quoted titles and a word quoted in one rule only are not what a rule asks
for; an antonym pair needs one slot. The announced change needs two of the old rule's objects
or most of them.

Three verb lists, one question each: ``_OBJECT_IS_CHOICE`` (after a negation, is the object
what is rejected?), ``_SLOT_VERBS`` (may an antonym pair on these verbs' objects be one
choice?) and ``_CHOOSING_VERBS`` (does a one-word rule choose, see :func:`_chooses`).
"""

from __future__ import annotations

import re

from skillbank.distill.relations import (_ANTONYM_WORDS, _CHOOSING_RE, _CONTEXT_RE, _FLIP_RE,
                                         NEGATED_HEAD_RE, _action, _antonym_conflict,
                                         _choices_differ, _content, _forbids_removal, _objects,
                                         _polarity, _stem, object_phrase,
                                         _plain, transform_parts)
from skillbank.distill.rule_numbers import _chosen, number_change, resets_value
from skillbank.distill.cues import cue_scope
from skillbank.distill.foreign_changes import foreign_overrule
from skillbank.distill.vocabulary import _NEGATIVE_VERBS, _STOPWORDS

#: A sentence that announces a change of practice.
CHANGE_RE = re.compile(
    r"\b(?:from now on|going forward|moving forward|no longer|not anymore|any ?more|"
    r"we(?:'ve| have)? (?:changed|switched|moved|updated|decided)|(?:has|have) changed|"
    r"switch(?:ed|ing)? (?:to|over)|as of (?:today|now|this)|starting (?:today|now)|"
    r"from today|(?:the )?new (?:rule|convention|policy|style|standard) is|changed to)\b|"
    # Plain-language corrections (learning-loop hunt #3): "No more Jest; use Vitest", "We
    # switched from Jest to Vitest", "The term is five years now, not three", "Actually, ...".
    r"\b(?:no more|(?:switched|moved|migrated) from|(?:is|are) now|now,? (?:not|instead))\b|"
    r"\b(?:is|are) \w+(?: \w+)? now\b(?=[.!]?$|,)|^\s*actually\b",
    re.I)

_QUOTED = re.compile(r"`([^`]{1,40})`|(?<![A-Za-z])'([^'\n]{1,40})'(?![A-Za-z])|"
                     r"\"([^\"\n]{1,40})\"|“([^”]{1,40})”|(?<![A-Za-z])‘([^’]{1,40})’(?![A-Za-z])")




def _words(piece: str, quoted: set[str]) -> set[str]:
    """Content words, antonym-pair words ("tabs") and quoted words ("'shall'") of a piece."""
    out = set(_content(piece))
    for word in re.findall(r"[a-z0-9_$/-]+", piece):
        stem = _stem(word)
        if word in _ANTONYM_WORDS or stem in _ANTONYM_STEMS or word in quoted:
            out.add(stem)
    return out


_ANTONYM_STEMS = frozenset(_stem(w) for w in _ANTONYM_WORDS)


#: Verbs whose object *is* the choice: "Do not use tables" rejects tables, "Avoid nested
#: subqueries" rejects subqueries. After any other verb a negation rejects the doing, not the
#: things named: "Never rename a column of the orders table" rejects renaming, and the orders
#: table stays something the rules may both speak of (it retired "Write the orders table
#: migration in British English").
_OBJECT_IS_CHOICE = frozenset("use prefer choose pick switch opt stick adopt favour favor "
                              "include".split()) | _NEGATIVE_VERBS

#: A positive rule's setting: "Use tables *for comparisons*" asks for tables, not comparisons.
_SETTING_RE = re.compile(r"\b(?:for|when|whenever|during|if|while)\b")

#: A removal in the middle of a rule turns what follows into what it rejects ("Use plain
#: language and leave out team names").
_REMOVAL_RE = re.compile(r"\b(?:leave out|leaving out|omit(?:ting)?|exclud(?:e|ing)|"
                         r"avoid(?:ing)?|remov(?:e|ing)|drop(?:ping)?|skip(?:ping)?)\b")

#: The reason a rule gives is not what it asks for: "... so readers can tell commands apart",
#: "... so one-to-many joins do not duplicate rows".
_PURPOSE_RE = re.compile(r"(?:,\s*|(?<![\s,])\s+)(?:so that|so|because|since)\s+\S.*$",
                         re.I | re.S)

#: A parenthesis holds examples or an aside ("(IS NULL, COALESCE, NOT EXISTS rather than NOT
#: IN)", "(there's no import for `BatchClient`)"), not the rule's choice.
_ASIDE_RE = re.compile(r"(?<!\s)\s*\((?P<inner>[^()]*)\)|^\s*\((?P<lead>[^()]*)\)")


def _without_asides(rule: str) -> str:
    """The rule without its parentheses (outside code) and without its stated purpose."""
    def drop(m: re.Match[str]) -> str:
        inside_code = rule.count("`", 0, m.start()) % 2 == 1  # `except (ValueError, ...)`
        # "Deploy with Helm (not kubectl apply)": a parenthesis that names what is rejected
        # is part of the choice.
        inner = m.group("inner") if m.group("inner") is not None else m.group("lead") or ""
        flips = re.search(r"\b(?:not|instead of|rather than)\b", inner, re.I) \
            and not _SQL_NOT_RE.search(inner)
        return m.group(0) if inside_code or flips else ""
    bare = _ASIDE_RE.sub(drop, rule)
    purpose = _PURPOSE_RE.search(bare)
    if purpose and _content(bare[: purpose.start()]):
        bare = bare[: purpose.start()]
    return bare


#: "NOT IN", "NOT EXISTS": SQL in capitals names an operator; "Use spaces, NOT tabs" does flip.
_SQL_NOT_RE = re.compile(r"\s+(?:IN|EXISTS|NULL|LIKE|BETWEEN)\b")


def _mentioned(rule: str, start: int, end: int) -> bool:
    """Whether the flip word at rule[start:end] is code or inside a quoted term ("`NOT
    EXISTS`") or an SQL operator in capitals ("NOT IN"), which names something and negates
    nothing."""
    if rule[start:end] in ("NOT", "NO") and _SQL_NOT_RE.match(rule, end):
        return True
    return any(m.start() < start and end <= m.end() for m in _QUOTED.finditer(rule))


def stance(rule: str, named_only: bool = False) -> dict[str, int]:
    """Word stem -> +1 asked for / -1 rejected / 0 named as the setting.

    Words before the first flip word ("instead of", "rather than", "not", "over" after a verb
    of choosing, "without", a removal such as "leave out") take the rule's polarity, words
    after it the opposite; unlike the merge cues, quoted words and antonym-pair words count,
    and a flip needs only *some* word before it ("Use 'must' instead of 'shall'"). Asides in
    parentheses and the rule's stated purpose are left out. With `named_only` (see
    :func:`names_more`), a negation after a known verb that is not one of choosing (see
    ``_OBJECT_IS_CHOICE``) rejects the doing, not the things it names: they score 0."""
    if ";" in rule:  # "Never put SQL in f-strings; use bound parameters": each part its own
        out: dict[str, int] = {}
        for part in rule.split(";"):
            for word, value in stance(part, named_only).items():
                out.setdefault(word, value)
        return out
    rule = _without_asides(rule)
    quoted = quoted_terms(rule)
    plain = _plain(rule).lower()
    base = _polarity(_plain(rule))
    turned = transform_parts(plain)
    if turned is not None:  # "Turn X into Y": away from X, towards Y (see relations)
        out = {}
        for piece, sign in zip(turned, (base, -base, base)):
            for word in _words(piece, quoted):
                out.setdefault(word, sign)
        return out
    cut = None
    flips = sorted([*_FLIP_RE.finditer(plain), *_REMOVAL_RE.finditer(plain)],
                   key=lambda m: m.start())
    for m in flips:
        before = plain[: m.start()]
        if m.group(0) == "over" and not _CHOOSING_RE.search(before):
            continue
        if _mentioned(rule, m.start(), m.end()):
            continue
        if _words(before, quoted) or (m.group(0) in ("instead of", "rather than")
                                      and re.search(r"[a-z]", before)):
            cut = m.start()
            break
    pieces = [plain] if cut is None else [plain[:cut], plain[cut:]]
    verb = _verb(_plain(rule))
    quoted_stems = {_stem(w) for w in quoted}
    terms = quoted_stems | _ANTONYM_STEMS
    out = {}
    for number, piece in enumerate(pieces):
        context = ""
        if number == 0:
            # A negated rule rejects its object, not the setting it names: "Do not use tables
            # in slides" rejects tables, not slides (as relations._stance reads it); a positive
            # one asks for its object, not its purpose ("Use tables for comparisons").
            m = (_CONTEXT_RE if base < 0 else _SETTING_RE).search(piece)
            if m and _words(piece[: m.start()], quoted):
                piece, context = piece[: m.start()], piece[m.start():]
        plain_object = (named_only and number == 0 and base < 0 and verb is not None
                        and verb not in _OBJECT_IS_CHOICE)
        for word in _words(piece, quoted):
            # "Never rename a column": the column is named, renaming is rejected; a quoted
            # term or a side of an antonym pair is still what the rule is against.
            value = 0 if plain_object and word not in terms else (base if number == 0 else -base)
            out.setdefault(word, value)
        for word in _words(context, quoted):
            # A quoted term in a negated rule's setting is still what it is against ("Do not
            # prefix shell commands with `$`"); "in the first reply" is only where.
            out.setdefault(word, base if base < 0 and word in quoted_stems else 0)
    return out


def has_flip(rule: str) -> bool:
    """Whether the rule names what it replaces ("X instead of Y", "X, not Y")."""
    n = stance(rule)
    return any(v > 0 for v in n.values()) and any(v < 0 for v in n.values())


def _made_into(rule: str, other: dict[str, int]) -> set[str]:
    """The words of what `rule` turns into something ("Turn the nested subqueries into CTEs.")
    when the `other` stance asks for every word of that something; else none. An other rule
    that rejects the target ("..., not CTEs") keeps the opposition."""
    from skillbank.distill.relations import _content, transform_parts

    parts = transform_parts(rule)
    if parts is None:
        return set()
    target = _content(parts[2])
    if not target or any(other.get(w, 0) <= 0 for w in target):
        return set()
    return set(_content(parts[1]))


def overrules(new: str, old: str, sentence: str | None = None) -> str | None:
    """Why `new` (from critique `sentence`) overrules `old`, or None when it does not."""
    if not new or not old:
        return None
    head, _, alternative = new.partition(";")
    if _action(_plain(alternative)) in _CHOOSING_VERBS:
        # "Stop using pandas; use polars.": the negation half rejects on its own (learning-loop
        # hunt #7: joined to its alternative, it no longer retired "Use pandas ...").
        why = overrules(head, old, sentence)
        if why:
            return why
    n, o = stance(new, names_more(new, old)), stance(old, names_more(old, new))
    for verb in (_verb(_plain(new)), _verb(_plain(old))):
        if verb:  # "Never log passwords" does not overrule "Log errors": objects decide
            n.pop(_stem(verb), None)
            o.pop(_stem(verb), None)
    # A word quoted in one rule only is two things: 'Support' the sign-off is not the support
    # emails ("Sign off with your first name, not just 'Support'" agrees with "Sign support
    # emails with your first name").
    for word in {_stem(w) for w in quoted_terms(new) ^ quoted_terms(old)}:
        for stances in (n, o):
            if word in stances:
                stances[word] = 0
    pair = _antonym_conflict(_untitled(new), _untitled(old))
    if pair is not None and not _choices_differ(pair, n, o):
        # "Don't write long paragraphs" agrees with "Keep paragraphs short": both choose short.
        return None
    matter = sorted(_matter(_untitled(new)) & _matter(_untitled(old))) if pair else []
    if pair is not None and (_one_slot(new, old) or len(matter) >= 2) and not two_things(new, old):
        # Opposite sides of an antonym pair on the same matter: "Sign off as 'The Acme Support
        # Team' rather than with individual names" overrules "Include the personal sign-off"
        # (served for weeks after the change before). The matter is a word both rules name
        # besides their verbs and the antonyms, a compound read in parts ("sign-off").
        if matter:
            return (f"opposite sides {pair[0]!r} / {pair[1]!r} on the same matter "
                    f"({', '.join(repr(w) for w in matter)})")
    if pair is None and not has_flip(new) and two_objects(new, old):
        return None
    shared = set(n) & set(o)
    smaller = min(len(n), len(o))
    overlap = len(shared) / smaller if smaller else 0.0
    # A thing one rule turns into something the other asks for too is no opposition: "Define
    # the same subquery once as a CTE." agrees with "Turn the nested subqueries into CTEs." (a
    # correct reading of "Define it once as a CTE." superseded it; session 38).
    made = _made_into(new, o) | _made_into(old, n)
    rejected = sorted(w for w in shared - made if n[w] < 0 < o[w])
    wanted = sorted(w for w in shared - made if n[w] > 0 > o[w])
    # Both rules rejecting the same thing are on one side ("... not with your name" and
    # "... leave out team names"), whatever else a word shares.
    agreed = [w for w in shared if n[w] < 0 and o[w] < 0]
    # Naming both sides ("X instead of Y") is stronger evidence than a bare negation, which
    # must be about mostly the same things ("Stop using conventional commit messages" does not
    # overrule "Move the refactor into its own commit").
    enough = overlap >= 0.5 if has_flip(new) else overlap > 0.5
    # One shared word is enough only for a one-word rule that chooses or rejects ("Stop using
    # tabs", "Use tabs"), not any action naming the word: "Reference the same subquery" is
    # not overruled by "Avoid nested subqueries", nor "Add test." by "Delete test
    # environments after 7 days"; "Sign as the team, not with your name" does not overrule
    # "Address the customer by name". With the same verb it does: "Indent with spaces, NOT
    # tabs" overrules "Indent with tabs".
    one_word = [text for text, stances in ((new, n), (old, o)) if len(stances) <= 1]
    same_verb = _verb(_plain(new)) is not None and _verb(_plain(new)) == _verb(_plain(old))
    enough = enough and (len(shared) >= 2 or (bool(one_word) and (
        same_verb or all(map(_chooses, one_word)))))
    if (rejected or wanted) and enough and len(agreed) < len(rejected) + len(wanted):
        stems = set(rejected or wanted)
        surface = list(dict.fromkeys(w for w in re.findall(r"[a-z0-9_$/-]+", _plain(new).lower())
                                     if _stem(w) in stems)) or sorted(stems)
        words = ", ".join(repr(w) for w in surface)
        verb = "rejects" if rejected else "asks for"
        other = "asks for" if rejected else "rejects"
        return f"opposite stance: the newer rule {verb} {words}, which the older one {other}"
    negated = negated_action(new, old)
    if negated:
        return negated
    changed = number_change(new, old)
    if changed:
        return changed
    said = cue_scope(sentence, new)  # the rule's own clause: not "now that ...", not "too"
    if said is not None and CHANGE_RE.search(said) and not CHANGE_RE.search(old):
        action = _action(_plain(new))
        old_verb = _action(_plain(old))
        if action is not None and (action == old_verb or resets_value(new, old)):
            mine, theirs = _objects(_plain(_chosen(new)), action), _objects(_plain(old), action)
            if old_verb not in mine:  # "run" is not a thing "Run the backups at midnight." names
                theirs.discard(old_verb)
            common = mine & theirs
            # More than one word of the old rule's things, or most of them: "Give product
            # dimensions in imperial units from now on" changes "Give product dimensions in
            # metric units", not "Give the chart axis units (signups per day)".
            if (common and not theirs <= mine and mine - theirs
                    and (len(common) >= 2 or 2 * len(common) >= len(theirs))):
                how = "the same action" if action == _action(_plain(old)) else "re-set by"
                return (f"announced change: {how} {action!r} on "
                        f"{', '.join(repr(w) for w in sorted(common))}, asking for "
                        f"{', '.join(repr(w) for w in sorted(mine - theirs))} now")
    return foreign_overrule(new, old, sentence)  # "ab sofort", "désormais", "niemals"/"immer"


def _verb(plain: str) -> str | None:
    """The rule's main verb: ``relations._action``, else the word right after a negated head
    ("Never paste ...", "No longer add ...": verbs the lemma list does not know)."""
    verb = _action(plain)
    if verb is None:
        m = NEGATED_HEAD_RE.match(plain)
        verb = m.group("verb").lower() if m else None
    return verb


def names_more(rule: str, other: str) -> bool:
    """Whether `rule` negates a known verb that is not one of choosing and names things
    `other` does not: then it forbids its action and only names the things ("Never rename a
    column of the orders table in a migration." against "Write the orders table migration in
    British English."). A negation that names nothing else rejects them: "Never store
    passwords in the config file." does overrule "Keep passwords in the config file."."""
    plain = _plain(rule.split(";")[0])
    verb = _verb(plain)
    if _polarity(plain) >= 0 or verb is None or verb in _OBJECT_IS_CHOICE:
        return False
    if _forbids_removal(other):
        return True  # "Never drop a column ..." keeps the column: "Never rename" it agrees
    theirs = _objects(_plain(other), _verb(_plain(other)))
    return not _objects(plain, verb) <= theirs


def names_only(new: str, old: str, opposed: set[str]) -> bool:
    """Whether the words two rules seem to disagree on (`opposed`, read word by word as
    ``relations._compare`` does) are only things a negated rule names while it forbids another
    action (:func:`names_more`): "Never import a CSV file without a header row." names the CSV
    files that "Always check the CSV file delimiter before an import." is about; it forbids
    importing, it does not reject CSV files. Not for the same main verb, nor with a
    plain-language overrule (:func:`overrules`)."""
    a, b = _verb(_plain(new)), _verb(_plain(old))
    if not opposed or a == b or overrules(new, old) is not None:
        return False
    for rule, other in ((new, old), (old, new)):
        if _polarity(_plain(rule)) < 0:
            if not names_more(rule, other):
                return False
            named = stance(rule, named_only=True)
            return all(named.get(word, 0) == 0 for word in opposed)
    return False


def negated_action(new: str, old: str) -> str | None:
    """Why `new` negates the very action `old` asks for (or the reverse), or None: the same
    main verb (not one of choosing), opposite polarity, and the negation naming nothing the
    other rule does not, which asks for what they share ("Never deploy on Fridays" after
    "Deploy on Friday afternoons"; "Do not prefix shell commands with `$`" after "Prefix shell
    commands in code blocks with `$ `")."""
    # A rule in parts ("Never store secrets in environment variables; use the vault") negates
    # in its first part.
    new, old = new.split(";")[0], old.split(";")[0]
    action = _verb(_plain(new))
    if action is None or action != _verb(_plain(old)) or action in _OBJECT_IS_CHOICE:
        return None  # "Never use OFFSET for deep pagination" agrees with "Use keyset pagination"
    if _polarity(_plain(new)) == _polarity(_plain(old)):
        return None
    mine = _objects(_plain(_without_asides(new)), action)
    theirs = _objects(_plain(_without_asides(old)), action)
    common = mine & theirs
    # The negation names nothing the other rule does not: "Never deploy on Fridays" negates
    # "Deploy on Friday afternoons"; "Don't deploy the frontend on Fridays" leaves "Deploy the
    # backend on Fridays" alone, and "Never log request bodies" "Log request IDs".
    negated, asked = (mine, theirs) if _polarity(_plain(new)) < 0 else (theirs, mine)
    if not common or not negated <= asked:
        return None
    # What the negation rejects must be what the other rule asks for, not what it rejects too
    # ("Do not catch bare exceptions" agrees with "Catch specific exceptions instead of bare
    # ones") or names as its setting ("... for body text, tables, code and chart labels").
    asks = stance(new if _polarity(_plain(new)) > 0 else old)
    if not any(asks.get(w, 0) > 0 for w in common) or any(asks.get(w, 0) < 0 for w in common):
        return None
    verb = "rejects" if _polarity(_plain(new)) < 0 else "asks for"
    return (f"negated action: the newer rule {verb} {action!r} on "
            f"{', '.join(repr(w) for w in sorted(common))}, the older one the opposite")


def _one_slot(new: str, old: str) -> bool:
    """Whether two rules fill one slot: the same main verb, or a verb of choosing on either
    side ("Include the personal sign-off" / "Switch the sign-off to the team signature").
    "Show the output after each command" and "Answer those before the first command" share a
    word and an antonym pair, yet act on different things."""
    a, b = _verb(_plain(new)), _verb(_plain(old))
    return (a is not None and a == b) or a in _SLOT_VERBS or b in _SLOT_VERBS


#: Verbs whose object is the choice an antonym pair names ("Make commands bare").
_SLOT_VERBS = _OBJECT_IS_CHOICE | {"make", "prefix"}


def _untitled(rule: str) -> str:
    """The rule without quoted titles: a quoted phrase that reads as a sentence (two function
    words or more) is mentioned, not used: "Split the 'What we keep and for how long'
    paragraph" says nothing about length, while 'The Acme Support Team' is the sign-off."""
    def drop(m: re.Match[str]) -> str:
        inner = next(g for g in m.groups() if g)
        words = re.findall(r"[a-z']+", inner.lower())
        return " " if sum(w in _STOPWORDS for w in words[1:]) >= 2 else m.group(0)
    return _QUOTED.sub(drop, rule)


_CHOOSING_VERBS = frozenset("use prefer choose pick switch opt stick adopt favour favor".split())


def _chooses(rule: str) -> bool:
    """Whether a rule chooses or rejects something (not just acts on it)."""
    return (_polarity(_plain(rule)) < 0 or has_flip(rule)
            or _action(_plain(rule)) in _CHOOSING_VERBS)


#: A rule that says it is the one in force now ("Use the current convention: ...").
_CURRENT_RE = re.compile(r"\b(?:current|latest|updated) (?:rule|convention|policy|style|standard|"
                         r"format|layout)\b", re.I)


def two_objects(new: str, old: str) -> bool:
    """The two rules act on two kinds of one thing: their direct objects end in the same noun
    and a different word of kind stands right before it ("error codes" / "currency codes",
    "the production database" / "the staging database"). "Never use error codes in the React
    frontend." read as overruling "Validate currency codes in the React frontend." (the noun
    and the setting in common), and through it every rule about currency codes (scale hunt,
    session 18). A quality is no kind ("long" / "detailed" docstrings, "internal" services),
    nor a number ("2-space" / "4-space" is a change)."""
    mine, theirs = object_phrase(new), object_phrase(old)
    if len(mine) < 2 or len(theirs) < 2 or _stem(mine[-1]) != _stem(theirs[-1]):
        return False
    a, b = mine[-2], theirs[-2]
    return _stem(a) != _stem(b) and _kind_word(a) and _kind_word(b)


#: Qualities, not kinds, before a noun (a rule that prefers one over the other is a change).
_QUALITIES = frozenset(
    "long short big small large tiny huge new old raw plain simple detailed brief full empty "
    "fast slow good bad high low clear verbose terse strict loose hard soft deep shallow "
    "inline external internal local global public private main extra".split())


def _kind_word(word: str) -> bool:
    """A word that names a kind of thing before a noun ("error", "currency", "staging"), not a
    quality ("detailed", "colorful", "long") or a number ("4-space")."""
    return (not any(c.isdigit() for c in word) and word not in _QUALITIES
            and not word.endswith(("ed", "ful", "ous", "ive", "al", "ic", "able", "ible",
                                   "less", "ish", "est", "er")))


def two_things(new: str, old: str) -> bool:
    """Two plain instructions, each about something of its own: neither rejects anything and
    each names matter the other does not (three words between them at least). An antonym pair
    between them is then no conflict:
    "End the deck with a next-steps slide." adds to "Start the deck with an agenda slide.",
    "Write table names in lowercase snake_case." to "Write SQL keywords in uppercase." (both
    were read as corrections and retired the older rule; `benchmarks/data/merge_pairs.jsonl`)."""
    for rule in (new, old):
        if (_polarity(_plain(rule)) < 0 or has_flip(rule) or CHANGE_RE.search(rule)
                or _CURRENT_RE.search(rule)):
            return False  # "Use the current convention: bare commands ..." is a correction
    a, b = _matter(_untitled(new)), _matter(_untitled(old))
    # More than one word for one: "... design docs" / "... design documents", "Python files" /
    # "Python code" are a correction restated in other words, not two things.
    return bool(a - b) and bool(b - a) and len(a - b) + len(b - a) >= 3


def _matter(rule: str) -> set[str]:
    """Content-word stems of a rule besides its verb and antonym-pair words; hyphenated
    compounds also by their parts ("sign-off" -> "sign", "off")."""
    plain = _plain(rule).lower()
    words = set(_content(plain))
    for compound in re.findall(r"[a-z]+(?:-[a-z]+)+", plain):
        words |= _content(" ".join(compound.split("-")))
    verb = _action(_plain(rule))
    if verb:
        words.discard(_stem(verb))
    return words


def echoes_overruled(new: str, overruled: str, other: str) -> str | None:
    """Why `other`, another wording of the rule `new` overrules (`overruled`), is overruled
    with it, or None.

    An old rule lives on in several wordings: "Sign off with your first name, not just
    'Support'." and "End with your first name (e.g. '- Maya')." were both active when "Sign
    off as 'The Acme Support Team' rather than with individual names." arrived; the second
    shares one word with the new rule, too little for :func:`overrules`, and kept being served.
    It is overruled when it asks for a word the new rule rejects *and* the overruled rule
    asked for, and says it of the same things as the overruled rule (at least one more content
    word in common): "Address the customer by name" shares only "name" and stands."""
    if not new or not overruled or not other:
        return None
    if not has_flip(new) and two_objects(overruled, other):  # "error codes" / "currency
        return None  # codes": not its wording (unless the new rule names both sides)
    n, o, s = stance(new), stance(overruled), stance(other)
    for text in (new, overruled, other):
        verb = _action(_plain(text))
        if verb:
            for stances in (n, o, s):
                stances.pop(_stem(verb), None)
    rejected = {w for w, v in n.items() if v < 0 and o.get(w, 0) > 0 and s.get(w, 0) > 0}
    if not rejected:
        return None
    alike = {w for w in set(o) & set(s) if w and w not in rejected}
    if not alike:
        return None
    return (f"another wording of the overruled rule: it asks for "
            f"{', '.join(repr(w) for w in sorted(rejected))}, which the newer rule rejects "
            f"(both old wordings speak of {', '.join(repr(w) for w in sorted(alike))})")


#: A critique saying a practice was dropped, and naming it: "we moved away from personal
#: sign-offs", "we're dropping the `$ ` prompt prefix". Often not a rule of its own (the
#: distiller reads no advice in it), yet it is the user's word that the practice is over.
DROPPED_RE = re.compile(
    r"\b(?:mov(?:ed|ing) away from|(?:are |were |'re )?dropp(?:ed|ing)|phas(?:ed|ing) out|"
    r"got rid of|getting rid of|stopp(?:ed|ing) (?:using|doing|adding|writing)|"
    r"no longer (?:use|using|do|doing|add|adding|want|allow)|retir(?:ed|ing)|"
    r"(?:are|is) deprecated:?)\s+(?P<what>[^.;:!?\n]{3,80})", re.I)


#: A negation just before the phrase ("we are NOT moving away from ...", "we haven't dropped
#: ..."): the critique says the practice stays, the opposite of a drop.
_NEGATED_RE = re.compile(r"(?:\bnot|n't|\bnever|\bno)\s+(?:[\w'-]+\s+){0,2}$", re.I)


def dropped(critique: str | None) -> list[str]:
    """The practices `critique` says were dropped, as it names them (not those it says were
    not: a trusted rule must not be superseded by a critique that keeps its practice)."""
    text = critique or ""
    return [m.group("what").strip() for m in DROPPED_RE.finditer(text)
            if not _NEGATED_RE.search(text[max(0, m.start() - 40):m.start()])]


def drops(practice: str, old: str) -> str | None:
    """Why the dropped `practice` (see :func:`dropped`) is what the rule `old` asks for, or
    None: the rule asks for its thing (it is not itself a rejection) and at least two of its
    content words (its main verb aside), and most of them, are in the practice's words."""
    if not practice or not old or _polarity(_plain(old)) < 0:
        return None
    quoted = quoted_terms(practice)
    said = _words(_plain(practice).lower(), quoted)
    said |= {_stem(w) for w in re.findall(r"[a-z0-9_$]+", _plain(practice).lower())}
    asked = {w for w, v in stance(old).items() if v > 0 and w}
    verb = _action(_plain(old))
    asked.discard(_stem(verb) if verb else "")
    parts = {p for w in asked for p in w.split("-")} if asked else set()
    covered = {w for w in asked if w in said or all(p in said for p in w.split("-"))}
    if len(covered) >= 2 and len(covered) * 2 > len(asked) and parts:
        return (f"the critique says {practice!r} was dropped, which the older rule asks for "
                f"({', '.join(repr(w) for w in sorted(covered))})")
    return None


def quoted_terms(rule: str) -> set[str]:
    """Words a rule puts in quotes or backticks: the exact terms it prescribes."""
    return {w.lower() for m in _QUOTED.finditer(rule) for g in m.groups() if g
            for w in re.findall(r"[A-Za-z0-9_$/-]+", g)}


def other_terms(new: str, old: str) -> bool:
    """Both rules prescribe exact terms and they differ ("Use 'must' ..." / "Use 'shall' ..."):
    not one rule, whatever the other words share."""
    a, b = quoted_terms(new), quoted_terms(old)
    return bool(a - b) and bool(b - a)
