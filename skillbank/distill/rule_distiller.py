"""The deterministic distiller (no model); how it works is described in the package docstring."""

from __future__ import annotations

import re
from typing import Sequence

from skillbank.distill.base import CandidateRule, Relation
from skillbank.distill.language import kept_verbatim
from skillbank.distill.lessons import (_contrast, _key_steps, _outcome_class, _what_went_wrong,
                                       same_task)
from skillbank.distill.relations import _compare
from skillbank.distill.supersession import has_flip, names_only, two_objects, two_things
from skillbank.distill.antecedents import (head_pronoun, object_points_back, read_from_critique,
                                           read_from_task)
from skillbank.distill.clauses import _resolve_pronoun, _rules_in_sentence
from skillbank.distill.standalone import (keep_subjects, leans_on_previous, points_to_sentence,
                                          resolve_reference, task_kind)
from skillbank.distill.sentences import split_sentences
from skillbank.distill.text import _clip, _finish, _key
from skillbank.distill.topics import _task_kind, _when_to_use, guess_topic
from skillbank.records import MAX_SHORT, Experience, Lesson


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
            # Not English: kept as written for the agent to read (see distill.language).
            verbatim = kept_verbatim(sentence)
            missed: list[str] = []
            rules = [verbatim] if verbatim else keep_subjects(_rules_in_sentence(sentence, missed))
            if rules:
                for number, rule in enumerate(rules):
                    rule = _resolve_pronoun(rule, previous)
                    key = _key(rule)
                    if not key or key in seen:
                        continue
                    seen.add(key)
                    # An object pronoun ("run it", "rotate them") is read from a description
                    # just before, joined to the rule whose thing it names, or read from a
                    # sentence before or the task; else kept, as the answer itself
                    # (hunt-learnfaces #2, session 38).
                    rule = read_from_critique(rule, _clause_before(sentence, rule)) or rule
                    if _join_previous(out, rule, sentence):
                        continue
                    if head_pronoun(rule):
                        opens = previous is None and not out and number == 0
                        rule = (read_from_critique(rule, previous)
                                or (read_from_task(rule, task) if opens else None) or rule)
                    if points_to_sentence(rule):
                        # No rule before to join: read "there" / "do that" from the clause or
                        # sentence before, or report it unread; alone it means nothing
                        # (hunt-lcteam #2, session 36).
                        read = resolve_reference(rule, _before(sentence, rule) or previous)
                        if read is None:
                            out.append(CandidateRule(text=rule[:MAX_SHORT], topic="general",
                                                     when_to_use="", actionable=False,
                                                     source_sentence=sentence[:MAX_SHORT]))
                            continue
                        rule = read
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
            # A sentence with no rule, or a clause of one that asked something and gave none:
            # reported (ignored, with why), never dropped without a word.
            for unread in missed if rules else [sentence]:
                text = re.sub(r"\s+", " ", unread).strip()
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
        return _without_restated_reproaches(out)

    # -- experiences ----------------------------------------------------------------------
    def lessons_from_experience(
        self, experience: Experience, *, similar: Sequence[Experience] = ()
    ) -> list[Lesson]:
        exp = experience
        kind = _task_kind(exp.task) or "doing this task"
        # The lesson's text tells the one task; its "when" names the kind, as a rule's does
        # ("When planning the migration of our company blog from WordPress to Hugo" fitted that
        # task alone, learning-loop hunt #12).
        general = "" if kind.startswith("working on: ") else task_kind(kind)
        when = exp.when_to_use or f"When {general or kind}"
        lessons: list[Lesson] = []
        feedback = _clip(exp.feedback or "", 600)
        outcome = _outcome_class(exp)
        if outcome == "success":
            steps = _key_steps(exp.steps)
            # A success with neither steps nor feedback teaches nothing ("When deploying the
            # web app, this worked." was stored and shown as a lesson).
            if steps or feedback:
                text = f"When {kind}, this worked" + (": " + " -> ".join(steps) if steps else "")
                text += "." + (f" Feedback: {feedback}" if feedback else "")
                lessons.append(Lesson(kind="success_pattern", text=_clip(text, MAX_SHORT),
                                      when_to_use=when[:MAX_SHORT]))
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
            if not same_task(exp.task, other.task):
                continue  # only runs of the same task say what made the difference
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

        A lexical conflict (a shared word one rule wants and the other rejects, or antonyms on
        the same matter; see :class:`_Comparison`) on rules that are at least loosely related
        (``related_threshold - matter_margin``) is a contradiction, and so is announced change
        wording ("from now on ...") on related rules (``related_threshold``); otherwise the
        rules are the same above ``same_threshold`` and distinct below. Stance is read per
        object, not per sentence: paraphrases of one rule often differ in sentence polarity
        ("Avoid nested subqueries." / "Use CTEs instead of subqueries." both reject
        subqueries). Two plain instructions each about something of its own are distinct,
        antonyms or not (:func:`~skillbank.distill.supersession.two_things`). A negation that
        only names the other rule's things is no conflict (see
        :func:`~skillbank.distill.supersession.names_only`): read word by word, "Never import
        a CSV file without a header row." retired "Always check the CSV file delimiter before
        an import.".
        """
        if _key(new_rule) and _key(new_rule) == _key(old_rule):
            return "same"  # not two rules with no [a-z0-9] word at all: "" == "" is no twin
        cmp = _compare(new_rule, old_rule)
        if cmp.lexical_conflict and not cmp.opposed and two_things(new_rule, old_rule):
            # Two plain instructions with an antonym pair between them: neither overrules,
            # and neither is the other ("Close the ticket after ..." was merged into "...
            # before ..." once the conflict was set aside).
            return "distinct"
        if cmp.lexical_conflict and cmp.antonym is None and not has_flip(new_rule) \
                and two_objects(new_rule, old_rule):
            # One kind of thing, two of them: "Never use error codes in the React frontend."
            # does not overrule "Validate currency codes in the React frontend." (nor is it
            # the same rule); read as a contradiction, one negation retired every rule about
            # currency codes (scale hunt, session 18).
            return "distinct"
        if (cmp.lexical_conflict and similarity >= self.related_threshold - self.matter_margin
                and not (cmp.antonym is None and names_only(new_rule, old_rule, cmp.opposed))):
            return "contradiction"
        if cmp.announced_change and similarity >= self.related_threshold:
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


#: A sentence that reproaches a miss ("You forgot to add tests again.", "You didn't ...").
_REPROACH = re.compile(r"^\s*you(?:'ve| have)?\s+(?:forgot|forgotten|neglected|failed|missed|left out"
                       r"|omitted|skipped|didn't|did not|never)\b", re.I)


def _without_restated_reproaches(out: list[CandidateRule]) -> list[CandidateRule]:
    """A reproach's rule is dropped (reported as no reusable advice) when a rule of another
    sentence of the critique is about the same thing: "You forgot to add tests again. Every
    bug fix needs a regression test." stored "Add tests again." beside "Give every bug fix a
    regression test." (soak hunt #7); the second says what the first only complains about.
    Only a reproach that adds nothing: a light verb ("add", "include", "use") or the other
    rule's own, on things the other rule names too. One that asks for something else
    ("Update the README." beside "Write the README in British English.") or is the
    critique's only word on its thing ("Include the changelog entry.") stays a rule."""
    from skillbank.distill.relations import _action, _objects
    from skillbank.distill.vocabulary import _LIGHT_WORDS

    def covered(reproach: str, other: str) -> bool:
        action = _action(reproach)
        things = _objects(reproach, action)
        return (bool(things) and things <= _objects(other, _action(other))
                and (action in _LIGHT_WORDS or action == _action(other)))

    plain = [r for r in out if r.actionable and not _REPROACH.match(r.source_sentence)]
    kept = []
    for rule in out:
        if rule.actionable and _REPROACH.match(rule.source_sentence) and any(
                covered(rule.text, other.text) for other in plain
                if other.source_sentence != rule.source_sentence):
            rule = rule.model_copy(update={"text": _clip(rule.source_sentence, MAX_SHORT),
                                           "actionable": False})
        kept.append(rule)
    return kept


