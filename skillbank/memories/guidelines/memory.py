"""Guideline memory: critiques in, durable de-duplicated rules out, retrieved for new tasks.

A guideline is one record (id, topic, when_to_use, status, counters, sources, supersession
links, namespace, timestamps, the rule text) kept by the store it is handed
(`skillbank.store.base.GuidelineRecords`): in the embedded default one markdown file,
``<folder>/<topic>/<id>.md`` (YAML frontmatter and the rule as the body), which a person may
edit, move or delete by hand; in team mode a PostgreSQL row. The records are the truth; the
hybrid index (dense Chroma + BM25) is rebuilt from them by :meth:`GuidelineMemory.sync`, which
compares digests. No logic of this package asks which store it runs on (handed none, the
memory keeps its folder's files: the embedded default).

Learning (:meth:`GuidelineMemory.learn`): the distiller turns a critique into candidate rules.
Each actionable candidate is compared with the guidelines of its namespace that are still in
play (active and pending). Similarity is measured against a guideline's *profile*: the mean of
the vectors of every wording that ever reinforced it (for each source: the candidate rule, the
critique sentence it came from and the critique), plus the TF-IDF overlap of their words, minus
a small penalty across topics. Critiques of one rule rarely share a sentence but do share the
rule's context and jargon, so a profile that grows with each reinforcement recognises the next
paraphrase far better than the first wording alone does. The nearest guidelines (at most five)
are handed to ``distiller.relate`` with that similarity:

* ``same`` -> merge, but only with strong evidence (``decisions``: the same action on the same
  object, a paraphrase above ``paraphrase_bar`` sharing an object word, or, from a lower floor, a
  paraphrase by the model's own measure: a high dense cosine with the guideline's profile, or
  alike critique contexts around the two rules); without it both are kept and the new one links
  the other as ``related`` (search ranks each on its own relevance). A merge is one more
  reinforcement, the source is kept, the wording stays unless the new wording is clearly more
  specific (it contains every content word of the old one and adds at least one; see
  :func:`more_specific`).
  Rules of one critique are never merged into each other (a wrong merge silently deletes
  advice; a duplicate costs little).
* ``contradiction`` -> the new rule is added and the old one marked ``superseded`` (links both
  ways); a merge also supersedes the other neighbours that contradict it, and the overruled
  rule's related look-alikes are put to ``relate`` too. A rule never supersedes one created or
  merged by the same call. The new file (with ``supersedes:``) is written before the old one is
  marked; :meth:`GuidelineMemory.sync` finishes a supersede a crash interrupted.
* otherwise -> added (``pending`` when the source is not trusted).

Trust: untrusted input never changes an active rule. Its rules wait as ``pending`` (a rule the
same as an active one becomes a pending proposal linked to it; a contradiction supersedes only
on approval); only :meth:`approve` activates a pending rule, and a trusted restatement of one
becomes a new active rule in the trusted wording, superseding the proposal. Untrusted votes are
counted apart and never change a status.

Critique text is data. It is stored verbatim in the sources and only ever reaches the distiller
as text to read; no status, trust or routing decision looks at its words.

Retrieval (:meth:`GuidelineMemory.search`): active guidelines of one namespace only. What is
embedded decides retrieval, because task wording rarely repeats critique wording: the rule text
with its when_to_use, the when_to_use alone, and the rule with the tasks it was learned from (a
rule that three critiques of "write a runbook" produced applies to the next runbook). Keyword
text adds the topic, the source tasks and the source critiques. A small prior from votes and
reinforcements reorders near ties.

The parts live in single-job modules of this package: ``files`` (the file format), ``store``
(files <-> map <-> index), ``matching`` (profiles and neighbours), ``learning`` (learn/add),
``search`` (search and the inventory views) and ``review`` (votes and status changes); this
module wires them into one class.
"""

from __future__ import annotations

import math
import secrets
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

from skillbank.index import HybridIndex
from skillbank.memories.guidelines.decisions import PARAPHRASE_BAR
from skillbank.memories.guidelines.fallback import GuidelineFallback
from skillbank.memories.guidelines.files import (
    ID_RE, IN_PLAY, STATUSES, SourceRecord, parse_guideline, render_guideline)
