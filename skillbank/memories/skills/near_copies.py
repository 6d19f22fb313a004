"""Near-copies of a more trusted skill give it their place (hunt-hostile, session 22).

Three third-party copies of a user's own `git-cleanup` description (one sentence added) took the
top three places and the whole memory block for the request it was written for; the user's own
skill came fourth at 0.08 and left the block. Ranking never looked at trust. Now, among the hits
a search returns, a less trusted skill whose description says nearly all a more trusted one says
(or the reverse) is a copy: the more trusted skill takes the best place any of its copies earned,
and the copies are dropped. Skills of one trust level are left as ranked, so a library of one
level (every routing benchmark) ranks exactly as before.
"""

from __future__ import annotations

from typing import Any, Collection, Sequence

from skillbank.keyword import tokenize
from skillbank.memories.skills.trust import LEVELS

#: Share of the shorter description's words the longer one must hold to count as its copy.
COPY_SHARE = 0.9
#: A description this short says too little to call another its copy ("Git helper.").
MIN_WORDS = 6


def _level_rank(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


def _rank(record: Any) -> int:
    return _level_rank(getattr(record, "trust", "own"))


def _copies(a: set[str], b: set[str]) -> bool:
    shorter = min(len(a), len(b))
    return shorter >= MIN_WORDS and len(a & b) >= COPY_SHARE * shorter


def enough(chosen: Sequence[tuple[float, Any, Any]], k: int,
           held: Collection[str] | None = None) -> int:
    """How many hits a search reads before it cuts to `k`: `k`, or twice that once a hit is less
    trusted than the most trusted level the library `held` (all levels when unknown), so a
    more trusted original ranked just behind its copies is seen (the user's own skill came
    fourth behind three copies). A library of one level reads `k`, as before (reading 2k cost
    a warm search 1.1 -> 1.6 ms on the dev library, all third-party)."""
    best = min((_level_rank(level) for level in held), default=0) if held is not None else 0
    return 2 * k if any(_rank(record) > best for _, _, record in chosen) else k


def trusted_first(chosen: Sequence[tuple[float, Any, Any]]) -> list[tuple[float, Any, Any]]:
    """`chosen` (z, hit, record), best first, with each less trusted copy of a more trusted
    hit dropped and its z given to that hit; re-sorted by z."""
    ranks = [_rank(record) for _, _, record in chosen]
    if len(set(ranks)) < 2:
        return list(chosen)
    words = [set(tokenize(record.description or "")) for _, _, record in chosen]
    z_of = [z for z, _, _ in chosen]
    dropped: set[int] = set()
    for i in sorted(range(len(chosen)), key=lambda j: ranks[j]):  # the most trusted first
        if i in dropped:
            continue
        for j in range(len(chosen)):
            if j != i and j not in dropped and ranks[j] > ranks[i] and _copies(words[i], words[j]):
                dropped.add(j)
                z_of[i] = max(z_of[i], z_of[j])
    kept = [(z_of[i], hit, record) for i, (_, hit, record) in enumerate(chosen) if i not in dropped]
    return sorted(kept, key=lambda entry: entry[0], reverse=True)
