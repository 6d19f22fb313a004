"""Tests for skillbank.distill: the deterministic RuleDistiller and the LLMDistiller wrapper.

All critiques here are written for these tests (code review, writing, support, SQL, slides).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbank.distill import (
    CandidateRule,
    Distiller,
    LLMDistiller,
    RuleDistiller,
    extract_json,
    guess_topic,
    normalise_rule,
    split_sentences,
)
from skillbank.records import Experience, Lesson, Step


@pytest.fixture
def rd() -> RuleDistiller:
    return RuleDistiller()


def actionable(rules: list[CandidateRule]) -> list[str]:
    return [r.text for r in rules if r.actionable]


def ignored(rules: list[CandidateRule]) -> list[str]:
    return [r.text for r in rules if not r.actionable]


# ---------------------------------------------------------------------------------------------
# split_sentences
# ---------------------------------------------------------------------------------------------


def test_split_plain_sentences():
    assert split_sentences("Good start. Add tests! Why no docs? Fine.") == [
        "Good start.",
        "Add tests!",
        "Why no docs?",
        "Fine.",
    ]


def test_split_keeps_abbreviations_decimals_and_code():
    text = (
        "Use a clearer name, e.g. `user_count`, i.e. something descriptive. "
        "Conversion went from 3.5% to 4.1% vs. last week. Call `obj.save()` once. Done."
    )
    assert split_sentences(text) == [
        "Use a clearer name, e.g. `user_count`, i.e. something descriptive.",
        "Conversion went from 3.5% to 4.1% vs. last week.",
        "Call `obj.save()` once.",
        "Done.",
    ]


def test_split_bullets_and_numbered_lines():
    text = "Review notes:\n- use f-strings\n* avoid globals\n• keep functions short\n1. add tests\n2) pin versions"
    assert split_sentences(text) == [
        "Review notes:",
        "use f-strings",
        "avoid globals",
        "keep functions short",
        "add tests",
        "pin versions",
    ]


def test_split_wrapped_lines_join_and_ellipsis_is_not_a_stop():
    text = "Rewrite these as JOIN ... ON clauses and\nkeep the filters in WHERE.\n\nSecond paragraph here."
    assert split_sentences(text) == [
        "Rewrite these as JOIN ... ON clauses and keep the filters in WHERE.",
        "Second paragraph here.",
    ]


def test_split_empty():
    assert split_sentences("") == []
    assert split_sentences("   \n ") == []


def test_split_quote_ending_a_sentence():
    text = "The docstring just says 'Does stuff.' Describe the arguments."
    assert split_sentences(text) == ["The docstring just says 'Does stuff.'", "Describe the arguments."]


# ---------------------------------------------------------------------------------------------
# normalise_rule
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("You should have used parameterised queries", "Use parameterised queries."),
        ("you should always validate user input.", "Always validate user input."),
        ("You shouldn't hard-code the API key.", "Do not hard-code the API key."),
        ("use British spelling", "Use British spelling."),
        ("don't use bare except clauses!", "Do not use bare except clauses."),
        ("Never commit secrets to the repo.", "Never commit secrets to the repo."),
        ("Please add a docstring to every public function.", "Add a docstring to every public function."),
        ("It would be better to lead with the answer.", "Lead with the answer."),
        ("Consider caching the lookups.", "Consider caching the lookups."),
        ("I'd split this function into two.", "Split this function into two."),
        ("Instead of nested subqueries, use CTEs.", "Use CTEs instead of nested subqueries."),
        ("Explicit column names rather than SELECT *, please.", "Use explicit column names rather than SELECT *."),
        ("The summary table is missing.", "Include the summary table."),
        ("The chart has no axis labels.", "Add axis labels to the chart."),
        ("There's no error handling.", "Add error handling."),
        ("The intro is too long.", "Keep the intro concise."),
        ("Too many bullets on each slide.", "Use fewer bullets on each slide."),
        ("Variable names should be descriptive.", "Make variable names descriptive."),
        ("Temporary files should be deleted after use.", "Delete temporary files after use."),
        ("The connection is never closed.", "Always close the connection."),
        ("Can you add a legend to the chart?", "Add a legend to the chart."),
        ("Why not use a context manager?", "Use a context manager."),
        ("A short summary at the top would help.", "Use a short summary at the top."),
        ("We no longer sign emails with personal names.", "Do not sign emails with personal names."),
        ("Make sure every query has a LIMIT.", "Make sure every query has a LIMIT."),
        ("The reply needs an apology.", "Give the reply an apology."),
        ("Needs a docstring.", "Add a docstring."),
    ],
)
def test_normalise_rule_imperatives(sentence, expected):
    assert normalise_rule(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "Great job!",
        "Looks good to me.",
        "Nice work overall.",
        "7/10",
        "Score: 6",
        "8 out of 10.",
        "meh",
        "Not great.",
        "Hmm, not sure about this.",
        "Why is this so slow?",
        "Keep it up!",
        "Make it pop.",
        "Thanks, merged.",
        "Can you fix that row?",
        "The customer was happy with the answer.",
        "They should contact their bank.",
        "",
    ],
)
def test_normalise_rule_rejects_non_advice(sentence):
    assert normalise_rule(sentence) is None


# ---------------------------------------------------------------------------------------------
# rules_from_critique on varied critique styles
# ---------------------------------------------------------------------------------------------


def test_code_review_critique(rd):
    critique = (
        "Works, but a few things. You should have used parameterised queries; string formatting "
        "is an injection risk. The file handle is never closed. Also, public functions have no "
        "type hints."
    )
    rules = rd.rules_from_critique(critique, task="Write a Python function that looks up users by email.")
    texts = actionable(rules)
    assert "Use parameterised queries." in texts
    assert "Always close the file handle." in texts
    assert "Add type hints to public functions." in texts
    assert "Works, but a few things." in ignored(rules)
    assert {r.topic for r in rules if r.actionable} <= {"python", "sql", "code"}


def test_bulleted_code_review(rd):
    critique = "Nits:\n- avoid mutable default arguments\n- prefer pathlib over os.path\n- 2/10 for naming"
    texts = actionable(rd.rules_from_critique(critique))
    assert texts == ["Avoid mutable default arguments.", "Prefer pathlib over os.path."]


def test_writing_critique(rd):
    critique = (
        "The piece is well researched. The intro is way too long and the tone is too formal for a "
        "blog. Use British spelling throughout."
    )
    rules = rd.rules_from_critique(critique, task="Write a blog post announcing the new release.")
    texts = actionable(rules)
    assert "Use British spelling throughout." in texts
    assert any(t.startswith("Keep the intro concise") for t in texts)
    assert "The piece is well researched." in ignored(rules)
    assert all(r.topic == "writing" for r in rules if r.actionable)


def test_support_reply_critique(rd):
    critique = (
        "Polite, but the reply never acknowledges the delay. You need to apologise first and then "
        "explain the refund timeline. Sign off with your first name."
    )
    rules = rd.rules_from_critique(critique, task="Reply to a customer whose order arrived late.")
    texts = actionable(rules)
    assert "Always acknowledge the delay." in texts
    assert "Apologise first and then explain the refund timeline." in texts
    assert "Sign off with your first name." in texts
    assert {r.topic for r in rules if r.actionable} == {"support"}


def test_sql_critique(rd):
    critique = (
        "Results are right. Instead of SELECT *, list the columns explicitly. The join conditions "
        "should be in the ON clause, not in WHERE. Please use CTEs rather than nested subqueries."
    )
    rules = rd.rules_from_critique(critique, task="Write a SQL query for monthly revenue by region.")
    texts = actionable(rules)
    assert "List the columns explicitly instead of SELECT *." in texts
    assert "Keep the join conditions in the ON clause, not in WHERE." in texts
    assert "Use CTEs rather than nested subqueries." in texts
    assert all(r.topic == "sql" for r in rules if r.actionable)


def test_slides_critique(rd):
    critique = (
        "Slide 4 is cluttered. Too many bullets on each slide. The body font should be at least "
        "24pt. Use a colour-blind-safe palette and label the lines directly."
    )
    rules = rd.rules_from_critique(critique, task="Design a deck for the quarterly business review.")
    texts = actionable(rules)
    assert "Use fewer bullets on each slide." in texts
    assert "Make the body font at least 24pt." in texts
    assert "Use a colour-blind-safe palette." in texts
    assert "Label the lines directly." in texts  # a compound imperative becomes two rules
    assert all(r.topic == "slides" for r in rules if r.actionable)


def test_labels_and_politeness(rd):
    critique = "nit: please add a changelog entry. Blocking: don't log the access token."
    assert actionable(rd.rules_from_critique(critique)) == [
        "Add a changelog entry.",
        "Do not log the access token.",
    ]


def test_data_analysis_critique(rd):
    critique = "The comparison needs sample sizes. It would be better to report a confidence interval too."
    texts = actionable(rd.rules_from_critique(critique, task="Compare conversion rates across regions."))
    assert texts == ["Give the comparison sample sizes.", "Report a confidence interval."]


def test_policy_change_critique(rd):
    critique = "Heads-up: we're switching to American spelling. We no longer use British spelling."
    texts = actionable(rd.rules_from_critique(critique))
    assert texts == ["Switch to American spelling.", "Do not use British spelling."]


def test_pronoun_resolved_from_previous_sentence(rd):
    critique = "The setup steps are bullets, but order matters. Number them."
    assert "Number the setup steps." in actionable(rd.rules_from_critique(critique))


@pytest.mark.parametrize(
    "critique",
    [
        "Great job, looks good!",
        "9/10. Nothing I'd change.",
        "Score: 7",
        "meh",
        "Not great, not terrible.",
        "Love it. Thanks!",
        "Is this the final version?",
        "Fine by me, let's ship it.",
        "Can we make it pop more? Not sure what's missing.",
    ],
)
def test_noise_critiques_are_all_non_actionable(rd, critique):
    rules = rd.rules_from_critique(critique)
    assert rules, "every sentence is reported, even when ignored"
    assert not any(r.actionable for r in rules)
    assert all(r.source_sentence for r in rules)


def test_dedupe_within_one_critique(rd):
    critique = "Use British spelling. Also, use British spelling! You should use British spelling."
    rules = rd.rules_from_critique(critique)
    assert actionable(rules) == ["Use British spelling."]
    assert len(rules) == 1


def test_candidate_fields(rd):
    (rule,) = rd.rules_from_critique("Always add type hints to public functions.")
    assert rule.actionable
    assert rule.text == "Always add type hints to public functions."
    assert rule.source_sentence == "Always add type hints to public functions."
    assert rule.topic == "python"
    assert rule.when_to_use.startswith("When writing or reviewing Python code")


def test_empty_critique(rd):
    assert rd.rules_from_critique("") == []


# ---------------------------------------------------------------------------------------------
# topics and when_to_use
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rule, task, topic",
    [
        ("Add type hints and docstrings.", None, "python"),
        ("Use CTEs instead of nested subqueries.", None, "sql"),
        ("Keep paragraphs short.", None, "writing"),
        ("Apologise before explaining the refund.", None, "support"),
        ("Use at least 24pt fonts on every slide.", None, "slides"),
        ("Report sample sizes with every metric.", None, "data"),
        ("Run the linter before committing.", None, "code"),
        ("Be concise.", None, "general"),
        ("Be concise.", "Reply to a customer ticket about billing.", "support"),
    ],
)
def test_guess_topic(rule, task, topic):
    assert guess_topic(rule, task) == topic


def test_topic_is_a_slug(rd):
    for r in rd.rules_from_critique("Use British spelling. Add a legend to the chart. 5/10"):
        assert r.topic and all(ch.isalnum() or ch == "-" for ch in r.topic)
        assert r.topic == r.topic.lower()


def test_when_to_use_includes_task_kind(rd):
    rules = rd.rules_from_critique(
        "The reply should apologise first.", task="Reply to a customer asking for a refund on a late order."
    )
    (rule,) = rules
    # The kind of task, not the one task (#25): no "asking for a refund on a late order".
    assert rule.when_to_use.startswith("When replying to a customer (")
    assert "late order" not in rule.when_to_use
    assert "\n" not in rule.when_to_use
    assert "support" in rule.when_to_use


def test_when_to_use_without_task_uses_topic(rd):
    (rule,) = rd.rules_from_critique("Use parameterised SQL queries.")
    assert rule.when_to_use.startswith("When writing or reviewing SQL queries")
    assert "parameterised" in rule.when_to_use


# ---------------------------------------------------------------------------------------------
# relate
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "new, old, similarity, expected",
    [
        # same
        ("Use parameterised queries.", "Use parameterized SQL queries.", 0.93, "same"),
        ("Avoid SELECT * in queries.", "Never use SELECT * in production queries.", 0.9, "same"),
        ("Always add tests for new code.", "Never skip tests for new code.", 0.88, "same"),  # parity
        ("From now on use British spelling.", "Use British spelling.", 0.92, "same"),
        ("Use British spelling.", "use british spelling", 0.2, "same"),  # identical text
        # contradiction
        ("Use American spelling.", "Use British spelling.", 0.88, "contradiction"),
        ("Use American spelling in all documents.", "Always write with British spelling.", 0.55, "contradiction"),
        ("Indent with tabs.", "Indent with spaces.", 0.7, "contradiction"),
        ("Use spaces for indentation.", "Use tabs for indentation.", 0.62, "contradiction"),
        ("Never use type hints.", "Always use type hints.", 0.8, "contradiction"),
        ("Always use SELECT *.", "Never use SELECT *.", 0.9, "contradiction"),
        ("Do not prefix shell commands with `$`.", "Prefix shell commands with `$ `.", 0.78, "contradiction"),
        ("Sign off as the team, not with your own name.", "Sign off with your first name.", 0.65, "contradiction"),
        ("Use double quotes for strings.", "Use single quotes for strings.", 0.9, "contradiction"),
        # distinct
        ("Use British spelling.", "Keep paragraphs short.", 0.2, "distinct"),
        ("List prerequisites before the first step.", "Check row counts after each join.", 0.15, "distinct"),
        ("Use CTEs instead of nested subqueries.", "Use explicit JOINs instead of comma joins.", 0.55, "distinct"),
        ("Keep slide text to short phrases.", "Use at least 18pt fonts on slides.", 0.62, "distinct"),
        ("Use your first name, not 'Support'.", "Sign off with your first name.", 0.8, "distinct"),
        ("Use no more than three bullets per slide.", "Use at most three bullets per slide.", 0.8, "distinct"),
        ("Use American spelling.", "Use British spelling.", 0.2, "distinct"),  # far too unrelated
    ],
)
def test_relate(rd, new, old, similarity, expected):
    assert rd.relate(new, old, similarity=similarity) == expected


@pytest.mark.parametrize(
    "new, old, similarity, expected",
    [
        # a negated head is polarity, not a rejection of what follows
        ("You should not use SELECT *.", "Never use SELECT *.", 0.9, "same"),
        ("You should not use SELECT *.", "Always use SELECT *.", 0.7, "contradiction"),
        ("Please do not use global variables.", "Avoid global variables.", 0.9, "same"),
        ("We must not commit secrets.", "Never commit secrets to the repository.", 0.5, "distinct"),
        # "Don't forget to X" wants X
        ("Don't forget to run the tests.", "Always run the tests.", 0.5, "distinct"),
        ("Never forget to run the tests.", "Never run the tests.", 0.7, "contradiction"),
        # "no longer than" is a limit, not change wording; "over" only rejects after a choice
        ("Keep functions no longer than 50 lines.", "Split long functions into helpers.", 0.5,
         "distinct"),
        ("Use enumerate when looping over the list.", "Loop over the list with enumerate.", 0.5,
         "distinct"),
        ("Prefer f-strings over format calls.", "Use format calls for strings.", 0.6,
         "contradiction"),
        # "us" the pronoun is not the country
        ("Email us the weekly report.", "Copy the UK office on the weekly report.", 0.6,
         "distinct"),
        ("Use US spelling in the weekly report.", "Use UK spelling in the weekly report.", 0.7,
         "contradiction"),
        # announced change needs clearly related rules
        ("From now on, add type hints to public functions.",
         "Add docstrings to public functions.", 0.5, "distinct"),
        ("From now on, sign off as the team.", "Sign off with your first name.", 0.65,
         "contradiction"),
    ],
)
def test_relate_reads_heads_limits_and_choices(rd, new, old, similarity, expected):
    assert rd.relate(new, old, similarity=similarity) == expected, rd.explain_relation(
        new, old, similarity=similarity)


def test_relate_thresholds_are_configurable():
    strict = RuleDistiller(same_threshold=0.95, related_threshold=0.9)
    assert strict.relate("Use parameterised queries.", "Use parameterized SQL queries.", similarity=0.93) == "distinct"
    assert strict.relate("Indent with tabs.", "Indent with spaces.", similarity=0.7) == "distinct"


def test_explain_relation_names_the_cue(rd):
    why = rd.explain_relation("Use American spelling.", "Use British spelling.", similarity=0.88)
    assert why.startswith("contradiction") and "british/american" in why


# ---------------------------------------------------------------------------------------------
# lessons_from_experience
# ---------------------------------------------------------------------------------------------


def _success() -> Experience:
    return Experience(
        id="ok1",
        task="Deploy the web app to staging.",
        outcome="success",
        feedback="Smooth deploy.",
        steps=[
            Step(action="run_migrations", observation="3 applied"),
            Step(action="build_image", action_input={"tag": "v2"}),
            Step(action="kubectl_apply", action_input="k8s/staging.yaml", observation="deployment created"),
        ],
    )


def _failure() -> Experience:
    return Experience(
        id="bad1",
        task="Deploy the web app to the staging cluster.",
        outcome="failure",
        feedback="Run the migrations before deploying.",
        steps=[
            Step(action="build_image", observation="ok"),
            Step(action="kubectl_apply", observation="Error: CrashLoopBackOff: relation users does not exist"),
        ],
    )


def test_success_lesson(rd):
    (lesson,) = rd.lessons_from_experience(_success())
    assert isinstance(lesson, Lesson)
    assert lesson.kind == "success_pattern"
    assert lesson.text.startswith("When deploying the web app to staging, this worked:")
    assert "run_migrations -> build_image(tag='v2') -> kubectl_apply(k8s/staging.yaml)" in lesson.text
    assert "Smooth deploy." in lesson.text
    # The lesson's "when" names the kind of task, not the one task (learning-loop hunt #12).
    assert lesson.when_to_use == "When deploying a web app to staging"


def test_failure_lesson(rd):
    (lesson,) = rd.lessons_from_experience(_failure())
    assert lesson.kind == "failure_trigger"
    assert lesson.text.startswith("When deploying the web app to the staging cluster, it failed after kubectl_apply")
    assert "CrashLoopBackOff" in lesson.text
    assert lesson.text.endswith("Run the migrations before deploying.")


def test_partial_lesson_uses_explicit_when_to_use(rd):
    exp = Experience(
        task="Summarise the quarterly report.",
        outcome="partial",
        feedback="Missed the revenue section.",
        when_to_use="When summarising financial reports",
    )
    (lesson,) = rd.lessons_from_experience(exp)
    assert lesson.kind == "failure_trigger"
    assert "only partly worked" in lesson.text and "Missed the revenue section" in lesson.text
    assert lesson.when_to_use == "When summarising financial reports"


def test_comparison_lesson_from_similar(rd):
    lessons = rd.lessons_from_experience(_failure(), similar=[_success()])
    kinds = [lesson.kind for lesson in lessons]
    assert kinds == ["failure_trigger", "comparison"]
    comparison = lessons[1].text
    assert "run_migrations" in comparison and "successful attempt" in comparison
    # and the other way round
    lessons = rd.lessons_from_experience(_success(), similar=[_failure()])
    assert [lesson.kind for lesson in lessons] == ["success_pattern", "comparison"]


def test_no_comparison_with_same_outcome_or_itself(rd):
    ok = _success()
    assert [lesson.kind for lesson in rd.lessons_from_experience(ok, similar=[ok, _success()])] == ["success_pattern"]


def test_unknown_outcome(rd):
    assert rd.lessons_from_experience(Experience(task="Translate the FAQ.")) == []
    (note,) = rd.lessons_from_experience(Experience(task="Translate the FAQ.", feedback="Use formal register."))
    assert note.kind == "note" and "Use formal register." in note.text


def test_long_feedback_is_clipped(rd):
    exp = Experience(task="Write a report.", outcome="failure", feedback="x" * 5000)
    (lesson,) = rd.lessons_from_experience(exp)
    assert len(lesson.text) <= 2000


# ---------------------------------------------------------------------------------------------
# LLMDistiller
# ---------------------------------------------------------------------------------------------


class Script:
    """A scripted `prompt -> text` callable that records prompts."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply


RULES_JSON = json.dumps(
    [
        {
            "text": "Use parameterised queries",
            "topic": "SQL",
            "when_to_use": "When writing SQL that takes user input",
            "actionable": True,
            "source_sentence": "You should have used parameterised queries.",
        },
        {"text": "Great job overall.", "topic": "general", "actionable": False},
    ]
)


def test_llm_clean_json():
    llm = Script(RULES_JSON)
    d = LLMDistiller(llm)
    rules = d.rules_from_critique("Great job overall. You should have used parameterised queries.", task="Write a query.")
    assert [r.text for r in rules] == ["Use parameterised queries.", "Great job overall."]
    assert rules[0].topic == "sql" and rules[0].when_to_use == "When writing SQL that takes user input"
    assert rules[1].actionable is False
    assert "You should have used parameterised queries." in llm.prompts[0]
    assert "Write a query." in llm.prompts[0]


def test_llm_fenced_json_with_chatter():
    reply = (
        "Sure! Here are the rules I found:\n```json\n"
        '[{"text": "Keep paragraphs short.", "topic": "writing", "actionable": true},]\n'
        "```\nLet me know if you need anything else."
    )
    rules = LLMDistiller(Script(reply)).rules_from_critique("Paragraphs are walls of text.")
    assert [(r.text, r.topic, r.actionable) for r in rules] == [("Keep paragraphs short.", "writing", True)]
    assert rules[0].when_to_use  # filled in deterministically when the model leaves it out


