"""Turn critiques into candidate rules, experiences into lessons, and compare two rules.

Every model call in skillbank is optional, so there are two distillers behind one protocol:

* :class:`RuleDistiller` is deterministic and needs no model. It reads critiques sentence by
  sentence and keeps the ones that give advice, rewriting each into a short imperative rule
  ("You should have used parameterised queries" -> "Use parameterised queries."). Everything else
  (praise, a bare score, a vague reaction, a question without advice, a description of what is
  wrong without saying what to do) is returned as a *non-actionable* candidate, so the caller can
  report it as ignored instead of silently dropping it.
* :class:`LLMDistiller` wraps any ``prompt -> text`` callable (a LangChain chat model, a
  LlamaIndex LLM, MCP sampling ...). It asks for JSON, parses the reply forgivingly and falls back
  to a deterministic distiller on any failure; it never raises to the caller.

How the deterministic rules work (kept simple and explainable on purpose):

* Sentences are split on terminal punctuation (protecting abbreviations such as "e.g.", decimals
  and inline code) and on bullet / numbered lines; each sentence is split further on ``;``, a
  colon after a short label ("nit:", "Two fixes:"), and ", but" / ", so" style joints.
* A clause is advice when it starts with an imperative verb from a generic instruction vocabulary
  (``_VERBS``), with "always" / "never" / "don't", or matches one of a few modal shapes: "you
  should (have) X", "<thing> should be X", "<thing> needs X", "it would be better to X", "I'd X",
  "can you X?", "instead of X, Y", "X rather than Y, please", "<thing> is missing", "there is no
  X", "<thing> has no X", "<thing> is never X-ed", "<thing> is too long", "<thing> would help",
  "we now X" / "we no longer X". Each shape has a fixed rewrite into imperative form.
* A handful of guards turn imperatives back into noise: "keep it up" / "make it pop" (the object
  has no content), "fix that row" (a one-off correction of this artefact), sentences whose
  subject is a third person ("they should contact their bank" describes someone else's action).

Topics come from the small keyword table ``TOPIC_KEYWORDS`` (generic domain vocabulary, not
lifted from any benchmark). ``when_to_use`` describes the kind of task, since task wording rarely
repeats critique wording: "When <task as a gerund phrase> (<topic description>); about: <key
words of the rule>".

:meth:`RuleDistiller.relate` decides same / contradiction / distinct from the caller's embedding
similarity plus explainable cues: polarity (never / don't / avoid / remove ... counted with
parity, so "never skip tests" agrees with "always add tests"), antonym pairs (British/American,
tabs/spaces ...), override words in the new rule ("switch to", "no longer", "instead",
"from now on"), each required to be about the same matter (a shared key word, or nothing but the
cue tells the two apart), and explicit rejection ("Sign as the team, not with your name" rejects
"Sign with your first name"). Similarity >= ``same_threshold`` without a cue is "same"; a cue on
the same matter with similarity >= ``related_threshold`` is "contradiction" (antonyms and
rejections already from ``related_threshold - 0.15``); else "distinct". :meth:`RuleDistiller.explain_relation` prints the reason.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal, Protocol, Sequence, runtime_checkable

from pydantic import BaseModel

from skillbank.records import MAX_SHORT, Experience, Lesson, Step

__all__ = [
    "CandidateRule",
    "Relation",
    "Distiller",
    "RuleDistiller",
    "LLMDistiller",
    "split_sentences",
    "normalise_rule",
    "guess_topic",
    "extract_json",
    "TOPIC_KEYWORDS",
    "RULES_PROMPT",
    "LESSONS_PROMPT",
    "RELATE_PROMPT",
]

Relation = Literal["same", "contradiction", "distinct"]


class CandidateRule(BaseModel):
    """A rule proposed from one critique, before the guideline store dedupes or merges it."""

    text: str
    topic: str = "general"
    when_to_use: str = ""
    actionable: bool = True
    source_sentence: str = ""


@runtime_checkable
class Distiller(Protocol):
    def rules_from_critique(
        self,
        critique: str,
        *,
        task: str | None = None,
        response: str | None = None,
        score: float | None = None,
    ) -> list[CandidateRule]: ...

    def lessons_from_experience(
        self, experience: Experience, *, similar: Sequence[Experience] = ()
    ) -> list[Lesson]: ...

    def relate(self, new_rule: str, old_rule: str, *, similarity: float) -> Relation: ...


# --------------------------------------------------------------------------------------------
# Vocabulary. Small, generic, documented. Nothing here is derived from evaluation data.
# --------------------------------------------------------------------------------------------

#: Base-form verbs that commonly open an instruction, across code review, writing, data work,
#: customer support and presentations. A clause starting with one of these is an imperative.
_VERBS = frozenset(
    """
    abbreviate acknowledge add address adjust adopt aggregate aim alias align annotate answer
    apologise apologize append apply archive ask assert assign attach attribute avoid batch begin
    benchmark bold break build bump cache calculate call cap capitalise capitalize caption cast
    catch center centre change check choose chunk cite clarify clean close coalesce collapse
    colour color combine comment commit compare compute condense confirm consider consolidate
    control convert copy correct count cover create credit cut darken declare decouple default
    define delete deprecate describe disable document double-check drop emphasise emphasize
    empathise empathize enable encode end enforce ensure enumerate escalate escape estimate
    exclude expand explain expose extract factor favour favor filter finish fix flag flatten
    follow format free give go greet group guard handle hide highlight hoist illustrate implement
    import improve include increase decrease indent index inline insert introduce isolate
    italicise italicize join justify keep label lead leave lighten limit link list localise
    localize lock log look lower make mark match measure mention merge migrate minimise minimize
    mock move name narrow normalise normalize note notify number offer omit open order organise
    organize paginate parameterise parameterize paraphrase parse pass patch personalise
    personalize phrase pick pin place plot point polish prefer prefix present preserve prioritise
    prioritize promote proofread propagate provide pull punctuate push put qualify quantify
    quote raise rank read reassure recap recognise recognize redo reduce refactor reference
    reflect reframe release remember remove rename reorder repeat rephrase replace reply report
    reproduce request resize respect respond restate restructure retry return reuse review
    rework rewrite round run sanitise sanitize say scale scope separate serialise serialize set
    shade shorten show shrink sign simplify size skip soften sort specify spell split start state
    stay stick stop store strike strip structure stub summarise summarize supply surface swap
    switch tag tell test thank tighten translate trim truncate try turn tweak type underline
    unify update upgrade use validate verify visualise visualize warn wrap write
    """.split()
)

#: Words after which a leading verb-looking word is really a noun subject ("Test coverage is ...").
_NOT_IMPERATIVE_NEXT = frozenset(
    "is are was were has have had 's looks look seems seem does did isn't aren't wasn't weren't "
    "doesn't didn't hasn't haven't of".split()
)

#: Subjects that name somebody other than the agent; modal advice about them is not a rule.
_PERSON_SUBJECT = frozenset(
    "i he she they them his her their its nobody noone someone somebody everybody everyone "
    "anyone anybody".split()
)
_DEICTIC = frozenset("it this that these those them here".split())
_PREPOSITIONS = frozenset(
    "for in on at with from by after before during as to of into onto about without unless until "
    "if when while because since although though".split()
)
_DETERMINERS = frozenset("the a an some any each every all no your our".split())
_NP_ADVERBS = frozenset("now already still also just then again even only really currently".split())

_NEGATORS = frozenset("never not no don't dont do-not avoid without stop".split())
#: Verbs whose meaning is "do not have / do not do"; counted with the negators by parity.
_NEGATIVE_VERBS = frozenset(
    "avoid skip omit remove drop stop disable exclude forbid ban eliminate strip delete "
    "hide".split()
)

#: Pairs of words that, used on the same matter, make two rules disagree.
_ANTONYMS: tuple[tuple[str, str], ...] = (
    ("british", "american"),
    ("uk", "us"),
    ("tab", "space"),
    ("single", "double"),
    ("short", "long"),
    ("shorter", "longer"),
    ("formal", "informal"),
    ("formal", "casual"),
    ("before", "after"),
    ("ascending", "descending"),
    ("upper", "lower"),
    ("uppercase", "lowercase"),
    ("more", "less"),
    ("more", "fewer"),
    ("first", "last"),
    ("top", "bottom"),
    ("start", "end"),
    ("light", "dark"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("absolute", "relative"),
    ("active", "passive"),
    ("metric", "imperial"),
    ("personal", "team"),
    ("individual", "team"),
    ("camelcase", "snake_case"),
    ("left", "right"),
    ("inline", "separate"),
    ("bare", "prefixed"),
    ("plural", "singular"),
    ("minimum", "maximum"),
    ("increase", "decrease"),
)

#: Light verbs and fillers that say nothing about what a rule is about.
_LIGHT_WORDS = frozenset(
    """
    a an the and or but to of in on at by for with from into onto as is are be been being was
    were it its this that these those there their them they you your we our us i me my he she
    his her always never not no don't dont do does did done use using used make making made keep
    add put give get have has had should must need needs please also just only so very more less
    any all each every some one ones than then when if instead rather switch now from longer
    avoid prefer ensure sure try stop start can could would will may might up out over
    """.split()
)

_STOPWORDS = _LIGHT_WORDS | frozenset(
    "what which who whom how why where while about after before because since until own same "
    "such too other others another both either neither nor yet still even much many few".split()
)

#: topic slug -> (description used in when_to_use, weight, keyword pattern). Small and generic:
#: a rough domain guess for filing guidelines, not a classifier. Ties go to the earlier row.
TOPIC_KEYWORDS: tuple[tuple[str, str, float, str], ...] = (
    (
        "python",
        "writing or reviewing Python code",
        1.0,
        r"python|pip|pytest|pep ?8|mypy|dataclass(?:es)?|docstrings?|type hints?|type annotations?"
        r"|def|django|flask|fastapi|pandas|asyncio|decorators?|f-strings?|venv|kwargs|__init__"
        r"|tracebacks?|context managers?|except",
    ),
    (
        "javascript",
        "writing or reviewing JavaScript or TypeScript code",
        1.0,
        r"javascript|typescript|js|ts|node(?:js)?|npm|react|vue|eslint|jsx|tsx|console\.log",
    ),
    (
        "sql",
        "writing or reviewing SQL queries",
        1.0,
        r"sql|select|joins?|quer(?:y|ies)|ctes?|subquer(?:y|ies)|where clause|group by|order by"
        r"|indexes|schemas?|postgres(?:ql)?|mysql|sqlite|bigquery|snowflake|nulls?|primary keys?"
        r"|foreign keys?|tables?|columns?",
    ),
    (
        "data",
        "analysing data and reporting results",
        1.0,
        r"analys(?:is|es|e|ing)|metrics?|sample sizes?|confidence intervals?|intervals?"
        r"|significan(?:t|ce)|p-values?|regression|correlat(?:ion|ed)|causa(?:l|tion)|cohorts?"
        r"|dashboards?|datasets?|statistic(?:s|al)?|averages?|medians?|percentiles?"
        r"|a/b tests?|experiments?|kpis?|trends?|segments?|denominators?|rates?",
    ),
    (
        "writing",
        "writing or editing documentation and prose",
        1.0,
        r"documentation|docs|readmes?|paragraphs?|sentences?|spelling|grammar|prose|articles?"
        r"|headings?|wording|style guides?|tutorials?|guides?|acronyms?|jargon|readers?|blog"
        r"|essays?|copywriting|punctuation|glossary|passive voice|pages?|intro(?:duction)?s?",
    ),
    (
        "support",
        "replying to customers in support conversations",
        1.0,
        r"customers?|tickets?|repl(?:y|ies)|refunds?|apolog\w*|support|agents?|escalat\w*"
        r"|sign-?offs?|inquir(?:y|ies)|complaints?|billing|empathy|csat",
    ),
    (
        "slides",
        "designing slides or presentation decks",
        1.0,
        r"slides?|decks?|presentations?|fonts?|\d+ ?pt|bullets?|charts?|speaker notes|audience"
        r"|titles?|legends?|axis|axes|colou?rs?|contrast|visuals?|graphs?|keynote|powerpoint",
    ),
    (
        "code",
        "writing or reviewing code",
        0.5,
        r"code|functions?|variables?|class(?:es)?|methods?|tests?|bugs?|exceptions?|errors?"
        r"|logging|loggers?|refactor\w*|commits?|apis?|endpoints?|modules?|librar(?:y|ies)"
        r"|dependenc(?:y|ies)|lint\w*|compil\w*|loops?|git|pull requests?|scripts?|snippets?",
    ),
)
_TOPIC_RES = tuple(
    (slug, desc, weight, re.compile(rf"(?<![A-Za-z0-9_])(?:{pattern})(?![A-Za-z0-9_])", re.I))
    for slug, desc, weight, pattern in TOPIC_KEYWORDS
)
_TOPIC_DESC = {slug: desc for slug, desc, _, _ in TOPIC_KEYWORDS}
_TOPIC_DESC["general"] = "doing any task"


def guess_topic(rule: str, task: str | None = None, context: str | None = None) -> str:
    """A short topic slug from keyword hits (rule counts most, then task, then context)."""
    best, best_score = "general", 0.0
    for slug, _, weight, rx in _TOPIC_RES:
        score = weight * (
            3 * len(rx.findall(rule or ""))
            + 2 * len(rx.findall(task or ""))
            + 1 * len(rx.findall(context or ""))
        )
        if score > best_score:
            best, best_score = slug, score
    return best


def _slug(value: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", (value or "").lower()).strip("-")
    return s[:40].strip("-")


# --------------------------------------------------------------------------------------------
# Sentence splitting and protection of code, quotes and parentheses
# --------------------------------------------------------------------------------------------

_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf approx fig no mr mrs ms dr prof st jr sr inc ltd co eg ie al incl "
    "min max esp resp dept est ca ref sec".split()
)
_BULLET_RE = re.compile(r"^\s*(?:[-*•‣◦·+]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=\s))\s+")
_CODE_RE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_PH = "\u27e6{}\u27e7"  # ⟦n⟧
_PH_RE = re.compile("\u27e6(\\d+)\u27e7")


def _protect(text: str, *, quotes: bool = False) -> tuple[str, list[str]]:
    """Replace inline code (and optionally quotes and parentheses) by placeholders."""
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return _PH.format(len(spans) - 1)

    text = _CODE_RE.sub(keep, text)
    if quotes:
        text = re.sub(r"(?<![\w])'(?:[^'\n]|'(?=\w)){1,200}?'(?![\w])", keep, text)
        text = re.sub(r'"[^"\n]{1,200}?"|“[^”\n]{1,200}?”|‘[^’\n]{1,200}?’', keep, text)
        text = re.sub(r"\([^()\n]{1,200}\)", keep, text)
    return text, spans


def _restore(text: str, spans: list[str]) -> str:
    for _ in range(3):  # spans may nest (a quote inside parentheses)
        new = _PH_RE.sub(lambda m: spans[int(m.group(1))], text)
        if new == text:
            break
        text = new
    return text


_TERMINATOR_RE = re.compile(r"(?<=[^\s.])([.!?]+)(['\"’”)\]]*)(\s+)(?=[\"'‘“(\[`\u27e6]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; bullet and numbered lines are sentences of their own.

    Abbreviations ("e.g.", "i.e.", "vs."), decimals ("3.5%") and inline code are not split.
    """
    if not text or not text.strip():
        return []
    protected, spans = _protect(text)
    # Group lines into blocks: every bullet starts a block, blank lines end one.
    blocks: list[str] = []
    current: list[str] = []
    for line in protected.splitlines():
        if not line.strip():
            if current:
                blocks.append(" ".join(current))
                current = []
            continue
        m = _BULLET_RE.match(line)
        if m:
            if current:
                blocks.append(" ".join(current))
            current = [line[m.end():].strip()]
        elif current and current[0].rstrip().endswith(":") and len(current) == 1:
            blocks.append(" ".join(current))  # a heading line like "Issues:" stands alone
            current = [line.strip()]
        else:
            current.append(line.strip())
    if current:
        blocks.append(" ".join(current))

    out: list[str] = []
    for block in blocks:
        start = 0
        for m in _TERMINATOR_RE.finditer(block):
            before = block[start:m.start(1)]
            last = re.findall(r"[\w.]+$", before)
            token = last[0].lower().rstrip(".") if last else ""
            if m.group(1) == "." and (
                token in _ABBREVIATIONS
                or (bool(last) and len(last[0]) == 1 and last[0].isupper())  # initials: "J. Smith"
            ):
                continue
            piece = block[start:m.end(2)].strip()
            if piece:
                out.append(piece)
            start = m.end()
        tail = block[start:].strip()
        if tail:
            out.append(tail)
    return [_restore(s, spans) for s in out if re.search(r"\w", _restore(s, spans))]


