"""The block's family vote counts only candidates with evidence of their own (hunt-learnfaces
#1, session 38).

The first candidates' fused scores are nearly flat (0.0328 against 0.0308), so a family with
more rules in the bank won the vote on numbers alone, even when none of its rules matched the
task (cosine 0.03-0.13, under both evidence floors): the rule taught for the task, ranked first
by ``guidelines.search``, was left out of the memory block on every face (Python API, MCP,
LangChain, LlamaIndex, an owner process, the CLI), which showed another domain's rules or no
guideline section at all.
"""

from __future__ import annotations

from skillbank import Skillbank

SQL_RULE = "Never put SQL in f-strings; use bound parameters."


def test_the_rule_taught_for_the_task_wins_over_more_rules_without_evidence(tmp_path, minilm):
    """One SQL rule against two code rules, two support rules and a JavaScript rule: the SQL
    task's block showed no guideline, or the two support rules."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        for task, critique in [
            ("Write a function that queries users by email", SQL_RULE),
            ("Write the logging setup", "Always log errors and never passwords."),
            ("Write the frontend date code", "No more Moment.js; use date-fns."),
            ("Write the refund handler", "The refund window is 30 days now, not 14."),
            ("Draft customer email", "Address customers by their last name."),
        ]:
            bank.guidelines.learn(critique, task=task)
        for task in ("Write a SQL query that looks up orders by id",
                     "Write a function that looks up orders by customer id in Postgres"):
            assert [h.record.text for h in bank.guidelines.search(task, k=1)] == [SQL_RULE]
            shown = [h.record.text for h in bank.context_for(task, 800).guidelines]
            assert shown == [SQL_RULE], (task, shown)


def test_a_slides_task_gets_the_slides_rules_not_the_code_rules(tmp_path, minilm):
    """Two slides rules (both with evidence) against four code rules with none: the block
    showed one slides rule and the four code rules, and not "Keep slides to five bullets.",
    which search ranks second."""
    with Skillbank.open(tmp_path / "root", embedding_function=minilm,
                        include_bundled=False) as bank:
        for task, critique in [
            ("Write the logging setup", "Always log errors and never passwords."),
            ("Write the frontend date code", "No more Moment.js; use date-fns."),
            ("Reformat the utils module", "Indent Python with 4 spaces."),
            ("Load the log file", "Never load the file in one go; always stream it in chunks."),
            ("Make the slides for the board meeting", "Keep slides to five bullets."),
        ]:
            bank.guidelines.learn(critique, task=task)
        bank.guidelines.add("Use one chart per slide.", topic="slides")
        shown = [h.record.text for h in
                 bank.context_for("Make the slides for the quarterly review", 800).guidelines]
        assert sorted(shown) == ["Keep slides to five bullets.", "Use one chart per slide."]
