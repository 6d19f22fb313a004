"""Routing on libraries it was never tuned on (#26): fusion weights from the library and the
request, the shared-word evidence, requests the model cannot read, the tool gate, bad input.

The MetaTool test runs the committed public set (benchmarks/data/public/metatool, MIT): a
catalog of 199 one-line tool descriptions and conversational requests.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from conftest import write_skill
from skillbank import Skillbank
from skillbank.errors import InvalidInputError
from skillbank.keyword import tokenize
from skillbank.memories.skills import dependencies, search as routing

PUBLIC = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "public"


def _bank(tmp_path, minilm, skills):
    folder = tmp_path / "skills"
    for skill in skills:
        write_skill(folder, *skill)
    bank = Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=minilm,
                          include_bundled=False, sync=False)
    bank.skills.sync()
    return bank


def test_weights_follow_the_library_and_the_request():
    # a one-line catalog gives the keyword side less say than a library of bodies
    assert routing.keyword_weight(35) < 0.7 < routing.keyword_weight(300) == 1.0
    assert routing.keyword_weight(0) == routing.MIN_WEIGHT
    # the English model's say is the share of the request it can read
    assert routing.weights("merge two PDFs", 300) == (1.0, 1.0)
    dense, keyword = routing.weights("把这个矩阵画成热图", 300)
    assert dense == routing.MIN_WEIGHT and keyword == 1.0
    assert routing.readable_share("🙂🙂") == 1.0


def test_cjk_text_is_indexed_as_character_bigrams():
    assert tokenize("画成热图 ANI") == ["ani", "画成", "成热", "热图"]
    assert tokenize("deploying apps") == ["deploy", "app"]


def test_metatool_catalog_keeps_the_guard_and_beats_dense_alone(tmp_path, minilm):
    """Fails before #26: 8.3 % of answerable requests emptied, top-1 0.602 < dense 0.637."""
    import numpy as np

    folder = tmp_path / "skills"
    library = [json.loads(x) for x in (PUBLIC / "metatool" / "library.jsonl").open()]
    for row in library:
        write_skill(folder, row["name"], json.dumps(row["description"]), body=f"# {row['name']}\n")
    queries = [json.loads(x) for x in (PUBLIC / "metatool" / "queries.jsonl").open()]
    answerable = [q for q in queries if q["expected"]]
    bank = Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=minilm,
                          include_bundled=False, sync=False)
    try:
        bank.skills.sync()
        emptied = top1 = 0
        for q in answerable:
            hits = bank.skills.search(q["query"], k=3)
            emptied += not hits
            top1 += bool(hits) and hits[0].name == q["expected"][0]
    finally:
        bank.close()
    vectors = minilm.embed([f"{r['name'].replace('-', ' ')}: {r['description']}" for r in library])
    names = [r["name"] for r in library]
    asked = minilm.embed([q["query"] for q in answerable])
    dense_top1 = sum(names[int(np.argmax(vectors @ v))] == q["expected"][0]
                     for v, q in zip(asked, answerable))
    assert emptied / len(answerable) <= 0.03
    assert top1 >= dense_top1


def test_a_request_in_chinese_finds_the_skill_that_shares_its_words(tmp_path, minilm):
    """Fails before #26: CJK text gave BM25 nothing and the fit rested on an English model."""
    bank = _bank(tmp_path, minilm, [
        ("paper-write", "Draft a paper. 帮我写论文、综述、报告，把这些内容写成稿子"),
        ("ani-heatmap", "Plot an ANI matrix as a publication heatmap"),
        ("docker-debug", "Debug Docker containers that crash at start"),
    ])
    try:
        hits = bank.skills.search("帮我把这些结果写成一篇论文", k=3)
        assert hits and hits[0].name == "paper-write"
        assert bank.skills.search("今天天气怎么样", k=3) == []  # shares nothing: no skill
    finally:
        bank.close()


def test_a_request_mixing_scripts_is_answered_on_the_words_the_model_cannot_read(tmp_path,
                                                                                   minilm):
    """Fails before: the English model reads only the Latin words, its nearest skill shares no
    word with the request, and the no-shared-word bar emptied the answer although BM25 over the
    Chinese bigrams names the skill (the trigger evals' only emptied requests)."""
    folder = PUBLIC / "agent-skills-jason" / "skills"
    bank = Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=minilm,
                          include_bundled=False, sync=False)
    try:
        bank.skills.sync()
        for request, skill in (("导成能进 EndNote 或 Zotero 的参考文献库", "research-to-paper-curate"),
                               ("我想投 Ecological Indicators，先确定方向和投稿要求",
                                "research-to-paper-scope")):
            assert 0.5 < routing.readable_share(request) < 1.0
            hits = bank.skills.search(request, k=3)
            assert hits and hits[0].name == skill, (request, [h.name for h in hits])
        # an accented word in an English request leaves the fit to the dense side
        assert routing.mixed_min_keyword("Book me a table at the café tonight") > 1.0
        assert routing.mixed_min_keyword("merge two PDFs") is None
        assert bank.skills.search("Who painted the Mona Lisa? Réponds vite", k=3) == []
    finally:
        bank.close()