# --------------------------------------------------------------------------------------------
# Morphology: just enough to turn participles and gerunds back into base verbs
# --------------------------------------------------------------------------------------------

_IRREGULAR = {
    "written": "write", "wrote": "write", "given": "give", "gave": "give", "taken": "take",
    "took": "take", "made": "make", "done": "do", "did": "do", "kept": "keep", "shown": "show",
    "chosen": "choose", "chose": "choose", "broken": "break", "broke": "break", "left": "leave",
    "sent": "send", "spent": "spend", "told": "tell", "said": "say", "read": "read",
    "run": "run", "ran": "run", "set": "set", "split": "split", "cut": "cut", "put": "put",
    "brought": "bring", "built": "build", "thought": "think", "found": "find", "held": "hold",
    "led": "lead", "caught": "catch", "taught": "teach", "meant": "mean", "begun": "begin",
    "began": "begin", "drawn": "draw", "known": "know", "seen": "see", "gone": "go",
    "went": "go", "got": "get", "gotten": "get", "hidden": "hide", "hid": "hide",
    "struck": "strike", "stuck": "stick", "shrunk": "shrink", "shrank": "shrink",
    "spelt": "spell", "stood": "stand", "rewritten": "rewrite", "rewrote": "rewrite",
    "redone": "redo", "undone": "undo", "understood": "understand", "forgotten": "forget",
}


