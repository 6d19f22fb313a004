"""Rules the calling model extracted itself, checked and turned into candidate rules.

The Memory-as-a-Tool approach: a capable agent reads the critique better than a model-free
distiller, so ``learn(critique, rules=[{"text": ..., "when_to_use": ...}])`` stores the agent's
rules with the verbatim critique as their source. Each rule is validated here (a clear
:class:`~skillbank.errors.InvalidInputError` naming the rule at fault) before anything is written.
"""

from __future__ import annotations

from typing import Any, Sequence

from skillbank.errors import InvalidInputError
from skillbank.memories.guidelines.files import NO_WORDS, _one_line, has_words
from skillbank.records import MAX_SHORT

MAX_AGENT_RULES = 20
_KEYS = frozenset({"text", "when_to_use", "topic", "replaces"})


def agent_rules(rules: Sequence[Any], *, critique: str, task: str | None) -> list[Any]:
    """``[{"text", "when_to_use"?, "topic"?}]`` (or plain strings) -> ``CandidateRule`` list."""
    from skillbank.distill import CandidateRule, guess_topic
    from skillbank.distill.topics import _when_to_use
    from skillbank.fsutil import nfc, slugify

    if isinstance(rules, (str, bytes, dict)) or not isinstance(rules, (list, tuple)):
        raise InvalidInputError(
            'rules must be a list such as [{"text": "Never deploy on Fridays.", '
            '"when_to_use": "When planning a release"}]')
    if len(rules) > MAX_AGENT_RULES:
        raise InvalidInputError(f"at most {MAX_AGENT_RULES} rules per critique, got {len(rules)}")
    out = []
    for number, item in enumerate(rules, 1):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            raise InvalidInputError(
                f"rule {number} must be an object with 'text' (and optionally 'when_to_use'), "
                f"got {type(item).__name__}")
        unknown = sorted(str(k) for k in item if k not in _KEYS)
        if unknown:
            raise InvalidInputError(
                f"rule {number} has unknown keys {', '.join(unknown)}; "
                "use text, when_to_use, topic, replaces")
        values = {}
        for key in ("text", "when_to_use", "topic", "replaces"):
            value = item.get(key)
            if value is None:
                continue
            if not isinstance(value, str):
                raise InvalidInputError(f"rule {number}: {key} must be a string, "
                                        f"got {type(value).__name__}")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInputError(f"rule {number}: {key} is not valid Unicode text") from None
            values[key] = _one_line(nfc(value))  # one rule however the keyboard composed it
        text = values.get("text", "")
        if not text:
            raise InvalidInputError(f"rule {number} needs a non-empty 'text'")
        if not has_words(text):  # refused as add() refuses it (hunt-badinput #4, session 26)
            raise InvalidInputError(f"rule {number} {NO_WORDS}")
        if len(text) > MAX_SHORT or len(values.get("when_to_use", "")) > MAX_SHORT:
            raise InvalidInputError(f"rule {number}: text and when_to_use are at most "
                                    f"{MAX_SHORT} characters each")
        topic = slugify(values.get("topic") or guess_topic(text, task, critique))
        when = values.get("when_to_use") or _when_to_use(text, topic, task)
        out.append(CandidateRule(text=text, topic=topic, when_to_use=when[:MAX_SHORT],
                                 actionable=True, source_sentence="",
                                 replaces=values.get("replaces") or None))
    return out
