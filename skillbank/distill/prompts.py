"""Prompt templates for the LLM distiller."""

from __future__ import annotations

from typing import Any


RULES_PROMPT = """You turn a critique of an AI agent's work into durable, reusable rules for the agent.

Task the agent was given:
{task}

Excerpt of the agent's response:
{response}

Score: {score}

Critique:
{critique}

Instructions:
- Read the critique sentence by sentence. For each piece of advice, write ONE rule as a short
  imperative sentence that generalises beyond this one task ("Use parameterised queries.",
  "Always add type hints to public functions."). Turn complaints into the behaviour to adopt.
- Never fold two instructions into one rule and never drop one: "Use British spelling, and never
  put SQL in f-strings." gives two rules; "Dates must be ISO 8601. Times must be in UTC." gives
  two. A short imperative ("Never deploy on Fridays.") is a rule as it stands.
- When the critique replaces an earlier practice ("Stop X; do Y instead"), write both the rule
  to stop X and the rule to do Y.
- Do not turn praise, bare scores, vague reactions ("meh"), questions without advice, or one-off
  factual corrections about this specific artefact into rules; list them with "actionable": false.
- topic: a short lowercase slug for the domain, preferably one of: python, javascript, sql, data,
  writing, support, slides, code, general.
- when_to_use: one line describing the kind of task where the rule applies, worded so it would
  match future tasks ("When writing or reviewing Python code that handles files").
- source_sentence: the critique sentence the rule came from.

Reply with a JSON array only, no commentary:
[{{"text": "...", "topic": "...", "when_to_use": "...", "actionable": true, "source_sentence": "..."}}]
"""

LESSONS_PROMPT = """You extract reusable lessons from an AI agent's attempt at a task.

Task: {task}
Outcome: {outcome}
Score: {score}
Feedback: {feedback}

Steps (action -> observation):
{steps}

Similar past attempts:
{similar}

Instructions:
- For a success, write a "success_pattern" lesson: what to repeat on similar tasks.
- For a failure or partial success, write a "failure_trigger" lesson: "When <kind of task>,
  <what went wrong>: <how to avoid it>".
- If a similar attempt had the opposite outcome, write a "comparison" lesson contrasting what
  differed.
- Each lesson needs "when_to_use": one line naming the kind of task it helps with.

Reply with a JSON array only:
[{{"kind": "success_pattern|failure_trigger|comparison|note", "text": "...", "when_to_use": "..."}}]
"""

RELATE_PROMPT = """Two rules for an AI agent. Decide how the NEW rule relates to the OLD rule.

OLD: {old}
NEW: {new}
(Embedding similarity: {similarity:.2f})

Answer with exactly one word:
- same: they ask for the same behaviour (a rephrasing or a duplicate);
- contradiction: they are about the same matter but ask for incompatible behaviour (the new rule
  overrules the old one);
- distinct: they are about different matters, or compatible.
"""


def _fmt(template: str, **values: Any) -> str:
    """Fill a prompt template. Braces inside the values are safe: str.format never re-parses them."""
    return template.format(**values)
