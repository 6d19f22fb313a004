"""The distiller protocol and the types it speaks: :class:`CandidateRule` and :data:`Relation`."""

from __future__ import annotations

from typing import Literal, Protocol, Sequence, runtime_checkable

from pydantic import BaseModel

from skillbank.records import Experience, Lesson


Relation = Literal["same", "contradiction", "distinct"]


class CandidateRule(BaseModel):
    """A rule proposed from one critique, before the guideline store dedupes or merges it."""

    text: str
    topic: str = "general"
    when_to_use: str = ""
    actionable: bool = True
    source_sentence: str = ""
    #: The id of an existing guideline this rule replaces (the agent as curator): that one is
    #: superseded by this rule, never merged with it.
    replaces: str | None = None


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
