"""Comparing two rules: stems, content words, polarity, per-object stance and antonym pairs.

These are the explainable cues behind :meth:`RuleDistiller.relate`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from skillbank.distill.morphology import _is_base_verb, _lemma
from skillbank.distill.sentences import _CODE_RE
from skillbank.distill.vocabulary import (_ANTONYMS, _LIGHT_WORDS, _NEGATIVE_VERBS, _NEGATORS,
                                          _PREPOSITIONS, _STOPWORDS)


_QUOTES = re.compile(r"[`'\"“”‘’]")
_APOSTROPHE = re.compile(r"(?<=[A-Za-z])['’](?=[A-Za-z])")


def _plain(text: str) -> str:
    """Quotes and backticks removed: here a quoted word is what the rule is about. An
    apostrophe inside a word stays ("Don't" is a negation, "don t" was read as a word)."""
    return _QUOTES.sub(" ", _APOSTROPHE.sub("\x01", text)).replace("\x01", "'")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A crude suffix-stripping stem (cached: rule comparison stems the same words often)."""
    w = word.lower().strip("'’.-")
    w = re.sub(r"'s$", "", w)
    for suffix, repl in (("ations", ""), ("ation", ""), ("ings", ""), ("ing", ""), ("ies", "y"),
                         ("ers", ""), ("er", ""), ("ed", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: len(w) - len(suffix)] + repl
            break
    else:
        if re.search(r"(?:s|x|ch|sh)es$", w) and len(w) > 4:
            w = w[:-2]
        elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
            w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _strip_mentions(text: str) -> str:
    """Drop inline code and quoted text: words inside them are mentioned, not used."""
    text = _CODE_RE.sub(" ", text)
    text = re.sub(r"(?<![\w])'(?:[^'\n]|'(?=\w)){1,200}?'(?![\w])", " ", text)
    return re.sub(r'"[^"\n]{1,200}?"|“[^”\n]{1,200}?”|‘[^’\n]{1,200}?’', " ", text)


def _polarity(text: str) -> int:
    """+1 positive, -1 negative, read from the head of the rule up to its main verb.

    Negators ("never", "do not", "no longer") and negative verbs ("avoid", "skip", "remove")
    combine by parity: "Never skip tests" is positive. Words after the main verb ("... without
    editing code") do not count, so an aside cannot flip a rule.
    """
    t = _strip_mentions(text).lower()
    t = t.replace("do not", "do-not").replace("don't", "do-not").replace("dont", "do-not")
    t = re.sub(r"\bno (?:more|less|fewer|longer|shorter|later|earlier|bigger|smaller) than\b", "at-most", t)
    t = re.sub(r"\bno longer\b", "no-longer", t)
    count = 0
    for w in re.findall(r"[a-z'-]+", t):
        if w in _NEGATORS or w in ("do-not", "no-longer", "cannot") or w.endswith("n't"):
            count += 1
            if w in _NEGATIVE_VERBS:  # "avoid", "stop": a negator that is also the main verb
                break
        elif w in _NEGATIVE_VERBS or _lemma(w) in _NEGATIVE_VERBS:
            count += 1
            break
        elif _is_base_verb(w) and w not in ("do", "be"):
            break  # the main verb: the rest of the rule is its object
    return -1 if count % 2 else 1


def _antonym_words() -> frozenset[str]:
    return frozenset(w for pair in _ANTONYMS for w in pair)


_ANTONYM_WORDS = _antonym_words()
_ANTONYM_WORD_STEMS = frozenset(_stem(a) for a in _ANTONYM_WORDS)


def _content(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[a-z][a-z0-9_'-]*", text.lower()):
        if w in _LIGHT_WORDS or w in _STOPWORDS or w in _NEGATORS or w in _NEGATIVE_VERBS:
            continue
        if w in _ANTONYM_WORDS or _stem(w) in _ANTONYM_WORD_STEMS:
            continue
        if len(w) < 3:
            continue
        out.add(_stem(w))
    return out


def _antonym_words_of(text: str) -> set[str]:
    # "us" the pronoun is not "US" the country: only the capitalised one can pair with "UK".
    # A word in capitals is code or an acronym ("INNER/LEFT JOIN"), not the adjective: LEFT
    # is no opposite of "the right grain" (learning loop, dev: a false supersession).
    text = re.sub(r"\bus\b", " ", text)
    words = {w.lower() for w in re.findall(r"[A-Za-z_]+", text)
             if not (len(w) > 1 and w.isupper()) or w in ("UK", "US")}
    return words | {_stem(w) for w in words}


def _antonym_conflict(a: str, b: str) -> tuple[str, str] | None:
    wa, wb = _antonym_words_of(a), _antonym_words_of(b)
    for x, y in _ANTONYMS:
        sx, sy = _stem(x), _stem(y)
        ax, ay = (x in wa or sx in wa), (y in wa or sy in wa)
        bx, by = (x in wb or sx in wb), (y in wb or sy in wb)
        if (ax and by and not ay and not bx) or (ay and bx and not ax and not by):
            return (x, y)
    return None


#: Words after which the rest of a rule is what it rejects ("X instead of Y", "X, not Y").
_FLIP_RE = re.compile(r"\b(?:instead of|rather than|not|over|without|no)\b", re.I)
#: "over" rejects only after a verb of choosing ("prefer X over Y", not "loop over the list").
_CHOOSING_RE = re.compile(r"\b(?:prefer|favou?r|choos|pick|select|opt)\w*\b", re.I)
_AT_MOST_RE = re.compile(
    r"\bno (?:more|less|fewer|longer|shorter|later|earlier|bigger|smaller|wider) than\b", re.I)
#: Wording with which a new rule announces that it changes an older practice.
_CHANGE_RE = re.compile(r"\b(?:switch(?:ed|ing)? to|from now on|no longer|not anymore|"
                        r"going forward|moving forward)\b", re.I)


#: Verbs that turn their object into something else: "Turn X into Y", "Replace X with Y",
#: "Rewrite X as Y". They move away from X and ask for Y ("Turn the nested subqueries into
#: CTEs" rejects nested subqueries; read as asking for them, "Avoid nested subqueries" overruled
#: it on the critique stream). Not "change" / "switch" / "move": their object is a slot or a
#: thing relocated ("Switch the sign-off to the team signature", "Move the detail into notes").
_TRANSFORM_RE = re.compile(
    r"^\W*(?:(?:always|never|do not|don't|please)\s+)*(?P<verb>turn|convert|rewrite|replace|swap|"
    r"translate|refactor)\s+(?P<what>.+?)\s+(?:into|to|with|as|for)\s+(?P<target>.+)$", re.I)


def transform_parts(rule: str) -> tuple[str, str, str] | None:
    """(verb, what is turned away from, what it becomes) of a transforming rule, or None."""
    m = _TRANSFORM_RE.match(rule.strip())
    if not m or not _content(m.group("what")):
        return None
    return m.group("verb"), m.group("what"), m.group("target")


def _stance(rule: str) -> dict[str, int]:
    """Content word -> +1 (the rule asks for it) or -1 (the rule rejects it).

    Stance is read per *object*, not per sentence: in "Use CTEs instead of nested subqueries"
    CTEs are wanted and subqueries rejected. Words before the first flip word ("instead of",
    "rather than", "not", "over", "without", "no") take the sentence's polarity (negative when
    its head is negated: "Never use ...", "Avoid ...", but not "Never skip ..."); words after it
    take the opposite. A word keeps the stance of its first mention.

    Only a flip after something the rule is about counts: in "Do not prefix ...", "You should
    not use ..." or "Please don't ..." the negation is the rule's head (its polarity), not a
    rejection of what follows. Known limits: a negated sentence's polarity reaches every word,
    its verb included ("Never log passwords" vs "Log errors, not passwords" disagree on "log").
    """
    lowered = _strip_mentions(rule).lower().replace("`", " ")
    lowered = _AT_MOST_RE.sub("at most", lowered)
    base = _polarity(rule)
    turned = transform_parts(lowered)
    if turned is not None:  # "Turn X into Y": away from X, towards Y
        out: dict[str, int] = {}
        for piece, sign in zip(turned, (base, -base, base)):
            for word in _content(piece):
                out.setdefault(word, sign)
        return out
    cuts = [m.start() for m in _FLIP_RE.finditer(lowered)
            if _content(lowered[: m.start()])
            and (m.group(0) != "over" or _CHOOSING_RE.search(lowered[: m.start()]))]
    pieces = [lowered[: cuts[0]], lowered[cuts[0]:]] if cuts else [lowered]
    out = {}
    for number, piece in enumerate(pieces):
        context = ""
        if number == 0 and base < 0:
            # A negated rule rejects its action and object, not the setting it names: "Avoid
            # jargon in error messages" rejects jargon, not error messages; "Never deploy on
            # Fridays" rejects deploying (on Fridays). Words after the first preposition that
            # follows the object are context: stance 0, shared but never opposed.
            m = _CONTEXT_RE.search(piece)
            if m and _content(piece[: m.start()]):
                piece, context = piece[: m.start()], piece[m.start():]
        for word in _content(piece):
            out.setdefault(word, base if number == 0 else -base)
        for word in _content(context):
            out.setdefault(word, 0)
    return out


#: A parenthesis with no flip inside: examples of what the rule is about ("(jQuery, Lodash)")
#: or a label ("(plain bank)"). One with a flip ("(not kubectl apply)", "(IS NULL ... rather
#: than NOT IN)") names a choice and is always read with the rule.
_PAREN_RE = re.compile(r"\(([^()]*)\)")


def _label_words(rule: str, other: set[str]) -> set[str]:
    """The words `rule` has only inside its parentheses, when the rest of it shares nothing with
    `other` (the other rule's words): then the parenthesis is a label the two happen to share,
    not a choice one rejects and the other asks for.

    Why: "Never use passive voice (plain bank)." retired "Always sign emails as plain bank."
    (LlamaIndex hunt, session 21, #7). A parenthesis of examples on a shared matter still
    opposes: "Avoid heavy libraries (jQuery, Lodash) in the frontend." overrules "Use jQuery
    and Lodash in the frontend." (the frontend is shared; review of session 21)."""
    lowered = _strip_mentions(rule).lower().replace("`", " ")
    inside: set[str] = set()

    def drop(m: re.Match[str]) -> str:
        if _FLIP_RE.search(m.group(1)) or not _content(lowered[: m.start()]):
            return m.group(0)
        inside.update(_content(m.group(1)))
        return " "
    outside = set(_content(_PAREN_RE.sub(drop, lowered)))
    return set() if outside & other else inside - outside


_CONTEXT_RE = re.compile(r"\b(?:in|on|at|for|with|to|from|when|during|inside|within|into|under)\b")


def _antonym_stance(rule: str) -> dict[str, int]:
    """Antonym-pair words (stems) -> +1 wanted / -1 rejected, read like :func:`_stance`:
    "Indent with spaces, not tabs" wants spaces and rejects tabs."""
    lowered = _strip_mentions(rule).lower().replace("`", " ")
    lowered = _AT_MOST_RE.sub("at most", lowered)
    base = _polarity(rule)
    cuts = [m.start() for m in _FLIP_RE.finditer(lowered)
            if _content(lowered[: m.start()])
            or _antonym_words_of(lowered[: m.start()]) & _ANTONYM_WORDS
            if m.group(0) != "over" or _CHOOSING_RE.search(lowered[: m.start()])]
    pieces = [lowered[: cuts[0]], lowered[cuts[0]:]] if cuts else [lowered]
    stems = {_stem(a): a for a in _ANTONYM_WORDS}
    out: dict[str, int] = {}
    for number, piece in enumerate(pieces):
        for word in re.findall(r"[a-z_]+", piece):
            key = word if word in _ANTONYM_WORDS else stems.get(_stem(word))
            if key:
                out.setdefault(key, base if number == 0 else -base)
    return out


def _choices_differ(pair: tuple[str, str], new: dict[str, int], old: dict[str, int]) -> bool:
    """Whether two rules choose different sides of an antonym pair, reading rejections too:
    wanting "team" and rejecting "individual" are the same choice."""
    x, y = pair

    def choice(stance: dict[str, int]) -> str | None:
        if stance.get(x, 0) > 0 or stance.get(y, 0) < 0:
            return x
        if stance.get(y, 0) > 0 or stance.get(x, 0) < 0:
            return y
        return None

    a, b = choice(new), choice(old)
    return a is None or b is None or a != b


@dataclass
class _Comparison:
    shared: set[str]
    opposed: set[str]
    antonym: tuple[str, str] | None
    change: bool
    same_matter: bool
    overlap: float = 1.0  # shared content words / the smaller rule's content words

    @property
    def lexical_conflict(self) -> bool:
        """A contrast in the words: one rule wants what the other rejects, or antonyms on the
        same matter.

        Opposition counts only when the rules are mostly about the same things (more than half
        of the smaller rule's content words shared): "Never log passwords" does not overrule
        "Log the error with its traceback", nor "Await every promise" "Never promise a refund";
        "Never deploy on Fridays" does overrule "Deploy on Friday afternoons"."""
        return ((bool(self.opposed) and self.overlap > 0.5)
                or (self.same_matter and self.antonym is not None))

    @property
    def announced_change(self) -> bool:
        """The new rule announces a change ("from now on", "switch to") to a shared practice:
        weaker evidence, so it needs rules that are clearly related."""
        return bool(self.shared) and self.change


def _compare(new: str, old: str) -> _Comparison:
    new_stance, old_stance = _stance(new), _stance(old)
    shared = set(new_stance) & set(old_stance)
    opposed = {w for w in shared
               if new_stance[w] and old_stance[w] and new_stance[w] != old_stance[w]}
    opposed -= _label_words(new, set(old_stance)) | _label_words(old, set(new_stance))
    # One antonym wanted by one rule and rejected by the other ("with spaces, not tabs" after
    # "with tabs") is opposition too, once the rules share what they are about.
    new_ant, old_ant = _antonym_stance(new), _antonym_stance(old)
    if shared:
        opposed |= {w for w in set(new_ant) & set(old_ant) if new_ant[w] != old_ant[w]}
    antonym = _antonym_conflict(_strip_mentions(new), _strip_mentions(old))
    if antonym is not None and not _choices_differ(antonym, _antonym_stance(new),
                                                   _antonym_stance(old)):
        antonym = None  # "Sign as the team" agrees with "..., rather than individual names"
    # Change wording counts only when the new rule also says something the old one does not.
    new_plain, old_plain = _AT_MOST_RE.sub("at most", new), _AT_MOST_RE.sub("at most", old)
    change = (bool(_CHANGE_RE.search(new_plain)) and not _CHANGE_RE.search(old_plain)
              and bool(set(new_stance) ^ set(old_stance)))
    # Same matter: a shared key word, or nothing but antonyms tells them apart ("Use tabs." vs
    # "Use spaces.").
    same_matter = bool(shared) or (set(new_stance) == set(old_stance) and antonym is not None)
    smaller = min(len(new_stance), len(old_stance))
    overlap = len(shared) / smaller if smaller else 0.0
    return _Comparison(shared, opposed, antonym, change, same_matter, overlap)


_HEAD_WORDS = frozenset("always never do not don't dont please also just only still".split())
_LIMIT_WORDS = frozenset("under over above below per than least most every each all".split())


def prohibition_against_another_action(new: str, old: str) -> bool:
    """One rule forbids (or avoids) an action and the other prescribes a different one ("Never
    import without a header row." / "Always check the CSV delimiter before you import."): two
    instructions, however alike their words or their meaning look, so never one rule. Read by
    polarity (`_polarity`): "Never log passwords." and "Avoid logging passwords." are alike.
    A forbidden removal ("Never drop a column of the orders table in a migration.") is a
    prohibition too, though positive by parity: it merged into "Write the orders table
    migration in British English." and was lost. It is one only when it names something the
    other rule does not: "Never skip the tests before merging." is "Always run the tests
    before merging."."""
    if _action(new) == _action(old):
        return False
    if _polarity(new) != _polarity(old):
        return True
    if _forbids_removal(new) == _forbids_removal(old):
        return False
    remover, other = (new, old) if _forbids_removal(new) else (old, new)
    return not _objects(remover, _action(remover)) <= _objects(other, _action(other))


#: Verbs of taking something away; "Never drop X" forbids, though two negations make it
#: positive by parity. Not "forget" / "hesitate": "Don't forget to add tests" asks for tests.
_REMOVAL_VERBS = frozenset("skip omit remove drop delete strip eliminate disable exclude hide "
                           "truncate".split())


#: The head of a negated rule and the verb after it: "Never drop ...", "Please don't ...",
#: "No longer add ...".
NEGATED_HEAD_RE = re.compile(r"^\W*(?:please\s+)?(?:never|do not|don't|dont|not|no longer|"
                             r"stop)\s+(?P<verb>[a-z][a-z-]*)\b", re.I)


def _forbids_removal(rule: str) -> bool:
    """A negated head on a verb of removal: "Never drop ...", "Don't delete ..."."""
    head = NEGATED_HEAD_RE.match(_strip_mentions(rule))
    return bool(head) and _lemma(head.group("verb").lower()) in _REMOVAL_VERBS


def _action(rule: str) -> str | None:
    """The rule's main verb as a lemma ("Never put SQL ..." -> "put"), or None."""
    for word in re.findall(r"[A-Za-z][A-Za-z'-]*", _strip_mentions(rule)):
        low = word.lower()
        if low in _HEAD_WORDS:
            continue
        return _lemma(low) or (low if _is_base_verb(low) else None)
    return None


def _objects(rule: str, action: str | None) -> set[str]:
    """Stems of what the rule is about: its content words, antonyms included, minus the verb."""
    out = set()
    for w in re.findall(r"[a-z0-9][a-z0-9_'-]*", _strip_mentions(rule).lower()):
        if w.isdigit():
            out.add(w)  # "50 lines" and "60 characters" are different limits
            continue
        if (len(w) < 3 or w in _STOPWORDS or w in _NEGATORS or w in _HEAD_WORDS
                or w in _PREPOSITIONS or w in _LIMIT_WORDS):
            continue
        if w in _LIGHT_WORDS and w != action:
            continue
        out.add(_stem(w))
    if action:
        out.discard(_stem(action))
    return out


def direct_objects(rule: str) -> set[str]:
    """Stems of the rule's direct object: the content words between its main verb and the
    first preposition, limit or clause break ("Write type hints for public functions" ->
    type, hint). Empty when a preposition follows the verb ("Reply to customers ...")."""
    return {_stem(w) for w in object_phrase(rule)}


def object_phrase(rule: str) -> list[str]:
    """The words of the rule's direct object in order (see `direct_objects`), unstemmed."""
    words = re.findall(r"[a-z0-9][a-z0-9_'-]*|[,;:.]", _strip_mentions(rule).lower())
    action = _action(rule)
    if action is None:
        return []
    start = next((i + 1 for i, w in enumerate(words)
                  if w not in _HEAD_WORDS and (_lemma(w) or w) == action), None)
    out: list[str] = []
    for w in words[start or len(words):]:
        if w in _PREPOSITIONS or w in _OBJECT_ENDS or w in ",;:.":
            break
        if len(w) >= 3 and w not in _STOPWORDS and w not in _LIGHT_WORDS:
            out.append(w.removesuffix("'s"))
    return out


#: Words that end a verb's object besides prepositions: limits and clause breaks ("Keep
#: functions under 50 lines", "Check the file so that ..."). "and"/"or" do not: "Run the linter
#: and the tests" acts on both.
_OBJECT_ENDS = frozenset("under over above below than per but then so that which who".split())


def other_direct_objects(new: str, old: str) -> bool:
    """The same verb on things the rules name right after it, and not the same things:
    "Write docstrings for public functions." / "Write type hints for public functions." share
    every word but their objects. Two instructions, whatever else they share. With two verbs
    the object says little ("Put the `$` prompt in front of command lines" / "Make shell
    commands start with a `$ ` prompt" is one rule): on the critique stream, a veto on any
    verbs blocked 8 merges, all right."""
    action = _action(new)
    if action is None or action != _action(old):
        return False
    a, b = direct_objects(new), direct_objects(old)
    return bool(a) and bool(b) and not a & b


def another_action_on_another_thing(new: str, old: str) -> str | None:
    """Two main verbs, neither found in the other rule, and one verb's direct object not named
    by the other rule at all: "Attach receipts to every gecko expense report." / "Submit gecko
    expense reports before the 5th." (a deadline, not receipts). Two instructions, however
    much of their setting they share: the shared subject ("gecko expense report") carried the
    model's cosine to 0.77 and the word overlap past half the objects, and the deadline was
    merged as "a paraphrase" and never served (hunt-chroma #5, session 24). Returns what
    each does ("'submit' on 'expens', 'gecko', 'report' vs 'attach' on 'receipt'"), or None.

    A paraphrase names the same thing or uses the other's verb somewhere: "Include the receipts
    with each gecko expense report." (receipts), "Every gecko expense report needs its receipts
    attached." (no leading verb at all), "Use helm to deploy the zephyr service." ("deploy").
    Nothing is told apart where the words cannot say what a rule acts on: a pronoun object
    ("Split them.", "Make it `IS NULL`."), or quoted terms or code the other rule names too
    ("Prefix commands with `$ `." / "Put the `$` prompt in front of command lines", "Swap the
    `print()` calls for `logger.debug(...)`." / "Use the module logger ..."): on the critique
    stream those were right merges. Two light verbs ("Add a legend ..." / "Use a palette ...")
    say nothing of the action, so each rule must name a thing of its own ("Give each action
    item a due date." / "Add a deadline to every action item." stays one rule)."""
    a, b = _action(new), _action(old)
    if a is None or b is None or a == b:
        return None
    new_forms, old_forms = _word_forms(new), _word_forms(old)
    if a in old_forms or _stem(a) in old_forms or b in new_forms or _stem(b) in new_forms:
        return None
    named_new, named_old = _mentioned(new), _mentioned(old)
    if (_pronoun_object(new) or _pronoun_object(old) or named_new & (old_forms | named_old)
            or named_old & new_forms):
        return None
    objects_new, objects_old = direct_objects(new), direct_objects(old)
    own_new = bool(objects_new) and not _with_parts(objects_new) & old_forms
    own_old = bool(objects_old) and not _with_parts(objects_old) & new_forms
    light = a in _LIGHT_WORDS and b in _LIGHT_WORDS
    if not (own_new and own_old if light else own_new or own_old):
        return None
    return (f"{a!r} on {', '.join(repr(w) for w in sorted(objects_new)) or 'nothing named'} vs "
            f"{b!r} on {', '.join(repr(w) for w in sorted(objects_old)) or 'nothing named'}")


def another_action(new: str, old: str) -> str | None:
    """Two main verbs that say what is done, neither found in the other rule: "Never store
    passwords in plain text." / "Never log passwords." act on the same thing in two ways, two
    instructions. The model's cosine of the two (0.72) alone merged them, and the newer rule's
    instruction was never served (hunt-loop-shared #2, session 31). Returns "'store' vs 'log'",
    or None where the words cannot tell: a light verb on either side ("Use ...", "Keep ...",
    "Avoid ..." say little of the action), a verb the other rule uses in another form ("Avoid
    logging passwords."), or a pronoun object ("Split them.")."""
    a, b = _action(new), _action(old)
    if a is None or b is None or a == b or a in _LIGHT_WORDS or b in _LIGHT_WORDS:
        return None
    new_forms, old_forms = _word_forms(new), _word_forms(old)
    if a in old_forms or _stem(a) in old_forms or b in new_forms or _stem(b) in new_forms:
        return None
    if _pronoun_object(new) or _pronoun_object(old):
        return None
    return f"{a!r} vs {b!r}"


def _word_forms(rule: str) -> set[str]:
    """Stems and verb lemmas of every word of the rule and of the parts of hyphenated ones
    ("attached" -> attach, "submitted" -> submit, "sign-off" -> sign, off), so a verb or an
    object found anywhere in it counts as shared."""
    words = re.findall(r"[a-z0-9][a-z0-9_'-]*", _strip_mentions(rule).lower())
    words += [part for w in words if "-" in w for part in w.split("-") if part]
    return {_stem(w) for w in words} | {lemma for w in words if (lemma := _lemma(w))}


def _with_parts(stems: set[str]) -> set[str]:
    """The stems and the parts of hyphenated ones ("sign-off" also as "sign" and "off")."""
    return stems | {_stem(p) for w in stems if "-" in w for p in w.split("-") if p}


def _pronoun_object(rule: str) -> bool:
    """The main verb's object is a pronoun ("Split them.", "Define it once as a CTE.")."""
    action = _action(rule)
    words = re.findall(r"[a-z][a-z'-]*", _strip_mentions(rule).lower())
    after = next((words[i + 1] for i, w in enumerate(words[:-1])
                  if w not in _HEAD_WORDS and (_lemma(w) or w) == action), None)
    return after in _PRONOUN_OBJECTS


def _mentioned(rule: str) -> set[str]:
    """Content words inside the rule's code spans and quotes, stemmed: what it names exactly
    (`logger.debug(...)` names the logger "the module logger" is)."""
    spans = _CODE_RE.findall(rule) + [q for pair in _QUOTED_SPAN.findall(rule) for q in pair]
    words = re.findall(r"[a-z0-9_$/]+", " ".join(spans).lower())
    return {w if w == "$" else _stem(w) for w in words if w not in _STOPWORDS}


_QUOTED_SPAN = re.compile(r"(?<![\w])'([^'\n]{1,200})'(?![\w])|\"([^\"\n]{1,200})\"")


def same_action_object(new: str, old: str) -> str | None:
    """Strong lexical evidence that two rules are one: the same main verb, the same polarity and
    mostly the same objects (at least 60% of the smaller object set shared). Returns the words
    that decided it ("same action 'add' on 'test'"), or None.

    "Add tests." / "Add tests for edge cases." -> one rule; "Use British spelling." / "Use
    parameterised queries." share only the verb -> not one rule.
    """
    action = _action(new)
    if action is None or action != _action(old) or _polarity(new) != _polarity(old):
        return None
    cmp = _compare(new, old)
    if cmp.lexical_conflict:
        return None
    a, b = _objects(new, action), _objects(old, action)
    if not a or not b or other_direct_objects(new, old):
        return None
    shared = a & b
    if len(shared) < 0.6 * min(len(a), len(b)):
        return None
    return f"same action {action!r} on {', '.join(repr(w) for w in sorted(shared))}"


#: Object pronouns: a rule whose only object is one of these ("Split it.", "Lead with them.")
#: says its action about what its critique was about, not about nothing.
_PRONOUN_OBJECTS = frozenset("it them this that these those".split())


def same_action_on_referent(new: str, old: str) -> str | None:
    """The same action, where one rule (or both) names its object only by a pronoun: "Lead
    with it." / "Lead with the steps.", "Split it." / "Split them.". The words cannot say what
    "it" is, so this is evidence only beside the matching similarity at the paraphrase bar,
    which compares both critiques (see ``merge_evidence``). Returns the words that decided it,
    or None.

    Same verb, same polarity, no contrast in the words, and each rule whose objects are empty
    has a pronoun object; "Add tests." / "Add it to the changelog." is not one rule (the second
    has an object of its own).
    """
    action = _action(new)
    if action is None or action != _action(old) or _polarity(new) != _polarity(old):
        return None
    if _compare(new, old).lexical_conflict:
        return None
    a, b = _objects(new, action), _objects(old, action)
    if a and b:
        return None  # both name their objects: same_action_object decides
    for rule, objects in ((new, a), (old, b)):
        if not objects and not _PRONOUN_OBJECTS & set(
                re.findall(r"[a-z]+", _strip_mentions(rule).lower())):
            return None  # no object at all ("Be concise."), not a pronoun one
    if a or b:
        # The named side names one or two things: "Lead with the steps", not "Lead with the
        # price, the discount code and the renewal date".
        if len(a | b) > 2:
            return None
    return f"same action {action!r} on what the pronoun stands for"

