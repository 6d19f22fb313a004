"""The learning loop's blocks: the rule the agent was taught is in the block for its next task.

Found by walking the critique stream (benchmarks/learning_loop.py) and asking, for every miss
with agent-written rules, why the taught rule was not in the block.
"""

from __future__ import annotations

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

REVIEW = ("Two problems. The reset steps are at the very bottom, after a long intro about why "
          "2FA matters, and that intro is one enormous paragraph. Lead with the steps; chunk "
          "whatever explanation you keep.")
RULES = [
    {"text": "Put the answer, decision or outcome in the first paragraph, before any "
             "background or history.",
     "when_to_use": "Any documentation page or guide where readers arrive with a question."},
    {"text": "Keep paragraphs short (about three or four sentences) and split dense blocks "
             "of text.",
     "when_to_use": "Prose-heavy documentation: concept pages, design docs, help articles."},
]


def test_rules_read_from_one_critique_stay_apart_when_passed_one_call_at_a_time(tmp_path,
                                                                                 minilm):
    """An agent may pass the rules it read from one review in separate calls. The shared
    critique made them look alike (context cosine 1.00) and the second was merged into the
    first, so "Keep paragraphs short" was never shown again under its own id."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        task = "Write a help-center FAQ entry on resetting two-factor authentication."
        first = bank.guidelines.learn(REVIEW, task=task, rules=[RULES[0]])
        second = bank.guidelines.learn(REVIEW, task=task, rules=[RULES[1]])
        assert first.entries[0].action == "added"
        assert second.entries[0].action == "added", second.entries[0].detail
        active = {g.text for g in bank.guidelines.list(status="active")}
        assert {r["text"] for r in RULES} <= active
        # The very same rule passed again from the same critique is still one rule.
        again = bank.guidelines.learn(REVIEW, task=task, rules=[RULES[1]])
        assert again.entries[0].action == "merged"
        assert again.entries[0].guideline_id == second.entries[0].guideline_id


def test_a_block_keeps_the_rules_of_the_task_topic_family(tmp_path):
    """A Python task's best hits are filed under "python"; its docstring rule was filed under
    the broader "code" by the keyword guess and was dropped from the block as off-topic."""
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        g = bank.guidelines
        python = [g.add(text, topic="python").guideline_id for text in (
            "Add type hints to every public Python function.",
            "Raise specific Python exceptions from public functions.")]
        code = g.add("Give public functions docstrings that describe their arguments.",
                     topic="code").guideline_id
        support = g.add("Answer customers' public questions about functions with the "
                        "arguments they used.",
                        topic="support").guideline_id
        task = "Write public Python functions with type hints and exceptions and arguments"
        assert {code, support} <= {h.id for h in g.search(task, k=8)}
        block = bank.context_for(task, budget_tokens=1600)
        assert set(python) <= set(block.ids)
        assert code in block.ids
        assert support not in block.ids


def test_a_block_shows_the_rules_of_its_topic_worded_far_from_the_task_and_abstains_else(
        tmp_path):
    """"Add type hints ..." is a rule of every Python task, but "Refactor the CSV export
    module" shares no word with it: under the evidence floors it was never shown. Rules of
    the best hits' topics now come with them; with no hit of its own merit nothing does."""
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        g = bank.guidelines
        anchor = g.add("Read CSV files in Python with the csv module, not split(',').",
                       topic="python").guideline_id
        far = g.add("Annotate every public signature with type hints.",
                    topic="python").guideline_id
        other = g.add("Greet the customer by name in every reply.",
                      topic="support").guideline_id
        task = "Refactor the Python CSV module"
        assert far not in {h.id for h in g.search(task, k=20)}  # no evidence of its own
        block = bank.context_for(task, budget_tokens=1600)
        assert anchor in block.ids and far in block.ids
        assert other not in block.ids
        nothing = bank.context_for("What is the capital of France?", budget_tokens=1600)
        assert nothing.guidelines == [] and "Guidelines" not in nothing.text
        # The candidates carry their evidence, and the plain search keeps its floors.
        weak = {h.id: h for h in g.search_candidates(task, k=20)}
        assert far in weak and (weak[far].dense or 0) < 0.15


LESSON = "Strip the byte-order mark before reading the CSV header."