_VERB_PREFIXES = frozenset("re pre co double cross auto de un over under hard soft fact spell".split())


def _is_base_verb(word: str) -> bool:
    """A known base-form verb, including prefixed ones: 're-run', 'hard-code', 'double-check'."""
    w = word.lower()
    if w in _VERBS or w == "hardcode":
        return True
    head, _, last = w.rpartition("-")
    return bool(head) and head in _VERB_PREFIXES and (last in _VERBS or last == "code")


def _lemma(word: str) -> str | None:
    """Base form of a verb form (used, adding, splits, written) when it is a known verb."""
    w = word.lower().strip(".,;:!?'\"")
    if w in _VERBS:
        return w
    if w in _IRREGULAR:
        return _IRREGULAR[w] if _IRREGULAR[w] in _VERBS else None
    candidates: list[str] = []
    if w.endswith("ing") and len(w) > 4:
        stem = w[:-3]
        candidates += [stem, stem + "e"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])
        if stem.endswith("y"):
            candidates.append(stem[:-1] + "ie")
    elif w.endswith("ied") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    elif w.endswith("ed") and len(w) > 3:
        stem = w[:-2]
        candidates += [stem, w[:-1]]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])
    elif w.endswith("ies") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    elif w.endswith("es") and len(w) > 3:
        candidates += [w[:-2], w[:-1]]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 2:
        candidates.append(w[:-1])
    for c in candidates:
        if c in _VERBS:
            return c
    return None


def _gerund(verb: str) -> str:
    v = verb.lower()
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")) and len(v) > 2:
        return v[:-1] + "ing"
    vowels = "aeiou"
    groups = re.findall(r"[aeiou]+", v)
    if (
        len(v) >= 3
        and len(groups) == 1
        and v[-1] not in vowels + "wxy"
        and v[-2] in vowels
        and v[-3] not in vowels
    ):
        return v + v[-1] + "ing"
    return v + "ing"


# --------------------------------------------------------------------------------------------
# Turning one clause into an imperative rule
# --------------------------------------------------------------------------------------------

_WORD_RE = re.compile(r"[\w\u27e6\u27e7'’-]+")
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
_ONE_OFF_VERBS = frozenset("fix correct update change adjust tweak".split())
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


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def _cap(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] if text else text


