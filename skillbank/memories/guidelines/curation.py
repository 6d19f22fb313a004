"""The agent as curator: ``replaces=<id>`` checked before anything is written.

Memory-R1 and MemMA let the memory manager choose ADD, UPDATE, DELETE or NOOP against the
nearest existing entries. Here: every learn entry lists the nearest rules with their ids
(``LearnEntry.nearest``); the agent adds (``learn``/``add``), replaces (``replaces=<id>``: the
new rule supersedes that one, never merges into it), retires (``retire(id)``) or leaves a rule.

A replace is a change to an existing rule, so it obeys the scope rules: the id must name a rule
the caller can see, in the namespace it writes, that is still in play (active or pending). A
retired or superseded rule has nothing left to replace: a clear error, not a silent add. An
untrusted caller's replace waits, like any untrusted change, as a pending rule whose
``supersedes`` is applied when a reviewer approves it.
"""

from __future__ import annotations

from typing import Any

from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.memories.guidelines.decisions import Plan, same_wording
from skillbank.memories.guidelines.files import ID_RE, IN_PLAY


#: Similarity from which an existing rule is listed as "nearest" to a new one (lower than the
#: merge floor: the agent decides, so it sees a little more than the memory would merge).
NEAREST_FLOOR = 0.15


def check_replaces(memory: Any, gid: Any, namespace: str) -> str:
    """The id of an in-play rule of `namespace` the caller may replace, or a clear error.

    Call with the memory loaded. An id outside the caller's namespaces reads as unknown (a
    namespace one cannot read is never confirmed to exist)."""
    from skillbank import scope as scopes

    if not isinstance(gid, str) or not ID_RE.match(gid):
        raise InvalidInputError(
            f"replaces must be a guideline id such as 'gl-0123456789ab', got {gid!r}; the ids "
            "of the nearest rules are in each learn entry's 'nearest'")
    g = memory._items.get(gid)
    caller = scopes.current(memory.default_namespace)
    if g is None or not caller.can_read(g.namespace):
        raise NotFoundError(f"replaces={gid!r}: no such guideline in your namespaces; find ids "
                            "with search() or in a learn entry's 'nearest'")
    if g.namespace != namespace:
        raise InvalidInputError(
            f"replaces={gid!r}: that rule is in namespace {g.namespace!r}, this rule is written "
            f"to {namespace!r}; a rule replaces only one of its own namespace")
    if g.status not in IN_PLAY:
        by = f" by {g.superseded_by}" if g.superseded_by else ""
        raise InvalidInputError(
            f"replaces={gid!r}: that rule is already {g.status}{by}, so there is nothing to "
            "replace; add the rule without replaces (or replace the rule that is active now)")
    return gid


def plan_replace(memory: Any, plan: Plan, text: str, replaces: str, namespace: str) -> None:
    """Bend `plan` to the caller's word that `text` replaces the rule `replaces`.

    The replaced rule is superseded, and so is each in-play rule of the namespace worded as it
    (a copy of it, which would go on serving the replaced wording). The new rule merges only
    into a rule already worded as itself (then that rule supersedes them); any other rule the
    plan took for the same is kept apart as related. `add(NEW, replaces=B)` was merged into a
    look-alike A of B ("... any 5xx spike. (rev 8)"): NEW was stored nowhere and A's old
    wording stayed active, reported as "merged" (soak hunt #2).
    """
    old_text = memory._items[replaces].text
    retired = [replaces, *(gid for gid in sorted(memory._lookup.same_wording(old_text))
                           if gid != replaces and memory._in_play_in(gid, namespace))]
    if plan.same is not None:
        target = plan.same[1]
        if target in retired or not same_wording(text, memory._items[target].text):
            if target not in retired:
                plan.related.insert(0, target)
                plan.why.setdefault(target, f"taken for the same rule, kept apart: replaces= "
                                            f"says this rule replaces {replaces}")
            plan.same = None
    plan.related = [r for r in plan.related if r not in retired]
    for gid in reversed(retired):
        if all(g != gid for _, g in plan.contradicted):
            plan.contradicted.insert(0, (1.0, gid))
        plan.why[gid] = (f"worded as {replaces}, which it replaces (replaces=)"
                         if gid != replaces else "replaced, as the caller asked (replaces=)")


def nearest_view(memory: Any, neighbours: list[tuple[float, str]], limit: int = 3
                 ) -> list[dict[str, Any]]:
    """The nearest existing rules as a curating agent needs them: id, text, status, similarity."""
    out = []
    for similarity, gid in neighbours[:limit]:
        g = memory._items.get(gid)
        if g is not None:
            out.append({"id": gid, "text": g.text, "status": g.status,
                        "similarity": round(float(similarity), 3)})
    return out
