"""What a description says a skill is *not* for, kept out of what the skill is found by.

Authors disambiguate the way the Agent Skills guides tell them to: "Draft a press release …
Not for release notes or changelogs." Read as text to match, that sentence is the strongest
evidence *for* the very requests it excludes: the keyword side found "release notes" in the
description (weighed as a field) and MiniLM embeds "not for X" near X. The author of the hunt
that found it (session 20) saw "write release notes for version 2.3" route to press-release
at 0.992, and at 1.0 once the disambiguating sentence was added: editing the description the
way the docs suggest made the misfire worse and `skills eval` could never pass.

So ranking and the fit read the description without its exclusion clauses; the catalog, the
hit and `load_skill` still show the description whole (the agent reads the exclusion there).
"""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

#: The cues that open an exclusion, at the start of a sentence or after a dash or a semicolon
#: ("…; not for X", "… - not for X", "…, but not for X"). "Instead of" is not one: "use it
#: instead of a hand-picked list" says what the skill is for. "Do not use" / "never use" are one
#: only when the skill is what is not used: followed by "for", "when", "if", "on", "with" or "this
#: skill" / "it" (review, session 20: "Never use eval or exec on user input." and "Do not use
#: SELECT * in production queries." are the rules a skill teaches, and reading them as exclusions
#: hid the skill from exactly the requests about eval and SELECT *).
_WHEN = r"(?:for|when|if|on|with|in)\b"
_ITSELF = rf"(?:(?:this\s+skill|this|it)\s+)?{_WHEN}"
_CUES = (r"not\s+for|not\s+(?:intended|meant|suitable|designed)\s+for|not\s+to\s+be\s+used"
         rf"|(?:do\s+not|don['’]t|never)\s+(?:use|trigger|invoke|apply|load)\s+{_ITSELF}"
         rf"|avoid\s+(?:using\s+)?(?:it|this|this\s+skill)\s+{_WHEN}"
         rf"|skip\s+(?:it|this|this\s+skill)\s+{_WHEN}")
_EXCLUSION = re.compile(
    rf"(?:(?<=[.!?;])|^|\s+[-–—]|,\s*but|\(\s*)\s*(?:{_CUES})\b[^.!?;)]*[.!?;)]?",
    re.IGNORECASE)


def without_exclusions(description: str) -> str:
    """`description` less the clauses that say what the skill is not for; the description
    itself when nothing is left (a description that is only an exclusion still names its
    subject, and an empty text would match nothing at all)."""
    kept = _EXCLUSION.sub("", description)
    kept = re.sub(r"\s{2,}", " ", kept).strip()
    return kept or description.strip()


def exclusion_clauses(description: str) -> list[str]:
    """The clauses of `description` that say what the skill is not for, as written."""
    return [found.group(0).strip(" -–—,(") for found in _EXCLUSION.finditer(description)]


#: How much nearer a request must be to what a skill says it is not for than to what it says it
#: is for before the skill is left out. Measured with MiniLM: requests an exclusion names sit
#: 0.2–0.4 nearer it ("write release notes" +0.20, "a simple single-file HTML page" +0.39); a
#: request for the skill's own subject that shares the exclusion's words sits within a few
#: hundredths ("a multi-page HTML artifact with routing" +0.02 against "not for simple
#: single-file HTML artifacts"), and must still be routed.
EXCLUSION_MARGIN = 0.1
#: Clause vectors kept (a clause is embedded once, on the first request that meets its skill).
_CACHE_SIZE = 4096


class ExclusionGate:
    """Leaves a skill out of a request its description excludes ("Not for X" and the request
    asks for X): the author's own disambiguation, read as the author meant it."""

    def __init__(self, embed: Callable[[list[str]], Any]) -> None:
        self._embed = embed
        self._vectors: dict[str, np.ndarray] = {}

    def excludes(self, description: str, query: Any, summary_cosine: float | None) -> bool:
        """Whether `query` (a unit vector) is EXCLUSION_MARGIN nearer one of the description's
        exclusions than the skill's summary (`summary_cosine`); False without the evidence."""
        clauses = exclusion_clauses(description) if query is not None else []
        if not clauses or summary_cosine is None:
            return False
        query = np.asarray(query, dtype=np.float32)
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        nearest = max(float(self._vector(clause) @ query) for clause in clauses)
        return nearest > summary_cosine + EXCLUSION_MARGIN

    def _vector(self, clause: str) -> np.ndarray:
        vector = self._vectors.get(clause)
        if vector is None:
            vector = np.asarray(self._embed([clause])[0], dtype=np.float32)
            vector /= max(float(np.linalg.norm(vector)), 1e-12)
            if len(self._vectors) >= _CACHE_SIZE:
                self._vectors.pop(next(iter(self._vectors)))
            self._vectors[clause] = vector
        return vector