def _finish(text: str) -> str:
    """Capitalise, tidy whitespace and end with exactly one full stop."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,;:!?]|\.(?!\.))", r"\1", text)
    text = text.rstrip(" ,;:-–—")
    text = re.sub(r"[.!?]+$", "", text).rstrip(" ,;:")
    return _cap(text) + "." if text else ""


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
        return _is_base_verb(nxt) or nxt in ("be", "do", "let", "just", "again", "ever")
    if first in ("don't", "dont"):
        return True
    if first == "do" and len(words) > 1 and words[1].lower() == "not":
        return True
    if not _is_base_verb(first):
        return False
    if len(words) > 1 and words[1].lower() in _NOT_IMPERATIVE_NEXT:
        return False
    if len(words) > 2 and words[2].lower() in ("is", "are", "was", "were", "has", "have"):
        return False
    if first == "thank" and len(words) > 1 and words[1].lower() == "you":
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


def _imperative_text(text: str) -> str | None:
    """The clause as an imperative, if it starts with one (after 'please' etc.)."""
    t = text.strip()
    t = re.sub(r"^(?:please|pls|kindly)\s*,?\s+", "", t, flags=re.I)
    t = re.sub(r"^(?:try to|remember to|be sure to|make sure to|don't forget to|do not forget to)\s+",
               "", t, flags=re.I)
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

    # "Use X", "Never do Y", "Please add Z".
    direct = _imperative_text(c)
    if direct:
        return direct

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
        return _imperative_text(m.group(1))
    m = re.match(r"^you(?:'ve)?\s+(?:forgot|forgotten|missed|left out|omitted|skipped)\s+(?:about\s+)?(.+)$", c, re.I)
    if m and len(_words(m.group(1))) <= 10:
        return _guard(_finish("Include " + m.group(1)))
    m = re.match(r"^you\s+(?:didn't|did not|never)\s+(.+)$", c, re.I)
    if m:
        return _imperative_text(m.group(1))

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
            and not re.search(r"\b(?:should|must|need|needs)\b", c, re.I):
        return _guard(_finish(f"Use {_obj_np(m.group('a'))} rather than {m.group('b')}"))

    # "Decision and impact first" -> "Put decision and impact first".
    m = re.match(r"^(?P<np>[^,]+?)\s+(?:first|up front|upfront|at the top|on top)$", c, re.I)
    if m and _np_ok(m.group("np"), allow_deictic=False, max_words=6):
        return _guard(_finish(f"Put {_obj_np(m.group('np'))} first"))
    return None


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


def _split_compound(rule: str) -> list[str]:
    """"Use X and label Y." -> ["Use X.", "Label Y."] when each part is an imperative."""
    body = rule.rstrip(".")
    parts: list[str] = []
    start = 0
    for m in re.finditer(r"(?:,\s*and|\s+and|;)\s+(\w+)", body, re.I):
        word = m.group(1).lower()
        if word in _VERBS and word not in ("set", "order", "number", "state", "name", "list", "test", "type", "log"):
            left = body[start:m.start()]
            if len(_words(left)) >= 2 and len(_words(body[m.start(1):])) >= 2:
                parts.append(left)
                start = m.start(1)
    parts.append(body[start:])
    if len(parts) == 1:
        return [rule]
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


def _pieces(clause: str) -> list[str]:
    """A clause cut at weak joints and before independent ", and" clauses."""
    out: list[str] = []
    for part in _WEAK_SPLIT_RE.split(clause):
        if part and part.strip():
            out.extend(p for p in _AND_CLAUSE_RE.split(part) if p and p.strip())
    return out


def _rules_in_sentence(sentence: str) -> list[str]:
    protected, spans = _protect(sentence, quotes=True)
    rules: list[str] = []
    label_rules: list[str] = []
    for clause in _clauses(protected):
        is_label = clause.startswith("\x00label\x00")
        clause = clause.replace("\x00label\x00", "")
        target = label_rules if is_label else rules
        for piece in _pieces(clause):
            found = _rewrite(piece)
            if found:
                target.extend(_split_compound(found))
                continue
            if is_label:
                continue
            # Last resort: a leading condition or aside ("If you show output, put it ...").
            sub = [p for p in re.split(r",\s+", piece) if p.strip()]
            if len(sub) > 1:
                for p in sub:
                    found = _rewrite(p)
                    if found:
                        target.extend(_split_compound(found))
    if not rules:
        rules = label_rules
    return [_restore(r, spans) for r in rules]


def _resolve_pronoun(rule: str, previous: str | None) -> str:
    """'Number them.' after 'The steps are bullets.' -> 'Number the steps.' (short rules only)."""
    if not previous or len(_words(rule)) > 5:
        return rule
    m = re.search(r"\b(them|it)\b", rule)
    if not m:
        return rule
    pm = re.match(
        r"^(?:[A-Z][a-z]+,\s+)?((?:the|these|those|your|our|all|every|each)\s+(?:[\w-]+\s+){0,3}?[\w-]+)\s+"
        r"(?:is|are|was|were|has|have|had|still|only|don't|doesn't|never|all)\b",
        previous.strip(), re.I,
    )
    if not pm:
        return rule
    np = pm.group(1)
    plural = np.split()[-1].lower().endswith("s") and not np.split()[-1].lower().endswith("ss")
    if (m.group(1) == "them") != plural:
        return rule
    np = np[:1].lower() + np[1:]
    return rule[: m.start()] + np + rule[m.end():]


# --------------------------------------------------------------------------------------------
# Task kinds and when_to_use
# --------------------------------------------------------------------------------------------


def _task_kind(task: str | None, *, max_words: int = 14) -> str:
    """'Write a FAQ entry on X.' -> 'writing a FAQ entry on X' (a gerund phrase, one line)."""
    if not task or not task.strip():
        return ""
    first = split_sentences(task.strip())
    text = (first[0] if first else task).strip()
    text = re.sub(r"\s+", " ", text).rstrip(" .!?:;")
    text = re.sub(r"^(?:please|task:|your task is to|you are asked to|help me|can you|could you)\s+", "", text, flags=re.I)
    words = text.split()
    if not words:
        return ""
    if len(words) > max_words:
        words = words[:max_words]
        while words and words[-1].lower() in _STOPWORDS:
            words.pop()
        words[-1] = words[-1].rstrip(",;:")
    head = words[0].lower().strip(",")
    second = words[1].lower() if len(words) > 1 else ""
    # An unknown first word followed by a determiner is almost always a verb: "Deploy the app".
    looks_like_verb = head.isalpha() and second in _DETERMINERS | {"my", "this", "that", "these", "those", "their", "his", "her", "its"}
    if looks_like_verb or head in _VERBS or head in ("draft", "create", "build", "design", "debug", "investigate",
                                  "analyse", "analyze", "compute", "find", "prepare", "generate",
                                  "make", "produce", "implement", "draw", "respond", "reply"):
        words = [_gerund(head)] + words[1:]
        return " ".join(words)
    return "working on: " + " ".join(words)


def _keywords(text: str, limit: int = 4) -> list[str]:
    out: list[str] = []
    skip_first = True
    for w in _words(_PH_RE.sub(" ", text)):
        lw = w.lower().strip("'’-")
        if skip_first:
            skip_first = False
            if lw in _VERBS or lw in ("always", "never", "do"):
                continue
        if len(lw) < 3 or lw in _STOPWORDS or lw in _VERBS and lw in _LIGHT_WORDS or lw.isdigit():
            continue
        if lw in ("not",):
            continue
        if lw not in out:
            out.append(lw)
        if len(out) >= limit:
            break
    return out


def _when_to_use(rule: str, topic: str, task: str | None) -> str:
    desc = _TOPIC_DESC.get(topic, _TOPIC_DESC["general"])
    kind = _task_kind(task)
    head = f"When {kind} ({desc})" if kind else f"When {desc}"
    keys = _keywords(rule)
    line = head + (f"; about {', '.join(keys)}" if keys else "")
    return line[:MAX_SHORT]


# --------------------------------------------------------------------------------------------
# The deterministic distiller
# --------------------------------------------------------------------------------------------


def _key(text: str) -> str:
    return " ".join(w.lower() for w in re.findall(r"[a-z0-9]+", text.lower()))


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


def _stem(word: str) -> str:
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


def _content(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[a-z][a-z0-9_'-]*", text.lower()):
        if w in _LIGHT_WORDS or w in _STOPWORDS or w in _NEGATORS or w in _NEGATIVE_VERBS:
            continue
        if w in _ANTONYM_WORDS or _stem(w) in {_stem(a) for a in _ANTONYM_WORDS}:
            continue
        if len(w) < 3:
            continue
        out.add(_stem(w))
    return out


def _antonym_conflict(a: str, b: str) -> tuple[str, str] | None:
    wa = {_stem(w) for w in re.findall(r"[a-z_]+", a.lower())} | set(re.findall(r"[a-z_]+", a.lower()))
    wb = {_stem(w) for w in re.findall(r"[a-z_]+", b.lower())} | set(re.findall(r"[a-z_]+", b.lower()))
    for x, y in _ANTONYMS:
        sx, sy = _stem(x), _stem(y)
        ax, ay = (x in wa or sx in wa), (y in wa or sy in wa)
        bx, by = (x in wb or sx in wb), (y in wb or sy in wb)
        if (ax and by and not ay and not bx) or (ay and bx and not ax and not by):
            return (x, y)
    return None


#: Words after which the rest of a rule is what it rejects ("X instead of Y", "X, not Y").
_FLIP_RE = re.compile(r"\b(?:instead of|rather than|not|over|without|no)\b", re.I)
#: Wording with which a new rule announces that it changes an older practice.
_CHANGE_RE = re.compile(r"\b(?:switch(?:ed|ing)? to|from now on|no longer|not anymore|"
                        r"going forward|moving forward)\b", re.I)


def _stance(rule: str) -> dict[str, int]:
    """Content word -> +1 (the rule asks for it) or -1 (the rule rejects it).

    Stance is read per *object*, not per sentence: in "Use CTEs instead of nested subqueries"
    CTEs are wanted and subqueries rejected. Words before the first flip word ("instead of",
    "rather than", "not", "over", "without", "no") take the sentence's polarity (negative when
    its head is negated: "Never use ...", "Avoid ...", but not "Never skip ..."); words after it
    take the opposite. A word keeps
    the stance of its first mention.
    """
    lowered = _strip_mentions(rule).lower().replace("`", " ")
    lowered = re.sub(r"\bno (?:more|less|fewer|longer|shorter|later|earlier|bigger|smaller) than\b",
                     "at most", lowered)
    base = _polarity(rule)
    # Only a flip after the rule's head counts: "Do not prefix ..." is a negated head, not a
    # rejection of what follows.
    cuts = [m.start() for m in _FLIP_RE.finditer(lowered) if len(_words(lowered[: m.start()])) >= 2]
    pieces = [lowered[: cuts[0]], lowered[cuts[0]:]] if cuts else [lowered]
    out: dict[str, int] = {}
    for number, piece in enumerate(pieces):
        for word in _content(piece):
            out.setdefault(word, base if number == 0 else -base)
    return out


@dataclass
class _Comparison:
    shared: set[str]
    opposed: set[str]
    antonym: tuple[str, str] | None
    change: bool
    same_matter: bool

    @property
    def conflict(self) -> bool:
        """The rules disagree about something they share: one wants what the other rejects,
        antonyms on the same matter, or the new rule announces a change to a shared practice."""
        return bool(self.opposed) or (self.same_matter and self.antonym is not None) or (
            bool(self.shared) and self.change)


def _compare(new: str, old: str) -> _Comparison:
    new_stance, old_stance = _stance(new), _stance(old)
    shared = set(new_stance) & set(old_stance)
    opposed = {w for w in shared if new_stance[w] != old_stance[w]}
    antonym = _antonym_conflict(_strip_mentions(new), _strip_mentions(old))
    # Change wording counts only when the new rule also says something the old one does not.
    change = (bool(_CHANGE_RE.search(new)) and not _CHANGE_RE.search(old)
              and bool(set(new_stance) ^ set(old_stance)))
    # Same matter: a shared key word, or nothing but antonyms tells them apart ("Use tabs." vs
    # "Use spaces.").
    same_matter = bool(shared) or (set(new_stance) == set(old_stance) and antonym is not None)
    return _Comparison(shared, opposed, antonym, change, same_matter)


class RuleDistiller:
    """Deterministic distiller: no model, explainable rules (see the module docstring)."""

    def __init__(self, same_threshold: float = 0.86, related_threshold: float = 0.6) -> None:
        self.same_threshold = same_threshold
        self.related_threshold = related_threshold
        #: Rules on the same matter with an antonym pair or an explicit rejection count as
        #: contradicting even when their embeddings are this much below ``related_threshold``.
        self.matter_margin = 0.15

    # -- critiques ------------------------------------------------------------------------
    def rules_from_critique(
        self,
        critique: str,
        *,
        task: str | None = None,
        response: str | None = None,
        score: float | None = None,
    ) -> list[CandidateRule]:
        """One candidate per piece of advice; one non-actionable candidate per other sentence.

        ``score`` and ``response`` are accepted for protocol compatibility; the response only
        feeds the topic guess (it often shows the language: SQL, Python ...).
        """
        out: list[CandidateRule] = []
        seen: set[str] = set()
        previous: str | None = None
        for sentence in split_sentences(critique or ""):
            rules = _rules_in_sentence(sentence)
            if rules:
                for rule in rules:
                    rule = _resolve_pronoun(rule, previous)
                    key = _key(rule)
                    if not key or key in seen:
                        continue
                    seen.add(key)
                    topic = guess_topic(rule, task, (critique or "") + "\n" + (response or ""))
                    out.append(
                        CandidateRule(
                            text=rule[:MAX_SHORT],
                            topic=topic,
                            when_to_use=_when_to_use(rule, topic, task),
                            actionable=True,
                            source_sentence=sentence[:MAX_SHORT],
                        )
                    )
            else:
                text = re.sub(r"\s+", " ", sentence).strip()
                key = "\x00" + _key(text)
                if key not in seen and text:
                    seen.add(key)
                    topic = guess_topic(text, task, response)
                    out.append(
                        CandidateRule(
                            text=text[:MAX_SHORT],
                            topic=topic,
                            when_to_use=_when_to_use(text, topic, task),
                            actionable=False,
                            source_sentence=sentence[:MAX_SHORT],
                        )
                    )
            previous = sentence
        return out

    # -- experiences ----------------------------------------------------------------------
    def lessons_from_experience(
        self, experience: Experience, *, similar: Sequence[Experience] = ()
    ) -> list[Lesson]:
        exp = experience
        kind = _task_kind(exp.task) or "doing this task"
        when = exp.when_to_use or f"When {kind}"
        lessons: list[Lesson] = []
        feedback = _clip(exp.feedback or "", 600)
        outcome = _outcome_class(exp)
        if outcome == "success":
            steps = _key_steps(exp.steps)
            parts = [f"When {kind}, this worked"]
            parts.append(": " + " -> ".join(steps) if steps else "")
            text = "".join(parts) + "."
            if feedback:
                text += f" Feedback: {feedback}"
            lessons.append(Lesson(kind="success_pattern", text=_clip(text, MAX_SHORT), when_to_use=when[:MAX_SHORT]))
        elif outcome == "failure":
            what = _what_went_wrong(exp)
            text = f"When {kind}, {what}"
            if feedback and feedback.lower() not in what.lower():
                text += f": {feedback}"
            lessons.append(Lesson(kind="failure_trigger", text=_clip(_finish(text), MAX_SHORT), when_to_use=when[:MAX_SHORT]))
        elif feedback:
            lessons.append(Lesson(kind="note", text=_clip(f"When {kind}: {feedback}", MAX_SHORT), when_to_use=when[:MAX_SHORT]))

        comparisons = 0
        seen: set[str] = set()
        for other in similar:
            if comparisons >= 3:
                break
            if other is exp or (other.id and other.id == exp.id):
                continue
            other_class = _outcome_class(other)
            if outcome == "success" and other_class == "failure":
                good, bad = exp, other
            elif outcome == "failure" and other_class == "success":
                good, bad = other, exp
            else:
                continue
            text = _contrast(kind, good, bad)
            if text and _key(text) not in seen:
                seen.add(_key(text))
                comparisons += 1
                lessons.append(Lesson(kind="comparison", text=_clip(text, MAX_SHORT), when_to_use=when[:MAX_SHORT]))
        return lessons

    # -- relations ------------------------------------------------------------------------
    def relate(self, new_rule: str, old_rule: str, *, similarity: float) -> Relation:
        """same / contradiction / distinct from embedding similarity plus explainable cues.

        A conflict (see :class:`_Comparison`) on rules that are at least loosely related
        (``related_threshold - matter_margin``) is a contradiction; otherwise the rules are the
        same above ``same_threshold`` and distinct below. Sentence polarity alone is not a
        conflict: paraphrases of one rule often differ in it ("Avoid nested subqueries." /
        "Use CTEs instead of subqueries." both reject subqueries), and reading it as one made
        the memory supersede rules with their own rewordings (measured on the critique set).
        """
        if _key(new_rule) == _key(old_rule):
            return "same"
        cmp = _compare(new_rule, old_rule)
        if cmp.conflict and similarity >= self.related_threshold - self.matter_margin:
            return "contradiction"
        return "same" if similarity >= self.same_threshold else "distinct"

    def explain_relation(self, new_rule: str, old_rule: str, *, similarity: float) -> str:
        """A one-line reason for :meth:`relate`'s answer (for logs and reports)."""
        cmp = _compare(new_rule, old_rule)
        rel = self.relate(new_rule, old_rule, similarity=similarity)
        cues = []
        if cmp.opposed:
            cues.append(f"opposite stance on {', '.join(sorted(cmp.opposed))}")
        if cmp.antonym:
            cues.append(f"antonyms {cmp.antonym[0]}/{cmp.antonym[1]}")
        if cmp.change:
            cues.append("change wording")
        shared = ", ".join(sorted(cmp.shared)) or "nothing"
        return f"{rel}: similarity {similarity:.2f}; shared {shared}; cues: {', '.join(cues) or 'none'}"


