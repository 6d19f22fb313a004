"""Keyword-only answers as the MCP face reports them.

Until every item has its vector (a first index still embedding behind keyword search), or while
no embedding model can be loaded at all (offline, no `SKILLBANK_MODEL_DIR`: keyword-only mode,
which the index announces once on stderr and retries every 30 s), searches answer from keywords
alone. The bank marks such results (`Hits.dense_complete`); the face passes that on in every
search result (`search_mode: "keyword"` and a sentence in the hint), so a model knows why a match
may be literal. Results say `"hybrid"` again as soon as dense search is back.
"""

from __future__ import annotations

from typing import Any

KEYWORD_NOTE = ("Keyword search only for now: the embedding model is unavailable or still "
                "indexing, so matches rely on shared words (set SKILLBANK_MODEL_DIR to a folder "
                "with the model, or allow its download, for meaning-based search).")


def mode_of(hits: Any) -> str:
    """'keyword' when these results came (partly) from keyword search alone, else 'hybrid':
    every search (skills, guidelines, experience recall) returns a `Hits` that says so. Recall
    and guideline search returned a plain list when the index answered, and this took the
    skill index's state for them (session 32)."""
    return "hybrid" if hits.dense_complete else "keyword"


def skills_mode(bank: Any) -> str:
    """The mode of the skill index as a whole (for answers that are not one search)."""
    complete = getattr(bank.skills, "dense_complete", True)
    if callable(complete):
        complete = complete()
    return "hybrid" if complete else "keyword"


def keyword_reason(bank: Any) -> str:
    """Why `bank` answers by keyword alone ('' when it does not, or cannot say: a snapshot
    answering before the bank is open)."""
    reason = getattr(bank, "keyword_reason", None)
    return str(reason() or "") if callable(reason) else ""


def note_mode(hint: str, mode: str, reason: str = "") -> str:
    """`hint` plus why matches may be literal: the bank's reason when it gives one (a Chroma
    server down was reported as a missing model, session 24), else the model sentence."""
    if mode != "keyword":
        return hint
    note = f"Keyword search only for now: {reason}." if reason else KEYWORD_NOTE
    return f"{hint} {note}".strip()
