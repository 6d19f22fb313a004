"""Maps over the guidelines in memory, kept current on every change to them.

`learn` found a rule's twin (the same wording), the rules one critique already wrote and the
rules linked to an overruled one as `related` by walking every rule, several times per critique
and, for the related links, once per hop and per rule reached: learn went from 100 to 220-330 ms
per critique as a root grew to 1,281 rules (scale hunt, session 18), all of it under the write
lock other writers wait on. These maps answer the same questions from the few rules concerned.

The memory tells them of every change: `reset` on a sync (the whole map read again), `put`
after a save, `drop` after a forget. Candidates are still checked by the caller against the
rule itself (namespace, status), so the maps only ever narrow where to look.
"""

from __future__ import annotations

from typing import Iterable

from skillbank.records import Guideline


def wording_key(text: str) -> str:
    """The distiller's dedup key (case, spacing and punctuation aside): `same_wording`'s."""
    from skillbank.distill.text import _key

    return _key(text)


class RuleLookup:
    """Wording -> ids, critique -> ids, and `related` links both ways."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self._by_wording: dict[str, set[str]] = {}
        self._by_critique: dict[str, set[str]] = {}
        self._links_out: dict[str, frozenset[str]] = {}  # id -> its own `related`
        self._links_in: dict[str, set[str]] = {}  # id -> the rules whose `related` name it
        self._keys: dict[str, tuple[str, frozenset[str]]] = {}  # id -> (wording, critiques)

    def reset(self, items: Iterable[Guideline]) -> None:
        self._clear()
        for g in items:
            self.put(g)

    def put(self, g: Guideline) -> None:
        """`g` was saved (new, or a new version of a rule held before)."""
        self.drop(g.id)
        wording = wording_key(g.text)
        critiques = frozenset(s.critique for s in g.sources if s.critique)
        self._keys[g.id] = (wording, critiques)
        if wording:
            self._by_wording.setdefault(wording, set()).add(g.id)
        for critique in critiques:
            self._by_critique.setdefault(critique, set()).add(g.id)
        out = frozenset(g.related)
        self._links_out[g.id] = out
        for other in out:
            self._links_in.setdefault(other, set()).add(g.id)

    def drop(self, gid: str) -> None:
        """`gid` is gone (forgotten), or about to be put again."""
        keys = self._keys.pop(gid, None)
        if keys is not None:
            wording, critiques = keys
            _discard(self._by_wording, wording, gid)
            for critique in critiques:
                _discard(self._by_critique, critique, gid)
        for other in self._links_out.pop(gid, frozenset()):
            _discard(self._links_in, other, gid)

    def same_wording(self, text: str) -> set[str]:
        """Rules worded as `text` (`decisions.same_wording`); none for a text with no key."""
        wording = wording_key(text)
        return set(self._by_wording.get(wording, ())) if wording else set()

    def pending_twin(self, items: dict[str, Guideline], text: str, namespace: str) -> str | None:
        """The pending rule of `namespace` worded as `text` (the oldest, if several): where an
        untrusted restatement of an active rule goes (`learn`). The active rule is the twin
        `learn` finds first, so each identical untrusted call made a new proposal beside it
        ("same rule as active …: kept as a proposal", 4 proposals in 4 calls), each counting
        toward the queue's cap (hunt-mcp-longlived #6, session 31)."""
        from skillbank.memories.guidelines.decisions import same_wording

        twins = [g for gid in self.same_wording(text)
                 if (g := items.get(gid)) is not None and g.namespace == namespace
                 and g.status == "pending" and same_wording(text, g.text)]
        return min(twins, key=lambda g: (g.created, g.id)).id if twins else None

    def from_critique(self, critique: str) -> set[str]:
        """Rules with a source of exactly this critique."""
        return set(self._by_critique.get(critique, ()))

    def linked(self, gid: str) -> set[str]:
        """Rules linked to `gid` as related, in either direction."""
        return set(self._links_out.get(gid, ())) | self._links_in.get(gid, set())


def _discard(index: dict[str, set[str]], key: str, gid: str) -> None:
    ids = index.get(key)
    if ids is not None:
        ids.discard(gid)
        if not ids:
            del index[key]
