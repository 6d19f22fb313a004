"""A failure lesson blames a step only when a step failed.

Users met, after ten follow-ups and a failure whose feedback said what went wrong, the lesson
"When planning the migration ..., it failed after final answer (Done: OK, ship it.): After the
cutover all old URLs returned 404 ..." (learning-loop hunt, session 20, defect 13): the last
step was named as the cause although nothing said it was wrong.
"""

from __future__ import annotations

from skillbank.distill import RuleDistiller
from skillbank.records import Experience, Step


def _lesson(steps: list[Step], feedback: str | None) -> str:
    exp = Experience(task="Rotate the API keys of the billing service", outcome="failure",
                     feedback=feedback, steps=steps)
    (lesson,) = RuleDistiller().lessons_from_experience(exp)
    return lesson.text


def test_no_failed_step_the_feedback_says_why():
    text = _lesson([Step(action="list_keys", observation="3 keys"),
                    Step(action="final answer", observation="All three keys rotated.")],
                   "The old keys were revoked before the workers picked up the new ones.")
    assert "it failed: The old keys were revoked" in text
    assert "final answer" not in text and "All three keys rotated" not in text


def test_a_failed_step_is_still_named():
    text = _lesson([Step(action="revoke_key", observation="Error: 403 Forbidden"),
                    Step(action="final answer", observation="Done.")],
                   "Ask for the admin role first.")
    assert "it failed after revoke_key (Error: 403 Forbidden)" in text


def test_without_feedback_the_answer_is_never_blamed():
    """Review 1 #5, session 27: a failed chat run without feedback read "it failed after final
    answer (Here is the migration…)", the answer named as the step that went wrong."""
    text = _lesson([Step(action="final answer", observation="Here is the migration.")], None)
    assert "it failed" in text
    assert "final answer" not in text and "Here is the migration" not in text


def test_without_feedback_the_last_step_of_the_method_is_named():
    text = _lesson([Step(action="list_keys", observation="3 keys"),
                    Step(action="rotate_keys", observation="rotated 3"),
                    Step(action="final answer", observation="All three keys rotated.")], None)
    assert "it failed after rotate_keys (rotated 3)" in text
    assert "final answer" not in text