def test_llm_single_quotes_and_wrapper_object():
    reply = "{'rules': [{'text': 'Use tabs', 'topic': 'python', 'actionable': 'true'}, 'Add tests',]}"
    rules = LLMDistiller(Script(reply)).rules_from_critique("Use tabs. Add tests.")
    assert [r.text for r in rules] == ["Use tabs.", "Add tests."]
    assert all(r.actionable for r in rules)


def test_llm_empty_array_reports_critique_as_ignored():
    rules = LLMDistiller(Script("[]")).rules_from_critique("Looks great, thanks!")
    assert len(rules) == 1 and not rules[0].actionable
    assert rules[0].source_sentence == "Looks great, thanks!"


def test_llm_malformed_reply_falls_back():
    d = LLMDistiller(Script("I think you should use parameterised queries, honestly."))
    rules = d.rules_from_critique("You should have used parameterised queries.")
    assert actionable(rules) == ["Use parameterised queries."]
    assert d.last_error


def test_llm_json_without_usable_items_falls_back():
    d = LLMDistiller(Script('[{"rule_text_missing": 1}, 42]'))
    assert actionable(d.rules_from_critique("Never commit secrets.")) == ["Never commit secrets."]


def test_llm_raising_callable_falls_back():
    d = LLMDistiller(Script(RuntimeError("rate limited")))
    rules = d.rules_from_critique("Don't use bare except.")
    assert actionable(rules) == ["Do not use bare except."]
    assert "rate limited" in d.last_error
    assert d.relate("Use tabs.", "Use spaces.", similarity=0.7) == "contradiction"  # fallback relate
    assert d.lessons_from_experience(_success())[0].kind == "success_pattern"


