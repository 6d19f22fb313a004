"""skillbank's own BM25 (kept current after every write, which bm25s's immutable index cannot
be) scores exactly as bm25s, the library it replaced at query time, does over the same tokens."""

from __future__ import annotations

import numpy as np
import pytest

from skillbank.keyword import _Keyword, tokenize

bm25s = pytest.importorskip("bm25s")

TEXTS = [
    "Turn meeting notes into a short slide deck with one idea per slide",
    "Migrate the users table without losing writes: lock, copy rows, swap",
    "Fill a PDF form from a CSV file and check every required field",
    "Deploy the web app to staging, run the smoke tests, then promote",
    "Write release notes in British spelling from the merged pull requests",
    "Summarise a CSV file into a short report with totals per column",
    "Review a pull request for SQL built with f-strings; use bound parameters",
    "Rotate the API keys after every service has reloaded its configuration",
] * 3  # repeated words and documents, so idf and length normalisation matter


@pytest.mark.parametrize("query", ["short slide deck", "csv report totals", "sql f-strings",
                                   "rotate keys service", "deploy staging smoke tests"])
def test_scores_equal_bm25s_lucene_over_the_same_tokens(query):
    ids = [f"i{n}" for n in range(len(TEXTS))]
    ours = _Keyword(ids, TEXTS)
    scored = ours.scores(query, ours.stats())
    assert scored is not None
    mine = scored[0]

    reference = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    reference.index([tokenize(t) for t in TEXTS], show_progress=False)
    theirs = reference.get_scores(tokenize(query))
    assert np.allclose(mine, theirs, rtol=1e-5, atol=1e-6)