def _join_previous(out: list[CandidateRule], rule: str, sentence: str) -> bool:
    """Join `rule` to the critique's previous rule when it means nothing alone (see
    :func:`~skillbank.distill.standalone.leans_on_previous`): "Offer a discount before processing
    a cancellation; make it no more than 15%." is one rule, served together and retired
    together (alone, "Make it no more than 15%." outlived the discount rule it belonged to)."""
    last = next((i for i in range(len(out) - 1, -1, -1) if out[i].actionable), None)
    if last is None or not (leans_on_previous(rule, sentence)
                            or object_points_back(rule, out[last].text)):
        return False
    prev = out[last]
    text = f"{prev.text.rstrip(' .')}; {rule[:1].lower()}{rule[1:]}"
    if len(text) > MAX_SHORT:
        return False
    said = prev.source_sentence if sentence in prev.source_sentence else \
        f"{prev.source_sentence} {sentence}"
    out[last] = prev.model_copy(update={"text": text, "source_sentence": said[:MAX_SHORT]})
    return True


def _clause_before(sentence: str, rule: str) -> str | None:
    """The clause of `sentence` before the one `rule`'s object pronoun came from ("The error
    message is unclear" before "it should say which field failed"), or None."""
    pieces = [p for p in re.split(r"\s*;\s+|,\s+(?:and|so|but)\s+", sentence) if p.strip()]
    pronoun = head_pronoun(rule)
    for i, piece in enumerate(pieces):
        if i and pronoun and re.search(rf"\b{pronoun}\b", piece, re.I):
            return pieces[i - 1]
    return None


def _before(sentence: str, rule: str) -> str | None:
    """The clause of `sentence` before the one `rule` came from ("You forgot to announce the
    deploy in the billing channel; always announce billing deploys there."), or None when the
    rule is the sentence's first clause."""
    pieces = [p for p in re.split(r"\s*;\s+", sentence) if p.strip()]
    key = _key(rule)
    for i, piece in enumerate(pieces):
        if i and key and key in _key(piece):
            return pieces[i - 1]
    return None
