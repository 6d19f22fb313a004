"""The LLM distiller: any ``prompt -> text`` callable, with a deterministic fallback.

A model call is bounded: it runs on a thread of its own and is abandoned (the thread left to
finish on its own, never joined) after ``timeout`` seconds (``SKILLBANK_DISTILLER_TIMEOUT``,
default 120, as MCP sampling's). The distiller usually runs on a bank's one background writer:
a chat model that hung there stalled every later write of the bank, and ``close()`` never
returned (hunt-llm #3, session 32). At interpreter exit (``hurry``) a call still waiting gives
up at once, and later ones are not made, so the queued runs are still written, model-free.

Each call says who distilled (``distilled_by`` "model" or "rules") and why the model was not
used (``reason``) on its own result (:class:`Distilled`): ``last_error`` is one attribute of a
shared distiller, overwritten by the next call on another thread. A failure is logged once per
kind (hunt-llm #7, session 32).
"""

from __future__ import annotations

import asyncio
import bisect
import inspect
import logging
import os
import re
import threading
from typing import Any, Awaitable, Callable, Sequence

from skillbank.distill.base import CandidateRule, Distiller, Relation
from skillbank.distill.json_reply import MAX_REPLY_CHARS, UnusableReply, _as_bool, _items, extract_json
from skillbank.distill.lessons import _actions, _step_label, compared, opposite_run
from skillbank.distill.prompts import LESSONS_PROMPT, RELATE_PROMPT, RULES_PROMPT, _fmt
from skillbank.distill.rule_distiller import RuleDistiller
from skillbank.distill.text import _clip, _finish, _key
from skillbank.distill.topics import _slug, _task_kind, _when_to_use, guess_topic
from skillbank import records
from skillbank.records import MAX_SHORT, Experience, Lesson


_LESSON_KINDS = {"success_pattern", "failure_trigger", "comparison", "note"}

log = logging.getLogger("skillbank.distill")

#: Seconds a model call may take before the model-free fallback answers instead.
DEFAULT_TIMEOUT = 120.0
_TIMEOUT_ENV = "SKILLBANK_DISTILLER_TIMEOUT"

_hurry = threading.Event()  # set at interpreter exit: no more waiting for a model
_waiting: set[threading.Event] = set()  # the calls waiting for a reply just now
_waiting_lock = threading.Lock()
_warned: set[tuple[str, str]] = set()  # (distiller class, kind of failure) already logged


def hurry() -> None:
    """Make every model call that is waiting give up now, and later ones not be made (the
    interpreter is exiting: the bank's queued writes are written with the fallback)."""
    _hurry.set()
    with _waiting_lock:
        for event in list(_waiting):
            event.set()


