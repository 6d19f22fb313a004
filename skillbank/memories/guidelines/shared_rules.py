"""A newer rule that contradicts a shared rule its namespace reads: reported, and preferred
for its own namespace, the shared rule left as it is.

alice (a contributor of `alice` who reads `team`) learns "From now on, do not write a
changelog entry." while the team holds "Always write a changelog entry.". In one namespace the
newer rule supersedes the older one; across namespaces it may not: alice must not change or
retire the team's rule. The learn looked in her own namespace only (`matching._nearest`),
answered "new rule" with `nearest: []`, and her memory block served both opposite rules side by
side, or only the team's rule she had just contradicted when the topic family filter chose it
(hunt-teamvotes #1, session 38).

The candidate is compared with the active rules of each other namespace the caller reads. A
shared rule it replaces is

* reported: in the entry's ``nearest`` (with its ``namespace``) and in its ``detail``;
* recorded on the caller's own rule (``Guideline.overrides``), never on the shared one;
* not served to callers who write the overriding rule's namespace while that rule is active
  (`overridden`, applied by `guidelines.search` and `playbook`, hence by every memory block
  and face). Everyone else who reads the shared namespace still gets it, and the caller still
  sees it in ``list``/``get``; retiring her rule (or a reviewer's) brings it back.

Across namespaces the test is stricter than `_plan`'s in one namespace (hunt-xns review 3 #1,
session 38): `_plan`'s stance cues and the distiller's `relate` read "Do not write commit
messages longer than 72 characters." as contradicting "Write commit messages in English.", and
"Don't add type hints to test functions." (an exception) as contradicting "Always add type
hints to public functions.": the team's rule vanished for alice without anyone deciding it.
Hiding needs (`replaces_shared`)

* explicit replacement wording: a change cue in the rule's own clause ("from now on", "no
  longer", "instead" ...), a rule naming both sides ("X instead of Y", "X, not Y") or "Stop
  ...", and then `supersession.overrules` saying why, or a value change of the same setting
  (`values.value_change` with its cue);
* the new rule covering the old one: it names everything the old rule asks for or rejects,
  and its negated side names nothing more (no narrower exception, no other attribute).

A rule that `overrules` but fails the second test is reported as related and hides nothing.
Cost (review 3 #2: `_plan` per read namespace made up to ~100 `relate` (model) calls per
learn, under the write lock): no `relate` at all; a rule without a change cue costs nothing,
the others a word scan of the read namespaces' active rules and at most `MAX_SHARED_CHECKS`
wording tests, an embedding only for the similarity of a rule found. It stays under the write
lock, reading the records just refreshed: 20 read namespaces of 15 rules, every learn cued,
took 145 ms a learn there (73 warm) and take 18 ms (27 warm) (`benchmarks`-style s3_cost).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from skillbank import scope as scopes
from skillbank.distill.relations import _content, _plain, _stem
from skillbank.distill.supersession import _verb, has_flip, overrules, stance
from skillbank.memories.guidelines.values import _uncued, changed_values, rule_cue, value_change
from skillbank.records import Guideline, LearnEntry

#: Shared rules put to the full test per learn, the most words in common first (review 3 #2).
MAX_SHARED_CHECKS = 20
#: Related (not hidden) shared rules named in a learn's ``nearest``, the most alike first.
MAX_RELATED = 3
#: Replaced rules followed from an overridden one to its active successor (`overridden`).
MAX_CHAIN = 20

#: "Stop adding ...": a rule that says a practice ends.
_STOP_RE = re.compile(r"^\W*(?:please\s+)?stop\b", re.I)

#: (similarity, id of the shared rule, why, whether it is hidden from the caller's namespace)
Found = tuple[float, str, str, bool]


@lru_cache(maxsize=65536)
def _words(text: str) -> frozenset[str]:
    return frozenset(_content(_uncued(text)))


def explicit(new: str, said: str) -> bool:
    """Whether `new` (from the sentence `said`) says it replaces something: a change cue in its
    own clause, both sides named, or "Stop ..."; never a bare negation or stance cue."""
    return bool(rule_cue(new, said) or has_flip(new) or _STOP_RE.search(new))


def _about(rule: str, verbs: set[str]) -> dict[str, int]:
    """`supersession.stance` of the rule without its change cues ("no longer" read as "not":
    "longer" is no thing it names) and the two rules' main verbs (`verbs`)."""
    found = stance(re.sub(r"\bno (?:longer|more)\b", "not", _uncued(rule), flags=re.I))
    for verb in verbs:
        found.pop(verb, None)
    found.pop("", None)
    return found


