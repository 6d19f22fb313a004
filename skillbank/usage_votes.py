"""The votes of a usage log: outsiders' nets, untrusted votes kept per principal, and a
reviewer's acceptance of them (`UsageLog` is this and the log's own mechanics, split by job).

An outsider's rating (`vote`: a trusted caller who may not change the item, see
`skillbank.outside_votes`) is an event line with `"o": <principal>`: his net per item is kept
(`outside`), and the trusted counts hold only its sign, so fifty "not helpful" votes of one
contributor are one failure, not fifty. His uses count the same way, once per item (a use line
with `"ou": <principal>`, and the use a rating carries): six recalls of a team experience that
he marked helpful six times were six uses and one success, a help rate of 1/6 that made it a
prune candidate (hunt-trust #1, session 30). An older skillbank reads such a line as a plain
use.

Untrusted votes name who cast them (`"p": <principal>`), and each principal's net is kept
(`untrusted(id).outside`); acceptance folds each principal's net in as his outside vote
(`outside_votes.merge`), so one untrusted token's twelve "not helpful" are one failure once
accepted, as a trusted outsider's are, not twelve (hunt-trust #2, session 30). His uses name
him too and count once per principal and item (`_first_untrusted_use`: his recalls, a skill's
bare uses, the use each rating carries): six recalls and six accepted "helpful" of one token
were six uses and one success, a prune candidate (review1 #1, session 30). Votes without a
principal (lines written before, imported counts) are one principal, `outside_votes.UNNAMED`.

A log written before replays as it counted then (review1 #3, session 30): an acceptance is
journaled `"accept": 2` (per principal), and one of the release before (`"accept": 1`) over
votes that name nobody adds each vote, as it did and as team mode's rows still hold; an
outsider's vote whose use counts once says so (`"ou"`), and one without counts its use each
time, as before.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Callable

from skillbank import outside_votes
from skillbank.records import Usage, utcnow


#: An `accept` line's mark: folded per principal (a line of the release before says 1).
ACCEPT_PER_PRINCIPAL = 2


class UsageVotes:
    """The vote-counting half of `skillbank.usage.UsageLog` (its tables, lock and writes)."""

    _lock: threading.Lock
    shared: bool
    _counts: dict[str, Usage]
    _untrusted: dict[str, Usage]
    _outside: dict[str, dict[str, int]]
    _voters: dict[str, dict[str, int]]
    _users: dict[str, set[str]]
    _raters: dict[str, set[str]]

    def _refresh(self) -> None: ...  # (UsageLog's)

    def _write_through(self, event: dict[str, object], apply: Callable[[], None],
                       *ids: str) -> None: ...  # (UsageLog's)

    def _apply_outside(self, item_id: str, principal: str, ok: bool, uses: int,
                       at: str | None, *, once: bool = True) -> None:
        """An outsider's rating: his net moves; successes/failures only by its sign. Its use
        counts once per item (`once`: a line that says so, `"ou"`); a line of the release
        before counts each, as it did then (review1 #3, session 30)."""
        moved = outside_votes.step(self._outside.setdefault(item_id, {}), principal, ok,
                                   item_id)
        up, down = outside_votes.counted(*moved) if moved else (0, 0)
        usage = self._counts.setdefault(item_id, Usage())
        if once:
            self._count_outside_use(item_id, principal, uses, usage)
        else:
            usage.uses += uses
        usage.successes = max(0, usage.successes + up)  # a sign moving back takes its vote away
        usage.failures = max(0, usage.failures + down)
        _touch(usage, at)

    def _apply_nets(self, item_id: str, nets: dict[str, int]) -> None:
        """Imported outsiders' nets (`UsageLog.add`): each joins the principal's net here; the
        counters already hold their signs, as the exporting bank's did."""
        if not nets:
            return
        votes = self._outside.setdefault(item_id, {})
        for principal, net in nets.items():
            if principal not in votes and len(votes) >= outside_votes.MAX_OUTSIDE_VOTERS:
                continue
            total = outside_votes.clamp(votes.get(principal, 0) + net)
            if total:
                votes[principal] = total
            else:
                votes.pop(principal, None)
        if not votes:
            self._outside.pop(item_id, None)

    def _apply_outside_use(self, item_id: str, principal: str, uses: int,
                           at: str | None) -> None:
        """An outsider's plain use: counted once per item (module docstring)."""
        usage = self._counts.setdefault(item_id, Usage())
        self._count_outside_use(item_id, principal, uses, usage)
        _touch(usage, at)

    def _count_outside_use(self, item_id: str, principal: str, uses: int, usage: Usage) -> None:
        if uses <= 0:
            return
        users = self._users.setdefault(item_id, set())
        if principal in users:
            return
        if len(users) < outside_votes.MAX_OUTSIDE_VOTERS:  # (beyond: each use counts)
            users.add(principal)
            uses = 1
        usage.uses += uses

    def _first_untrusted_use(self, item_id: str, principal: str, uses: int) -> int:
        """The uses an untrusted principal's use or rating adds: its first on the item, one;
        any later one, none (his accepted uses count once, as an outsider's: six accepted "it
        helped" were six uses and one success, a 1/6 help rate; hunt-trust #1, session 30; and
        his six recalls of it, six uses beside one accepted success, made it a prune candidate
        again: review1 #1, session 30)."""
        if uses <= 0:
            return uses
        raters = self._raters.setdefault(item_id, set())
        if principal in raters or principal in self._users.get(item_id, ()):
            return 0
        if len(raters) < outside_votes.MAX_OUTSIDE_VOTERS:
            raters.add(principal)
            return 1
        return uses

    def vote(self, item_id: str, principal: str, ok: bool, *, use: int = 0) -> Usage:
        """An outsider's rating of an item (with `use` uses): counted once per `principal`, as
        the sign of his net (module docstring). Written through; returns the trusted counts."""
        at = utcnow().isoformat()
        event: dict[str, object] = {"id": item_id, "use": use, "at": at, "ok": bool(ok),
                                    "o": principal}
        if use:
            event["ou"] = principal  # its use counts once (a line without: each, as before)
        with self._lock:
            self._refresh()  # his earlier votes from another process first: the net is his
            self._write_through(event, lambda: self._apply_outside(
                item_id, principal, bool(ok), use, at), item_id)
            return self._counts[item_id].model_copy()

    def outside(self, item_id: str) -> dict[str, int]:
        """The outsiders' nets on an item (principal -> net vote; each counts once)."""
        if self.shared:
            with self._lock:
                self._refresh()
        return dict(self._outside.get(item_id, {}))

    def untrusted(self, item_id: str) -> Usage:
        """Untrusted uses and votes of an item, not yet accepted (they move nothing); `outside`
        holds who cast the votes (principal -> net; `outside_votes.UNNAMED` for votes that
        name none): a reviewer sees that twelve came from one token before accepting them."""
        if self.shared:
            with self._lock:
                self._refresh()
        usage = self._untrusted.get(item_id)
        found = usage.model_copy() if usage else Usage()
        found.outside = dict(self._voters.get(item_id, {}))
        return found

    def accept(self, item_id: str) -> Usage:
        """A reviewer accepts an item's untrusted signals: they join its trusted counts, its
        uses as they are and each principal's votes as his outside vote (its net's sign).

        One `accept` event, written through; returns the item's trusted counts after it."""
        at = utcnow().isoformat()
        with self._lock:
            self._refresh()  # votes other processes took first: the accept folds those too
            self._write_through({"id": item_id, "accept": ACCEPT_PER_PRINCIPAL, "at": at},
                                lambda: self._accept(item_id), item_id)
            usage = self._counts.get(item_id)
            return usage.model_copy() if usage else Usage()

    def _accept(self, item_id: str, journaled: object = ACCEPT_PER_PRINCIPAL) -> None:
        """Fold an item's untrusted counts in (`accept`). An `accept` line of the release
        before (`"accept": 1`) over votes that name nobody replays as it counted then, every
        vote added: a log read again must give the counts it gave (twelve accepted
        "helpful" became one success at the next open; review1 #3, session 30)."""
        extra = self._untrusted.pop(item_id, None)
        voters = self._voters.pop(item_id, {})
        if extra is None:
            return
        usage = self._counts.setdefault(item_id, Usage())
        usage.uses += extra.uses
        if journaled == 1 and set(voters) <= {outside_votes.UNNAMED} and \
                not self._raters.get(item_id):
            usage.successes += extra.successes
            usage.failures += extra.failures
            voters = {}
        self._users.setdefault(item_id, set()).update(self._raters.pop(item_id, set()))
        nets = self._outside.setdefault(item_id, {})
        for principal, net in voters.items():  # one vote each, as an outsider's
            moved = outside_votes.merge(nets, principal, net, item_id)
            up, down = outside_votes.counted(*moved) if moved else (0, 0)
            usage.successes = max(0, usage.successes + up)
            usage.failures = max(0, usage.failures + down)
        if not nets:
            del self._outside[item_id]
        if extra.last_used and (usage.last_used is None or extra.last_used > usage.last_used):
            usage.last_used = extra.last_used


def _touch(usage: Usage, at: str | None) -> None:
    """Set `last_used` from an event's time (a malformed one is left out)."""
    if at:
        try:
            usage.last_used = datetime.fromisoformat(at)
        except ValueError:
            pass