def _timeout_from_env() -> float | None:
    raw = os.environ.get(_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        log.warning("skillbank: %s=%r is not a number of seconds; using %s", _TIMEOUT_ENV, raw,
                    DEFAULT_TIMEOUT)
        return DEFAULT_TIMEOUT
    return value if value > 0 else None  # 0: no limit


class Distilled(records.Distilled):
    """A distiller's rules or lessons, and who made them: ``distilled_by`` "model" or "rules"
    (the fallback's), ``reason`` (`distill_error`) why the model's were not used (None when
    they were). The public type is `skillbank.records.Distilled`."""

    def __init__(self, items: Any = (), distilled_by: str = "model", reason: str | None = None):
        super().__init__(items, distilled_by, reason)


def distilled_by(distiller: Any, found: Any) -> dict[str, Any]:
    """Who read a critique, from this call's own result (a `Distilled` says; the shared
    `last_error` may be another call's): `LearnReport.distilled_by` and `distill_error`."""
    if hasattr(found, "distilled_by"):
        return {"distilled_by": found.distilled_by,
                "distill_error": getattr(found, "distill_error", getattr(found, "reason", None))}
    return {"distilled_by": "rules" if isinstance(distiller, RuleDistiller) else None}


_COROUTINE = "complete returned a coroutine: pass an async model as acomplete="


_RELATION_RE = re.compile(r"\b(contradict\w*|conflict\w*|same|duplicate|equivalent|distinct|different|unrelated)\b", re.I)
#: Words that negate a relation word after them in the same clause.
_NEGATION_RE = re.compile(r"^(?:not|no|never|neither|nor|none|cannot|without|hardly|\w+n't)$", re.I)
#: A label before the bare answer ("Answer: distinct").
_LABEL_RE = re.compile(r"^\W*(?:(?:answer|relation|label|result)\W*\s)?\W*", re.I)


def _relation_of(word: str) -> Relation:
    word = word.lower()
    if word.startswith(("contradict", "conflict")):
        return "contradiction"
    if word in ("same", "duplicate", "equivalent"):
        return "same"
    return "distinct"


#: Where a clause ends: punctuation, a dash, "but".
_CLAUSE_END_RE = re.compile(r"[,;:.!?()\n\u2014\u2013]|\s-\s|\bbut\b", re.I)


def _negated(reply: str, clause_ends: list[int], at: int) -> bool:
    """Whether a word of the clause before `reply[at]` (up to 200 characters of it) negates
    what follows ("it is not in any way a contradiction"): the whole clause, not the word
    before, since a doubt means no answer. `clause_ends`: where `_CLAUSE_END_RE` matches end."""
    start = max(at - 200, 0)
    i = bisect.bisect_right(clause_ends, at) - 1
    if i >= 0:
        start = max(start, clause_ends[i])
    return any(_NEGATION_RE.match(w) for w in re.findall(r"[\w']+", reply[start:at]))


def _first_word_at(reply: str) -> int:
    """Where the reply's first word starts, after a label such as "Answer:"."""
    return _LABEL_RE.match(reply).end()  # type: ignore[union-attr]


def _last_word_at(reply: str) -> int:
    m = re.search(r"[\w']+\W*$", reply)
    return m.start() if m else -1


class LLMDistiller:
    """Distil with any ``prompt -> text`` callable; fall back to ``fallback`` on any failure."""

    def __init__(
        self,
        complete: Callable[[str], str],
        *,
        fallback: Distiller | None = None,
        acomplete: Callable[[str], Awaitable[str]] | None = None,
        timeout: float | None = -1,
    ) -> None:
        self.complete = complete
        self.acomplete = acomplete
        self.fallback: Distiller = fallback if fallback is not None else RuleDistiller()
        #: Seconds a model call may take (None: no limit); default SKILLBANK_DISTILLER_TIMEOUT.
        self.timeout = _timeout_from_env() if timeout == -1 else (
            float(timeout) if timeout and timeout > 0 else None)
        #: The last failure (exception text or "unparseable reply"), for logs and tests. Shared
        #: by every call: a call's own is its result's `reason` (`Distilled`).
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
            when = _clip(str(when), MAX_SHORT) if when and _key(str(when)) else _when_to_use(text, topic, task)
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

    def _parse_lessons(self, reply: str, exp: Experience,
                       similar: Sequence[Experience] = ()) -> list[Lesson] | None:
        """The model's lessons. A "comparison" needs a run to compare with: with none given,
        a model's "The successful run used iconv…" was stored as a comparison of nothing; it
        is dropped, and a kept one says what it compared (as the rule distiller's do).

        A lesson needs words (as a rule does, `_key`), and an echo of the prompt's template
        (``"kind": "success_pattern|failure_trigger|…"``, ``"text": "..."``) is none: a model
        that echoed the prompt had "..." stored as an active lesson (hunt-llm #6, session 32).
        A reply with only such items raises `UnusableReply`, so the caller falls back and says
        why; a wordless ``when_to_use`` is replaced by the experience's own."""
        items = _items(extract_json(reply), "lessons", "items")
        if items is None:
            return None
        when_default = exp.when_to_use or f"When {_task_kind(exp.task) or 'doing this task'}"
        out: list[Lesson] = []
        echoed = 0
        for item in items:
            if isinstance(item, str):
                item = {"text": item}
            if not isinstance(item, dict):
                continue
            text = item.get("text") or item.get("lesson")
            if not isinstance(text, str) or not text.strip():
                continue
            raw_kind = str(item.get("kind") or "note")
            if not _key(text) or "|" in raw_kind:
                echoed += 1
                continue
            kind = raw_kind.strip().lower().replace(" ", "_").replace("-", "_")
            if kind not in _LESSON_KINDS:
                kind = "note"
            when = item.get("when_to_use")
            when = when if isinstance(when, str) and _key(when) else when_default
            if kind == "comparison":
                other = opposite_run(exp, similar)
                if other is None:
                    continue
                good, bad = (exp, other) if exp.outcome == "success" else (other, exp)
                text = f"{text.strip().rstrip('.')} ({compared(good, bad)})."
            out.append(Lesson(kind=kind, text=_clip(text, MAX_SHORT), when_to_use=_clip(str(when), MAX_SHORT)))  # type: ignore[arg-type]
        if not out and items != []:
            if echoed:
                raise UnusableReply("the reply's lessons have no words (the prompt's template "
                                    "echoed back?)")
            return None
        return out

    @staticmethod
    def _parse_relation(reply: str) -> Relation | None:
        """The relation the reply answers, or None (the model-free relation then decides).

        The prompt asks for one bare word, so that word is read first: the whole reply, a JSON
        field, or the reply's first or last word ("... they are distinct."). Otherwise every
        relation word that is not negated must agree. A negated word never counts ("not the
        same", "don't contradict", "never conflicts", "no real contradiction"): a model saying
        the rules do not conflict once had the new rule supersede the old (hunt-llm #2,
        session 32). On doubt (the words disagree, or only negated ones) the answer is None,
        so a rule is never superseded on a reply that does not clearly say so."""
        if not isinstance(reply, str) or len(reply) > MAX_REPLY_CHARS:
            return None
        reply = reply.replace("\u2019", "'")
        value = extract_json(reply) if reply.strip()[:1] in "[{" else None
        if isinstance(value, dict):
            for k in ("relation", "answer", "label", "result"):
                if isinstance(value.get(k), str):
                    reply = value[k]
                    break
        clause_ends = [m.end() for m in _CLAUSE_END_RE.finditer(reply)]
        found = [(m.start(), _relation_of(m.group(1))) for m in _RELATION_RE.finditer(reply)
                 if not _negated(reply, clause_ends, m.start())]
        if not found:
            return None
        ends = (_first_word_at(reply), _last_word_at(reply))
        bare = {rel for pos, rel in found if pos in ends}
        if len(bare) == 1:
            return bare.pop()
        if bare:
            return None  # the first and the last word disagree
        relations = {rel for _, rel in found}
        return relations.pop() if len(relations) == 1 else None

    # -- calling the model ----------------------------------------------------------------
    def _failed(self, reason: str) -> None:
        """Keep `reason` as `last_error`; log it once per kind of failure."""
        self.last_error = reason
        kind = reason.split(":", 1)[0] if not reason.startswith("no reply within") else "timeout"
        key = (type(self).__name__, kind)  # per process: the MCP server makes one per call
        if key not in _warned:
            _warned.add(key)
            log.warning("skillbank: the model distiller (%s) failed: %s; the model-free "
                        "distiller was used (said once per kind of failure; each result's "
                        "distilled_by says who distilled)", type(self).__name__, reason)

    def _too_slow(self) -> str:
        if _hurry.is_set():
            return "no reply before the interpreter exited"
        return f"no reply within {self.timeout:g} s ({_TIMEOUT_ENV})"

    @staticmethod
    def _text(reply: Any) -> str | None:
        if not isinstance(reply, str):
            reply = getattr(reply, "content", None) or getattr(reply, "text", None) or (
                str(reply) if reply is not None else None)
        return reply

    def _call(self, prompt: str) -> tuple[str | None, str | None]:
        """The model's reply, or (None, why not); the call waits at most `timeout` s."""
        if _hurry.is_set():
            return None, self._too_slow()
        done = threading.Event()
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["reply"] = self.complete(prompt)
            except BaseException as exc:  # noqa: BLE001 - any model/client failure: fall back
                box["error"] = exc
            done.set()

        with _waiting_lock:
            _waiting.add(done)
        try:
            threading.Thread(target=run, name="skillbank-distiller-call", daemon=True).start()
            done.wait(self.timeout)
        finally:
            with _waiting_lock:
                _waiting.discard(done)
        if "reply" not in box and "error" not in box:
            return None, self._too_slow()  # the thread is abandoned, never joined
        if "error" in box:
            exc = box["error"]
            return None, f"{type(exc).__name__}: {exc}"
        reply = box["reply"]
        if inspect.isawaitable(reply):  # an async model passed as complete=: never awaited
            if inspect.iscoroutine(reply):
                reply.close()
            return None, _COROUTINE
        return self._text(reply), None

    async def _bounded(self, awaitable: Any) -> tuple[bool, Any]:
        """(True, result) or (False, None) when `timeout` ran out; the model's own exceptions
        (a TimeoutError of its client too) are raised, not taken for this timeout."""
        task = asyncio.ensure_future(awaitable)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout)
        except asyncio.CancelledError:  # the caller gave up: so does the model call (a
            task.cancel()  # cancelled MCP request left its sampling running; review 2)
            raise
        if not done:
            task.cancel()
            return False, None
        return True, task.result()

    async def _acall(self, prompt: str) -> tuple[str | None, str | None]:
        if _hurry.is_set():
            return None, self._too_slow()
        try:
            if self.acomplete is not None:
                answered, reply = await self._bounded(self.acomplete(prompt))
            else:
                # On a thread of its own (not the loop's executor, whose shutdown joins it).
                loop = asyncio.get_running_loop()
                future: asyncio.Future = loop.create_future()

                def settle(result: Any = None, error: BaseException | None = None) -> None:
                    if not future.done():
                        future.set_result(result) if error is None else future.set_exception(error)

                def run() -> None:
                    try:
                        outcome: tuple = (self.complete(prompt), None)
                    except BaseException as exc:  # noqa: BLE001
                        outcome = (None, exc)
                    try:
                        loop.call_soon_threadsafe(settle, *outcome)
                    except RuntimeError:  # the loop is gone: nobody waits for this reply
                        pass

                threading.Thread(target=run, name="skillbank-distiller-call", daemon=True).start()
                answered, reply = await self._bounded(future)
                if answered and inspect.isawaitable(reply):  # an async callable as complete=
                    answered, reply = await self._bounded(reply)  # on a loop here: awaited
        except Exception as exc:  # noqa: BLE001
            return None, f"{type(exc).__name__}: {exc}"
        if not answered:
            return None, self._too_slow()
        return self._text(reply), None

    def _finish_rules(self, reply: str | None, error: str | None, critique: str, task, response,
                      score) -> Distilled:
        if reply is not None:
            try:
                parsed = self._parse_rules(reply, critique, task, response)
            except Exception as exc:  # noqa: BLE001
                error = f"{type(exc).__name__}: {exc}"
                parsed = None
            if parsed is not None:
                return Distilled(parsed)
            error = error or "unparseable reply"
        self._failed(error or "no reply")
        return Distilled(self.fallback.rules_from_critique(
            critique, task=task, response=response, score=score), "rules", error or "no reply")

    def _finish_lessons(self, reply: str | None, error: str | None, experience: Experience,
                        similar: Sequence[Experience]) -> Distilled:
        if reply is not None:
            try:
                parsed = self._parse_lessons(reply, experience, similar)
            except Exception as exc:  # noqa: BLE001
                error = f"{type(exc).__name__}: {exc}"
                parsed = None
            if parsed is not None:
                return Distilled(parsed)
            error = error or "unparseable reply"
        self._failed(error or "no reply")
        return Distilled(self.fallback.lessons_from_experience(experience, similar=similar),
                         "rules", error or "no reply")

    def _finish_relation(self, reply: str | None, error: str | None, new_rule: str,
                         old_rule: str, similarity: float) -> Relation:
        if reply is not None:
            parsed = self._parse_relation(reply)
            if parsed is not None:
                return parsed
            error = "unparseable reply"
        self._failed(error or "no reply")
        return self.fallback.relate(new_rule, old_rule, similarity=similarity)

    # -- sync API -------------------------------------------------------------------------
    def rules_from_critique(
        self,
        critique: str,
        *,
        task: str | None = None,
        response: str | None = None,
        score: float | None = None,
    ) -> list[CandidateRule]:
        self.last_error = None
        reply, error = self._call(self._rules_prompt(critique, task, response, score))
        return self._finish_rules(reply, error, critique, task, response, score)

    def lessons_from_experience(self, experience: Experience, *, similar: Sequence[Experience] = ()) -> list[Lesson]:
        self.last_error = None
        reply, error = self._call(self._lessons_prompt(experience, similar))
        return self._finish_lessons(reply, error, experience, similar)

    def relate(self, new_rule: str, old_rule: str, *, similarity: float) -> Relation:
        self.last_error = None
        reply, error = self._call(self._relate_prompt(new_rule, old_rule, similarity))
        return self._finish_relation(reply, error, new_rule, old_rule, similarity)

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
        reply, error = await self._acall(self._rules_prompt(critique, task, response, score))
        # Parsed off the event loop: an MCP server's other calls go on meanwhile (hunt-llm #4).
        return await asyncio.to_thread(self._finish_rules, reply, error, critique, task,
                                       response, score)

    async def alessons_from_experience(self, experience: Experience, *, similar: Sequence[Experience] = ()) -> list[Lesson]:
        self.last_error = None
        reply, error = await self._acall(self._lessons_prompt(experience, similar))
        return await asyncio.to_thread(self._finish_lessons, reply, error, experience, similar)

    async def arelate(self, new_rule: str, old_rule: str, *, similarity: float) -> Relation:
        self.last_error = None
        reply, error = await self._acall(self._relate_prompt(new_rule, old_rule, similarity))
        return await asyncio.to_thread(self._finish_relation, reply, error, new_rule, old_rule,
                                       similarity)