def _clip(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _outcome_class(exp: Experience) -> str:
    if exp.outcome == "success":
        return "success"
    if exp.outcome in ("failure", "partial"):
        return "failure"
    return "unknown"


def _step_label(step: Step, limit: int = 80) -> str:
    label = (step.action or "").strip() or (step.thought or "").strip()
    if not label:
        return ""
    arg = step.action_input
    if step.action and arg not in (None, "", {}, []):
        if isinstance(arg, dict):
            arg_text = ", ".join(f"{k}={v!r}" for k, v in list(arg.items())[:3])
        else:
            arg_text = str(arg)
        label = f"{label}({_clip(arg_text, 40)})"
    return _clip(label, limit)


def _key_steps(steps: Sequence[Step], limit: int = 6) -> list[str]:
    out: list[str] = []
    for s in steps:
        label = _step_label(s)
        if label and (not out or out[-1] != label):
            out.append(label)
    if len(out) > limit:
        out = out[: limit - 2] + ["…"] + out[-1:]
    return out


_ERROR_RE = re.compile(
    r"error|exception|traceback|failed|failure|denied|not found|timed? ?out|invalid|refused|"
    r"cannot|can't|unable|forbidden|crash|panic",
    re.I,
)


def _what_went_wrong(exp: Experience) -> str:
    status = "it failed" if exp.outcome == "failure" else "it only partly worked"
    error = ""
    at = ""
    for step in reversed(exp.steps):
        if step.observation and _ERROR_RE.search(step.observation):
            error = step.observation
            at = step.action or ""
            break
    if not error and exp.steps:
        last = exp.steps[-1]
        error = last.observation or ""
        at = last.action or ""
    text = status
    if at:
        text += f" after {_clip(at, 60)}"
    if error:
        first_line = next((ln for ln in error.strip().splitlines() if _ERROR_RE.search(ln)), error.strip().splitlines()[0] if error.strip() else "")
        text += f" ({_clip(first_line, 200)})"
    return text


def _actions(exp: Experience) -> list[str]:
    out: list[str] = []
    for s in exp.steps:
        label = (s.action or "").strip()
        if label and label.lower() not in [o.lower() for o in out]:
            out.append(label)
    return out


def _contrast(kind: str, good: Experience, bad: Experience) -> str:
    good_actions, bad_actions = _actions(good), _actions(bad)
    bad_set = {a.lower() for a in bad_actions}
    good_set = {a.lower() for a in good_actions}
    only_good = [a for a in good_actions if a.lower() not in bad_set][:4]
    only_bad = [a for a in bad_actions if a.lower() not in good_set][:4]
    if only_good or only_bad:
        text = f"When {kind}, the successful attempt"
        text += f" did {', '.join(only_good)}" if only_good else " skipped " + ", ".join(only_bad)
        if only_bad and only_good:
            text += f" where the failed attempt did {', '.join(only_bad)}"
        elif only_good:
            text += " which the failed attempt did not"
        if bad.feedback:
            text += f". The failure: {_clip(bad.feedback, 300)}"
        return _finish(text)
    if good.feedback or bad.feedback:
        text = f"When {kind}, the same steps both succeeded and failed"
        if bad.feedback:
            text += f"; the failure was: {_clip(bad.feedback, 300)}"
        if good.feedback:
            text += f"; the success: {_clip(good.feedback, 300)}"
        return _finish(text)
    return ""


# --------------------------------------------------------------------------------------------
# The LLM distiller
# --------------------------------------------------------------------------------------------

RULES_PROMPT = """You turn a critique of an AI agent's work into durable, reusable rules for the agent.

Task the agent was given:
{task}

Excerpt of the agent's response:
{response}

Score: {score}

Critique:
{critique}

Instructions:
- Read the critique sentence by sentence. For each piece of advice, write ONE rule as a short
  imperative sentence that generalises beyond this one task ("Use parameterised queries.",
  "Always add type hints to public functions."). Turn complaints into the behaviour to adopt.
- Do not turn praise, bare scores, vague reactions ("meh"), questions without advice, or one-off
  factual corrections about this specific artefact into rules; list them with "actionable": false.
- topic: a short lowercase slug for the domain, preferably one of: python, javascript, sql, data,
  writing, support, slides, code, general.
- when_to_use: one line describing the kind of task where the rule applies, worded so it would
  match future tasks ("When writing or reviewing Python code that handles files").
- source_sentence: the critique sentence the rule came from.

Reply with a JSON array only, no commentary:
[{{"text": "...", "topic": "...", "when_to_use": "...", "actionable": true, "source_sentence": "..."}}]
"""

LESSONS_PROMPT = """You extract reusable lessons from an AI agent's attempt at a task.

Task: {task}
Outcome: {outcome}
Score: {score}
Feedback: {feedback}

Steps (action -> observation):
{steps}

Similar past attempts:
{similar}

Instructions:
- For a success, write a "success_pattern" lesson: what to repeat on similar tasks.
- For a failure or partial success, write a "failure_trigger" lesson: "When <kind of task>,
  <what went wrong>: <how to avoid it>".
- If a similar attempt had the opposite outcome, write a "comparison" lesson contrasting what
  differed.
- Each lesson needs "when_to_use": one line naming the kind of task it helps with.

Reply with a JSON array only:
[{{"kind": "success_pattern|failure_trigger|comparison|note", "text": "...", "when_to_use": "..."}}]
"""

RELATE_PROMPT = """Two rules for an AI agent. Decide how the NEW rule relates to the OLD rule.

OLD: {old}
NEW: {new}
(Embedding similarity: {similarity:.2f})

Answer with exactly one word:
- same: they ask for the same behaviour (a rephrasing or a duplicate);
- contradiction: they are about the same matter but ask for incompatible behaviour (the new rule
  overrules the old one);
- distinct: they are about different matters, or compatible.
"""

_LESSON_KINDS = {"success_pattern", "failure_trigger", "comparison", "note"}


def _balanced(text: str, start: int) -> str | None:
    """The bracketed JSON value starting at text[start], respecting strings."""
    open_ch = text[start]
    close_ch = "]" if open_ch == "[" else "}"
    depth = 0
    quote: str | None = None
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'" and (ch == '"' or not text[i - 1].isalnum()):
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1] if ch == close_ch else None
    return None


