"""A run's feedback that was learnt as guidelines never brings back a superseded rule, nor says
a shown rule twice (hunt, session 20).

Run 1's feedback "Write SQL keywords in lowercase.", run 2's "From now on write SQL keywords in
uppercase.": the guideline was superseded right, yet the block for the next SQL task showed the
uppercase rule as a guideline and both feedbacks verbatim on the experiences' lines, the
superseded instruction among them (LangChain middleware and LlamaIndex block alike: both use
``bank.context_for``). Now a feedback sentence whose rule was superseded or retired is left
out, and one whose rule the block shows becomes a pointer ("learnt as [gl-...]"); what a
feedback says besides its rules stays. Fresh wordings; in process and through a client of
another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.feedback_view import feedback_line

OLD = "Indent YAML files with four spaces."
NEW = "From now on indent YAML files with two spaces."


def _run(bank, task: str, feedback: str) -> str:
    eid = bank.experiences.record(task=task, outcome="success", feedback=feedback)
    bank.guidelines.learn(feedback, task=task)
    return eid


def _check(bank) -> None:
    _run(bank, "Write the YAML config for the staging deploy", OLD)
    _run(bank, "Write the YAML config for the nightly backup job", NEW)
    statuses = {g.text: g.status for g in bank.guidelines.list(namespace="*")}
    assert statuses[OLD] == "superseded", statuses
    block = bank.context_for("Write the YAML config for the metrics exporter",
                             budget_tokens=1500)
    assert block.experiences, block.text  # the runs are shown ...
    assert "four spaces" not in block.text  # ... without the superseded instruction
    assert block.text.count("two spaces") == 1, block.text  # the rule in force once
    new_id = next(g.id for g in bank.guidelines.list() if g.status == "active")
    assert f"learnt as [{new_id}]" in block.text

    # A feedback learnt as a rule that was later retired is not said either; the rest of
    # what the feedback said stays.
    mixed = "The release notes were fine. Never mention internal ticket numbers in release notes."
    _run(bank, "Draft the release notes for version 3.1", mixed)
    rule = next(g for g in bank.guidelines.list() if "ticket numbers" in g.text)
    bank.guidelines.retire(rule.id)
    notes = bank.context_for("Draft the release notes for version 3.2", budget_tokens=1500)
    assert "Draft the release notes for version 3.1" in notes.text, notes.text
    assert "ticket numbers" not in notes.text
    assert "The release notes were fine." in notes.text


def test_feedback_line_keeps_what_no_rule_says():
    class G:  # a guideline as the memory returns it, reduced to what the view reads
        def __init__(self, gid, status, sentence, critique):
            self.id, self.status = gid, status
            self.sources = [type("S", (), {"critique": critique, "sentence": sentence})()]

    said = "Too slow. Cache the lookups."
    assert feedback_line(said, [G("gl-1", "superseded", "Cache the lookups.", said)], set()) \
        == "Too slow."
    assert feedback_line(said, [G("gl-1", "active", "Cache the lookups.", said)], {"gl-1"}) \
        == "Too slow. (learnt as [gl-1])"
    assert feedback_line(said, [G("gl-1", "active", "Cache the lookups.", said)], set()) == said
    assert feedback_line(said, [G("gl-1", "retired", None, said)], set()) == ""


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_in_process_and_through_a_client(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _check(bank)


def test_a_pointer_to_a_rule_the_budget_left_out_prints_the_rule_s_words():
    """"learnt as [gl-…]" named a rule the budget had cut: the agent was told neither."""
    from skillbank.context import _Item, fit_budget, render
    from skillbank.tokens import count_tokens

    long_rule = _Item("guideline", "gl-1", "- [gl-1] " + "Always quote every shell variable. " * 12)
    line = _Item("experience", "exp-1", "- [exp-1] (success) Task: Fix the deploy script "
                 "Feedback: learnt as [gl-1]", ("gl-1",),
                 "- [exp-1] (success) Task: Fix the deploy script Feedback: Always quote every "
                 "shell variable.")
    budget = count_tokens(render([_Item(line.kind, line.id, line.unpointed)])) + 5
    chosen, omitted = fit_budget([long_rule, line], budget)
    assert [c.id for c in chosen] == ["exp-1"] and omitted == 1
    assert "Always quote every shell variable." in render(chosen)
    assert "learnt as" not in render(chosen)
    # with room for the rule, the pointer stays
    chosen, _ = fit_budget([long_rule, line], 10_000)
    assert "learnt as [gl-1]" in render(chosen)