def covers(new: str, old: str) -> bool:
    """Whether `new` is about all of `old` and no narrower: it names every word `old` asks for
    or rejects, and its negated side (all of it, unless it names a replacement as well) names
    nothing `old` does not. "Don't add type hints to test functions." covers "Always add type
    hints to public functions." not ("test" is an exception, "public" unnamed)."""
    verbs = {_stem(v) for v in (_verb(_plain(_uncued(new))), _verb(_plain(_uncued(old)))) if v}
    n, o = _about(new, verbs), _about(old, verbs)
    core = {w for w, v in o.items() if v != 0}
    if not core or not core <= set(n):
        return False
    side = {w for w, v in n.items() if v <= 0} if has_flip(new) else set(n)
    return side <= set(o)


def _same_setting(new: str, old: str) -> bool:
    """One setting with another value: the same words but for the values that changed."""
    mine = {w for w in _words(new) if not w[:1].isdigit()}
    theirs = {w for w in _words(old) if not w[:1].isdigit()}
    for a, b in changed_values(new, old):
        mine -= _content(a)
        theirs -= _content(b)
    return bool(mine) and mine == theirs


def replaces_shared(new: str, old: str, said: str) -> tuple[str, bool] | None:
    """(why, hides) when `new` (from `said`) explicitly replaces `old`, a rule of another
    namespace: hides when it covers `old` (see the module doc), else it is only related.
    None when it does not say it replaces it."""
    said = said or new
    if not explicit(new, said):
        return None
    why = overrules(new, old, said)
    if why:
        return why, covers(new, old)
    changed = value_change(new, old, said)
    if changed is None:
        return None
    return changed[0], changed[1] and _same_setting(new, old)


def shared_contradicted(memory: Any, text: str, sentence: str, source: Any, namespace: str,
                        topic: str) -> list[Found]:
    """The active rules of the other namespaces the caller reads that `text` (learnt from
    `sentence`) replaces by `replaces_shared`. Only for a write to the caller's own namespace:
    a reviewer writing another namespace does not know what that namespace reads."""
    scope = memory._scope()
    said = sentence or text
    if namespace != scope.namespace or not explicit(text, said):
        return []  # no change announced: nothing to compare, nothing to pay (review 3 #2)
    # The namespaces its memory block reads (`Scope.readable`): a "*" grant is no shared
    # namespace a block serves, so it compares against none of them.
    spaces = {ns for ns in scope.readable if ns != namespace}
    words = _words(text)
    pool = sorted((-len(words & _words(g.text)), g.id) for g in list(memory._items.values())
                  if g.status == "active" and g.namespace in spaces and words & _words(g.text))
    found: list[Found] = []
    vector = None
    for _, gid in pool[:MAX_SHARED_CHECKS]:
        verdict = replaces_shared(text, memory._items[gid].text, said)
        if verdict is None:
            continue
        if vector is None:
            vector = memory._member_vector(text, sentence or None, None)
        old = memory._items[gid]  # similarity as `nearest` says it: the two rules' words
        found.append((memory._words_similarity(text, old.text,
                                               float(memory._profile(old) @ vector)),
                      gid, *verdict))
    return found