def test_one_fact_is_shown_once(tmp_path, minilm):
    """One BOM lesson appeared three times in a block: in the adopted skill's pitfalls and as
    two memory items (two runs that learnt it)."""
    from conftest import write_skill

    skills = tmp_path / "skills"
    write_skill(skills, "import-csv-files", "Import a CSV file into the database.",
                body=f"# Steps\n\n1. Detect the encoding.\n2. Load in batches.\n\n# Pitfalls\n\n"
                     f"- {LESSON}\n")
    with Skillbank.open(tmp_path / "root", skill_roots=[skills], embedding_function=minilm,
                        include_bundled=False) as bank:
        for table in ("refunds", "orders"):
            bank.experiences.record(f"Import the {table} CSV file into the database",
                                    outcome="failure", lessons=[LESSON],
                                    feedback="The first column name came out garbled.")
        block = bank.context_for("Import the customers CSV file into the database",
                                 budget_tokens=1600)
        assert "## Skill instructions" in block.text  # the adopted skill, in full
        assert block.text.count("byte-order mark before reading") == 1, block.text
        assert block.experiences  # the runs are still shown, by what they did


def test_skills_that_may_apply_each_fit_the_task(tmp_path, minilm):
    """The bundled skills' runners-up were listed as "may apply" whatever their fit:
    "write-a-skill" and "record-experience" for "Fix the failing login test"."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=True) as bank:
        from skillbank.memories.skills.fit import ABSTAIN_BELOW

        task = "Fix the failing login test"
        hits = bank.skills.search(task, k=3)
        assert hits[0].score >= ABSTAIN_BELOW
        weak = [h.name for h in hits[1:] if (h.dense or 0) < 0.1]
        assert weak  # search lists runners-up that share a word and little meaning
        block = bank.context_for(task, budget_tokens=1600)
        assert block.skills and hits[0].name in block.text
        assert not [name for name in weak if name in block.text]
        assert bank.context_for("Deploy the web app", budget_tokens=1600).skills == []


FAMILY_RULES = [
    ("Reply to the customer about the payment refund in the same ticket.", "support"),
    ("Add type hints to the payment module's public functions.", "python"),
    ("Raise specific exceptions from the payment module.", "python"),
    ("Log every failed call in the payment module with its request id.", "code"),
    ("Keep each function of a module under fifty lines.", "code"),
]
FAMILY_TASK = "Refactor the payment module that answers customer refund tickets"


def _family_block(bank) -> None:
    topic = {bank.guidelines.add(text, topic=t).guideline_id: t for text, t in FAMILY_RULES}
    hits = bank.guidelines.search_candidates(FAMILY_TASK, k=20)
    assert topic[hits[0].id] == "support"  # the best hit alone is of another domain
    block = bank.context_for(FAMILY_TASK, budget_tokens=1600)
    assert sorted(topic[i] for i in block.ids) == ["code", "code", "python", "python"], block.text
    nothing = bank.context_for("What is the capital of France?", budget_tokens=1600)
    assert nothing.guidelines == [] and "Guidelines" not in nothing.text


def test_a_block_keeps_to_the_family_its_best_candidates_vote_for(tmp_path):
    """The two best hits chose the block's topic families, so a code task whose best hit was
    a support rule sharing its words ("payment", "refund", "customer") got both families: the
    support rules rode along. The family is now the one most of the best candidates are of
    (weighted by score), and all of its rules come, best first."""
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _family_block(bank)


def test_a_block_keeps_to_one_family_through_a_client_of_an_owner_process(tmp_path):
    from owner_client import client_of_owner

    with client_of_owner(tmp_path / "root") as bank:
        _family_block(bank)


def test_an_experience_lesson_beyond_the_shown_three_is_not_taken_as_said(tmp_path):
    """An experience's line lists three lessons, but all of its lessons were marked as said:
    the fourth, recalled as a lesson record of its own, was dropped from the block, and
    appeared nowhere."""
    lessons = ["Check the row count after the load.", "Keep the raw file for a week.",
               "Name the staging table after the date.",
               "Quote the refunds CSV column names when importing them into the database."]
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.experiences.record("Import the refunds CSV file into the database",
                                outcome="failure", lessons=lessons)
        task = "Quote the refunds CSV column names when importing them into the database"
        kinds = [h.record.kind for h in bank.experiences.recall(task, k=3)]
        assert "experience" in kinds and "lesson" in kinds
        block = bank.context_for(task, budget_tokens=1600, k_experiences=5)
        assert block.text.count(lessons[0]) == 1, block.text
        assert block.text.count(lessons[3]) == 1, block.text


def test_a_lesson_is_said_by_a_skill_only_in_whole_words(tmp_path, minilm):
    """`known` took a lesson as already in the adopted skill's instructions when its words
    were a substring of them: "Log the error." inside "Catalog the errors by type"."""
    from conftest import write_skill

    skills = tmp_path / "skills"
    write_skill(skills, "import-csv-files", "Import a CSV file into the database.",
                body="# Steps\n\n1. Detect the encoding.\n2. Catalog the errors by type.\n")
    lesson = "Log the error."
    with Skillbank.open(tmp_path / "root", skill_roots=[skills], embedding_function=minilm,
                        include_bundled=False) as bank:
        bank.experiences.record("Import the refunds CSV file into the database",
                                outcome="failure", lessons=[lesson])
        block = bank.context_for("Import the customers CSV file into the database",
                                 budget_tokens=1600)
        assert "## Skill instructions" in block.text
        assert block.experiences
        assert lesson in block.text, block.text


TOPIC_REVIEW = "The refund reply was fine, but sign it with the team's name, not yours."


def _stated_topic_block(bank) -> None:
    """The family vote went to another domain on ~20% of the critique stream's tasks (the
    code rules here out-vote the support rule for a task that shares words with both), and
    the block then showed only that domain's rules. An agent that names the task's topic, as
    it named its rules' topics in ``learn(rules=...)``, gets that topic's rules."""
    import pytest

    from skillbank.errors import InvalidInputError

    topic = {bank.guidelines.add(text, topic=t).guideline_id: t for text, t in FAMILY_RULES}
    report = bank.guidelines.learn(TOPIC_REVIEW, task=FAMILY_TASK, rules=[
        {"text": "Sign support replies with the team's name.",
         "when_to_use": "Any reply to a customer", "topic": "Customer Support"}])
    signed = report.entries[0].guideline_id
    voted = bank.context_for(FAMILY_TASK, budget_tokens=1600)
    assert {topic.get(i) for i in voted.ids} == {"code", "python"}, voted.text
    stated = bank.context_for(FAMILY_TASK, budget_tokens=1600, topic="customer support")
    assert stated.ids == [signed], stated.text
    assert bank.context_for(FAMILY_TASK, budget_tokens=1600, topic="support").ids == [
        i for i, t in topic.items() if t == "support"]
    # A topic with no rule: no guideline section (a filter, as guidelines.search's topic).
    assert bank.context_for(FAMILY_TASK, budget_tokens=1600, topic="slides").guidelines == []
    # Nothing fits the task: still no section, whatever the topic.
    nothing = bank.context_for("What is the capital of France?", budget_tokens=1600,
                               topic="support")
    assert nothing.guidelines == [] and "Guidelines" not in nothing.text
    for bad in ("", "   ", 5, "x" * 101):
        with pytest.raises(InvalidInputError, match="topic"):
            bank.context_for(FAMILY_TASK, budget_tokens=1600, topic=bad)


def test_a_block_keeps_to_the_topic_the_caller_states(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _stated_topic_block(bank)


def test_a_stated_topic_through_a_client_of_an_owner_process(tmp_path):
    from owner_client import client_of_owner

    with client_of_owner(tmp_path / "root") as bank:
        _stated_topic_block(bank)


def _brief_when_block(bank) -> None:
    """A distilled rule's "when" in the block is the kind of task alone: the topic description
    and the key words the distiller appends for search stay in the stored text (and its
    search) but no longer take half of the rule's line in the block."""
    report = bank.guidelines.learn("Never put SQL in f-strings; use bound parameters.",
                                   task="Write a migration script for the orders table")
    gid = report.entries[0].guideline_id
    stored = bank.guidelines.get(gid).when_to_use
    assert "; about " in stored and "(writing or reviewing SQL queries)" in stored, stored
    block = bank.context_for("Write a migration script for the invoices table").text
    line = next(l for l in block.splitlines() if f"[{gid}]" in l)
    assert "(when: When " in line, line
    assert "; about" not in line and "writing or reviewing SQL queries" not in line, line
    assert gid in {h.id for h in bank.guidelines.search("bound parameters in SQL", k=3)}


def test_a_block_shows_the_kind_of_task_as_a_rules_when(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _brief_when_block(bank)


def test_a_rules_brief_when_through_a_client_of_an_owner_process(tmp_path):
    from owner_client import client_of_owner, owner_process

    root = tmp_path / "root"
    with owner_process(root), client_of_owner(root) as bank:
        _brief_when_block(bank)


def test_brief_when_leaves_text_a_person_wrote():
    from skillbank.distill.topics import brief_when

    assert brief_when("When writing a migration (writing or reviewing SQL queries); about "
                      "sql, f-strings, bound, parameters") == "When writing a migration"
    assert brief_when("When designing slides or presentation decks") == \
        "When designing slides or presentation decks"
    assert brief_when("Any prose page (not code); about the reader") == \
        "Any prose page (not code)"
    assert brief_when("Prose-heavy documentation: concept pages, design docs") == \
        "Prose-heavy documentation: concept pages, design docs"
