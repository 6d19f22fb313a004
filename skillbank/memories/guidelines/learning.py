"""Learning: a critique (or a rule) in, guidelines added, merged or superseded out.

A mixin of ``GuidelineMemory``; see its module docstring for the merge / supersede rules.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime
from typing import Any, Iterable, Sequence

import numpy as np
from pydantic import ValidationError

from skillbank.audit import note
from skillbank.errors import InvalidInputError, NotFoundError, QueueFullError
from skillbank.fsutil import slugify
from skillbank.memories.guidelines.files import (
    IN_PLAY, MAX_SOURCE_NAME, NO_WORDS, SourceRecord, _check_text, _clean, _one_line,
    critique_excerpt, has_words, kept_excerpt_of, MAX_PENDING_CRITIQUE)
from skillbank.memories.guidelines.agent_rules import MAX_AGENT_RULES, agent_rules
from skillbank.memories.guidelines.ignored import ignored_why
from skillbank.memories.guidelines.decisions import (
    CONTEXT_DENSE_FLOOR, DENSE_BAR, EVIDENCE_FLOOR, Plan, critique_context,
    merge_evidence, same_wording)
from skillbank.distill.llm import distilled_by
from skillbank.distill.supersession import dropped, drops, echoes_overruled, other_terms, overrules
from skillbank.distill.topics import named_topic_when
from skillbank.memories.guidelines.values import value_change
from skillbank.memories.guidelines.curation import (
    NEAREST_FLOOR, check_all_replaces, check_replaces, nearest_view, pending_entry, plan_replace,
    replaces_itself)
from skillbank.memories.guidelines.matching import MAX_NEIGHBOURS, more_specific
from skillbank.memories.guidelines.shared_rules import record_overrides, shared_contradicted
from skillbank.memories.guidelines.words_only import matching_by_words_if_unread
from skillbank.records import MAX_SHORT, MAX_TEXT, Guideline, LearnEntry, LearnReport, utcnow
from skillbank.review_queue import check_room
from skillbank.unread import mostly_unread

log = logging.getLogger("skillbank.guidelines")


class GuidelineLearning:
    """learn() and add() (see the module docstring)."""

    # Learning ------------------------------------------------------------------------------------
    def learn(
        self,
        critique: str,
        task: str | None = None,
        response: str | None = None,
        score: float | None = None,
        source: str = "user",
        trusted: bool = True,
        namespace: str | None = None,
        candidates: Sequence[Any] | None = None,
        rules: Sequence[Any] | None = None,
        replaces: str | None = None,
    ) -> LearnReport:
        """Turn a critique into guidelines: add, merge, supersede, or ignore each candidate rule.

        ``rules`` are the rules the calling model already read from the critique
        (``[{"text": ..., "when_to_use": ...}]``, ``topic`` optional): they are stored as given,
        with the verbatim critique as their source, instead of the distiller's extraction (the
        agent's own reading usually beats a model-free one). ``candidates`` (``CandidateRule``
        objects or dicts) is the older form of the same. The store's dedup and supersede logic
        applies either way. ``trusted=False`` (e.g. a critique from an untrusted channel) never
        changes an active rule: its rules wait as ``pending`` proposals until approve().

        ``replaces=<id>`` (or ``"replaces"`` in one of ``rules``) says the new rule replaces
        that existing one: it is superseded, never merged (see ``curation``). Each entry of the
        report lists the ``nearest`` existing rules with their ids, to replace, retire or leave.
        """
        critique = _check_text(critique, "critique", MAX_TEXT)
        task = _check_text(task, "task", MAX_TEXT, optional=True)
        if response is not None:  # context for the distiller only: cut, not refused
            response = _check_text(response[:MAX_TEXT] if isinstance(response, str) else response,
                                   "response", MAX_TEXT)
        if score is not None:
            try:
                finite = not isinstance(score, bool) and math.isfinite(float(score))
            except (TypeError, ValueError, OverflowError):
                finite = False
            if not finite:
                raise InvalidInputError("score must be a finite number")
            score = float(score)
        if not isinstance(trusted, bool):
            raise InvalidInputError("trusted must be true or false")
        source = self._check_source(source)
        ns = self._write_ns(namespace)  # the caller's namespace (skillbank.scope)
        trusted = self._scope(trusted).trusted
        self._refuse_when_full(ns, trusted)
        if rules is not None:
            if candidates is not None:
                raise InvalidInputError("pass the agent's rules as rules=[...] or candidates=[...], "
                                        "not both")
            candidates = agent_rules(rules, critique=critique, task=task)
        if candidates is None:
            if not critique.strip():
                return LearnReport(entries=[LearnEntry(action="ignored", text="",
                                                       detail="empty critique")])
            distilled = self.distiller.rules_from_critique(
                critique, task=task, response=response, score=score)
            said = distilled_by(self.distiller, distilled)
            found = list(distilled)
            if not found:  # no sentence at all: said, not an empty report
                return LearnReport(entries=[LearnEntry(
                    action="ignored", text=_clean(critique, MAX_SHORT),
                    detail=ignored_why(critique, self.distiller))], **said)
        else:
            if isinstance(candidates, (str, bytes, dict)) or not isinstance(candidates, Iterable):
                raise InvalidInputError(
                    "candidates must be a list of CandidateRule objects or dicts")
            found = list(candidates)
        # As many as an agent may pass (agent_rules), whoever distilled them (this bank's
        # distiller, MCP sampling's or a client bank's, both passed as candidates=): one sampled
        # reply of 3,000 "rules" was written under the write lock for over 20 minutes, every
        # other client waiting; a sampled reply of 100 was taken whole (hunt-llm #1, session 32).
        if candidates is not None:  # each checked, past the cap too (review 2, session 32)
            found = [self._as_candidate(c) for c in found]
        beyond = found[MAX_AGENT_RULES:]
        found = found[:MAX_AGENT_RULES]
        if replaces is not None:
            actionable = [r for r in found if getattr(r, "actionable", True)]
            if len(actionable) != 1:
                raise InvalidInputError(
                    f"replaces= names one rule, but this critique gave {len(actionable)}; pass "
                    "rules=[{\"text\": ..., \"replaces\": \"gl-...\"}] to say which one replaces it")
            found = [r.model_copy(update={"replaces": replaces})
                     if getattr(r, "actionable", True) else r for r in found]
        report = LearnReport(**(said if candidates is None else {}))
        if beyond:
            report.entries.append(LearnEntry(
                action="ignored", text="", detail=f"the distiller gave {len(found) + len(beyond)} "
                f"rules; the first {MAX_AGENT_RULES} were learnt (at most {MAX_AGENT_RULES} per "
                "critique)"))
        touched: set[str] = set()
        if any(getattr(rule, "replaces", None) for rule in found):  # only then: a refresh
            # stats every rule file (learn 100 -> 220-330 ms at 1,281 rules, scale hunt)
            with self._writing():
                self._refresh()
                check_all_replaces(self, found, ns, trusted)  # before anything is written
        for rule in found:
            if not getattr(rule, "actionable", True) or not has_words(rule.text):
                report.entries.append(LearnEntry(  # a candidates= rule of emoji alone, too
                    action="ignored", text=_clean(rule.text, MAX_SHORT),
                    detail=ignored_why(rule.text, self.distiller)))
                continue
            src = SourceRecord(critique=critique, task=task, source=source, score=score,
                               trusted=trusted, rule=_clean(rule.text, MAX_SHORT),
                               sentence=_clean(getattr(rule, "source_sentence", "") or "",
                                               MAX_SHORT) or None)
            # Locked per rule, not per critique: 20 rules held the locks 4-9 s, every other
            # client's memory_context waiting (trust hunt, session 18); the index read first.
            self._warm_index(rule.text, ns)
            with self._writing():
                self._refresh()
                try:
                    if getattr(rule, "replaces", None):  # forgotten since the check: said
                        check_replaces(self, rule.replaces, ns, trusted)  # per rule, the rest reported
                    entry = self._learn_one(
                        text=_clean(rule.text, MAX_SHORT),
                        topic=slugify(str(rule.topic or "general")),
                        when_to_use=_clean(getattr(rule, "when_to_use", "") or "", MAX_SHORT),
                        sentence=src.sentence or "",
                        source=src, namespace=ns, trusted=trusted, touched=touched,
                        replaces=getattr(rule, "replaces", None))
                except (QueueFullError, InvalidInputError, NotFoundError) as exc:  # since
                    # this call began (a full queue, a replaced rule gone): said per rule
                    entry = LearnEntry(action="ignored", text=_clean(rule.text, MAX_SHORT),
                                       detail=str(exc))
            report.entries.append(entry)
        report.pending_review = any(self._get(gid).status == "pending" for gid in report.ids())
        note(self, "learn", "guideline", report.ids(), namespace=ns, trusted=trusted)
        return report

    def add(self, text: str, topic: str | None = None, when_to_use: str = "",
            source: str = "agent", trusted: bool = True, namespace: str | None = None,
            replaces: str | None = None) -> LearnEntry:
        """Add one rule (the agent-controlled path) with the same dedup / supersede logic.

        The wording is kept as given; when ``topic`` (or ``when_to_use``) is missing the
        distiller proposes one from the rule text. ``replaces=<id>``: this rule replaces that
        existing one (superseded, never merged; see ``curation``).
        """
        text = _check_text(text, "rule text", 4 * MAX_SHORT)
        text = _one_line(text)
        if not text:
            raise InvalidInputError("rule text must be a non-empty string")
        if not has_words(text):
            raise InvalidInputError(f"rule text {NO_WORDS}")
        if len(text) > MAX_SHORT:
            raise InvalidInputError(f"rule text is {len(text)} characters; at most {MAX_SHORT}")
        when_to_use = _check_text(when_to_use if when_to_use is not None else "", "when_to_use",
                                  MAX_SHORT)
        if not isinstance(trusted, bool):
            raise InvalidInputError("trusted must be true or false")
        if topic is not None:
            topic = self._check_topic(topic)
        source = self._check_source(source)
        ns = self._write_ns(namespace)  # the caller's namespace (skillbank.scope)
        trusted = self._scope(trusted).trusted
        self._refuse_when_full(ns, trusted)
        when = _one_line(when_to_use)
        if topic is None or not when:
            guess_topic, guess_when = self._guess(text)
            named = topic is not None and topic != guess_topic  # not the words' (hunt-mcphttp #4)
            when = when or (named_topic_when(text, topic) if named else guess_when)
            topic = topic or guess_topic
        self._warm_index(text, ns)
        with self._writing():
            self._refresh()
            entry = self._learn_one(
                text=text, topic=topic, when_to_use=when, sentence="",
                source=SourceRecord(critique=text, task=None, source=source, rule=text,
                                    trusted=trusted),
                namespace=ns, trusted=trusted, touched=set(),
                replaces=None if replaces is None else check_replaces(self, replaces, ns,
                                                                         trusted))
        note(self, "add", "guideline", entry.guideline_id, namespace=ns, trusted=trusted)
        return entry

    def _guess(self, text: str) -> tuple[str, str]:
        """Topic and when_to_use for a bare rule, from the distiller (never fails)."""
        try:
            for rule in self.distiller.rules_from_critique(text):
                if getattr(rule, "actionable", True):
                    return slugify(str(rule.topic or "general")), _clean(rule.when_to_use, MAX_SHORT)
        except Exception as exc:  # noqa: BLE001 - a guess is optional
            log.warning("topic guess failed: %s", exc)
        try:
            from skillbank.distill import guess_topic

            return slugify(guess_topic(text)), ""
        except Exception:  # noqa: BLE001
            return "general", ""

    @staticmethod
    def _check_source(source: str) -> str:
        source = _check_text(source, "source", MAX_SOURCE_NAME)
        if not _one_line(source):
            raise InvalidInputError(
                f"source must be a short non-empty label (at most {MAX_SOURCE_NAME} characters)")
        return _one_line(source)

    @staticmethod
    def _as_candidate(value: Any) -> Any:
        from skillbank.distill import CandidateRule

        if isinstance(value, CandidateRule):
            return value
        if isinstance(value, str):
            return CandidateRule(text=value)
        try:
            return CandidateRule.model_validate(
                value if isinstance(value, dict) else value.model_dump())
        except (ValidationError, AttributeError) as exc:
            raise InvalidInputError(
                f"candidates must be CandidateRule objects or dicts: {exc}") from None

    def _learn_one(self, *, text: str, topic: str, when_to_use: str, sentence: str,
                   source: SourceRecord, namespace: str, trusted: bool, touched: set[str],
                   replaces: str | None = None) -> LearnEntry:
        """Decide what one candidate rule does to the memory (see ``decisions``) and do it; by
        words alone while no model can be loaded, or for a rule it does not read (words_only)."""
        with matching_by_words_if_unread(self, text):
            entry = self._decide(text=text, topic=topic, when_to_use=when_to_use,
                                 sentence=sentence, source=source, namespace=namespace,
                                 trusted=trusted, touched=touched, replaces=replaces)
            shared = shared_contradicted(self, text, sentence, source, namespace, topic)
        # This critique's own rules are no "existing" rules to curate against (a sibling
        # matched at 1.0 on the shared critique, not the rule). A shared rule it contradicts
        # is said and not served beside it to its namespace (hunt-teamvotes #1, session 38).
        entry.nearest = [n for n in getattr(self, "_last_nearest", [])
                         if n["id"] != entry.guideline_id and n["id"] not in touched]
        self._last_nearest = []
        return record_overrides(self, entry, shared)

    def _decide(self, *, text: str, topic: str, when_to_use: str, sentence: str,
                source: SourceRecord, namespace: str, trusted: bool, touched: set[str],
                replaces: str | None) -> LearnEntry:
        itself = replaces and replaces_itself(self, text, replaces, when_to_use)  # a no-op
        if itself:
            return itself
        vector = self._member_vector(text, sentence or None, source.critique)
        query = " ".join(dict.fromkeys(t for t in (text, sentence, source.critique) if t))
        rule_vector = self._member_vector(text, sentence or None, None)
        # Rules already learnt from this very critique (an agent passing the rules it read one
        # call at a time) are kept apart as the rules of one call are: the shared critique
        # says nothing about whether two of its rules are one ("Put the answer first" and
        # "Keep paragraphs short" from one review were merged at context cosine 1.00).
        seen = self._seen(namespace, trusted)
        siblings = set(touched) | self._same_critique(source.critique, namespace, seen)
        neighbours = self._nearest(vector, query, namespace, topic, rule_vector,
                                   frozenset(siblings), statuses=seen)
        twin = self._twin(text, namespace, seen)
        if twin is not None and all(gid != twin for _, gid in neighbours):
            # The very same rule again is always compared: among many look-alikes at 1.00
            # ("Always review the X before merging.") it fell off the shortlist and was added.
            neighbours.insert(0, (1.0, twin))
        plan = self._plan(text, neighbours, siblings, vector=vector,
                          context=critique_context(source.critique[:2000], sentence or text),
                          sentence=sentence or text)
        # What a curating agent is shown: the nearest rules, also below the merge floor.
        self._last_nearest = nearest_view(self, neighbours if len(neighbours) >= 3 else
                                          self._nearest(vector, query, namespace, topic, n=3,
                                                        floor=NEAREST_FLOOR, statuses=seen),
                                          statuses=seen, text=text)
        if replaces is not None:  # the caller's word: supersede it, never merge into it
            plan_replace(self, plan, text, replaces, namespace, statuses=seen)
        if trusted:
            self._dropped_practices(plan, source.critique, namespace, siblings)
        if plan.contradicted and trusted:
            plan.contradicted += self._more_contradicted(
                text, vector, query, namespace, topic, plan.contradicted,
                skip={gid for _, gid in plan.contradicted} | siblings
                | ({plan.same[1]} if plan.same else set()), statuses=seen)
        now = utcnow()
        # An untrusted caller's rule worded as a pending proposal (that replaces what it
        # replaces) joins it: one proposal per wording (hunt-mcp-longlived #6, session 31),
        # answered as a new one (`_join_proposal`). Pending rules worded otherwise it never sees.
        proposal = None if trusted else self._lookup.pending_twin(self._items, text, namespace)
        if plan.same is not None:
            target = self._items[plan.same[1]]
            if trusted and target.status == "active":
                return self._merge(target, text, source, plan, touched, now)
            held = self._active_twin(text, source.critique, namespace) if trusted else None
            if held is not None:
                return self._reinforce_over_pending(held, target.id, text, source, plan,
                                                    touched, now)
            # Untrusted input never changes an active rule, and a reviewer's restatement of a
            # pending (untrusted) rule confirms the trusted wording, never the pending one: in
            # both cases the candidate becomes a guideline of its own, linked to the other.
            # (A caller who does not review the namespace meets active rules only, `_seen`.)
            if trusted:  # the pending proposal is replaced by the trusted wording
                plan.confirms = target.id
                plan.why[target.id] = "confirmed: this is its trusted wording"  # no contradiction
                plan.note = (f"confirms pending {target.id} ({plan.same[2]}) with this trusted "
                             f"wording; {target.id} is superseded by it, its untrusted wording "
                             "never becomes active")
            else:
                plan.related.insert(0, target.id)
                plan.note = (f"same rule as active {target.id} ({plan.same[2]}): kept as a "
                             "proposal, since untrusted input never changes an active rule")
            plan.same = None
        if proposal is not None and {g for _, g in plan.contradicted} <= set(
                self._items[proposal].supersedes):  # else (a `replaces=` it lacks) its own
            return self._join_proposal(self._items[proposal], text, source, plan, touched, now)
        entry = self._add_new(text, topic, when_to_use, source, namespace, trusted, plan,
                              touched, now)
        if plan.confirms and entry.guideline_id:
            self._mark_superseded(plan.confirms, entry.guideline_id, now)
        return entry

    def _dropped_practices(self, plan: Plan, critique: str, namespace: str,
                           siblings: set[str]) -> None:
        """Active rules asking for a practice the critique says was dropped ("we moved away
        from personal sign-offs") are overruled by this critique's rule, even when that rule
        shares no words with them ("Sign as the team."): the user said the practice is over.
        """
        practices = dropped(critique)
        if not practices:
            return
        taken = {gid for _, gid in plan.contradicted} | siblings
        if plan.same is not None:
            taken.add(plan.same[1])
        for gid, g in list(self._items.items()):
            if gid in taken or g.namespace != namespace or g.status != "active":
                continue
            why = next((w for w in (drops(p, g.text) for p in practices) if w), None)
            if why:
                plan.contradicted.append((1.0, gid))
                plan.why[gid] = why
                if gid in plan.related:
                    plan.related.remove(gid)

    def _twin(self, text: str, namespace: str, statuses: tuple[str, ...] = IN_PLAY
              ) -> str | None:
        """The guideline of `namespace` in `statuses` worded as `text` (the first held, if
        several). From the wording map (`lookup`): a walk over every rule was a scan per learn."""
        twins = {gid for gid in self._lookup.same_wording(text)
                 if self._in_play_in(gid, namespace, statuses) and same_wording(text, self._items[gid].text)}
        if len(twins) > 1:  # the one the walk over every rule met first
            return next(gid for gid in self._items if gid in twins)
        return next(iter(twins), None)

    def _active_twin(self, text: str, critique: str, namespace: str) -> str | None:
        """The active guideline of `namespace` that already holds `text`'s wording: as its text,
        or as the wording this very critique reinforced it with (learnt from it before)."""
        for gid in sorted(self._lookup.same_wording(text) | self._lookup.from_critique(critique)):
            g = self._items.get(gid)
            if (g is not None and g.namespace == namespace and g.status == "active"
                    and any(same_wording(text, rule) for rule, _s, _c in self._members(g))):
                return gid
        return None

    def _reinforce_over_pending(self, held: str, pending: str, text: str, source: SourceRecord,
                                plan: Plan, touched: set[str], now: datetime) -> LearnEntry:
        """A trusted restatement of a rule that is both active (`held`, same wording) and
        proposed by an untrusted caller (`pending`): it reinforces the active rule and retires
        the proposal. Confirming the proposal with a new rule made a second active copy of
        the rule each time a trusted user repeated a critique an untrusted client had echoed
        (the same rule active 7 times, 7 of 8 search slots; soak hunt #1). The pending
        wording and sources are not merged: untrusted input never reaches an active rule."""
        plan.same = (1.0, held, "the same wording as this active rule")
        plan.related = [r for r in plan.related if r != held]
        plan.contradicted = [(s, g) for s, g in plan.contradicted if g != held]
        entry = self._merge(self._items[held], text, source, plan, touched, now)
        self._mark_superseded(pending, held, now)
        entry.detail += (f"; pending {pending}, the same rule from an untrusted caller, is "
                         "superseded by it (its wording never becomes active)")
        entry.superseded_id = entry.superseded_id or pending
        return entry

    def _in_play_in(self, gid: str, namespace: str, statuses: tuple[str, ...] = IN_PLAY) -> bool:
        g = self._items.get(gid)
        return g is not None and g.namespace == namespace and g.status in statuses

    def _same_critique(self, critique: str, namespace: str,
                       statuses: tuple[str, ...] = IN_PLAY) -> set[str]:
        """In-play guidelines of `namespace` that this exact critique already created or
        reinforced (a bare rule passed to add() is its own critique: only its same wording
        would merge, which ``_plan`` still allows)."""
        if not critique or not critique.strip():
            return set()
        found = {gid for gid in self._lookup.from_critique(critique)
                 if self._in_play_in(gid, namespace, statuses)
                 and any(s.critique == critique for s in self._items[gid].sources)}
        if len(critique) > MAX_PENDING_CRITIQUE:  # an untrusted source keeps an excerpt of it
            found |= {gid for gid, g in self._items.items()
                      if g.namespace == namespace and g.status in statuses
                      and any(kept_excerpt_of(s, critique) for s in g.sources)}
        return found

    def _plan(self, text: str, neighbours: list[tuple[float, str]], touched: set[str], *,
              vector: np.ndarray | None = None, context: str = "", sentence: str = "") -> Plan:
        """Relate the candidate to its neighbours: one merge target (strong evidence only),
        contradicted rules, and look-alikes kept apart as related.

        ``vector`` (the candidate's matching vector) and ``context`` (its critique without the
        rule's sentence) feed the model-only evidence of ``merge_evidence``: the dense cosine
        with the guideline's profile and the cosine of the two critiques' contexts.
        """
        plan = Plan()
        for similarity, gid in neighbours:
            old = self._items[gid]
            if gid in touched:
                # Rules of one critique are never merged into (or against) each other; only the
                # very same wording twice is one rule.
                if plan.same is None and same_wording(text, old.text):
                    plan.same = (similarity, gid, "the same wording from the same critique")
                continue
            # A negation or a replacement in plain words is never "the same rule": the newer
            # instruction wins (see skillbank.distill.supersession), whatever the distiller says.
            overruled = overrules(text, old.text, sentence or text)
            # One rule with another value ("... at the top ... instead" after "... at the end
            # ..."; 50 characters after 72) is never the same rule: a correction when the user
            # announced it, two rules otherwise (values.py; it was merged and the old served).
            changed = None if overruled else value_change(text, old.text, sentence or text)
            if changed is not None and changed[1]:
                overruled = changed[0]
            relation = ("contradiction" if overruled
                        else self.distiller.relate(text, old.text, similarity=similarity))
            if changed is not None and relation == "same":
                plan.related.append(gid)
                plan.why.setdefault(gid, changed[0])
                continue
            if relation == "same":
                # The guideline is also every wording that reinforced it: "Do not answer
                # customer emails within a day" overrules the member "Answer every customer
                # email within a day", so it is no paraphrase of "Reply to customers within
                # one business day" (it was merged into it, and the opposite stayed served).
                overruled = self._overrules_member(text, old, sentence or text)
                relation = "contradiction" if overruled else relation
            if relation == "contradiction":
                plan.contradicted.append((similarity, gid))
                plan.why[gid] = overruled or self._explain(text, old.text, similarity)
            elif relation == "same" and (other_terms(text, old.text)
                                         or (";" in text) != (";" in old.text)):
                # A negation joined to its alternative ("Never X; use Y.") is not one plain
                # instruction that happens to share its words ("Put the chart on slide two").
                plan.related.append(gid)  # "Use 'must' ..." is not "Use 'shall' ..."
                plan.why.setdefault(gid, "prescribes other exact terms")
            elif relation == "same":
                # The model's evidence is worked out only where it can decide (from the
                # evidence floor up; the critiques' contexts, which embed up to a guideline's
                # every source, only between the context floor and the dense bar).
                # Nor where the model does not read the guideline: a rule in Chinese is a run
                # of [UNK] to it, alike to any other (``skillbank.unread``).
                dense = contexts = None
                if (similarity >= EVIDENCE_FLOOR and self._model_evidence and vector is not None
                        and vector.size > 0 and not mostly_unread(old.text)):
                    dense = float(self._profile(old) @ vector)
                    if CONTEXT_DENSE_FLOOR <= dense < DENSE_BAR:
                        contexts = self._context_similarity(context, old)
                evidence = merge_evidence(text, self._members(old), similarity,
                                          self.paraphrase_bar, dense=dense, context=contexts,
                                          bare=not context)
                if evidence and plan.same is None:
                    plan.same = (similarity, gid, evidence)
                else:
                    plan.related.append(gid)
                    plan.why.setdefault(gid, self._kept_apart_why(text, old.text, similarity))
        return plan

    def _overrules_member(self, text: str, old: Guideline, sentence: str) -> str | None:
        """Why `text` overrules a wording that reinforced `old` (not its text), or None."""
        for rule, _sentence, _critique in self._members(old)[1:]:
            why = overrules(text, rule, sentence) if rule != old.text else None
            if why:
                return f"{why} (in the wording {rule!r} that reinforced it)"
        return None

    def _explain(self, new: str, old: str, similarity: float) -> str:
        explain = getattr(self.distiller, "explain_relation", None)
        if explain is None:
            return f"similarity {similarity:.2f}"
        try:
            return str(explain(new, old, similarity=similarity))
        except Exception:  # noqa: BLE001 - an explanation is optional
            return f"similarity {similarity:.2f}"

    def _join_proposal(self, proposal: Guideline, text: str, source: SourceRecord, plan: Plan,
                       touched: set[str], now: datetime) -> LearnEntry:
        """An untrusted caller's rule worded as a pending proposal: its critique joins it (one
        proposal per wording), and the caller is answered as a new proposal is
        (`curation.pending_entry`): "merged … its pending proposal's wording; reinforcements
        now 2" told it that another client had proposed those words (session 33). A full queue
        refuses it as it refuses a new proposal."""
        self._pending_room(proposal.namespace)
        related = [r for r in dict.fromkeys(plan.related)
                   if r not in proposal.supersedes and r != proposal.id]
        plan.same = (1.0, proposal.id, "its pending proposal's wording")
        plan.contradicted = []  # a proposal keeps the supersessions it was read with
        linked = [r for r in related if r not in proposal.related]
        self._merge(proposal, text, source, plan, touched, now,
                    also={"related": [*proposal.related, *linked]} if linked else None)
        return pending_entry(proposal.id, text, list(proposal.supersedes), related, plan)

    def _merge(self, old: Guideline, text: str, source: SourceRecord, plan: Plan,
               touched: set[str], now: datetime, also: dict[str, Any] | None = None
               ) -> LearnEntry:
        similarity, gid, evidence = plan.same  # type: ignore[misc]
        update: dict[str, Any] = {
            "reinforcements": old.reinforcements + 1,
            "sources": [*old.sources, _kept(source)],
            "updated": now,
            **(also or {}),
        }
        notes = [f"same as {gid} {old.text!r} ({evidence}; similarity {similarity:.2f}); "
                 f"reinforcements now {old.reinforcements + 1}"]
        # A pending rule (an untrusted proposal) keeps the wording and the supersessions it was
        # proposed with: a reviewer approves by id what they read. A later restatement by the
        # same untrusted client rewrote a pending rule's text after the reviewer had read it,
        # and the approval made the injected text an active rule.
        pending = old.status != "active"
        if more_specific(text, old.text) and not pending:
            update["text"] = text
            notes.append("took the new, more specific wording")
        elif pending and " ".join(text.split()) != " ".join(old.text.split()):
            notes.append("the pending wording stays as proposed (a reviewer approves what "
                         "they read)")
        # A trusted restatement of an active rule also overrules what still contradicts it (say
        # an older paraphrase the first contradiction did not reach).
        olds = [o for _, o in plan.contradicted if o != gid]
        if olds and not pending:
            update["supersedes"] = list(dict.fromkeys([*old.supersedes, *olds]))
            notes.append(f"supersedes {', '.join(olds)} ({plan.why.get(olds[0], '')})")
        elif olds:
            notes.append(f"contradicts {', '.join(olds)}: not added to the pending proposal "
                         "(a reviewer approves what they read)")
            olds = []
        merged = self._save(old.model_copy(update=update))
        touched.add(gid)
        for old_id in olds:
            self._mark_superseded(old_id, gid, now)
        return LearnEntry(action="merged", guideline_id=gid, text=merged.text,
                          superseded_id=olds[0] if olds else None, detail="; ".join(notes))

    def _refuse_when_full(self, namespace: str, trusted: bool) -> None:
        """An untrusted call at a full review queue is refused first, before the distiller or
        any matching runs: a refused flood costs a count, not a model call (`_add_new` checks
        again under the write lock, per rule)."""
        if not trusted:
            with self._lock:
                self._refresh()
                self._pending_room(namespace)

    def _pending_room(self, namespace: str) -> None:
        """QueueFullError when `namespace` already holds `max_pending_guidelines` pending
        rules (`review_queue.check_room`). Called under the lock, after `_refresh`: a count
        of the rules in memory, no read of the records."""
        waiting = sum(1 for g in self._items.values()
                      if g.status == "pending" and g.namespace == namespace)
        check_room("guidelines", namespace, waiting,
                   int(self._setting("max_pending_guidelines", 500)))

    def _add_new(self, text: str, topic: str, when_to_use: str, source: SourceRecord,
                 namespace: str, trusted: bool, plan: Plan, touched: set[str], now: datetime
                 ) -> LearnEntry:
        if not trusted:  # a new pending rule: only while the queue has room
            self._pending_room(namespace)
        gid = self._new_id()
        olds = [g for _, g in plan.contradicted]
        related = [r for r in dict.fromkeys(plan.related) if r not in olds]
        if plan.confirms:
            olds = list(dict.fromkeys([*olds, plan.confirms]))
        new = Guideline(id=gid, topic=topic, text=text, when_to_use=when_to_use,
                        status="active" if trusted else "pending", sources=[_kept(source)],
                        supersedes=olds, related=related, namespace=namespace,
                        created=now, updated=now)
        new = self._save(new)
        touched.add(gid)
        notes = [plan.note] if plan.note else []
        if related and not plan.note:
            notes.append("kept apart from look-alike " + ", ".join(
                f"{r} ({plan.why.get(r, 'related')})" for r in related) + "; linked as related")
        if olds and trusted:
            for old_id in olds:
                self._mark_superseded(old_id, gid, now)
            detail = "; ".join([f"supersedes {o} {self._items[o].text!r} "
                                f"({plan.why.get(o, 'contradiction')})"
                                for o in olds if o != plan.confirms] + notes)  # said in the note
            return LearnEntry(action="superseded", guideline_id=gid, text=new.text,
                              superseded_id=olds[0], detail=detail)
        if not trusted:
            return pending_entry(gid, new.text, olds, related, plan)
        return LearnEntry(action="added", guideline_id=gid, text=new.text,
                          detail="; ".join(["new rule"] + notes))

    def _more_contradicted(self, text: str, vector: np.ndarray, query: str, namespace: str,
                           topic: str, contradicted: list[tuple[float, str]], skip: set[str],
                           statuses: tuple[str, ...] = IN_PLAY) -> list[tuple[float, str]]:
        """Other wordings of an overruled rule, which the candidate did not rank among its own
        neighbours: an old rule often lives on in a second guideline. Each is still put to
        ``distiller.relate``, with the stronger of two pieces of evidence that it is about the
        same matter: its similarity to the candidate, or to the rule the candidate overrules."""
        via: dict[str, float] = {}
        through: dict[str, set[str]] = {}  # wording -> the overruled rules it is near
        for _, old_id in contradicted:
            old = self._items[old_id]
            old_query = " ".join(dict.fromkeys(m[0] for m in self._members(old)))
            near = self._nearest(self._profile(old), old_query, namespace, old.topic,
                                 n=MAX_NEIGHBOURS + len(skip) + 1, statuses=statuses)
            near = [(sim, gid) for sim, gid in near if gid != old_id and gid not in skip]
            for sim, gid in near[:MAX_NEIGHBOURS]:
                via[gid] = max(via.get(gid, -1.0), sim)
                through.setdefault(gid, set()).add(old_id)
            # Look-alikes kept apart from the overruled rule (linked as related either way)
            # are the wordings most likely to say the same old thing.
            # Each on its own similarity to the overruled rule: borrowing the overruled rule's
            # similarity to the candidate let a chain of related links ("currency codes in
            # Terraform" ~ "... in slide decks" ~ "... in the React frontend" ~ "error codes in
            # the React frontend") carry one negation to all of them: "Never use error codes
            # in the React frontend." superseded seven rules, five about currency codes
            # elsewhere (scale hunt, session 18).
            profile = self._profile(old)
            for other_id in self._related_closure(old_id, hops=2):
                other = self._items[other_id]
                if (other_id not in skip and other.status in statuses
                        and other.namespace == namespace):
                    own = float(np.dot(profile, self._profile(other)))
                    via[other_id] = max(via.get(other_id, -1.0), own)
                    through.setdefault(other_id, set()).add(old_id)
        found: list[tuple[float, str]] = []
        if not via:
            return found
        for similarity, gid in self._nearest(vector, query, namespace, topic, n=len(via),
                                             only=via, floor=-1.0, statuses=statuses):
            similarity = max(similarity, via[gid])
            other = self._items[gid].text
            relation = self.distiller.relate(text, other, similarity=similarity)
            if relation == "contradiction" or any(
                    echoes_overruled(text, self._items[old_id].text, other)
                    for old_id in sorted(through.get(gid, ()))):
                found.append((similarity, gid))
        return found

    def _mark_superseded(self, old_id: str, new_id: str, now: datetime) -> None:
        old = self._items.get(old_id)
        if old is None or old.status in ("superseded", "retired"):
            return
        self._save(old.model_copy(update={"status": "superseded", "superseded_by": new_id,
                                          "updated": now}), reembed=False)


def _kept(source: SourceRecord) -> SourceRecord:
    """The source as a rule file keeps it: an untrusted critique as its excerpt around the
    sentence the rule came from, or the rule's own words (`critique_excerpt`; an agent's
    `rules=` name no sentence), a trusted one whole. Learning decides on the whole
    critique; only what is stored is cut."""
    if source.trusted is not False or len(source.critique) <= MAX_PENDING_CRITIQUE:
        return source
    return source.model_copy(update={
        "critique": critique_excerpt(source.critique, source.sentence or source.rule)})