def record_overrides(memory: Any, entry: LearnEntry, found: list[Found]) -> LearnEntry:
    """Note on the entry's rule (the caller's own, new or reinforced) the shared rules it
    replaces, and say so in the entry; name the merely related ones in its ``nearest``. The
    shared rules themselves are not written."""
    g = memory._items.get(entry.guideline_id) if entry.guideline_id else None
    if g is None or entry.action == "ignored":
        return entry
    found = found + _carried(memory, g, entry.superseded_id, {f[1] for f in found})
    if not found:
        return entry
    shared = [f for f in found if f[1] in memory._items
              and memory._items[f[1]].namespace != g.namespace
              and memory._items[f[1]].status == "active"]
    related = sorted((f for f in shared if not f[3]), key=lambda f: -f[0])[:MAX_RELATED]
    shared = [f for f in shared if f[3]] + related
    added = [gid for _, gid, _, hides in shared if hides and gid not in g.overrides]
    if added:
        memory._save(g.model_copy(update={"overrides": [*g.overrides, *added]}), reembed=False)
    notes = []
    for similarity, gid, why, hides in shared:
        old = memory._items[gid]
        if hides:
            notes.append(f"contradicts {gid} {old.text!r} of namespace {old.namespace!r} "
                         f"({why}): that rule is not served to namespace {g.namespace!r} "
                         f"while {g.id} is active; it stays as it is for its own namespace")
        entry.nearest.append({"id": gid, "text": old.text, "status": old.status,
                              "similarity": round(float(similarity), 3),
                              "namespace": old.namespace, "contradicted": hides,
                              **({} if hides else {"why": f"related, still served: {why}"})})
    entry.detail = "; ".join(p for p in (entry.detail, *notes) if p)
    return entry


def _carried(memory: Any, g: Guideline, replaced: str | None, seen: set[str]) -> list[Found]:
    """The overrides of the caller's rule `g` replaces (`replaced`) that `g` still opposes
    (`overrules`) and covers: her "Skip the changelog entry." restating "From now on, do not
    write a changelog entry." keeps the team's rule out, though it names no change itself
    (the replace is the explicit act)."""
    prior = memory._items.get(replaced) if replaced else None
    if prior is None or prior.namespace != g.namespace:
        return []
    out: list[Found] = []
    for gid in prior.overrides:
        now = _successor(memory._items, gid)
        if now is None or now.id in seen or now.namespace == g.namespace:
            continue
        why = overrules(g.text, now.text, g.text)
        if why and covers(g.text, now.text):
            vector = memory._member_vector(g.text, None, None)
            out.append((float(memory._profile(now) @ vector), now.id,
                        f"{why}; {prior.id}, which it replaces, overrode it", True))
    return out


def _successor(items: dict[str, Guideline], gid: str) -> Guideline | None:
    """The active rule `gid` is now: itself, or the end of its chain of replacements."""
    g = items.get(gid)
    for _ in range(MAX_CHAIN):
        if g is None or g.status == "active":
            return g
        g = items.get(g.superseded_by) if g.superseded_by else None
    return None


def _still_replaces(g: Guideline, successor: Guideline) -> bool:
    """Whether `g` still replaces the rule a shared rule was reworded into (its wording, or a
    sentence it was learnt from, announcing the change)."""
    saids = dict.fromkeys([g.text, *(s.sentence for s in g.sources if s.sentence)])
    return any((replaces_shared(g.text, successor.text, said) or ("", False))[1]
               for said in saids)


def overridden(memory: Any, scope: "scopes.Scope", spaces: tuple[str, ...]) -> frozenset[str]:
    """Ids of the rules of other namespaces that an active rule of the caller's own namespace
    overrides, when this read covers that namespace (a read of the shared namespace alone
    shows it as it is). A shared rule since reworded (``replaces=``) is followed to its
    active successor, hidden while the caller's rule still replaces it (review 3 #4: the
    rewording brought the contradiction back). Cached per version of the records."""
    if not scopes.covers(spaces, scope.namespace):
        return frozenset()
    key = (memory._generation, id(memory._items))
    cached = getattr(memory, "_overridden", None)
    if cached is None or cached[0] != key:
        items = memory._items
        by_namespace: dict[str, set[str]] = {}
        for g in list(items.values()):
            if not g.overrides or g.status != "active":
                continue
            for gid in g.overrides:
                now = _successor(items, gid)
                if (now is not None and now.namespace != g.namespace
                        and (now.id == gid or _still_replaces(g, now))):
                    by_namespace.setdefault(g.namespace, set()).add(now.id)
        cached = memory._overridden = (key, {ns: frozenset(ids)
                                             for ns, ids in by_namespace.items()})
    return cached[1].get(scope.namespace, frozenset())
