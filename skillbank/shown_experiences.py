"""What a reader is shown of recalled experiences: each fact once, and what a run produced.

One rule for every face that shows recall's hits: the memory block (`skillbank.context`) and
the LangChain / LlamaIndex retrievers (`skillbank.retrieved_documents`). It lived in the memory block
alone, so three identical chat runs ("Where is my order 42?" in three threads) came back from
`ExperienceRetriever` as three identical documents, and a lesson beside the experience whose
"Lessons:" line already held it, using up `k` on repeats; and the documents left out what the
run produced, which the block's line shows (hunt-rag #4, session 24).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from skillbank.text_cut import cut_at_word, within_tokens

__all__ = ["LESSONS_PER_EXPERIENCE", "DistinctExperiences", "fact_key", "one_line", "produced",
           "same_run_key", "shown_lessons", "restates"]

#: Lessons shown on one experience's line; the others are not "already said".
LESSONS_PER_EXPERIENCE = 3


def _never(text: str) -> bool:
    return False


def one_line(text: str, limit: int = 400) -> str:
    """`text` on one line of at most `limit` characters and half as many tokens, so a line
    in a dense script (Chinese, Japanese) costs what an English one does (`text_cut`)."""
    return within_tokens(cut_at_word(" ".join(str(text).split()), limit), max(24, limit // 2))


def fact_key(text: str) -> str:
    """A statement's words, lowercased and spaced: the same fact however it is punctuated."""
    return " ".join(re.findall(r"[a-z0-9]+", str(text).lower()))


def shown_lessons(record: Any, known: Callable[[str], bool] = _never) -> list[str]:
    """The lesson texts shown for `record`: a lesson record's own lesson, an experience's first
    LESSONS_PER_EXPERIENCE lessons not `known` already."""
    if record.kind == "lesson":
        return [record.lessons[0].text] if record.lessons else []
    return [l.text for l in record.lessons if not known(l.text)][:LESSONS_PER_EXPERIENCE]


def same_run_key(record: Any) -> tuple[str, ...]:
    """What makes two experiences one: the same task, outcome, feedback and lessons.

    Numbers aside when the run says why it went as it did: "Refund order 1111" and "Refund
    order 2222" failing with "Needs the finance role." were one lesson shown three times. A run
    with nothing to say beyond its task keeps its numbers ("Upgrade to Python 3.12" and "... 3.8"
    are two different failures), and so does one whose lessons differ."""
    feedback = fact_key(record.feedback or "")
    lessons = fact_key(" ".join(lesson.text for lesson in record.lessons))
    if not feedback:
        return (fact_key(record.task), record.outcome, feedback, lessons)
    numberless = lambda text: re.sub(r"\d+", "#", text)  # noqa: E731
    return (numberless(fact_key(record.task)), record.outcome, feedback, numberless(lessons))


def restates(lesson: Any, attempt: Any) -> bool:
    """Whether a lesson drawn from `attempt` says only what the attempt's own line shows: its
    feedback, or lessons the line lists (a lesson beyond the line's first few is news)."""
    feedback = fact_key(attempt.feedback or "")
    listed = {fact_key(text) for text in shown_lessons(attempt)}
    texts = [item.text for item in lesson.lessons] or [lesson.task]
    return all((feedback and feedback in fact_key(text)) or fact_key(text) in listed
               for text in texts)


class DistinctExperiences:
    """Which of recall's `hits` are shown, in their order, so that each fact is said once.

    Left out: a run that repeats one shown before (the same task, outcome, feedback and lessons:
    `same_run_key`, held in two namespaces, or recorded again in another thread), a lesson
    drawn from an experience among the hits that says only what that experience's line shows
    (`restates`), and a lesson every text of which is `known` already. `known`: what the reader
    is told elsewhere (the memory block's rules and skill instructions); the lessons shown by
    the hits kept so far count as known too.
    """

    def __init__(self, hits: Iterable[Any], known: Callable[[str], bool] = _never) -> None:
        self._elsewhere = known
        self._attempts = {hit.id: hit.record for hit in hits if hit.record.kind != "lesson"}
        self._runs: set[tuple[str, ...]] = set()
        self._said: set[str] = set()

    def known(self, text: str) -> bool:
        """Whether `text` is said already: elsewhere, or by a lesson a kept hit shows."""
        key = fact_key(text)
        return bool(key) and (key in self._said or self._elsewhere(text))

    def keep(self, hit: Any) -> list[str] | None:
        """None when `hit` says nothing new; else the lessons its line shows (from now on said)."""
        record = hit.record
        parent = self._attempts.get(record.source or "") if record.kind == "lesson" else None
        if parent is not None and restates(record, parent):
            return None
        run = same_run_key(record)
        if record.kind != "lesson" and run in self._runs:
            return None  # the same attempt (held in two namespaces, or repeated on another id)
        self._runs.add(run)
        # Only what a line showed counts: an experience lists three lessons, not its fourth.
        if record.kind == "lesson" and all(
                self.known(text) for text in [l.text for l in record.lessons] or [record.task]):
            return None
        lessons = shown_lessons(record, self.known)
        self._said.update(fact_key(text) for text in lessons)
        return lessons


def produced(record: Any) -> str:
    """A short excerpt of what the run produced: its final answer, else the last observation
    (a model weighs a past run by what came out of it, not by its step names alone)."""
    steps = list(getattr(record, "steps", None) or [])
    answers = [s.observation for s in steps if s.action == "final answer" and s.observation]
    replies = [s.thought for s in steps  # the assistant's text turns before the last one
               if s.thought and not s.action and not s.observation and not _OMITTED.match(s.thought)]
    results = [s.observation for s in steps if s.observation and s.action != "final answer"
               and (s.action or not s.observation.startswith("User: "))]  # not a user's turn
    for texts in (answers, replies, results):
        said = [text for text in texts if not _courtesy(text)]
        if said:
            return one_line(said[-1], 160)
    return ""


_OMITTED = re.compile(r"\[\d+ steps omitted\]$")


#: Words a closing pleasantry is made of ("OK: thanks, that's all", "You're welcome, have a
#: nice day!"): a reply of only these says nothing about what the run produced (hunt, s17).
_COURTESY = frozenset(
    "ok okay sure thanks thank thx you you're youre welcome that's thats all bye goodbye "
    "glad to help helped happy great good nice have a day anytime no problem cheers "
    "it's its my pleasure see later take care any time again much so very".split())


def _courtesy(text: str) -> bool:
    words = re.findall(r"[a-z']+", str(text).lower())
    return bool(words) and len(words) <= 12 and all(w in _COURTESY for w in words)
