"""A newer rule that contradicts a shared rule its namespace reads: reported, and preferred
for its own namespace, the shared rule left as it is.

alice (a contributor of `alice` who reads `team`) learns "From now on, do not write a
changelog entry." while the team holds "Always write a changelog entry.". In one namespace the
newer rule supersedes the older one; across namespaces it may not: alice must not change or
retire the team's rule. The learn looked in her own namespace only (`matching._nearest`),
answered "new rule" with `nearest: []`, and her memory block served both opposite rules side by
side, or only the team's rule she had just contradicted when the topic family filter chose it
(hunt-teamvotes #1, session 38).

Now the candidate is put to the same opposition test as in one namespace (`_plan`: the
supersession wording of `distill.supersession`, the value changes of `values`, the distiller's
`relate`) against the active rules of each other namespace the caller reads. A shared rule it
contradicts is

* reported: in the entry's ``nearest`` (with its ``namespace``) and in its ``detail``;
* recorded on the caller's own rule (``Guideline.overrides``), never on the shared one;
* not served to callers who write the overriding rule's namespace while that rule is active
  (`overridden`, applied by `guidelines.search`, hence by every memory block and face).
  Everyone else who reads the shared namespace still gets it, and the caller still sees it in
  ``list``/``get``; retiring her rule (or a reviewer's) brings it back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from skillbank import scope as scopes
from skillbank.memories.guidelines.decisions import critique_context
from skillbank.records import LearnEntry


def shared_contradicted(memory: Any, text: str, sentence: str, source: Any, namespace: str,
                        topic: str) -> list[tuple[float, str, str]]:
    """(similarity, id, why) of each active rule of another namespace the caller reads that
    `text` (learnt from `sentence` of `source`) contradicts, by `_plan`'s test, its inputs
    made as `_decide` makes them. Only for a write to the caller's own namespace: a reviewer
    writing another namespace does not know what that namespace reads."""
    scope = memory._scope()
    if namespace != scope.namespace:
        return []
    vector: np.ndarray = memory._member_vector(text, sentence or None, source.critique)
    query = " ".join(dict.fromkeys(t for t in (text, sentence, source.critique) if t))
    context = critique_context(source.critique[:2000], sentence or text)
    # The namespaces its memory block reads (`Scope.readable`): a "*" grant is no shared
    # namespace a block serves, so it compares against none of them.
    spaces = [ns for ns in scope.readable if ns != namespace]
    found: list[tuple[float, str, str]] = []
    for ns in spaces:
        neighbours = memory._nearest(vector, query, ns, topic, statuses=("active",))
        if not neighbours:
            continue
        plan = memory._plan(text, neighbours, set(), vector=vector, context=context,
                            sentence=sentence or text)
        found += [(s, gid, plan.why.get(gid, "contradiction")) for s, gid in plan.contradicted]
    return found


def record_overrides(memory: Any, entry: LearnEntry,
                     found: list[tuple[float, str, str]]) -> LearnEntry:
    """Note on the entry's rule (the caller's own, new or reinforced) the shared rules it
    contradicts, and say so in the entry. The shared rules themselves are not written."""
    g = memory._items.get(entry.guideline_id) if entry.guideline_id else None
    if g is None or not found or entry.action == "ignored":
        return entry
    shared = [(s, gid, why) for s, gid, why in found
              if gid in memory._items and memory._items[gid].namespace != g.namespace]
    if not shared:
        return entry
    added = [gid for _, gid, _ in shared if gid not in g.overrides]
    if added:
        memory._save(g.model_copy(update={"overrides": [*g.overrides, *added]}), reembed=False)
    notes = []
    for similarity, gid, why in shared:
        old = memory._items[gid]
        notes.append(f"contradicts {gid} {old.text!r} of namespace {old.namespace!r} ({why}): "
                     f"that rule is not served to namespace {g.namespace!r} while "
                     f"{g.id} is active; it stays as it is for its own namespace")
        entry.nearest.append({"id": gid, "text": old.text, "status": old.status,
                              "similarity": round(float(similarity), 3),
                              "namespace": old.namespace, "contradicted": True})
    entry.detail = "; ".join(p for p in (entry.detail, *notes) if p)
    return entry


def overridden(memory: Any, scope: "scopes.Scope", spaces: tuple[str, ...]) -> frozenset[str]:
    """Ids of the rules of other namespaces that an active rule of the caller's own namespace
    overrides, when this read covers that namespace (a read of the shared namespace alone
    shows it as it is). Cached per version of the records (`_generation`)."""
    if not scopes.covers(spaces, scope.namespace):
        return frozenset()
    key = (memory._generation, id(memory._items))
    cached = getattr(memory, "_overridden", None)
    if cached is None or cached[0] != key:
        items = memory._items
        by_namespace: dict[str, set[str]] = {}
        for g in list(items.values()):
            if g.overrides and g.status == "active":
                by_namespace.setdefault(g.namespace, set()).update(
                    o for o in g.overrides if o in items and items[o].namespace != g.namespace)
        cached = memory._overridden = (key, {ns: frozenset(ids)
                                             for ns, ids in by_namespace.items()})
    return cached[1].get(scope.namespace, frozenset())