def test_tool_gate_hides_skills_whose_tools_the_agent_lacks(tmp_path, minilm, caplog):
    bank = _bank(tmp_path, minilm, [
        ("git-cleanup", "Delete stale local git branches after squash merges",
         "# Steps\n\nRun git branch.\n", "allowed-tools: Bash(git:*) Read\n"),
        ("branch-notes", "Write notes about stale git branches for the team",
         "# Steps\n\nWrite.\n", ""),
        ("slack-branches", "Post the stale git branches list to Slack",
         "# Steps\n\nPost.\n", "requires: {mcp: [slack]}\n"),
        ("odd-branches", "Clean up stale git branches in odd ways",
         "# Steps\n\nReport.\n", "allowed-tools: 42\n"),
    ])
    task = "clean up my stale git branches"
    try:
        everything = [h.name for h in bank.skills.search(task, k=5)]
        assert {"git-cleanup", "slack-branches"} <= set(everything)
        with caplog.at_level(logging.WARNING, logger="skillbank.skills"):
            gated = bank.skills.search(task, k=5, available_tools=["Read", "write_file"])
        names = [h.name for h in gated]
        assert "git-cleanup" not in names and "slack-branches" not in names
        # Named only when its score reaches the floor (hunt-evalgate #2, session 37): here the
        # served best match fits and the gated ones score 0.14 and 0.09 behind it.
        assert gated.missing_tools == {}
        for request, named in (("delete stale local git branches after squash merges",
                                 {"git-cleanup": ["bash"]}),
                               ("post the stale git branches list to slack",
                                {"slack-branches": ["mcp:slack"]})):
            assert bank.skills.search(request, k=5, available_tools=["Read", "write_file"]
                                      ).missing_tools == named
        assert "odd-branches" in names  # malformed declaration: a warning, never hidden
        assert any("allowed-tools" in r.getMessage() for r in caplog.records)
        # scores are the ones earned: the gate does not promote what was behind
        ungated = {h.name: h.score for h in bank.skills.search(task, k=5)}
        assert all(h.score <= ungated[h.name] + 1e-9 for h in gated)
        ok = bank.skills.search(task, k=5, available_tools=["bash", "READ", "mcp__slack__post"])
        assert {"git-cleanup", "slack-branches"} <= {h.name for h in ok}
        assert ok.missing_tools == {}
        with pytest.raises(InvalidInputError, match="list of tool names"):
            bank.skills.search(task, available_tools="Bash")
        with pytest.raises(InvalidInputError, match="tool names"):
            bank.skills.search(task, available_tools=[1, 2])
    finally:
        bank.close()


@pytest.mark.parametrize("frontmatter, tools, servers", [
    # allowed-tools pre-approves: only a tool given with an argument pattern is needed
    # (the rest is `approved`, of which one is needed: test_tool_gate_patterns.py)
    ({"allowed-tools": "Bash(git:*) Read Write"}, {"bash"}, set()),
    ({"allowed-tools": ["Bash", "Grep"]}, set(), set()),
    ({"requires": {"mcp": ["rube"], "tools": "jq"}}, {"jq"}, {"rube"}),
    ({"compatibility": "Requires git and docker"}, set(), set()),  # free text: not parsed
    ({"compatibility": {"tools": ["docker"]}}, {"docker"}, set()),
    ({"allowed-tools": {"a": 1}}, set(), set()),
    # a string or list of names is its tools (hunt-routing #6, session 28: it was ignored)
    ({"requires": "slack"}, {"slack"}, set()),
    ({"requires": 42}, set(), set()),
    ("not a mapping", set(), set()),
])
def test_declared_tools_are_read_leniently(frontmatter, tools, servers):
    need = dependencies.declared(frontmatter)
    assert need.tools == tools and need.servers == servers


def test_bad_requests_get_an_empty_answer_with_a_reason_or_a_clear_error(tmp_path, minilm):
    bank = _bank(tmp_path, minilm, [("pdf", "Read, merge and split PDF files")])
    try:
        hits = bank.skills.search("🙂🎉🔥", k=3)
        assert hits == [] and "no letters or digits" in hits.reason
        with pytest.raises(InvalidInputError, match="at most 50,000"):
            bank.skills.search("merge pdf " * 10_240, k=3)  # 100 KB
        long = "merge these two PDFs into one file. " + "x" * 40_000  # long but allowed
        assert [h.name for h in bank.skills.search(long, k=3)] == ["pdf"]
    finally:
        bank.close()