def test_llm_custom_fallback():
    class Nothing:
        def rules_from_critique(self, critique, *, task=None, response=None, score=None):
            return []

        def lessons_from_experience(self, experience, *, similar=()):
            return []

        def relate(self, new_rule, old_rule, *, similarity):
            return "distinct"

    d = LLMDistiller(Script("not json"), fallback=Nothing())
    assert d.rules_from_critique("Use tabs.") == []
    assert d.relate("a", "b", similarity=0.99) == "distinct"


def test_llm_reply_objects_with_content():
    class Message:
        content = '[{"text": "Use tabs."}]'

    d = LLMDistiller(lambda prompt: Message())
    assert [r.text for r in d.rules_from_critique("Use tabs.")] == ["Use tabs."]


def test_llm_braces_in_critique_do_not_break_prompt():
    llm = Script("[]")
    LLMDistiller(llm).rules_from_critique("Use `{name}` placeholders, not {0}.")
    assert "Use `{name}` placeholders, not {0}." in llm.prompts[0]


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("same", "same"),
        ("Contradiction.", "contradiction"),
        ("The new rule contradicts the old one.", "contradiction"),
        ("  distinct\n", "distinct"),
        ("Answer: DIFFERENT matters", "distinct"),
        ("These are duplicates (same behaviour).", "same"),
        ('{"relation": "contradiction"}', "contradiction"),
        ("They are not the same: this is a contradiction.", "contradiction"),
        ("Not a contradiction; distinct.", "distinct"),
        ("**Same**", "same"),
    ],
)
def test_llm_relate_parsing(reply, expected):
    assert LLMDistiller(Script(reply)).relate("Use tabs.", "Use spaces.", similarity=0.7) == expected


