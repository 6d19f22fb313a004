"""The trust gate's filter step: what routing may show, after ranking has decided the order.

One small module with one call site in search (and in the catalog and listing), so ranking can
change freely around it. The records reaching here already carry their trust state
(`trust.TrustBook.annotate`, applied where the library builds a Skill record); a record that is
`held` is dropped, whatever its score.
"""

from __future__ import annotations

from typing import Any, Iterable


def visible(hits: Any) -> Any:
    """The hits whose skill is not held, in the same order, as the same container type."""
    kept = [hit for hit in hits if not getattr(getattr(hit, "record", hit), "held", False)]
    if len(kept) == len(hits):
        return hits
    out = type(hits)()
    out.extend(kept)
    for attribute in ("best_dense", "best_keyword", "dense_complete", "pending",
                      "missing_tools"):
        if hasattr(hits, attribute):
            setattr(out, attribute, getattr(hits, attribute))
    return out


def shown(skills: Iterable[Any]) -> list[Any]:
    """The skills (records) that are not held."""
    return [s for s in skills if not getattr(s, "held", False)]