from skillbank.memories.guidelines.learning import GuidelineLearning
from skillbank.memories.guidelines.lookup import RuleLookup
from skillbank.memories.guidelines.matching import GuidelineMatching, more_specific
from skillbank.memories.guidelines.review import GuidelineReview
from skillbank.memories.guidelines.search import GuidelineSearch
from skillbank.memories.guidelines.store import GuidelineStore
from skillbank.records import Finding, Guideline, LearnEntry, LearnReport

__all__ = [
    "GuidelineMemory",
    "LearnEntry",
    "LearnReport",
    "render_guideline",
    "parse_guideline",
    "more_specific",
    "ID_RE",
    "IN_PLAY",
    "STATUSES",
    "SourceRecord",
    "Guideline",
]


class GuidelineMemory(GuidelineFallback, GuidelineLearning, GuidelineReview, GuidelineSearch,
                      GuidelineMatching, GuidelineStore):
    """Guideline records (a store's: files or PostgreSQL), indexed for search, learned from
    critiques."""

    def __init__(
        self,
        folder: Path | str,
        index: HybridIndex,
        *,
        settings: Any = None,
        distiller: Any = None,
        embed: Callable[[list[str]], np.ndarray] | None = None,
        write_lock: Any = None,
        records: Any = None,
    ) -> None:
        self.folder = Path(folder)
        if records is None:  # no store handed in: the embedded default, this folder's files
            from skillbank.store.files.guidelines import FileGuidelineRecords

            records = FileGuidelineRecords(self.folder)
        #: Where the records live (`skillbank.store.base.GuidelineRecords`); the truth.
        self._records = records
        self.index = index
        self.settings = settings
        self._distiller_source = distiller
        self._embed_fn = embed
        self.write_lock = write_lock if write_lock is not None else threading.RLock()
        self._lock = threading.RLock()
        self._items: dict[str, Guideline] = {}
        self._lookup = RuleLookup()  # wording/critique/related maps over _items (lookup.py)
        self._digests: dict[str, str] = {}  # id -> digest of the record last read
        #: Moves whenever the map of records changes (a sync, a save, a forget): with this
        #: object's own id, the marker `change_marker` hands out (review F3, session 24).
        self._generation = 0
        self._marker_id = secrets.token_hex(4)
        self._loaded = False
        self._rechecked = -math.inf  # when a search last checked the records (`_recheck`)
        self._index_behind: float | None = None  # when the index began to miss writes
        self._index_work: list[Callable[[], None]] | None = None  # `_writing`'s queue
        #: When an index write or a sync left levelling the index to the next sync.
        self._relevel_due: float | None = None
        self._unreadable: list[Finding] = []  # files the last load could not read
        self._file_warnings: list[Finding] = []  # files it read in part, or skipped by name
        self._vectors: dict[str, np.ndarray] = {}  # text -> unit vector (matching cache)
        self._profiles: dict[str, tuple[Any, np.ndarray]] = {}
        self._bags: dict[str, tuple[Any, dict[str, float], frozenset[str]]] = {}

    # Settings and collaborators ------------------------------------------------------------------
    def _setting(self, name: str, default: Any) -> Any:
        return getattr(self.settings, name, default) if self.settings is not None else default

    @property
    def default_namespace(self) -> str:
        return str(self._setting("namespace", "default"))

    @property
    def retire_margin(self) -> int:
        return int(self._setting("retire_harmful_margin", 3))

    @property
    def match_floor(self) -> float:
        """Neighbours below this similarity are not even shown to the distiller.

        The distiller's own "same matter" floor for contradictions is ``related_threshold``
        minus a margin; going lower would only cost relate calls (model calls, for an LLM).
        """
        return float(self._setting("related_threshold", 0.60)) - 0.25

    @property
    def paraphrase_bar(self) -> float:
        """Similarity above which two rules merge without the same action and object."""
        return float(self._setting("paraphrase_threshold", PARAPHRASE_BAR))

    @property
    def distiller(self) -> Any:
        source = self._distiller_source
        if source is None:
            from skillbank.distill import RuleDistiller

            self._distiller_source = source = RuleDistiller(
                same_threshold=float(self._setting("merge_threshold", 0.86)),
                related_threshold=float(self._setting("related_threshold", 0.60)),
            )
        if hasattr(source, "rules_from_critique"):
            return source
        return source()  # the bank passes a factory so the distiller can be swapped later

