"""One principal, one vote where he is an outsider: the rule every memory's ratings follow.

An *outsider* is a trusted caller who may not change the item he rates: a contributor who only
reads the team's namespace rating a team rule, experience or lesson, or a contributor rating a
skill he did not write (a team, bundled or hand-written one) without the reviewer role. Users
met his votes all counted: ten "not helpful" votes on a team rule, fifty on a team experience
or a bundled skill, and the item sank in everyone's ranking (a prune candidate, a skill
"worse since a change"). Now each outsider keeps a *net* per item (helpful +1, harmful -1) and
the item's counters hold only its sign: one vote, his latest judgement, never a stack. The net
rather than the last vote keeps his signal (nine uses that helped and one that did not still
say "helpful"). The item's own people (who may change it) and the single local user vote as
before, each vote counted: the local user votes after every use.

Guideline votes (`skillbank.memories.guidelines.review`), experience marks and skill ratings
(`skillbank.usage.UsageLog`, `skillbank.store.postgres.usage`) all step a net with `step`.

Untrusted votes on experiences and skills are kept per principal too (who cast them), and a
reviewer's `accept_votes` folds each principal's net in as that principal's outside vote
(`merge`): one untrusted token's twelve "not helpful" became twelve failures once accepted,
while a trusted outsider's twelve were one (hunt-trust #2, session 30). Votes kept before
principals were (a log line or a row without one, an imported record's counts) are one
principal, `UNNAMED`.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("skillbank.votes")

#: Outsiders recorded per item; a further one's vote is not counted (a record stays small).
MAX_OUTSIDE_VOTERS = 500
#: An outsider's stored net is bounded: it counts once whatever its size.
MAX_OUTSIDE_NET = 1000


#: The principal of untrusted votes that name none (kept before they did, or imported counts).
#: No principal is empty (`skillbank.scope.PRINCIPAL_PATTERN`), so it is nobody's name.
UNNAMED = ""


def outsider_of(scope: Any, namespace: str | None) -> str | None:
    """The principal of `scope` when it is an outsider to `namespace` (trusted, may not change
    it): his uses of what is there count once, as his votes do; None for its own people, the
    local user and an untrusted caller (whose uses are kept apart)."""
    return scope.principal if scope.trusted and not scope.can_change(namespace) else None


def step(votes: dict[str, int], principal: str, helpful: bool, item: str = ""
         ) -> tuple[int, int] | None:
    """Move `principal`'s net in `votes` (in place) by one vote; returns (before, after), or
    None when the item already has `MAX_OUTSIDE_VOTERS` others and his vote is not counted.

    A net back at zero is dropped: he has no vote on the item (and frees his place)."""
    if principal not in votes and len(votes) >= MAX_OUTSIDE_VOTERS:
        log.info("%s has %d outside voters; %s's vote is not counted", item or "an item",
                 len(votes), principal)
        return None
    before = votes.get(principal, 0)
    after = max(-MAX_OUTSIDE_NET, min(MAX_OUTSIDE_NET, before + (1 if helpful else -1)))
    if after:
        votes[principal] = after
    else:
        votes.pop(principal, None)
    return before, after


def clamp(net: int) -> int:
    """A net within the stored bounds (`MAX_OUTSIDE_NET`)."""
    return max(-MAX_OUTSIDE_NET, min(MAX_OUTSIDE_NET, int(net)))


def nets(value: Any) -> dict[str, int]:
    """Outsiders' nets read from elsewhere (an export line's `usage.outside`, a usage log
    line): principal -> net, bounded, without zeros, non-names or non-numbers, at most
    `MAX_OUTSIDE_VOTERS` of them."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, int] = {}
    for principal, net in value.items():
        if len(out) >= MAX_OUTSIDE_VOTERS:
            break
        if isinstance(principal, str) and principal and isinstance(net, int) \
                and not isinstance(net, bool) and net:
            out[principal] = clamp(net)
    return out


def counted(before: int, after: int) -> tuple[int, int]:
    """How (helpful, harmful) move when an outsider's net goes from `before` to `after`: only
    when its sign does, so each outsider is at most one vote of either kind."""
    return (after > 0) - (before > 0), (after < 0) - (before < 0)


def merge(votes: dict[str, int], principal: str, net: int, item: str = ""
          ) -> tuple[int, int] | None:
    """Add `net` (a principal's accepted untrusted votes) to `principal`'s net in `votes`, as
    that many votes of his would (`step`): returns (before, after), or None when nothing moved
    or he is not counted (`MAX_OUTSIDE_VOTERS`)."""
    if not net:
        return None
    if principal not in votes and len(votes) >= MAX_OUTSIDE_VOTERS:
        log.info("%s has %d outside voters; %s's accepted votes are not counted",
                 item or "an item", len(votes), principal)
        return None
    before = votes.get(principal, 0)
    after = max(-MAX_OUTSIDE_NET, min(MAX_OUTSIDE_NET, before + net))
    if after:
        votes[principal] = after
    else:
        votes.pop(principal, None)
    return before, after
