"""Feedback and review: votes, approve, reject, retire, forget.

A mixin of ``GuidelineMemory``.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from skillbank import outside_votes, scope as scopes
from skillbank.audit import note
from skillbank.forgetting import erase_from_chroma, note_forgotten
from skillbank.errors import InvalidInputError, PermissionDeniedError
from skillbank.memories.guidelines.curation import says_when_anew
from skillbank.memories.guidelines.decisions import critique_context
from skillbank.memories.guidelines.files import IN_PLAY
from skillbank.memories.guidelines.matching import more_specific
from skillbank.memories.guidelines.words_only import matching_by_words_if_unread
from skillbank.records import Guideline, utcnow

log = logging.getLogger("skillbank.guidelines")


class GuidelineReview:
    """Status changes a person or an agent asks for (see the module docstring)."""

    # Feedback and review -------------------------------------------------------------------------
    def _change(self, gid: str, update: Callable[[Guideline], dict[str, Any] | None], *,
                verb: str = "review", scope: Any = None) -> Guideline:
        """Apply `update` to a guideline the caller may `verb` ("vote": any it reads, as a
        contributor; "review": one in a namespace it reviews). Out of scope: not found, and so
        is a pending rule to a caller who may not review it, as to `get` (a vote returns the
        rule, with the critiques of whoever proposed it; approve, reject and retire said "needs
        the reviewer role" where a made-up id is not found, session 33). `scope`: the call's
        own (a vote's `trusted=False` narrows it; review 2, session 32: such a vote returned
        the pending rule)."""
        self._check_id(gid)
        scope = scope if scope is not None else self._scope()
        with self._writing():
            self._refresh()
            g = self._items.get(gid)
            if g is None or not scope.can_read(g.namespace) or (
                    g.status == "pending" and not scope.can_review(g.namespace)):
                raise self._not_found(gid)
            _allowed(scope, verb, gid, g.namespace)
            changes = update(g)
            if not changes:
                return g
            return self._save(g.model_copy(update={**changes, "updated": utcnow()}),
                              reembed=False)

    def vote(self, gid: str, helpful: bool = True, *, trusted: bool = True) -> Guideline:
        """Count whether a guideline helped; retire it when harmful - helpful reaches the margin.

        An untrusted vote (``trusted=False``: a client without trust) is recorded in its own
        counters and never changes the status or the ranking: three anonymous "not helpful"
        votes must not retire a rule a person taught.

        Only the votes of a caller who may retire the rule anyway (``can_change`` its namespace:
        a reviewer of it, or a trusted contributor of its own) count toward the retire margin,
        each of them, as before: the single local user votes after every use, and its repeated
        "harmful" votes still retire its rule. A trusted caller who only reads the namespace (a
        contributor of his own who reads the team's) is an outsider there: users met his ten
        "harmful" votes all counted, so the reviewer's one vote then retired the team rule at
        once. His votes now go to ``outside_votes`` as his net (helpful +1, harmful -1), and
        ``helpful``/``harmful`` (what ranks the rule and what readers are shown) hold only its
        sign: one vote per outsider, his latest judgement, never a stack. The net rather than
        the last vote keeps his signal (nine uses that helped and one that did not still say
        "helpful"); and no outsider vote moves the margin, so only those who could retire the
        rule decide when it retires.
        """
        _check_flag(helpful, "helpful")
        _check_flag(trusted, "trusted")
        scope = self._scope(trusted)
        trusted = scope.trusted  # an untrusted scope votes apart too

        def apply(g: Guideline) -> dict[str, Any]:
            if not trusted:
                return {"untrusted_helpful": g.untrusted_helpful + (1 if helpful else 0),
                        "untrusted_harmful": g.untrusted_harmful + (0 if helpful else 1)}
            if not scope.can_change(g.namespace):
                return _outside_vote(g, scope.principal, helpful)
            changes: dict[str, Any] = {"helpful": g.helpful + (1 if helpful else 0),
                                       "harmful": g.harmful + (0 if helpful else 1)}
            deciding = _deciding(changes["helpful"], changes["harmful"], g.outside_votes)
            if deciding[1] - deciding[0] >= self.retire_margin and g.status in IN_PLAY:
                changes["status"] = "retired"
                log.info("guideline %s retired by votes", gid)
            return changes
        voted = self._change(gid, apply, verb="vote", scope=scope)
        note(self, "vote", "guideline", gid, namespace=voted.namespace, trusted=trusted)
        return voted

    def approve(self, gid: str) -> Guideline:
        """pending -> active; applies the supersessions it proposed. Active: no change, and no
        audit event (each such call logged an `approve` of a review that did not take place,
        hunt-browser #5, session 31).

        A pending rule worded as an active rule of its namespace (an untrusted client restating
        it: kept as a proposal, since untrusted input never changes an active rule) is folded
        into that rule: the active rule is reinforced and takes its sources and supersessions,
        the proposal is retired (related to it), and the active rule is returned. Approving it
        made two active rules of one wording, both served. So is a proposal an active rule says
        in other words, by the decision a learn makes (`_active_paraphrase`; unless it replaces
        rules, which like a learn's `replaces=` merges only into its own wording): a trusted
        non-reviewer's paraphrase of the proposal, added active since it may not see pending
        rules, and the approved proposal were two active paraphrases (review 1 #4, session 32).

        A proposal that replaces that very rule (``replaces=``) with a new ``when_to_use`` is no
        restatement: it is a replace, as the same call made trusted is (`replaces_itself`), so
        approving it activates it and supersedes the rule. It was folded, and the change the
        queue promised ("approving it stops serving ...") was dropped: the old rule stayed
        active with its old when_to_use, the approved one retired (hunt-ui #7, session 27).

        UNTRUSTED_REPEATS: a pending proposal's reinforcements are untrusted repeats only (only
        an untrusted learn joins a proposal, `_join_proposal`; a trusted one reinforces the
        active rule or confirms with its own wording), and pending records carry no principal
        to count them by. So one approval is one reinforcement: none for the approved rule
        itself, one for the rule it folds into. One client repeating a critique 20 times made
        "reinforced 20×" and a full-strength ranking prior after one approval (hunt-teamvotes
        #5, session 38); the proposal keeps its count for the reviewer, its sources go along."""
        twin: Guideline | None = None
        already = False

        def apply(g: Guideline) -> dict[str, Any] | None:
            nonlocal twin, already
            if g.status == "active":
                already = True
                return None
            if g.status != "pending":
                raise InvalidInputError(
                    f"guideline {gid} is {g.status}; only pending guidelines can be approved "
                    "(add the rule again to bring it back)")
            held = self._active_twin(g.text, "", g.namespace)
            twin = self._items.get(held) if held and held != gid else None
            if twin is not None and twin.id in g.supersedes and \
                    says_when_anew(g.when_to_use, twin.when_to_use):
                twin = None  # it replaces that rule: approved as a replace, not folded
            elif held is None and not g.supersedes:  # in other words: as a learn merges it
                # (a proposal replacing rules merges only into its own wording, as `replaces=`
                # does in a learn: `plan_replace`; a look-alike is kept apart)
                near = self._active_paraphrase(g)
                twin = self._items.get(near) if near is not None else None
            if twin is not None:
                return {"status": "retired", "related": sorted({*g.related, twin.id})}
            self._refuse_stale_replace(g)
            return {"status": "active", "reinforcements": 0}  # see UNTRUSTED_REPEATS
        with self._writing():
            g = self._change(gid, apply)
            now = utcnow()
            serving = twin.id if twin is not None else gid
            finished = []  # approving an active rule again finishes what a failure left undone
            for old_id in g.supersedes:
                old = self._items.get(old_id)
                if old_id == serving:  # folded into the rule it names: that rule stays active
                    continue
                if old is not None and old.status in IN_PLAY and old.superseded_by in (None, gid):
                    self._mark_superseded(old_id, serving, now)
                    finished.append(old_id)
            if already and not finished:  # nothing changed: no audit event (review 3, s. 31)
                return g
            note(self, "approve", "guideline", gid, namespace=g.namespace)
            if twin is None:
                return g
            log.info("approving %s folded it into %s, an active rule that says the same",
                     gid, twin.id)
            # A learn's merge takes a more specific wording ("... for edge cases" into "Always
            # add tests."); the reviewer approved it, so the fold does too.
            wording = {"text": g.text} if more_specific(g.text, twin.text) else {}
            return self._save(twin.model_copy(update={
                **wording,
                "reinforcements": twin.reinforcements + 1,  # UNTRUSTED_REPEATS
                "sources": [*twin.sources, *g.sources],
                "supersedes": sorted({*twin.supersedes, *(i for i in g.supersedes
                                                          if i != twin.id)}),
                # The shared rules the approved proposal overrides: the fold lost them, and
                # the team rule was served beside hers again (review 3 #5, session 38).
                "overrides": list(dict.fromkeys([*twin.overrides, *g.overrides])),
                "updated": now}), reembed=bool(wording))

    def _active_paraphrase(self, g: Guideline) -> str | None:
        """The active rule of `g`'s namespace that a learn of `g`'s rule would merge it into (the
        same decision: `_nearest`, `_plan`, `merge_evidence`), or None; for `approve`.

        A trusted caller who does not review the namespace meets active rules only (`_seen`),
        so its paraphrase of a pending proposal is added active; approving the proposal then
        served two active paraphrases of one rule (review 1 #4, session 32). Rules of the
        proposal's own critique are kept apart, as a learn keeps a critique's rules apart."""
        first = g.sources[0] if g.sources else None
        critique = first.critique if first is not None and first.critique else g.text
        sentence = (getattr(first, "sentence", None) or "") if first is not None else ""
        active = ("active",)
        with matching_by_words_if_unread(self, g.text):
            vector = self._member_vector(g.text, sentence or None, critique)
            query = " ".join(dict.fromkeys(t for t in (g.text, sentence, critique) if t))
            siblings = self._same_critique(critique, g.namespace, active) - {g.id}
            neighbours = self._nearest(vector, query, g.namespace, g.topic,
                                       self._member_vector(g.text, sentence or None, None),
                                       frozenset(siblings), statuses=active)
            plan = self._plan(g.text, neighbours, siblings, vector=vector,
                              context=critique_context(critique[:2000], sentence or g.text),
                              sentence=sentence or g.text)
        return plan.same[1] if plan.same is not None else None

    def _refuse_stale_replace(self, g: Guideline) -> None:
        """InvalidInputError when a rule `g` replaces was replaced by another, active rule since
        `g` was proposed: approving `g` served it beside that newer rule, two contradicting
        active rules and no word of it (hunt-ui #2, session 27). Nothing changes; the reviewer
        rejects `g`, or a trusted caller adds it again with ``replaces=`` the newer rule."""
        for old_id in g.supersedes:
            old = self._items.get(old_id)
            newer = self._items.get(old.superseded_by) \
                if old is not None and old.superseded_by not in (None, g.id) else None
            if newer is not None and newer.status == "active":
                raise InvalidInputError(
                    f"guideline {g.id} was not approved: it replaces {old_id}, which {newer.id} "
                    f"replaced since ({newer.text[:120]!r}); approving it would serve both. "
                    f"Reject {g.id}, or add its rule again with replaces={newer.id}")

    def reject(self, gid: str) -> Guideline:
        """pending -> retired."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status == "retired":
                return None
            if g.status != "pending":
                raise InvalidInputError(
                    f"guideline {gid} is {g.status}; only pending guidelines can be rejected "
                    "(use retire() for an active one)")
            return {"status": "retired"}
        rejected = self._change(gid, apply)
        note(self, "reject", "guideline", gid, namespace=rejected.namespace)
        return rejected

    def retire(self, gid: str) -> Guideline:
        """Stop serving a guideline (active or pending -> retired); the file is kept.

        An active rule may be retired by whoever may change its namespace (a trusted contributor
        of her own, as her votes retire it and `forget` deletes it): "needs the reviewer role"
        refused her the milder, reversible action (hunt-teamvotes #4, session 38). A pending
        one is its reviewers' still (`_change` answers "not found" to anyone else)."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status in ("retired", "superseded"):
                return None
            return {"status": "retired"}
        retired = self._change(gid, apply, verb="retire")
        note(self, "retire", "guideline", gid, namespace=retired.namespace)
        return retired



    def forget(self, gid: str, *, trusted: bool = True) -> dict[str, Any]:
        """Delete a guideline for good: its file (and any copy of it, the same file name in
        another topic folder), its index entry and its text in the index.

        Trusted callers only (an untrusted one gets PermissionDeniedError). The file is
        deleted first: if the index delete fails afterwards, the next sync drops the entry,
        since files are the truth. Each forget is recorded as a JSON line in
        ``.trash/forgotten.jsonl`` with id, kind, time and principal only — never the text
        (``skillbank.forgetting``); there is no copy to restore.

        The rules it had superseded are handed its place (`_hand_back`), so none is left
        "superseded" by a rule that no longer exists; the answer's ``detail`` says what
        became of them.
        """
        self._check_id(gid)
        _check_flag(trusted, "trusted")
        scope = self._scope(trusted)
        if not scope.trusted:
            raise PermissionDeniedError(
                f"forgetting {gid} needs a trusted caller; an untrusted client can vote or "
                "propose rules, and a trusted reviewer removes them (skillbank guidelines "
                "reject/retire)")
        with self._writing():
            self._refresh()
            g = self._items.get(gid)
            if g is None or not scope.can_read(g.namespace) or (
                    g.status == "pending" and not scope.can_change(g.namespace)):
                raise self._not_found(gid)  # a pending rule it may not forget: as `get`
            _allowed(scope, "forget", gid, g.namespace)
            # Gone for good, not to a trash (skillbank.forgetting); with any copy of its file
            # in another topic folder, which would load as the rule again (hunt-curator #5).
            copies = self._records.delete(g) or []
            if copies:
                log.warning("skillbank: forgetting %s also erased %s, a copy under the same id",
                            gid, ", ".join(copies))
                self._unreadable = [f for f in self._unreadable if f.path not in copies]
            forgotten = getattr(self, "forgotten", None)  # the store's, set by the bank
            if forgotten is not None:
                forgotten.add(gid, "guideline", utcnow().isoformat())
            else:
                note_forgotten(self.folder / ".trash" / "forgotten.jsonl", gid, "guideline",
                               utcnow().isoformat())
            self._items.pop(gid, None)
            self._generation += 1  # change_marker
            self._lookup.drop(gid)
            self._digests.pop(gid, None)
            self._profiles.pop(gid, None)
            self._bags.pop(gid, None)
            self._unindex([gid], lambda: erase_from_chroma(self.index, [gid]))
            note(self, "forget", "guideline", gid, namespace=g.namespace)
            handed = self._hand_back(g)
        result: dict[str, Any] = {"id": gid, "kind": "guideline", "forgotten": True}
        if handed:
            result["detail"] = handed
        return result

    def _hand_back(self, gone: Guideline) -> str:
        """Give the rules `gone` (just forgotten) had superseded the place it held; say what
        was done ("" when it had superseded none).

        They were left superseded by an id that no longer exists: served by no rule, and their
        page said "replaced none and was not replaced" beside a superseded badge (hunt-ui #6,
        session 27). Forget means gone, so the memory goes on as if `gone` had not replaced
        them: when a rule that exists replaced `gone` in turn, they are superseded by that rule
        (which lists them in `supersedes`: the chain skips the forgotten link); when `gone` was
        active, they serve again in its place (pending again, for a reviewer, when only
        untrusted callers ever taught them: untrusted input never becomes active unreviewed);
        otherwise (`gone` retired or pending) they are retired, as nothing served in its place.
        Call with the write lock held."""
        olds = [g for g in self._items.values() if g.superseded_by == gone.id]
        if not olds:
            return ""
        now = utcnow()
        heir = self._items.get(gone.superseded_by or "")
        said: list[str] = []
        takers: dict[str, list[str]] = {}  # rule -> the olds it now supersedes
        for old in olds:
            status = _status_in_place_of(gone, old)
            # Its wording taught again since (a new active rule): it is superseded by that rule,
            # not made a second active rule of one wording (review2 #6, session 27).
            twin = self._active_twin(old.text, "", old.namespace) \
                if heir is None and status == "active" else None
            taker = heir.id if heir is not None else twin if twin != old.id else None
            if taker is not None:
                change: dict[str, Any] = {"superseded_by": taker}
                takers.setdefault(taker, []).append(old.id)
                said.append(f"{old.id}, which it had replaced, is now superseded by {taker}, " + (
                    "which replaced it" if heir is not None else
                    "an active rule of the same wording taught since"))
            else:
                change = {"superseded_by": None, "status": status}
                said.append(f"{old.id}, which it had replaced, is now " + {
                    "active": "active again (served in its place)",
                    "pending": "pending again (approve it to serve it in its place)",
                    "retired": "retired (no rule served in its place)"}[status])
            self._save(old.model_copy(update={**change, "updated": now}), reembed=False)
        for taker, ids in takers.items():
            rule = self._items[taker]
            self._save(rule.model_copy(update={"supersedes": [
                *(i for i in rule.supersedes if i != gone.id),
                *(i for i in ids if i not in rule.supersedes)], "updated": now}), reembed=False)
        note(self, "update", "guideline", [g.id for g in olds], namespace=gone.namespace)
        return "; ".join(said)


def _status_in_place_of(gone: Guideline, old: Guideline) -> str:
    """What `old`, superseded by the forgotten `gone` and by no other rule, becomes
    (`GuidelineReview._hand_back`)."""
    if gone.status != "active":
        return "retired"
    untrusted = bool(old.sources) and all(s.trusted is False for s in old.sources)
    return "pending" if untrusted else "active"


def _outside_vote(g: Guideline, principal: str, helpful: bool) -> dict[str, Any]:
    """The changes one vote of an outsider (see `GuidelineReview.vote`) makes: its net moves,
    and `helpful`/`harmful` move only when the net's sign does (`skillbank.outside_votes`)."""
    votes = dict(g.outside_votes)
    moved = outside_votes.step(votes, principal, helpful, f"guideline {g.id}")
    if moved is None:
        return {}
    up, down = outside_votes.counted(*moved)
    return {"outside_votes": votes, "helpful": max(0, g.helpful + up),
            "harmful": max(0, g.harmful + down)}


def _deciding(helpful: int, harmful: int, outside: dict[str, int]) -> tuple[int, int]:
    """(helpful, harmful) without the outsiders' one vote each: what the retire margin sees."""
    return (max(0, helpful - sum(1 for v in outside.values() if v > 0)),
            max(0, harmful - sum(1 for v in outside.values() if v < 0)))


def _allowed(scope: "scopes.Scope", verb: str, gid: str, namespace: str) -> None:
    """PermissionDeniedError unless `scope` may `verb` a guideline of `namespace` (see
    `skillbank.scope`: voting needs a contributor, forgetting a trusted contributor of the
    namespace or its reviewer, and so retiring an active rule (`retire` reaches a pending one
    only for its reviewer), approve/reject its reviewer)."""
    if verb == "vote":
        scope.require(scopes.Role.CONTRIBUTOR, "voting on a guideline")
        return
    changing = verb in ("forget", "retire")
    allowed = scope.can_change(namespace) if changing else scope.can_review(namespace)
    if not allowed:
        needed = "a trusted contributor of that namespace or the reviewer role" if changing \
            else "the reviewer role"
        raise PermissionDeniedError(
            f"{verb} {gid} needs {needed} for namespace {namespace!r}; "
            f"{scope.principal} is {'an untrusted ' if not scope.trusted else 'a '}"
            f"{scope.role.value}")


def _check_flag(value: Any, what: str) -> None:
    if not isinstance(value, bool):
        raise InvalidInputError(f"{what} must be true or false, got {value!r}")
