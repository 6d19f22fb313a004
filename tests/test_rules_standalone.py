"""Rules that stand alone: a split keeps the subject; "when" names the kind of task."""

from __future__ import annotations

import pytest

from skillbank.distill import RuleDistiller


@pytest.fixture
def rd():
    return RuleDistiller()


@pytest.mark.parametrize("critique, words", [
    ("Never put SQL in f-strings; use bound parameters.", ("SQL", "bound parameters")),
    ("Never load the file in one go; always stream it in chunks.", ("file", "chunks")),
    ("Do not use tables in slides; use bar charts instead.", ("tables", "bar charts")),
])
def test_an_alternative_keeps_the_subject_it_replaces(rd, critique, words):
    rules = [r.text for r in rd.rules_from_critique(critique) if r.actionable]
    assert len(rules) == 1, rules
    assert all(w in rules[0] for w in words), rules


def test_two_instructions_that_stand_alone_stay_apart(rd):
    rules = [r.text for r in rd.rules_from_critique(
        "Don't catch bare exceptions; log the error with its traceback.")]
    assert rules == ["Do not catch bare exceptions.", "Log the error with its traceback."]


def test_when_to_use_names_the_kind_of_task_not_the_task(rd):
    (rule,) = rd.rules_from_critique(
        "Cite the source for every figure.",
        task="Summarise this news article about the new climate bill")
    assert rule.when_to_use.startswith("When summarising a news article (")
    assert "climate" not in rule.when_to_use
    (rule,) = rd.rules_from_critique("Stream large files.", task="Import the 2 GB CSV")
    assert rule.when_to_use.startswith("When importing a CSV")


def test_topic_and_when_come_from_the_rule_and_read_as_english(rd):
    """The demo showed "When drafting a release notes (doing any task)" and "When writing a
    API guide"; a rule about markdown tables learnt on a Python task was filed by the task's
    words, not its own."""
    (rule,) = rd.rules_from_critique("Lead with breaking changes before new features.",
                                     task="Draft the release notes for version 1.4")
    assert rule.when_to_use.startswith("When drafting release notes")
    assert "doing any task" not in rule.when_to_use
    (rule,) = rd.rules_from_critique("Use American spelling in the docs.",
                                     task="Write the API guide for the payments endpoint")
    assert rule.when_to_use.startswith("When writing an API guide (")
    (rule,) = rd.rules_from_critique(
        "Use markdown tables for comparisons.",
        task="Write a Python script that compares two exports")
    assert rule.topic == "writing", rule
    assert "Python" not in rule.when_to_use.split(";")[0].split("(")[1]


def test_a_comparison_only_compares_runs_of_the_same_task_and_says_so(rd):
    from skillbank.records import Experience, Step

    failed = Experience(task="Import the refunds CSV.", outcome="failure",
                        feedback="Wrong delimiter.", steps=[Step(action="load_csv")])
    other = Experience(task="Import the orders CSV.", outcome="success",
                       steps=[Step(action="inspect_header"), Step(action="load_csv")])
    kinds = [l.kind for l in rd.lessons_from_experience(failed, similar=[other])]
    assert "comparison" not in kinds  # no refunds import ever succeeded
    again = Experience(task="Import the refunds CSV again.", outcome="success",
                       steps=[Step(action="inspect_header"), Step(action="load_csv")])
    lessons = rd.lessons_from_experience(failed, similar=[again])
    (comparison,) = [l.text for l in lessons if l.kind == "comparison"]
    assert "inspect_header" in comparison and "refunds CSV" in comparison


def test_a_task_inside_a_longer_one_is_another_task(rd):
    """"X on the staging server" failed for want of write access there: compared with a success
    of plain "X", its lesson said the encoding fix made the staging import work."""
    from skillbank.records import Experience, Step

    staging = Experience(task="Import the orders CSV into Postgres on the staging server",
                         outcome="failure", feedback="No write access on staging.",
                         steps=[Step(action="ssh staging"), Step(action="psql copy")])
    plain = Experience(task="Import the orders CSV into Postgres", outcome="success",
                       steps=[Step(action="iconv"), Step(action="psql copy")])
    assert "comparison" not in [l.kind for l in
                                rd.lessons_from_experience(staging, similar=[plain])]
    worded = Experience(task="Import the orders CSV file into Postgres on the staging server",
                        outcome="success", steps=[Step(action="sudo -u postgres psql copy")])
    (text,) = [l.text for l in rd.lessons_from_experience(staging, similar=[worded])
               if l.kind == "comparison"]
    assert "a success of “Import the orders CSV file" in text  # both wordings named
    assert "a failure of “Import the orders CSV into Postgres on the staging" in text