def test_llm_relate_unparseable_falls_back():
    d = LLMDistiller(Script("I cannot decide."))
    assert d.relate("Use American spelling.", "Use British spelling.", similarity=0.9) == "contradiction"
    assert d.relate("Use British spelling.", "Keep paragraphs short.", similarity=0.1) == "distinct"


def test_llm_lessons():
    reply = json.dumps(
        [
            {"kind": "failure-trigger", "text": "When deploying, run migrations first.", "when_to_use": "When deploying web apps"},
            {"kind": "weird", "text": "Check the logs."},
        ]
    )
    llm = Script(reply)
    lessons = LLMDistiller(llm).lessons_from_experience(_failure(), similar=[_success()])
    assert [(lesson.kind, lesson.text) for lesson in lessons] == [
        ("failure_trigger", "When deploying, run migrations first."),
        ("note", "Check the logs."),
    ]
    assert lessons[0].when_to_use == "When deploying web apps"
    assert lessons[1].when_to_use.startswith("When deploying the web app")
    assert "CrashLoopBackOff" in llm.prompts[0] and "run_migrations" in llm.prompts[0]


def test_llm_lessons_malformed_falls_back():
    lessons = LLMDistiller(Script("no idea")).lessons_from_experience(_failure())
    assert [lesson.kind for lesson in lessons] == ["failure_trigger"]


