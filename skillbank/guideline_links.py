"""A rule's links to other rules as a person reads them: the browser's rule page and
`skillbank guidelines show` say them alike (hunt-ui, session 27).

`related` was shown by neither, so a proposal an approval folded into an active rule of the same
wording (retired, `related` to it) showed no trace of that rule (#1). A `superseded_by` naming a
rule that no longer exists (forgotten by an older version, which left the link) was printed as a
bare id by the CLI, and dropped by the page, which then said "replaced none and was not
replaced" beside a superseded badge (#6).
"""

from __future__ import annotations

from typing import Any


def related_rules(g: Any, rules: dict[str, Any]) -> list[Any]:
    """The rules of `rules` (id -> rule: those the caller reads) linked to `g` as related,
    either way (a rule lists its look-alikes in `related`; they do not list it back): its own
    links first, then the rules that name it. A link to a rule that no longer exists is left
    out."""
    own = [rules[i] for i in dict.fromkeys(g.related) if i in rules and i != g.id]
    seen = {r.id for r in own} | {g.id}
    back = sorted((r for r in rules.values() if g.id in r.related and r.id not in seen),
                  key=lambda r: r.id)
    return own + back


def replaced_by_gone(g: Any, rules: dict[str, Any]) -> str | None:
    """The id `g` is superseded by when no such rule exists any more (else None)."""
    gone = g.superseded_by
    return gone if gone and gone not in rules else None


GONE_NOTE = "no longer exists (forgotten); no rule serves in this one's place"


def override_links(g: Any, rules: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """(the shared rules `g` overrides, the active rules that override `g`), both among
    `rules` (those the caller reads): a reviewer reading a namespace saw both rules and could
    not tell that the shared one is not served to it (review 3 #6, session 38)."""
    own = [rules[i] for i in dict.fromkeys(g.overrides) if i in rules and i != g.id]
    by = sorted((r for r in rules.values() if g.id in r.overrides and r.status == "active"),
                key=lambda r: r.id)
    return own, by
