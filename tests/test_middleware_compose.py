"""Several SkillbankMiddleware instances (a team memory and a personal one) compose into one
prompt without showing the same item twice."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from scripted import Scripted  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.context import without_shown  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402


def test_two_middlewares_show_each_item_once(tmp_path):
    with Skillbank.open(tmp_path / "bank", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.skills.create("sales-report", description="Write the quarterly sales report from "
                           "a CSV export", body="# Steps\n\n1. Load the CSV.\n")
        gid = bank.guidelines.add("Round sales report figures to whole dollars.").guideline_id
        model = Scripted(messages=iter([AIMessage(content="ok")]))
        agent = create_agent(model, [], middleware=[
            SkillbankMiddleware(bank, record=False, name="team"),
            SkillbankMiddleware(bank, record=False, name="personal")])
        agent.invoke({"messages": [{"role": "user",
                                    "content": "Write the quarterly sales report from the CSV"}]})
        system = model.seen[0][0].content
        assert system.count("[skill:sales-report]") == 1
        assert system.count(f"[{gid}]") == 1


def test_a_block_with_nothing_new_is_left_out():
    block = ("<skillbank-memory>\nintro\n\n## Guidelines learned from feedback\n- [gl-1] A.\n"
             "</skillbank-memory>")
    assert without_shown(block, "System.\n\n" + block) == ""
    other = block.replace("gl-1] A.", "gl-1] A.\n- [gl-2] B.")
    assert without_shown(other, block).count("[gl-") == 1
    assert without_shown(block, "no memory yet") == block


def test_a_skills_instructions_already_shown_go_whole():
    """Before, a blank line (or a heading) in the body ended the skip, and the body's later
    lines reached the prompt under a bare "## Skill instructions"."""
    from skillbank.context import CLOSE, OPEN, PREAMBLE

    body = "### table-migration\n# Steps\n\n1. Lock the table.\n\n## Rollback\n\n### Notes\nKeep a backup."
    block = "\n".join([OPEN, PREAMBLE, "", "## Skill instructions", body, "", "## Past experiences",
                       "- [exp-1] (success) Task: Migrate users", CLOSE])
    personal = "\n".join([OPEN, PREAMBLE, "", "## Guidelines learned from feedback",
                          "- [gl-9] Write migrations in British English.", "",
                          "## Skill instructions", body, "", "## Past experiences",
                          "- [exp-1] (success) Task: Migrate users", CLOSE])
    left = without_shown(personal, "System.\n\n" + block)
    assert left == "\n".join([OPEN, PREAMBLE, "", "## Guidelines learned from feedback",
                              "- [gl-9] Write migrations in British English.", CLOSE])
    assert without_shown(block, block) == ""
    other = block.replace("### table-migration", "### orders-migration")
    assert without_shown(other, block) == "\n".join([OPEN, PREAMBLE, "", "## Skill instructions",
                                                     body.replace("table-migration",
                                                                  "orders-migration"), CLOSE])


def test_two_middlewares_show_a_skills_instructions_once(tmp_path):
    with Skillbank.open(tmp_path / "bank", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.skills.save("table-migration", "Migrate a database table safely with alembic.",
                         "# Steps\n\n1. Lock the table.\n2. Run alembic.\n\n## Rollback\n\n"
                         "Restore the backup.\n")
        bank.guidelines.add("Write migrations in British English.", namespace="alice")
        model = Scripted(messages=iter([AIMessage(content="ok")]))
        agent = create_agent(model, [], middleware=[
            SkillbankMiddleware(bank, namespace="team", record=False),
            SkillbankMiddleware(bank, namespace="alice", record=False)])
        agent.invoke({"messages": [{"role": "user", "content":
                                    "Migrate the database table safely with alembic"}]})
        system = model.seen[0][0].content
        assert system.count("### table-migration") == 1, system
        assert system.count("Lock the table.") == 1 and system.count("Restore the backup.") == 1
        assert system.count("## Skill instructions") == 1, system
        assert "British English" in system


def test_a_body_line_reading_like_an_earlier_title_stays_in_the_body():
    """Review: a skill body holding "## Skills that may apply" started a new section there,
    and the body's later lines were dropped from the second block."""
    from skillbank.context import CLOSE, OPEN, PREAMBLE

    body = "### onboarding\n# Steps\n\n## Skills that may apply\n\nList the tools first."
    block = "\n".join([OPEN, PREAMBLE, "", "## Skill instructions", body, CLOSE])
    assert without_shown(block, "\n".join([OPEN, PREAMBLE, CLOSE])) == block


def test_two_instances_offering_tools_is_a_clear_error(tmp_path):
    """Both instances with tools=True gave the agent two `find_skills` (and so on); the model
    saw each name twice and the agent ran whichever came last, in its namespace, silently."""
    from skillbank.errors import InvalidInputError

    with Skillbank.open(tmp_path / "bank", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        model = Scripted(messages=iter([AIMessage(content="ok")]))
        agent = create_agent(model, [], middleware=[
            SkillbankMiddleware(bank, record=False, name="team", tools=True),
            SkillbankMiddleware(bank, record=False, name="personal", tools=True)])
        with pytest.raises(InvalidInputError, match="another tool named .*find_skills"):
            agent.invoke({"messages": [{"role": "user", "content": "Deploy the web app"}]})
        assert model.seen == []  # refused before the model was asked anything
        # One instance with tools and one without is the documented way.
        model = Scripted(messages=iter([AIMessage(content="ok")]))
        agent = create_agent(model, [], middleware=[
            SkillbankMiddleware(bank, record=False, name="team"),
            SkillbankMiddleware(bank, record=False, name="personal", tools=True)])
        agent.invoke({"messages": [{"role": "user", "content": "Deploy the web app"}]})
        assert len(model.seen) == 1