def test_extract_json_variants():
    assert extract_json('[1, 2,]') == [1, 2]
    assert extract_json("prefix {\"a\": [1, {\"b\": \"]\"}]} suffix") == {"a": [1, {"b": "]"}]}
    assert extract_json("```\n{'a': True, 'b': None}\n```") == {"a": True, "b": None}
    assert extract_json('{"ok": true, "none": null}') == {"ok": True, "none": None}
    assert extract_json("nothing here") is None
    assert extract_json("") is None


async def test_async_variants_use_acomplete():
    calls: list[str] = []

    async def acomplete(prompt: str) -> str:
        calls.append(prompt)
        if "Decide how the NEW rule relates" in prompt:
            return "contradiction"
        if "reusable lessons" in prompt:
            return '[{"kind": "success_pattern", "text": "Run migrations first."}]'
        return '[{"text": "Use tabs."}]'

    def never(prompt: str) -> str:  # pragma: no cover - must not be called
        raise AssertionError("sync callable used")

    d = LLMDistiller(never, acomplete=acomplete)
    assert [r.text for r in await d.arules_from_critique("Use tabs.")] == ["Use tabs."]
    assert (await d.alessons_from_experience(_success()))[0].text == "Run migrations first."
    assert await d.arelate("Use tabs.", "Use spaces.", similarity=0.5) == "contradiction"
    assert len(calls) == 3