def _loads_lenient(candidate: str) -> Any:
    """json.loads, then without trailing commas, then as a Python literal (single quotes)."""
    try:
        return json.loads(candidate)
    except Exception:  # noqa: BLE001 - ValueError, RecursionError on absurd nesting ...
        pass
    fixed = re.sub(r",\s*([}\]])", r"\1", candidate)
    try:
        return json.loads(fixed)
    except Exception:  # noqa: BLE001
        pass
    if len(fixed) > 200_000:
        return None
    py = re.sub(r"\btrue\b", "True", fixed)
    py = re.sub(r"\bfalse\b", "False", py)
    py = re.sub(r"\bnull\b", "None", py)
    try:
        return ast.literal_eval(py)
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, MemoryError, RecursionError
        return None


def extract_json(reply: str) -> Any:
    """The first JSON array or object in a model reply (fences, chatter and small errors tolerated).

    Returns None when nothing parseable is found.
    """
    if not isinstance(reply, str) or not reply.strip():
        return None
    candidates: list[str] = []
    for m in re.finditer(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", reply, re.S):
        candidates.append(m.group(1).strip())
    candidates.append(reply)
    for text in candidates:
        stripped = text.strip()
        if stripped[:1] in "[{":
            value = _loads_lenient(stripped)
            if value is not None:
                return value
        tries = 0
        for i, ch in enumerate(text):
            if ch in "[{":
                tries += 1
                if tries > 20:  # bounded work on pathological replies
                    break
                chunk = _balanced(text, i)
                if chunk is None:
                    continue
                value = _loads_lenient(chunk)
                if isinstance(value, (list, dict)):
                    return value
    return None


def _items(value: Any, *keys: str) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for k in keys:
            if isinstance(value.get(k), list):
                return value[k]
        return [value]
    return None


def _as_bool(value: Any, default: bool = True) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("false", "no", "0", "n", "none", "not actionable"):
            return False
        if v in ("true", "yes", "1", "y"):
            return True
    return default


def _fmt(template: str, **values: Any) -> str:
    """Fill a prompt template. Braces inside the values are safe: str.format never re-parses them."""
    return template.format(**values)


_RELATION_RE = re.compile(r"\b(contradict\w*|conflict\w*|same|duplicate|equivalent|distinct|different|unrelated)\b", re.I)


class LLMDistiller:
    """Distil with any ``prompt -> text`` callable; fall back to ``fallback`` on any failure."""

    def __init__(
        self,
        complete: Callable[[str], str],
        *,
        fallback: Distiller | None = None,
        acomplete: Callable[[str], Awaitable[str]] | None = None,
    ) -> None:
        self.complete = complete
        self.acomplete = acomplete
        self.fallback: Distiller = fallback if fallback is not None else RuleDistiller()
        #: The last failure (exception text or "unparseable reply"), for logs and tests.
        self.last_error: str | None = None

    # -- prompts --------------------------------------------------------------------------
    @staticmethod
    def _rules_prompt(critique: str, task: str | None, response: str | None, score: float | None) -> str:
        return _fmt(
            RULES_PROMPT,
            task=_clip(task or "(not given)", 2000),
            response=_clip(response or "(not given)", 2000),
            score="(not given)" if score is None else str(score),
            critique=_clip(critique, 8000),
        )

    @staticmethod
    def _lessons_prompt(exp: Experience, similar: Sequence[Experience]) -> str:
        steps = "\n".join(
            f"{i + 1}. {_step_label(s, 160)} -> {_clip(s.observation or '', 300)}"
            for i, s in enumerate(exp.steps[:30])
        ) or "(none recorded)"
        sims = "\n".join(
            f"- [{o.outcome}] {_clip(o.task, 200)}; actions: {', '.join(_actions(o)[:8]) or '-'}; "
            f"feedback: {_clip(o.feedback or '-', 200)}"
            for o in list(similar)[:5]
        ) or "(none)"
        return _fmt(
            LESSONS_PROMPT,
            task=_clip(exp.task, 2000),
            outcome=exp.outcome,
            score="(not given)" if exp.score is None else str(exp.score),
            feedback=_clip(exp.feedback or "(none)", 2000),
            steps=steps,
            similar=sims,
        )

    @staticmethod
    def _relate_prompt(new_rule: str, old_rule: str, similarity: float) -> str:
        return _fmt(RELATE_PROMPT, new=_clip(new_rule, 2000), old=_clip(old_rule, 2000), similarity=float(similarity))

    # -- parsing --------------------------------------------------------------------------
    def _parse_rules(self, reply: str, critique: str, task: str | None, response: str | None) -> list[CandidateRule] | None:
        items = _items(extract_json(reply), "rules", "items", "candidates", "guidelines")
        if items is None:
            return None
        out: list[CandidateRule] = []
        seen: set[str] = set()
        for item in items:
            if isinstance(item, str):
                item = {"text": item}
            if not isinstance(item, dict):
                continue
            text = item.get("text") or item.get("rule") or item.get("guideline")
            if not isinstance(text, str) or not text.strip():
                continue
            actionable = _as_bool(item.get("actionable", True))
            text = _finish(text) if actionable else re.sub(r"\s+", " ", text).strip()
            text = _clip(text, MAX_SHORT)
            key = ("" if actionable else "\x00") + _key(text)
            if not key.strip("\x00") or key in seen:
                continue
            seen.add(key)
            topic = _slug(str(item.get("topic") or "")) or guess_topic(text, task, critique + "\n" + (response or ""))
            when = item.get("when_to_use") or item.get("applies_when") or ""
            when = _clip(str(when), MAX_SHORT) if when else _when_to_use(text, topic, task)
            source = item.get("source_sentence") or item.get("source") or ""
            out.append(CandidateRule(text=text, topic=topic, when_to_use=when, actionable=actionable,
                                     source_sentence=_clip(str(source), MAX_SHORT)))
        if not out:
            if items == []:
                # The model found nothing actionable: report the critique as ignored.
                text = re.sub(r"\s+", " ", critique).strip()
                if not text:
                    return []
                topic = guess_topic(text, task, response)
                return [CandidateRule(text=_clip(text, MAX_SHORT), topic=topic, actionable=False,
                                      when_to_use=_when_to_use(text, topic, task), source_sentence=_clip(text, MAX_SHORT))]
            return None
        return out

    def _parse_lessons(self, reply: str, exp: Experience) -> list[Lesson] | None:
        items = _items(extract_json(reply), "lessons", "items")
        if items is None:
            return None
        when_default = exp.when_to_use or f"When {_task_kind(exp.task) or 'doing this task'}"
        out: list[Lesson] = []
        for item in items:
            if isinstance(item, str):
                item = {"text": item}
            if not isinstance(item, dict):
                continue
            text = item.get("text") or item.get("lesson")
            if not isinstance(text, str) or not text.strip():
                continue
            kind = str(item.get("kind") or "note").strip().lower().replace(" ", "_").replace("-", "_")
            if kind not in _LESSON_KINDS:
                kind = "note"
            when = item.get("when_to_use") or when_default
            out.append(Lesson(kind=kind, text=_clip(text, MAX_SHORT), when_to_use=_clip(str(when), MAX_SHORT)))  # type: ignore[arg-type]
        if not out and items != []:
            return None
        return out

    @staticmethod
    def _parse_relation(reply: str) -> Relation | None:
        if not isinstance(reply, str):
            return None
        value = extract_json(reply) if reply.strip()[:1] in "[{" else None
        if isinstance(value, dict):
            for k in ("relation", "answer", "label", "result"):
                if isinstance(value.get(k), str):
                    reply = value[k]
                    break
        m = None
        for cand in _RELATION_RE.finditer(reply):
            before = reply[max(0, cand.start() - 16): cand.start()].lower()
            if re.search(r"\b(?:not|no|isn't|aren't|neither|nor)\b(?:\s+(?:a|an|the|quite|really))?\s*$", before):
                continue  # "not the same", "not a contradiction"
            m = cand
            break
        if not m:
            return None
        word = m.group(1).lower()
        if word.startswith(("contradict", "conflict")):
            return "contradiction"
        if word in ("same", "duplicate", "equivalent"):
            return "same"
        return "distinct"

    # -- sync API -------------------------------------------------------------------------
    def _call(self, prompt: str) -> str | None:
        try:
            reply = self.complete(prompt)
        except Exception as exc:  # noqa: BLE001 - any model/client failure means: fall back
            self.last_error = f"{type(exc).__name__}: {exc}"
            return None
        if not isinstance(reply, str):
            reply = getattr(reply, "content", None) or getattr(reply, "text", None) or (str(reply) if reply is not None else None)
        return reply

    async def _acall(self, prompt: str) -> str | None:
        try:
            if self.acomplete is not None:
                reply = await self.acomplete(prompt)
            else:
                reply = await asyncio.to_thread(self.complete, prompt)
        except Exception as exc:  # noqa: BLE001
            self.last_error = f"{type(exc).__name__}: {exc}"
            return None
        if not isinstance(reply, str):
            reply = getattr(reply, "content", None) or getattr(reply, "text", None) or (str(reply) if reply is not None else None)
        return reply

    def _finish_rules(self, reply: str | None, critique: str, task, response, score) -> list[CandidateRule]:
        if reply is not None:
            try:
                parsed = self._parse_rules(reply, critique, task, response)
            except Exception as exc:  # noqa: BLE001
                self.last_error = f"{type(exc).__name__}: {exc}"
                parsed = None
            if parsed is not None:
                return parsed
            self.last_error = self.last_error or "unparseable reply"
        return self.fallback.rules_from_critique(critique, task=task, response=response, score=score)

    def _finish_lessons(self, reply: str | None, experience: Experience, similar: Sequence[Experience]) -> list[Lesson]:
        if reply is not None:
            try:
                parsed = self._parse_lessons(reply, experience)
            except Exception as exc:  # noqa: BLE001
                self.last_error = f"{type(exc).__name__}: {exc}"
                parsed = None
            if parsed is not None:
                return parsed
            self.last_error = self.last_error or "unparseable reply"
        return self.fallback.lessons_from_experience(experience, similar=similar)

    def _finish_relation(self, reply: str | None, new_rule: str, old_rule: str, similarity: float) -> Relation:
        if reply is not None:
            parsed = self._parse_relation(reply)
            if parsed is not None:
                return parsed
            self.last_error = "unparseable reply"
        return self.fallback.relate(new_rule, old_rule, similarity=similarity)

    def rules_from_critique(
        self,
        critique: str,
        *,
        task: str | None = None,
        response: str | None = None,
        score: float | None = None,
    ) -> list[CandidateRule]:
        self.last_error = None
        reply = self._call(self._rules_prompt(critique, task, response, score))
        return self._finish_rules(reply, critique, task, response, score)

    def lessons_from_experience(self, experience: Experience, *, similar: Sequence[Experience] = ()) -> list[Lesson]:
        self.last_error = None
        reply = self._call(self._lessons_prompt(experience, similar))
        return self._finish_lessons(reply, experience, similar)

    def relate(self, new_rule: str, old_rule: str, *, similarity: float) -> Relation:
        self.last_error = None
        reply = self._call(self._relate_prompt(new_rule, old_rule, similarity))
        return self._finish_relation(reply, new_rule, old_rule, similarity)

    # -- async API ------------------------------------------------------------------------
    async def arules_from_critique(
        self,
        critique: str,
        *,
        task: str | None = None,
        response: str | None = None,
        score: float | None = None,
    ) -> list[CandidateRule]:
        self.last_error = None
        reply = await self._acall(self._rules_prompt(critique, task, response, score))
        return self._finish_rules(reply, critique, task, response, score)

    async def alessons_from_experience(self, experience: Experience, *, similar: Sequence[Experience] = ()) -> list[Lesson]:
        self.last_error = None
        reply = await self._acall(self._lessons_prompt(experience, similar))
        return self._finish_lessons(reply, experience, similar)

    async def arelate(self, new_rule: str, old_rule: str, *, similarity: float) -> Relation:
        self.last_error = None
        reply = await self._acall(self._relate_prompt(new_rule, old_rule, similarity))
        return self._finish_relation(reply, new_rule, old_rule, similarity)
