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
  to a deterministic distiller on any failure; it never raises to the caller. A reply over
  ``json_reply.MAX_REPLY_CHARS`` (1,000,000 characters) is not read, and the JSON in a reply is
  found in one scan; the async methods parse in a worker thread, off the event loop. A
  relation is the bare word the prompt asks for (the whole reply, a JSON field, its first or
  last word), else the relation words that are not negated, if they agree; a negated word
  ("don't contradict", "never conflicts") never counts, and on doubt the deterministic
  distiller's relation decides, so a rule is never superseded on an unclear reply.
  A rule or lesson needs words: an echo of the prompt's template ("...") is none, and a
  reply of nothing else falls back with the reason (``UnusableReply``).

How the deterministic rules work (kept simple and explainable on purpose):

* Sentences are split on terminal punctuation (protecting abbreviations such as "e.g.", decimals
  and inline code) and on bullet / numbered lines; each sentence is split further on ``;``, a
  colon after a short label ("nit:", "Two fixes:"), and ", but" / ", so" style joints.
* A clause is advice when it starts with an imperative verb from a generic instruction vocabulary
  (``_VERBS``), with "always" / "never" / "don't", or matches one of a few modal shapes: "you
  should (have) X", "<thing> should be X", "<thing> needs X", "it would be better to X", "I'd X",
  "can you X?", "instead of X, Y", "X rather than Y, please", "<thing> is missing", "there is no
  X", "<thing> has no X", "<thing> is never X-ed", "<thing> is too long", "<thing> would help",
  "we now X" / "we no longer X". Each shape has a fixed rewrite into imperative form. A
  capitalised first word the vocabulary lacks opens an imperative when its object follows
  ("Mask the card number ..."); a change said as news ("We moved X to Y", "X is Y now, not Z",
  "No more X") is rewritten first (``declaratives``); a rule that points back to the one before
  it ("... Use AbortController for it.") stays joined to it (``standalone``); a sentence in
  another language is kept as written (``language``): this distiller reads English only.
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

Layout (each module has one job; lower ones never import higher ones):

* ``vocabulary`` - word lists; ``text`` - tokens, finishing, clipping, keys;
  ``sentences`` - sentence splitting; ``morphology`` - base verbs, lemmas, gerunds;
* ``topics`` - topic guess, task kinds, when_to_use; ``rewrite`` - advice shapes -> imperative
  rules; ``declaratives`` - announced changes -> rules; ``language`` - non-English sentences;
  ``clauses`` - sentence -> clauses -> rules;
  ``relations`` - stance, polarity, antonyms; ``lessons`` - experience -> lesson helpers;
* ``base`` - the protocol and types; ``rule_distiller`` - :class:`RuleDistiller`;
  ``prompts``, ``json_reply`` and ``llm`` - :class:`LLMDistiller`.
"""

from __future__ import annotations

from skillbank.distill.base import CandidateRule, Distiller, Relation
from skillbank.distill.json_reply import extract_json
from skillbank.distill.llm import LLMDistiller
from skillbank.distill.prompts import LESSONS_PROMPT, RELATE_PROMPT, RULES_PROMPT
from skillbank.distill.clauses import normalise_rule
from skillbank.distill.rule_distiller import RuleDistiller
from skillbank.distill.sentences import split_sentences
from skillbank.distill.topics import TOPIC_KEYWORDS, guess_topic

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