async def test_async_variants_run_sync_callable_in_thread():
    d = LLMDistiller(Script('[{"text": "Use tabs."}]'))
    assert [r.text for r in await d.arules_from_critique("Use tabs.")] == ["Use tabs."]


async def test_async_failures_fall_back():
    async def broken(prompt: str) -> str:
        raise TimeoutError("slow model")

    d = LLMDistiller(Script("unused"), acomplete=broken)
    assert actionable(await d.arules_from_critique("Avoid global state.")) == ["Avoid global state."]
    assert await d.arelate("Use tabs.", "Use spaces.", similarity=0.7) == "contradiction"
    assert (await d.alessons_from_experience(_success()))[0].kind == "success_pattern"


def test_async_variants_outside_pytest_loop():
    d = LLMDistiller(Script("distinct"))
    assert asyncio.run(d.arelate("a b", "c d", similarity=0.1)) == "distinct"


def test_extract_json_survives_pathological_replies():
    assert extract_json("[" * 30000) is None
    extract_json("x [ " * 20000 + "[1, 2]")  # bounded work; must not raise
    assert extract_json("[1, 2]" + " [" * 20000) == [1, 2]


_FRAGMENTS = st.sampled_from(
    "use avoid never always should must needs be been have missing too long no not the a it this "
    "they you we reply slide query , . ; : ? ! ` ' \" ( ) - * 1. e.g. and but so which instead of "
    "rather than first now can could would help \n - \n".split(" ")
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.one_of(_FRAGMENTS, st.text(max_size=6)), max_size=40), sim=st.floats(0, 1))
def test_rule_distiller_never_raises(words, sim):
    rd = RuleDistiller()
    text = " ".join(words)
    rules = rd.rules_from_critique(text, task=text[:40] or None)
    for r in rules:
        assert r.text.strip()
        assert "\n" not in r.when_to_use
        assert r.topic and r.topic == r.topic.lower()
    normalise_rule(text)
    assert rd.relate(text, text[::-1], similarity=sim) in ("same", "contradiction", "distinct")


# ---------------------------------------------------------------------------------------------
# module hygiene
# ---------------------------------------------------------------------------------------------


def test_protocol_is_satisfied():
    assert isinstance(RuleDistiller(), Distiller)
    assert isinstance(LLMDistiller(lambda p: ""), Distiller)


def test_import_is_light():
    code = (
        "import sys, skillbank.distill; "
        "heavy = [m for m in ('chromadb', 'numpy', 'tiktoken', 'bm25s', 'langchain') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
