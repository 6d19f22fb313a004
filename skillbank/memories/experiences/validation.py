"""Coercing and validating what callers give the experience memory into `Experience` records.

Memory is fed by models and networks, so every field is checked here, before anything is
written, and every refusal is an `InvalidInputError` that says what was wrong and the valid form.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from datetime import datetime
from typing import Any, Iterable, Mapping

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from skillbank.errors import InvalidInputError
from skillbank.fsutil import check_text, check_unicode
from skillbank.moments import stored_utc, typed_since
from skillbank.records import (MAX_SHORT, MAX_STEPS, MAX_TAGS, MAX_TEXT, Experience, Finding,
                               Lesson, Step, clip_task)
from skillbank.memories.experiences.transcript import _jsonable, steps_from_messages

_ID = re.compile(r"^(exp|lsn)-[0-9a-f]{12}$")
OUTCOMES = ("success", "failure", "partial", "unknown")

#: Limits beyond the record model's own: memory is fed by models and networks.
MAX_TAG_CHARS = 100
MAX_LESSONS = 50
MAX_NAMESPACE = 128
MAX_RECORD_BYTES = 1 << 20  # a stored record (steps included) is at most 1 MiB of JSON


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _timestamp(value: datetime) -> float:
    """A stored time as a unix time (one without a zone is UTC)."""
    return stored_utc(value).timestamp()


def _since_timestamp(since: Any) -> float | None:
    """`since` as a unix time: a datetime or date, an ISO string, a number, or a timedelta
    (ago); the one rule of every `since` (`moments.typed_since`).

    A datetime or ISO text without a zone is local time, as Python reads a naive datetime:
    `since=datetime.now() - timedelta(hours=1)` means the last hour. It was read as UTC, so
    east of UTC that hour lay in the future and recall found nothing (hunt-time #3, session 29).
    """
    if since is None:
        return None
    if isinstance(since, (int, float)) and not isinstance(since, bool) and math.isfinite(since):
        return float(since)
    return typed_since(since).timestamp()


def _findings(error: ValidationError) -> list[Finding]:
    out = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ()))
        out.append(Finding(severity="error", code="invalid-" + (where.split(".")[0] or "input"),
                           message=f"{where}: {item.get('msg')}" if where else str(item.get("msg"))))
    return out


def _invalid(error: ValidationError, what: str = "experience") -> InvalidInputError:
    findings = _findings(error)
    hint = ""
    if any(f.code == "invalid-outcome" for f in findings):
        hint = f" (outcome must be one of {', '.join(OUTCOMES)})"
    return InvalidInputError(
        f"invalid {what}: " + "; ".join(f.message for f in findings) + hint, findings)


def _coerce_step(step: Any, number: int) -> Step:
    if isinstance(step, Step):
        return step.model_copy(update={"action_input": _jsonable(step.action_input)})
    if not isinstance(step, Mapping):
        raise InvalidInputError(
            f"steps[{number}] is {type(step).__name__}: give Step objects or dicts with "
            "thought / action / action_input / observation")
    data = dict(step)
    aliases = {"tool": "action", "tool_input": "action_input", "input": "action_input",
               "args": "action_input", "arguments": "action_input", "output": "observation",
               "result": "observation"}
    for alias, field in aliases.items():
        if alias in data and field not in data:
            data[field] = data.pop(alias)
    for field in ("thought", "action", "observation"):
        if isinstance(data.get(field), str):
            check_unicode(data[field], f"steps[{number}].{field}")  # kept as the tool said it
        elif data.get(field) is not None:
            data[field] = json.dumps(_jsonable(data[field])) if not isinstance(
                data[field], (int, float)) else str(data[field])
    if "action_input" in data:
        data["action_input"] = _jsonable(data["action_input"])
    try:
        return Step.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc, f"step {number}") from None


def _coerce_lesson(lesson: Any, number: int, when_to_use: str) -> Lesson:
    try:
        if isinstance(lesson, Lesson):
            out = lesson
        elif isinstance(lesson, str):
            lesson = check_unicode(lesson, f"lessons[{number}]")
            out = Lesson(text=lesson.strip(), when_to_use=when_to_use[:MAX_SHORT])
        elif isinstance(lesson, Mapping):
            data = dict(lesson)
            if isinstance(data.get("text"), str):
                data["text"] = check_unicode(data["text"], f"lessons[{number}]").strip()
            data.setdefault("when_to_use", when_to_use[:MAX_SHORT])
            out = Lesson.model_validate(data)
        else:
            raise InvalidInputError(
                f"lessons[{number}] is {type(lesson).__name__}: give strings, Lesson objects or "
                "dicts with text / kind / when_to_use")
    except ValidationError as exc:
        raise _invalid(exc, f"lesson {number}") from None
    if not out.when_to_use and when_to_use:
        out = out.model_copy(update={"when_to_use": when_to_use[:MAX_SHORT]})
    return out


def _clean_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, (list, tuple, set, frozenset)):
        raise InvalidInputError("tags must be a list of short strings")
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInputError(f"tag {tag!r} is not a string")
        tag = " ".join(check_unicode(tag, "tag").split())
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInputError(f"tag {tag[:40]!r}… is over {MAX_TAG_CHARS} characters")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise InvalidInputError(f"{len(out)} tags; at most {MAX_TAGS} are allowed")
    return out


def _outcomes(outcome: Any) -> list[str] | None:
    if outcome is None:
        return None
    values = [outcome] if isinstance(outcome, str) else list(outcome)
    out = []
    for value in values:
        value = str(value).strip().lower()
        if value not in OUTCOMES:
            raise InvalidInputError(f"unknown outcome {value!r}; use one of {', '.join(OUTCOMES)}")
        out.append(value)
    return out



def check_namespace(value: Any) -> str:
    """A namespace as given, or InvalidInputError: 1-128 printable characters, not "*"."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAMESPACE \
            or any(ord(c) < 32 for c in value):
        raise InvalidInputError(
            f"invalid namespace {value!r}: use 1-{MAX_NAMESPACE} printable characters")
    if value.strip() == "*":  # "*" means "every namespace" to list/count/export/prune
        raise InvalidInputError(
            'namespace "*" means every namespace, which only listing, counting, export and '
            "prune accept; give one namespace (e.g. 'default') to record or recall")
    return value


def prepare(*, default_namespace: str, **fields: Any) -> Experience:
    """Validate one record's fields (see `build`) and make sure it can be journaled."""
    try:
        experience = build(default_namespace=default_namespace, **fields)
        # Lone surrogates pass pydantic but cannot be journaled as UTF-8: refuse them first.
        check_text(json.dumps(experience.model_dump(mode="python"), default=str,
                              ensure_ascii=False), "experience")
    except PydanticSerializationError as exc:
        if "depth" in str(exc):  # "Maximum serialization depth exceeded"
            raise InvalidInputError("the experience holds a value nested too deeply to store "
                                    "(a step's action_input or a message); flatten it or pass "
                                    "it as text") from None
        raise InvalidInputError("the experience contains characters that are not valid "
                                "Unicode text (lone surrogates)") from None
    except UnicodeError:
        raise InvalidInputError("the experience contains characters that are not valid "
                                "Unicode text (lone surrogates)") from None
    return experience


def build(*, default_namespace: str, task: Any, outcome: Any, steps: Any, score: Any,
          feedback: Any, lessons: Any, when_to_use: Any, tags: Any, namespace: Any,
          messages: Any, record_id: str | None = None, created: datetime | None = None,
          kind: str = "experience", source: str | None = None) -> Experience:
    """One `Experience` from `record`'s arguments (see `ExperienceMemory.record`), or
    InvalidInputError naming the first field that is wrong; `namespace=None` is the default."""
    if messages is not None and steps:
        raise InvalidInputError("pass either steps or messages, not both")
    message_steps: list[Step] = []
    if messages is not None:
        message_steps, first_user = steps_from_messages(
            messages, task=task if isinstance(task, str) else None)
        if task is None:  # a pasted log as the first message still makes a task
            task = clip_task(first_user) if first_user else first_user
    if task is None or (isinstance(task, str) and not task.strip()):
        raise InvalidInputError(
            "task is empty: say what the agent was asked to do (or pass messages whose first "
            "user message is the task)")
    if not isinstance(task, str):
        raise InvalidInputError(f"task must be a string, not {type(task).__name__}")
    if isinstance(outcome, str):
        outcome = outcome.strip().lower()
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise InvalidInputError(f"score must be a finite number, not {score!r}")
    if when_to_use is None:
        when_to_use = ""
    if not isinstance(when_to_use, str):
        raise InvalidInputError("when_to_use must be a string")
    if feedback is not None and not isinstance(feedback, str):
        raise InvalidInputError("feedback must be a string")
    # Before pydantic, which said "task: Input should be a valid string, unable to parse raw
    # data as a unicode string" for a lone surrogate (hunt i18n #12); in NFC (check_unicode).
    task = check_unicode(task, "task")
    when_to_use = check_unicode(when_to_use, "when_to_use")
    feedback = None if feedback is None else check_unicode(feedback, "feedback")
    if steps is not None and (isinstance(steps, (str, bytes, Mapping))
                              or not isinstance(steps, Iterable)):
        raise InvalidInputError("steps must be a list of Step objects or dicts")
    if steps is not None:
        steps = list(steps)
        if len(steps) > MAX_STEPS:
            raise InvalidInputError(
                f"{len(steps)} steps; at most {MAX_STEPS} are stored (keep the key ones, or "
                "pass the raw messages, whose long runs are cut in the middle)")
    step_list = [_coerce_step(s, i) for i, s in enumerate(steps or [])] or message_steps
    if isinstance(lessons, (str, Lesson)):
        lessons = [lessons]
    if lessons is not None and (isinstance(lessons, (bytes, Mapping))
                                or not isinstance(lessons, Iterable)):
        raise InvalidInputError("lessons must be a list of strings or Lesson objects")
    lessons = list(lessons or [])
    if len(lessons) > MAX_LESSONS:
        raise InvalidInputError(f"{len(lessons)} lessons; at most {MAX_LESSONS} per record")
    lesson_list = [_coerce_lesson(l, i, when_to_use.strip()) for i, l in enumerate(lessons)]
    data: dict[str, Any] = {
        "id": record_id or _new_id("lsn" if kind == "lesson" else "exp"),
        "task": task.strip(),
        "steps": step_list,
        "outcome": outcome,
        "score": None if score is None else float(score),
        "feedback": feedback.strip() if isinstance(feedback, str) and feedback.strip() else None,
        "lessons": lesson_list,
        "when_to_use": when_to_use.strip(),
        "tags": _clean_tags(tags),
        "namespace": check_namespace(default_namespace if namespace is None else namespace),
        "kind": kind,
        "source": source,
    }
    if created is not None:
        data["created"] = created
    try:
        experience = Experience.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc) from None
    return _fit_record(experience)


def _fit_record(record: Experience) -> Experience:
    """Trim step texts (longest first) until the stored record fits MAX_RECORD_BYTES."""
    size = len(record.model_dump_json().encode("utf-8"))
    if size <= MAX_RECORD_BYTES:
        return record
    steps = [s.model_copy() for s in record.steps]
    limit = MAX_TEXT
    while size > MAX_RECORD_BYTES and limit > 200:
        limit //= 2
        for i, step in enumerate(steps):
            update = {}
            for field in ("observation", "thought"):
                value = getattr(step, field)
                if value and len(value) > limit:
                    update[field] = value[:limit] + "…"
            if update:
                steps[i] = step.model_copy(update=update)
        record = record.model_copy(update={"steps": steps})
        size = len(record.model_dump_json().encode("utf-8"))
    if size > MAX_RECORD_BYTES:
        raise InvalidInputError(
            f"the experience is {size} bytes even with step texts cut short; at most "
            f"{MAX_RECORD_BYTES} bytes are stored (smaller action inputs or fewer steps)")
    return record
