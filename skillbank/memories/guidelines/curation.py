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
from skillbank.records import LearnEntry


#: Similarity from which an existing rule is listed as "nearest" to a new one (lower than the
#: merge floor: the agent decides, so it sees a little more than the memory would merge).
NEAREST_FLOOR = 0.15


def check_replaces(memory: Any, gid: Any, namespace: str, trusted: bool = True) -> str:
    """The id of an in-play rule of `namespace` the caller may replace, or a clear error.

    Call with the memory loaded. An id outside the caller's namespaces reads as unknown (a
    namespace one cannot read is never confirmed to exist), and so does a pending rule to a
    caller who may not review it (`trusted=False`: the call's flag narrows the caller), as to
    `get`: "that rule is pending" told a trusted contributor, and an untrusted one's replace
    was taken, that another caller's proposal has that id (session 33)."""
    from skillbank import scope as scopes

    if not isinstance(gid, str) or not ID_RE.match(gid):
        raise InvalidInputError(
            f"replaces must be a guideline id such as 'gl-0123456789ab', got {gid!r}; the ids "
            "of the nearest rules are in each learn entry's 'nearest'")
    g = memory._items.get(gid)
    caller = scopes.caller(memory.default_namespace, trusted)
    if g is None or not caller.can_read(g.namespace) or (
            g.status == "pending" and not caller.can_review(g.namespace)):
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


def pending_entry(gid: str, text: str, olds: list[str], related: list[str],
                  plan: Plan) -> LearnEntry:
    """What an untrusted caller is told of its proposal: a new one, or one it joined (the same
    words, `_join_proposal`). Ids are random and every call taking an id answers a pending one
    alike whoever proposed it ("not found" to whoever may not review it), so the joined
    proposal's id says nothing a new one would not; an answer naming no id would differ."""
    notes = [plan.note] if plan.note else []
    if related and not plan.note:
        notes.append("kept apart from look-alike " + ", ".join(
            f"{r} ({plan.why.get(r, 'related')})" for r in related) + "; linked as related")
    detail = "untrusted source: a pending proposal; a trusted reviewer approves or rejects it"
    if olds:
        detail += f"; would supersede {', '.join(olds)} once approved"
    return LearnEntry(action="pending", guideline_id=gid, text=text,
                      superseded_id=olds[0] if olds else None, detail="; ".join([detail] + notes))


def check_all_replaces(memory: Any, rules: list[Any], namespace: str,
                       trusted: bool = True) -> None:
    """Every ``replaces`` of one learn call checked before anything is written: each names a
    rule the caller may replace (`check_replaces`), and no two retire the same rule (the rule
    named, or a copy worded as it). Two rules replacing one id wrote the first, then raised on
    the second: the second was lost, the caller got no report of the first, and a retry failed
    the same way (hunt-badinput #10, session 26)."""
    taken: dict[str, int] = {}  # a rule retired -> the number of the rule that retires it
    for number, rule in enumerate(rules, 1):
        gid = getattr(rule, "replaces", None)
        if not gid:
            continue
        check_replaces(memory, gid, namespace, trusted)
        for retired in _retired_by(memory, gid, namespace):
            if retired in taken:
                raise InvalidInputError(
                    f"rules {taken[retired]} and {number} both replace {retired}"
                    f"{'' if retired == gid else f' (worded as {gid})'}; a rule is replaced by "
                    "one rule: give the other rule no replaces (or join the two into one rule)")
            taken[retired] = number


def replaces_itself(memory: Any, text: str, replaces: str,
                    when_to_use: str = "") -> LearnEntry | None:
    """A safe no-op when `text` is the replaced rule's own wording (case, spacing and
    punctuation aside) and says nothing new about when it applies, or None. Such a replace
    stored a copy under a new id and superseded the rule, whose votes and id (held by callers)
    were left behind; repeating it chained copies, and an untrusted one approved did the same
    (hunt-badinput #2, session 26). A new `when_to_use` is a real change (the API has no other
    way to make it), so that replace goes ahead (review, session 26)."""
    g = memory._items[replaces]
    if not same_wording(text, g.text) or says_when_anew(when_to_use, g.when_to_use):
        return None
    return LearnEntry(action="ignored", text=g.text, detail=(
        f"replaces={replaces} names a rule already worded as this one: nothing to replace; "
        f"{replaces} is kept as it is (its id and votes); learn it without replaces to "
        "reinforce it"))


def says_when_anew(when_to_use: str, old_when_to_use: str) -> bool:
    """Whether `when_to_use` says something new about when a rule applies, beside the
    `old_when_to_use` of the rule it names (case and spacing aside): a replace worded as that
    rule is then a real change, on the trusted path (`replaces_itself`) and when a reviewer
    approves the untrusted one (`GuidelineReview.approve`, hunt-ui #7, session 27)."""
    return bool(when_to_use.strip()) and " ".join(when_to_use.split()).casefold() != \
        " ".join(old_when_to_use.split()).casefold()


def _retired_by(memory: Any, replaces: str, namespace: str,
                statuses: tuple[str, ...] = IN_PLAY) -> list[str]:
    """The rules a replace of `replaces` supersedes: it, and each copy worded as it in
    `statuses` (in play; active only for a caller who does not review the namespace)."""
    old_text = memory._items[replaces].text
    return [replaces, *(gid for gid in sorted(memory._lookup.same_wording(old_text))
                        if gid != replaces and memory._in_play_in(gid, namespace, statuses))]


def plan_replace(memory: Any, plan: Plan, text: str, replaces: str, namespace: str, *,
                 statuses: tuple[str, ...] = IN_PLAY) -> None:
    """Bend `plan` to the caller's word that `text` replaces the rule `replaces`.

    The replaced rule is superseded, and so is each in-play rule of the namespace worded as it
    (a copy of it, which would go on serving the replaced wording). The new rule merges only
    into a rule already worded as itself (then that rule supersedes them); any other rule the
    plan took for the same is kept apart as related. `add(NEW, replaces=B)` was merged into a
    look-alike A of B ("... any 5xx spike. (rev 8)"): NEW was stored nowhere and A's old
    wording stayed active, reported as "merged" (soak hunt #2).
    """
    retired = _retired_by(memory, replaces, namespace, statuses)
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


def nearest_view(memory: Any, neighbours: list[tuple[float, str]], limit: int = 3, *,
                 statuses: tuple[str, ...] = IN_PLAY, text: str | None = None
                 ) -> list[dict[str, Any]]:
    """The nearest existing rules as a curating agent needs them: id, text, status, similarity;
    only rules in `statuses` (a caller who does not review the namespace: active ones). With
    the learnt rule's `text`, similarity is the model cosine of the two rules' words, not the
    capped matching score that ranked them ("similarity 1.0" for "first name" beside "last
    name", cosine 0.88; hunt-learnfaces #3, session 38)."""
    out = []
    for similarity, gid in neighbours:
        g = memory._items.get(gid)
        if g is not None and g.status in statuses and len(out) < limit:
            if text:
                similarity = memory._words_similarity(text, g.text, similarity)
            out.append({"id": gid, "text": g.text, "status": g.status,
                        "similarity": round(float(similarity), 3)})
    return out
