"""What a skill is found by: the texts embedded for it and the text its keyword side reads.

Apart from the library that walks roots and answers searches: this is the one place that says
which words of a SKILL.md are ranking evidence (first_run and routing_body_cost benchmark it
alone). Disclosure (catalog, hits, `load_skill`) shows the name and the whole description.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillbank.index import PARTIAL, IndexItem
from skillbank.memories.skills.exclusions import without_exclusions
from skillbank.memories.skills.sections import (
    DENSE_TEXTS, SUMMARY_TEXTS, body_sections, section_texts, skill_sections,
)
from skillbank.memories.skills.skill_file import SkillDocument
from skillbank.records import Finding

#: Only the opening of a body is keyword-indexed: long bodies otherwise drown their own name and
#: description in BM25's length normalisation (R@1 0.69 -> 0.82 for BM25 alone on the routing set).
KEYWORD_BODY_CHARS = 3_000


def _humanise(name: str) -> str:
    return name.replace("-", " ").replace("_", " ")


def summary_text(name: str, description: str) -> str:
    """The text a skill's summary vector is embedded from (and the fit's background reads):
    its name in words and its description less its exclusions."""
    return f"{_humanise(name)}: {without_exclusions(description)}"


def index_item_for(doc: SkillDocument, name: str, path: Path, root: Path, digest: str,
                   writable: bool, stat: str = "") -> IndexItem:
    """What a skill is found by (ranking only: disclosure shows name and description).

    Dense: first the name and description — what the author says the skill is for and when to
    use it; the fit ("does any skill fit?") and the dense side read this text alone. Then up to
    BODY_SECTIONS sections of the body, for the body side of ranking (`search.BODY_WEIGHT`): a
    skill whose body names the task ranks higher (#26; docs/benchmarks.md). Section texts stay
    in the index: no catalog, hit or search result carries them. Keyword: name and description
    repeated so they weigh as fields, then the headings and the opening of the body.
    """
    description = without_exclusions(doc.description)  # "Not for X" is no evidence for X
    title = _humanise(name)
    sections = skill_sections(doc.body)
    headings = [t for t, _ in sections if t]
    body = body_sections()
    texts = [summary_text(name, doc.description)] + (section_texts(title, sections) if body else [])
    keyword_text = "\n".join(
        [title, title, title, description, description, " ".join(headings),
         doc.body[:KEYWORD_BODY_CHARS]]
    )
    metadata = {
        "name": name,
        "description": doc.description.strip()[:1024],
        "path": str(path),
        "root": str(root),
        "hash": digest,
        "stat": stat or _stat_key(path),
        "writable": writable,
        "texts": DENSE_TEXTS if body else SUMMARY_TEXTS,
    }
    return IndexItem(id=name, embed_texts=texts, keyword_text=keyword_text, metadata=metadata)


def _stat_key(path: Path) -> str:
    from skillbank.memories.skills.freshness import stat_key

    return stat_key(path)


def kept_findings(meta: dict[str, Any] | None) -> list[Finding]:
    """The findings a skill's file had when it was indexed (none kept by older indexes)."""
    try:
        return [Finding.model_validate(f) for f in json.loads((meta or {}).get("findings") or "[]")]
    except (ValueError, TypeError):
        return []


def unservable(meta: dict[str, Any] | None) -> bool:
    """Whether a skill was indexed from a file no longer served: a description that is a YAML
    list or mapping loaded with a warning before (hunt-corpus #7, session 30), and an index made
    then kept serving it as "['one', 'two']" (an unchanged file is not read again). Its file is
    parsed again, and it is not kept as a last good version."""
    return any(f.code == "description-type" and f.message.endswith(("got list", "got dict"))
               for f in kept_findings(meta))


def _embedded_whole(meta: dict[str, Any] | None) -> bool:
    """The index holds every text this version embeds for the skill (see DENSE_TEXTS)."""
    if not meta:
        return False
    if not body_sections():  # the summary is all it needs, whatever else the index holds
        return True
    return meta.get("texts") == DENSE_TEXTS and not meta.get(PARTIAL)
