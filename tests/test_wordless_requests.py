"""A request with no letters or digits, and an over-long one, answered alike by every search
(hunt-badinput #2 and #6, session 34).

#2: skill search answered "😀" or "!!!" empty with its reason, but experience recall served the
"ok" run for them (MiniLM's vector of wordless text lies near short records'), two bidi marks
recalled four runs, and `context_for` put them in the memory block; so did the LangChain
`ExperienceRetriever` and MCP `recall_experiences`.
#6: guideline search took requests of up to 80,000 characters with a bare refusal ("task is
99994 characters; at most 80000"), where skill search and recall refuse over 50,000.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError
from skillbank.query_limits import NO_WORDS

TASKS = ["Deploy", "Fix the bug", "Write tests", "ok", "Summarise",
         "Migrate the users table to the new schema"]
WORDLESS = ["😀" * 50, "\u202e\u200f", "!!!", "..."]


@pytest.fixture(scope="module")
def minilm():
    from skillbank.embeddings import MiniLMEmbedding

    return MiniLMEmbedding()


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_wordless_request_recalls_nothing_and_says_why(tmp_path, remote, minilm):
    """Before: recall("😀"*50) gave [('ok', 0.0042)] and context_for's block showed that run;
    two bidi marks recalled four runs. Now every memory answers empty with NO_WORDS."""
    with bank_for(tmp_path, remote, embedding=minilm) as bank:
        for task in TASKS:
            bank.experiences.record(task=task, outcome="success")
        bank.guidelines.learn("Always run the tests.")
        for request in WORDLESS:
            recalled = bank.experiences.recall(request)
            assert list(recalled) == [] and recalled.reason == NO_WORDS, request
            rules = bank.guidelines.search(request)
            assert list(rules) == [] and rules.reason == NO_WORDS, request
            skills = bank.skills.search(request)
            assert list(skills) == [] and skills.reason == NO_WORDS, request
            block = bank.context_for(request, budget_tokens=800)
            assert block.ids == [] and block.text == "" and block.reason == NO_WORDS, request
        # Words still recall, with no reason.
        found = bank.experiences.recall("Fix the bug")
        assert [h.record.task for h in found][:1] == ["Fix the bug"] and found.reason == ""


def test_the_langchain_experience_retriever_answers_a_wordless_request_empty(tmp_path, minilm):
    """Before: ExperienceRetriever gave 'Task: ok' for emoji and two documents for bidi marks."""
    pytest.importorskip("langchain_core")
    from skillbank import Skillbank
    from skillbank.adapters.langchain import ExperienceRetriever

    with Skillbank.open(tmp_path / "root", embedding_function=minilm) as bank:
        for task in TASKS:
            bank.experiences.record(task=task, outcome="success")
        retriever = ExperienceRetriever(bank)
        for request in WORDLESS:
            assert retriever.invoke(request) == [], request
        assert retriever.invoke("Fix the bug")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_every_search_refuses_over_one_limit_in_one_wording(tmp_path, remote):
    """Before: a 59,993-character request was answered by guideline search (its limit was
    80,000) and refused by the others; at 99,994 its refusal was bare ("at most 80000")."""
    request = "Run the tests before a release. " * 1_875  # 60,000 characters
    with bank_for(tmp_path, remote) as bank:
        bank.guidelines.learn("Always run the tests before a release.")
        searches = {"skill search": bank.skills.search,
                    "experience recall": bank.experiences.recall,
                    "guideline search": bank.guidelines.search}
        for searcher, search in searches.items():
            with pytest.raises(InvalidInputError) as refused:
                search(request)
            assert str(refused.value) == (
                f"task is 60,000 characters; {searcher} takes requests of at most 50,000 "
                "(describe the task and leave the document out)")
        assert bank.guidelines.search(request[:50_000]) is not None  # up to the limit: searched


async def test_mcp_recall_experiences_says_why_nothing_was_looked_for(tmp_path, minilm):
    """Before: recall_experiences {"task": "\\u202e\\u202e"} returned a run (score 0.0007) and
    memory_context a "## Past experiences" block; the note said nothing."""
    from mcp import Client

    from skillbank import Skillbank
    from skillbank.mcp_server import build_server
    from test_mcp_server import call

    with Skillbank.open(tmp_path / "root", embedding_function=minilm) as bank:
        for task in TASKS:
            bank.experiences.record(task=task, outcome="success")
        async with Client(build_server(bank, trusted=True)) as client:
            for request in WORDLESS:
                found = await call(client, "recall_experiences", {"task": request})
                assert found["experiences"] == [], found
                assert found["note"] == (f"No experience was looked for: {NO_WORDS}. "
                                         "Restate the task in words."), found
                context = await call(client, "memory_context", {"task": request})
                assert context["ids"] == [] and NO_WORDS in context["note"], context
            found = await call(client, "recall_experiences", {"task": "Fix the bug"})
            assert found["experiences"] and found["note"] == "", found


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_langchain_tools_say_why_nothing_was_looked_for(tmp_path, remote):
    """Session 34: the adapters' recall_experiences and search_guidelines answered a wordless
    request "No similar past experience." / "No guideline applies." as if searched."""
    pytest.importorskip("langchain_core")
    import json

    from skillbank.adapters.langchain import skillbank_tools

    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record(task="Fix the login bug", outcome="success")
        bank.guidelines.add("Always run the tests before a release.")
        tools = {t.name: t for t in skillbank_tools(bank, include="all")}
        for name in ("recall_experiences", "search_guidelines"):
            answer = tools[name].invoke({"task": "😀😀"})
            answer = json.loads(answer) if isinstance(answer, str) else answer
            what = "experience" if name == "recall_experiences" else "guideline"
            assert answer["note"] == (f"No {what} was looked for: {NO_WORDS}. "
                                      "Restate the task in words."), answer


async def test_mcp_search_guidelines_says_why_nothing_was_looked_for(tmp_path):
    """Session 34: MCP search_guidelines had no note at all."""
    from mcp import Client

    from skillbank import Skillbank
    from skillbank.mcp_server import build_server
    from test_mcp_server import call

    with Skillbank.open(tmp_path / "root") as bank:
        bank.guidelines.add("Always run the tests before a release.")
        async with Client(build_server(bank, trusted=True)) as client:
            found = await call(client, "search_guidelines", {"task": "!!!"})
            assert found["guidelines"] == [] and found["note"] == (
                f"No guideline was looked for: {NO_WORDS}. Restate the task in words."), found
            found = await call(client, "search_guidelines", {"task": "run tests before release"})
            assert found["guidelines"] and found["note"] == "", found


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_cli_json_searches_and_the_browser_say_why_nothing_was_looked_for(
        cli_root, remote):
    """Review 2 #6, session 34: `guidelines search "😀" --json` and `experiences search "😀"
    --json` printed [] and nothing on stderr (docs/api.md: the CLI prints the reason on stderr
    with --json, as `skills search` does); the browser's Experiences search said "No experiences
    match." as if recall had run; and the reason said "to route on" (skill routing's words) for
    guideline and experience searches too."""
    import contextlib
    import json

    from starlette.testclient import TestClient
    from typer.testing import CliRunner

    from owner_client import owner_process
    from skillbank import Skillbank
    from skillbank.cli import app
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import Guard, create_app

    assert NO_WORDS == "the request has no letters or digits to search for"
    cli_root.mkdir(parents=True, exist_ok=True)
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.experiences.record(task="Fix the login bug", outcome="success")
        bank.guidelines.add("Always run the tests before a release.")
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        for what, group in (("guideline", "guidelines"), ("experience", "experiences")):
            said = CliRunner().invoke(app, ["--no-bundled", "--json", group, "search", "😀"],
                                    env={"COLUMNS": "40"})  # one line, not wrapped (review 3)
            assert said.exit_code == 0 and json.loads(said.stdout) == [], said.output
            assert said.stderr.strip() == (f"No {what} was looked for: {NO_WORDS}. "
                                           "Restate the task in words."), said.stderr
    with bank_for(cli_root.parent, remote) as bank:
        browser = TestClient(create_app(bank, Guard()), base_url="http://127.0.0.1:8766")
        page = browser.get("/experiences", params={"q": "😀"})
        assert page.status_code == 200
        assert f"No experience was looked for: {NO_WORDS}" in page.text, page.text
        assert "No experiences match." not in page.text
        found = browser.get("/experiences", params={"q": "login bug"})
        assert "Fix the login bug" in found.text
