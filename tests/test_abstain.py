"""Skill search scores are calibrated to [0, 1] and "no skill fits" is an empty answer."""

from __future__ import annotations

import pytest

import numpy as np

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.skills import fit

SKILLS = [
    ("pdf", "Read, merge, split, rotate and fill PDF files; extract text and tables from PDFs"),
    ("git-cleanup", "Safely delete stale local git branches and worktrees after squash merges"),
    ("docker-debug", "Debug Docker containers that crash, exit at start or cannot reach the network"),
    ("sql-tuning", "Speed up slow SQL queries with indexes, EXPLAIN plans and rewrites"),
    ("xlsx", "Create and edit Excel spreadsheets with formulas, charts and formatting"),
    ("release-notes", "Write release notes and a changelog from merged pull requests"),
]


def _bank_of(tmp_path_factory, minilm, skills):
    """A synced bank on the real model whose library is `skills` ((name, description[, body]))."""
    folder = tmp_path_factory.mktemp("skills")
    for skill in skills:
        write_skill(folder, *skill)
    bank = Skillbank.open(tmp_path_factory.mktemp("root"), skill_roots=[folder],
                          embedding_function=minilm, include_bundled=False, sync=False)
    bank.skills.sync()
    return bank


@pytest.fixture(scope="module")
def real_bank(tmp_path_factory, minilm):
    bank = _bank_of(tmp_path_factory, minilm, SKILLS)
    yield bank
    bank.close()


@pytest.mark.parametrize("query", [
    "What is the capital of France?",
    "Bake a loaf of sourdough bread with a crispy crust",
    "Tell me a joke about penguins",
    "blorp fizzwick snarfle",
    # answered by the rule before (best cosine over chance alone): the best skill shares no
    # word with them, or a background prototype matches them better
    "What caused the fall of the Western Roman Empire?",
    "Repot an overgrown monstera plant.",
    "Prune an apple tree in late winter.",
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


# Users who do have a skill for what the background prototypes stand for ---------------------
OWN_SKILLS = [
    ("sourdough-baking", "Bake sourdough bread at home: feed the starter, mix, shape, proof and "
     "bake a loaf with a crispy crust", "# Feeding the starter\n\n# Shaping and proofing\n"),
    ("small-talk", "Friendly small talk with the user: reply to greetings, thanks and how-are-you "
     "questions warmly", "# Greetings\n\nSay hello back and ask how their day is going.\n"),
    ("trivia", "Answer general knowledge questions about history, geography, science and famous "
     "people", "# Answering\n\nGive the fact, then one line of context.\n"),
    ("joke-teller", "Tell jokes, riddles and puns on any topic the user asks for",
     "# Jokes\n\nKeep it short and kind.\n"),
    ("houseplant-care", "Care for houseplants: watering, light, repotting, pests and keeping herbs "
     "like basil alive indoors", "# Watering\n\n# Light\n"),
]


@pytest.fixture(scope="module")
def own_bank(tmp_path_factory, minilm):
    bank = _bank_of(tmp_path_factory, minilm, list(SKILLS) + list(OWN_SKILLS))
    yield bank
    bank.close()


@pytest.mark.parametrize("query, expected", [
    ("Bake a loaf of sourdough bread with a crispy crust", "sourdough-baking"),
    ("Hi there, how are you doing today?", "small-talk"),  # shares no word: covered, waived
    ("Who was Genghis Khan and how large did his empire become?", "trivia"),  # the same
    ("Tell me a joke about penguins", "joke-teller"),
    ("Keep basil alive indoors.", "houseplant-care"),
    ("merge these two PDFs into one file", "pdf"),
])
def test_a_user_who_has_such_a_skill_gets_it(own_bank, query, expected):
    hits = own_bank.skills.search(query, k=3)
    assert hits and hits[0].name == expected, [(h.name, h.score) for h in hits]
    assert 0.5 <= hits[0].score <= 1.0


# The decision itself -------------------------------------------------------------------------
def test_fit_probability_is_one_half_on_the_bar_and_stays_in_range():
    for n in (1, 6, 140, 1_750, 100_000):
        chance = fit.chance_level(n)
        assert fit.fit_probability(chance, n) == pytest.approx(0.5)
        for cosine in (-1.0, 0.0, chance - 0.01, chance + 0.01, 1.0, 5.0):
            assert 0.0 <= fit.fit_probability(cosine, n) <= 1.0
        assert fit.fit_probability(chance + 0.01, n) > 0.5 > fit.fit_probability(chance - 0.01, n)
    assert fit.chance_level(6) == fit.CHANCE_FLOOR == 0.2
    assert fit.chance_level(140) == pytest.approx(0.2, abs=0.005)
    assert fit.chance_level(1_750) > fit.chance_level(140)
    # no shared word: the bar is NO_SHARED_WORD_MARGIN higher
    bar = fit.chance_level(140) + fit.NO_SHARED_WORD_MARGIN
    assert fit.fit_probability(bar, 140, shares_word=False) == pytest.approx(0.5)
    assert fit.fit_probability(bar - 0.02, 140, shares_word=False) < 0.5
    assert fit.fit_probability(bar - 0.02, 140, shares_word=True) > 0.5
    # a background prototype binds only above the other bars, less its margin
    assert fit.fit_probability(0.40, 140, background=0.40) > 0.5
    assert fit.fit_probability(0.40, 140, background=0.45) < 0.5
    assert fit.fit_probability(0.40, 140, background=0.10) == fit.fit_probability(0.40, 140)


class _Axes:
    """A stand-in embedding: each known text is one axis, so cosines are exact."""

    def __init__(self, axes: dict[str, int]) -> None:
        self.axes = axes

    def __call__(self, texts):
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row, self.axes[text]] = 1.0
        return out


def test_background_competes_only_with_skills_that_do_not_cover_it():
    axes = {text: i for i, text in enumerate(fit.BACKGROUND)}
    axes.update({"trivia: general knowledge": 0, "pdf: merge PDF files": 6})
    background = fit.Background(_Axes(axes))
    similarities = np.array([0.5, 0.1, 0.0, 0.0, 0.0])  # the task reads as general knowledge
    # a PDF skill does not cover it: the prototype is the bar (0.5 - margin)
    shares, bar = background.evidence(similarities, "pdf#1", lambda: "pdf: merge PDF files",
                                      140, True)
    assert shares and bar == pytest.approx(0.5)
    assert fit.fit_probability(0.45, 140, shares_word=shares, background=bar) < 0.5
    # a trivia skill covers it: no prototype competes, and sharing no word is waived
    shares, bar = background.evidence(similarities, "trivia#1",
                                      lambda: "trivia: general knowledge", 140, False)
    assert shares and bar is None
    assert fit.fit_probability(0.30, 140, shares_word=shares, background=bar) > 0.5
    # coverage is measured lazily: a low prototype and a shared word never embed the skill
    shares, bar = background.evidence(np.zeros(5), "never", lambda: 1 / 0, 140, True)
    assert shares and bar is None


def test_other_embeddings_keep_the_plain_rule(tmp_path):
    """The hash test embedding (MCP server and CLI tests) gets no MiniLM-calibrated bars."""
    folder = tmp_path / "skills"
    for name, description in SKILLS:
        write_skill(folder, name, description)
    bank = Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False)
    try:
        bank.skills.sync()
        hits = bank.skills.search("merge pdf files", k=3)
        assert hits and hits[0].name == "pdf" and 0.5 <= hits[0].score <= 1.0
        assert bank.skills.search("zzz qqq", k=3) == []
        assert bank.skills._background is None  # no prototypes embedded with a hash function
    finally:
        bank.close()