def test_a_run_recorded_without_steps_is_no_step_contrast(rd):
    """`record(task, outcome="success")` says nothing of what the run did: "the successful
    attempt skipped kubectl apply" would make an agent skip the deployment."""
    from skillbank.records import Experience, Step

    failed = Experience(task="Deploy the web app", outcome="failure", feedback="Wrong image tag",
                        steps=[Step(action="kubectl apply", observation="ImagePullBackOff")])
    bare = Experience(task="Deploy the web app", outcome="success")
    for lesson in rd.lessons_from_experience(failed, similar=[bare]):
        assert "skipped" not in lesson.text and lesson.kind != "comparison", lesson
    assert rd.lessons_from_experience(bare, similar=[failed]) == []  # "this worked." teaches nothing


def test_a_model_comparison_needs_a_run_of_the_same_task_and_says_what_it_compared():
    import json

    from skillbank.distill import LLMDistiller
    from skillbank.records import Experience, Step

    reply = json.dumps([{"kind": "comparison", "text": "The successful run used iconv first."},
                        {"kind": "failure_trigger", "text": "Check the encoding first."}])
    prompts: list[str] = []
    model = LLMDistiller(lambda prompt: prompts.append(prompt) or reply)
    failed = Experience(task="Import the orders CSV", outcome="failure",
                        steps=[Step(action="psql copy")])
    alone = model.lessons_from_experience(failed, similar=[])
    assert [l.kind for l in alone] == ["failure_trigger"]  # a comparison of nothing: dropped
    again = Experience(task="Import the orders CSV", outcome="success",
                       steps=[Step(action="iconv"), Step(action="psql copy")])
    (comparison,) = [l.text for l in model.lessons_from_experience(failed, similar=[again])
                     if l.kind == "comparison"]
    assert comparison.endswith("(compared a success and a failure of “Import the orders CSV”).")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_distilling_compares_only_runs_of_the_same_task(tmp_path, remote):
    """The bank gives a distiller only runs of the same task as "similar attempts" (a model
    was given the refunds import as a similar attempt at the orders import)."""
    from owner_client import bank_for

    with bank_for(tmp_path, remote) as bank:
        bank.experiences.record(task="Import the refunds CSV into Postgres", outcome="success",
                                steps=[{"action": "psql copy refunds"}])
        plain = bank.experiences.record(task="Import the orders CSV into Postgres",
                                        outcome="success", steps=[{"action": "iconv"},
                                                                  {"action": "psql copy"}])
        failed = bank.experiences.record(
            task="Import the orders CSV into Postgres on the staging server",
            outcome="failure", feedback="No write access on staging.",
            steps=[{"action": "ssh staging"}, {"action": "psql copy"}])
        lessons = [bank.experiences.get(i) for i in bank.experiences.distill(failed)]
        assert lessons and all("compared" not in l.task for l in lessons), lessons
        assert plain


@pytest.mark.parametrize("a, b, same", [
    ("Run the migrations", "Run the database migrations", True),  # one word more (review)
    ("Import the orders CSV", "Import the orders CSV file", True),
    ("Import the CSV", "Import the CSV on the staging server", False),  # two words more
    ("Import the refunds CSV", "Import the orders CSV", False),
])
def test_same_task_allows_one_word_more_not_a_longer_task(a, b, same):
    from skillbank.distill.lessons import same_task

    assert same_task(a, b) is same and same_task(b, a) is same


@pytest.mark.parametrize("task, when", [
    # Cut at "between", "to <a name>", and never after a dangling numeral (learning-loop hunt
    # #12: "When drafting a mutual NDA between two", "When writing a cover letter to Nature").
    ("Draft a data-sharing agreement between three hospitals", "When drafting a data-sharing agreement"),
    ("Write a pitch email to Sequoia Capital about our seed round", "When writing a pitch email"),
    ("Explain how to reset passwords", "When explaining how to reset passwords"),
    # Six words at most, never ending on a word that opens a phrase ("... a leaked").
    ("Explain how to rotate a leaked key", "When explaining how to rotate"),
    ("Reply to the customer who asked for a refund", "When replying to a customer"),
])
def test_when_to_use_is_cut_at_the_end_of_the_kind(rd, task, when):
    (rule,) = rd.rules_from_critique("Cite the source for every figure.", task=task)
    assert rule.when_to_use.startswith((when + " (", when + ";")), rule.when_to_use


def test_a_lesson_names_the_kind_of_task():
    from skillbank.records import Experience

    exp = Experience(task="Plan the migration of our support wiki from Confluence to Notion",
                     outcome="failure", feedback="The old links broke.")
    (lesson,) = RuleDistiller().lessons_from_experience(exp)
    assert lesson.when_to_use == "When planning a migration"
    assert "Confluence" in lesson.text  # the lesson itself still tells the one task
