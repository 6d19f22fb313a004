"""What of a skill's body the dense side embeds (#26 item 3): its sections, as texts.

Ranking reads the body (a skill whose seventh section names the task should rank), disclosure
does not: these texts go to the index only. A body is split at its headings; up to
BODY_SECTIONS sections of at least SECTION_MIN_WORDS words are embedded, each as its heading and
the opening of its text. docs/benchmarks.md has the sweep and the index-time cost.
"""

from __future__ import annotations

import os
import re

_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$", re.MULTILINE)

#: The body side of dense ranking: up to this many sections of a body, each embedded as its
#: heading and the opening of its text (MiniLM reads ~256 word pieces; 500 characters is ~120).
BODY_SECTIONS = 8
SECTION_CHARS = 500
#: A section of fewer words ("Do it.", a lone command) adds nothing the summary and the keyword
#: side lack, and costs an embedding (12 % of the corpus's sections).
SECTION_MIN_WORDS = 10
#: What a skill's vectors are (metadata "texts"): an index written with other texts is embedded
#: again by the next sync, so a library indexed before the body side gains it.
DENSE_TEXTS = "summary+sections-8x500-min10"
#: What a skill's vectors are with the body side off (SKILLBANK_BODY_SECTIONS=0): the summary
#: alone, as before #26 item 3 (whose index carried no "texts").
SUMMARY_TEXTS = "summary"


def body_sections() -> bool:
    """The body side is off unless SKILLBANK_BODY_SECTIONS=1 (or true/yes/on). Off, a skill is
    embedded as its summary alone and ranks by summary and keyword. Opt-in since session 8: on
    the 1,739-skill corpus it cost top-1 0.704 -> 0.630 (below BM25's 0.639) and R@3 0.815 ->
    0.769, for +0.010 R@3 on the dev set, at ~9x the embedding (docs/benchmarks.md, routing).
    An index written with sections is kept as it is when the side is off."""
    return os.environ.get("SKILLBANK_BODY_SECTIONS", "0").strip().lower() in (
        "1", "true", "yes", "on")


def skill_sections(body: str) -> list[tuple[str, str]]:
    """Split a body at its headings: (heading, text) pairs, the preamble under ''."""
    sections: list[tuple[str, str]] = []
    last_title, last_start = "", 0
    for match in _HEADING.finditer(body):
        sections.append((last_title, body[last_start : match.start()].strip()))
        last_title, last_start = match.group(2).strip(), match.end()
    sections.append((last_title, body[last_start:].strip()))
    return [(t, s) for t, s in sections if t or s]


def section_texts(title: str, sections: list[tuple[str, str]]) -> list[str]:
    """The body's texts for the dense body side: the first BODY_SECTIONS sections of at least
    SECTION_MIN_WORDS words, each as "title — heading: opening" (a heading alone adds nothing
    the keyword side lacks)."""
    texts: list[str] = []
    for heading, text in sections:
        words = text.split()
        if len(words) < SECTION_MIN_WORDS:
            continue
        opening = " ".join(words)[:SECTION_CHARS]
        texts.append(f"{title} — {heading}: {opening}" if heading else f"{title}: {opening}")
        if len(texts) == BODY_SECTIONS:
            break
    return texts
