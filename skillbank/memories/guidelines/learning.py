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

from skillbank.errors import InvalidInputError
from skillbank.fsutil import slugify
from skillbank.memories.guidelines.files import (
    MAX_SOURCE_NAME, SourceRecord, _check_text, _clean, _one_line)
from skillbank.memories.guidelines.matching import MAX_NEIGHBOURS, more_specific
from skillbank.records import MAX_SHORT, MAX_TEXT, Guideline, LearnEntry, LearnReport, utcnow

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
    ) -> LearnReport:
        """Turn a critique into guidelines: add, merge, supersede, or ignore each candidate rule.

        ``candidates`` (``CandidateRule`` objects or dicts) skips the distiller's extraction; the
        store's dedup and supersede logic still applies. ``trusted=False`` (e.g. a critique from
        an untrusted channel) adds rules as ``pending`` and never supersedes an existing rule
        until a person approves.
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
        ns = self._namespace(namespace)
        if candidates is None:
            if not critique.strip():
                return LearnReport(entries=[LearnEntry(action="ignored", text="",
                                                       detail="empty critique")])
            rules = list(self.distiller.rules_from_critique(
                critique, task=task, response=response, score=score))
        else:
            if isinstance(candidates, (str, bytes, dict)) or not isinstance(candidates, Iterable):
                raise InvalidInputError(
                    "candidates must be a list of CandidateRule objects or dicts")
            rules = [self._as_candidate(c) for c in candidates]
        report = LearnReport()
        touched: set[str] = set()
        with self._lock, self.write_lock:
            self._refresh()
            for rule in rules:
                if not getattr(rule, "actionable", True) or not _clean(rule.text, MAX_SHORT):
                    report.entries.append(LearnEntry(
                        action="ignored", text=_clean(rule.text, MAX_SHORT),
                        detail="no reusable advice (praise, a score, a one-off fix or a vague "
                               "reaction)"))
                    continue
                src = SourceRecord(critique=critique, task=task, source=source, score=score,
                                   rule=_clean(rule.text, MAX_SHORT),
                                   sentence=_clean(getattr(rule, "source_sentence", "") or "",
                                                   MAX_SHORT) or None)
                entry = self._learn_one(
                    text=_clean(rule.text, MAX_SHORT),
                    topic=slugify(str(rule.topic or "general")),
                    when_to_use=_clean(getattr(rule, "when_to_use", "") or "", MAX_SHORT),
                    sentence=src.sentence or "",
                    source=src, namespace=ns, trusted=trusted, touched=touched)
                report.entries.append(entry)
        report.pending_review = any(self.get(gid).status == "pending" for gid in report.ids())
        return report

    def add(self, text: str, topic: str | None = None, when_to_use: str = "",
            source: str = "agent", trusted: bool = True, namespace: str | None = None
            ) -> LearnEntry:
        """Add one rule (the agent-controlled path) with the same dedup / supersede logic.

        The wording is kept as given; when ``topic`` (or ``when_to_use``) is missing the
        distiller proposes one from the rule text.
        """
        text = _check_text(text, "rule text", 4 * MAX_SHORT)
        text = _one_line(text)
        if not text:
            raise InvalidInputError("rule text must be a non-empty string")
        if len(text) > MAX_SHORT:
            raise InvalidInputError(f"rule text is {len(text)} characters; at most {MAX_SHORT}")
        when_to_use = _check_text(when_to_use if when_to_use is not None else "", "when_to_use",
                                  MAX_SHORT)
        if not isinstance(trusted, bool):
            raise InvalidInputError("trusted must be true or false")
        if topic is not None:
            self._check_topic(topic)
        source = self._check_source(source)
        ns = self._namespace(namespace)
        when = _one_line(when_to_use)
        if topic is None or not when:
            guess_topic, guess_when = self._guess(text)
            topic = topic or guess_topic
            when = when or guess_when
        with self._lock, self.write_lock:
            self._refresh()
            return self._learn_one(
                text=text, topic=topic, when_to_use=when, sentence="",
                source=SourceRecord(critique=text, task=None, source=source, rule=text),
                namespace=ns, trusted=trusted, touched=set())

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
                   source: SourceRecord, namespace: str, trusted: bool, touched: set[str]
                   ) -> LearnEntry:
        distiller = self.distiller
        vector = self._member_vector(text, sentence or None, source.critique)
        query = " ".join(dict.fromkeys(t for t in (text, sentence, source.critique) if t))
        same: tuple[float, str] | None = None
        contradicted: list[tuple[float, str]] = []
        rule_vector = self._member_vector(text, sentence or None, None)
        neighbours = self._nearest(vector, query, namespace, topic, rule_vector, frozenset(touched))
        for similarity, gid in neighbours:
            old = self._items[gid]
            relation = distiller.relate(text, old.text, similarity=similarity)
            if relation == "same" and same is None:
                same = (similarity, gid)
            elif relation == "contradiction" and gid not in touched:
                contradicted.append((similarity, gid))
        if contradicted and trusted:
            contradicted += self._more_contradicted(
                text, vector, query, namespace, topic, contradicted,
                skip={gid for _, gid in neighbours} | touched)
        now = utcnow()
        if same is not None:
            similarity, gid = same
            old = self._items[gid]
            update: dict[str, Any] = {
                "reinforcements": old.reinforcements + 1,
                "sources": [*old.sources, source],
                "updated": now,
            }
            notes = [f"same as {gid} (similarity {similarity:.2f}); "
                     f"reinforcements now {old.reinforcements + 1}"]
            if more_specific(text, old.text):
                update["text"] = text
                notes.append("took the new, more specific wording")
            if old.status == "pending" and trusted:
                update["status"] = "active"
                notes.append("confirmed by a trusted source: now active")
            # A trusted restatement of a rule also overrules what still contradicts it (say an
            # older paraphrase the first contradiction did not reach).
            olds = [o for _, o in contradicted if o != gid] if trusted else []
            if olds and update.get("status", old.status) == "active":
                update["supersedes"] = list(dict.fromkeys([*old.supersedes, *olds]))
                notes.append(f"supersedes {', '.join(olds)} (contradiction)")
            else:
                olds = []
            merged = self._save(old.model_copy(update=update))
            touched.add(gid)
            for old_id in olds:
                self._mark_superseded(old_id, gid, now)
            return LearnEntry(action="merged", guideline_id=gid, text=merged.text,
                              superseded_id=olds[0] if olds else None, detail="; ".join(notes))

        gid = self._new_id()
        olds = [g for _, g in contradicted]
        status = "active" if trusted else "pending"
        new = Guideline(id=gid, topic=topic, text=text, when_to_use=when_to_use, status=status,
                        sources=[source], supersedes=olds, namespace=namespace,
                        created=now, updated=now)
        new = self._save(new)
        touched.add(gid)
        if olds and trusted:
            for old_id in olds:
                self._mark_superseded(old_id, gid, now)
            detail = f"supersedes {', '.join(olds)} (contradiction)"
            return LearnEntry(action="superseded", guideline_id=gid, text=new.text,
                              superseded_id=olds[0], detail=detail)
        if not trusted:
            detail = "untrusted source: waits for approve() or reject()"
            if olds:
                detail += f"; would supersede {', '.join(olds)} once approved"
            return LearnEntry(action="pending", guideline_id=gid, text=new.text,
                              superseded_id=olds[0] if olds else None, detail=detail)
        return LearnEntry(action="added", guideline_id=gid, text=new.text, detail="new rule")

    def _more_contradicted(self, text: str, vector: np.ndarray, query: str, namespace: str,
                           topic: str, contradicted: list[tuple[float, str]], skip: set[str]
                           ) -> list[tuple[float, str]]:
        """Other wordings of an overruled rule, which the candidate did not rank among its own
        neighbours: an old rule often lives on in a second guideline. Each is still put to
        ``distiller.relate``, with the stronger of two pieces of evidence that it is about the
        same matter: its similarity to the candidate, or to the rule the candidate overrules."""
        via: dict[str, float] = {}
        for _, old_id in contradicted:
            old = self._items[old_id]
            old_query = " ".join(dict.fromkeys(m[0] for m in self._members(old)))
            near = self._nearest(self._profile(old), old_query, namespace, old.topic,
                                 n=MAX_NEIGHBOURS + len(skip) + 1)
            near = [(sim, gid) for sim, gid in near if gid != old_id and gid not in skip]
            for sim, gid in near[:MAX_NEIGHBOURS]:
                via[gid] = max(via.get(gid, -1.0), sim)
        found: list[tuple[float, str]] = []
        if not via:
            return found
        for similarity, gid in self._nearest(vector, query, namespace, topic, n=len(via),
                                             only=via, floor=-1.0):
            similarity = max(similarity, via[gid])
            relation = self.distiller.relate(text, self._items[gid].text, similarity=similarity)
            if relation == "contradiction":
                found.append((similarity, gid))
        return found

    def _mark_superseded(self, old_id: str, new_id: str, now: datetime) -> None:
        old = self._items.get(old_id)
        if old is None or old.status in ("superseded", "retired"):
            return
        self._save(old.model_copy(update={"status": "superseded", "superseded_by": new_id,
                                          "updated": now}), reembed=False)

