"""Skill search scores are calibrated to [0, 1] and "no skill fits" is an empty answer."""

from __future__ import annotations

import pytest

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

SKILLS = [
    ("pdf", "Read, merge, split, rotate and fill PDF files; extract text and tables from PDFs"),
    ("git-cleanup", "Safely delete stale local git branches and worktrees after squash merges"),
    ("docker-debug", "Debug Docker containers that crash, exit at start or cannot reach the network"),
    ("sql-tuning", "Speed up slow SQL queries with indexes, EXPLAIN plans and rewrites"),
    ("xlsx", "Create and edit Excel spreadsheets with formulas, charts and formatting"),
    ("release-notes", "Write release notes and a changelog from merged pull requests"),
]


@pytest.fixture(scope="module")
def real_bank(tmp_path_factory, minilm):
    folder = tmp_path_factory.mktemp("skills")
    for name, description in SKILLS:
        write_skill(folder, name, description)
    bank = Skillbank.open(tmp_path_factory.mktemp("root"), skill_roots=[folder],
                          embedding_function=minilm, include_bundled=False, sync=False)
    bank.skills.sync()
    yield bank
    bank.close()


@pytest.mark.parametrize("query", [
    "What is the capital of France?",
    "Bake a loaf of sourdough bread with a crispy crust",
    "Tell me a joke about penguins",
    "blorp fizzwick snarfle",
])
def test_out_of_scope_requests_get_no_skill(real_bank, query):
    assert real_bank.skills.search(query, k=5) == []


@pytest.mark.parametrize("query, expected", [
    ("merge these two PDFs into one file", "pdf"),
    ("my container exits immediately after docker run", "docker-debug"),
    ("this postgres query takes 30 seconds, make it faster", "sql-tuning"),
    ("I have dozens of old branches from merged PRs, clean them up", "git-cleanup"),
])
def test_in_scope_requests_are_answered_with_a_calibrated_score(real_bank, query, expected):
    hits = real_bank.skills.search(query, k=5)
    assert hits and hits[0].name == expected
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].score >= 0.5  # the abstention threshold: a returned best hit clears it


def test_scores_stay_in_range_for_any_query_and_library_size(tmp_path):
    folder = tmp_path / "skills"
    for name, description in SKILLS:
        write_skill(folder, name, description)
    for n in range(60):
        write_skill(folder, f"filler-{n:02d}", f"Filler skill {n} about pdf tables and git {n % 5}")
    bank = Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False)
    try:
        bank.skills.sync()
        for query in ("pdf", "merge pdf files", "git git git branches", "zzz", "x " * 300,
                      "docker container network exit crash debug start"):
            hits = bank.skills.search(query, k=10, min_score=0.0)
            assert all(0.0 <= h.score <= 1.0 for h in hits), [(h.name, h.score) for h in hits]
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        bank.skills.record_use("pdf", success=True)
        for _ in range(20):
            bank.skills.record_use("pdf", success=True)
        hits = bank.skills.search("merge pdf files", k=10, min_score=0.0)
        assert all(0.0 <= h.score <= 1.0 for h in hits)
    finally:
        bank.close()
