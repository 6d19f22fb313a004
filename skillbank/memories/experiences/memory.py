"""Experience memory: what agents tried, how it went, and the lessons drawn from it.

The truth is an append-only journal, one file per month: `<folder>/<yyyy-mm>.jsonl`, one JSON
event per line, never rewritten:

    {"op": "add", "record": {...Experience...}}          a new experience or lesson
    {"op": "retire", "id": "exp-…", "reason": "…"}       pruned: no longer recalled
    {"op": "duplicate", "id": "exp-…", "of": "exp-…", "count": 3}
                                                          a near-identical record folded into "of"

Chroma (through the hybrid index) is only an index of it, so it can always be rebuilt. What is
embedded is what a future task will resemble: the task and its `when_to_use` line (for a lesson,
the lesson text and its `when_to_use`), never the whole trajectory, whose tool dumps would drown
the signal. The keyword side (BM25) also sees the feedback, lesson texts, tags and outcome.
Every record's metadata carries `loc` ("<file>:<byte offset>"), so reading a recalled record is
one seek in the journal, and the index stays small (the mirror the index keeps in memory holds
metadata, so full trajectories are deliberately not stored there).

`sync()` replays the journal into the index from a checkpoint, `<folder>/.indexed.json` (the
Chroma collection's id and a byte offset per journal file), written atomically after the index
write. A no-change open compares a few file sizes and reads nothing else. A crash between the
journal append and the index write is repaired by the next sync, which re-applies the events after
the checkpoint (each is idempotent: adds are upserts skipped when the index already holds the
same content hash, status events set absolute values). A torn last line is never applied: it is
left unconsumed while it is the last line, and the next append first ends it with a newline so
it becomes one skipped bad line instead of corrupting the next event. When the collection is new
(reindex, deleted chroma folder, another server) or a journal shrank, the whole journal is
replayed and index entries it does not know are removed.

Writes: `record` and `record_many` share one path. Records are validated first (a batch is
refused whole when one is invalid), every text is embedded in one call outside the write lock,
then, under it, near-duplicates are decided in order as if each earlier record of the batch were
already indexed, and the batch is one journal append (one fsync) and one index upsert. `import_`
stores its lines the same way, `IMPORT_BATCH` at a time (under the write lock for the whole file).

Ranking: the index's fused rank score, floored (a hit needs real dense or keyword evidence), plus
a small prior: helpfulness from the usage log (marks), an exploration bonus for rarely recalled
records and a recency bonus. The prior is sized against reciprocal-rank scores (about 1/61 for a
first place) so it reorders near ties and never lifts a poor match over a clearly better one.
Every query is filtered by namespace and active status in Chroma and in BM25 alike: nothing
crosses namespaces.
"""

from __future__ import annotations

import hashlib
import inspect
import json

from pydantic_core import PydanticSerializationError
import logging
import math
import os
import re
import threading
import time
import uuid
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
from pydantic import ValidationError

from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.fsutil import append_line, atomic_write, check_text
from skillbank.index import RRF_K, HybridIndex, IndexHit, IndexItem, matches
from skillbank.records import (
    MAX_SHORT,
    MAX_STEPS,
    MAX_TAGS,
    MAX_TEXT,
    Experience,
    Finding,
    Hit,
    Lesson,
    Step,
    SyncReport,
    utcnow,
)
from skillbank.usage import UsageLog

log = logging.getLogger("skillbank.experiences")

__all__ = ["ExperienceMemory", "steps_from_messages", "CHECKPOINT"]

CHECKPOINT = ".indexed.json"
_JOURNAL = re.compile(r"^\d{4}-\d{2}\.jsonl$")
_ID = re.compile(r"^(exp|lsn)-[0-9a-f]{12}$")
OUTCOMES = ("success", "failure", "partial", "unknown")
OPPOSITE = {"success": ["failure", "partial"], "failure": ["success"], "partial": ["success"]}

#: Limits beyond the record model's own: memory is fed by models and networks.
MAX_TAG_CHARS = 100
MAX_LESSONS = 50
MAX_MESSAGES = 5_000
MAX_NAMESPACE = 128
MAX_RECORD_BYTES = 1 << 20  # a stored record (steps included) is at most 1 MiB of JSON
MAX_K = 200
TASK_EMBED_CHARS = 1_500  # the model reads ~256 tokens: keep room for when_to_use

#: Ranking prior (see the module docstring). Near the top, a fused reciprocal-rank score drops
#: by ~0.0005 per place (two lists, ~0.00026 each), so: marks can move a record up to ~8 places
#: once many agree (as `UsageLog.prior` does for skills), exploration ~1 place, recency ~1.
UTILITY_WEIGHT = 0.004  # ± at most this, from the marks (helped / not helped)
EXPLORE_WEIGHT = 0.0005  # + this / sqrt(1 + uses): rarely recalled records get a look
RECENCY_WEIGHT = 0.0005  # + this, halving every RECENCY_HALF_LIFE_DAYS
RECENCY_HALF_LIFE_DAYS = 30.0
MIN_KEYWORD = 0.25  # BM25 share of the query's best possible score that counts as evidence
DUPLICATE_CANDIDATES = 20
#: Filters are applied by over-fetching unfiltered results (cheap in Chroma and BM25) and keeping
#: those that pass; only when too few pass is the filter handed to the index (exact either way).
OVERFETCH = 4
MAX_OVERFETCH = 16  # dense: Chroma's cost grows with n (100k records: n=1600 ~15 ms)
MAX_OVERFETCH_KEYWORD = 64  # BM25's top-n is cheap; scanning what it returns is the cost
_CACHE_SIZE = 4096
_BATCH = 2048
IMPORT_BATCH = 256  # import lines stored per batch (see `record_many`)


# ------------------------------------------------------------------------------------------------
# Chat messages -> steps (duck-typed: LangChain messages, LlamaIndex ChatMessage, OpenAI dicts)
# ------------------------------------------------------------------------------------------------

_ROLES = {
    "user": "user", "human": "user",
    "assistant": "assistant", "ai": "assistant", "model": "assistant", "chatbot": "assistant",
    "system": "system", "developer": "system",
    "tool": "tool", "function": "tool", "tool_result": "tool",
}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _role(message: Any) -> str:
    raw = _get(message, "role")
    if raw is None:
        raw = _get(message, "type")  # LangChain: human / ai / system / tool
    raw = getattr(raw, "value", raw)  # LlamaIndex MessageRole is a str Enum
    return _ROLES.get(str(raw or "").lower(), str(raw or "").lower())


def _parse_arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        text = arguments.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return arguments
    return arguments


def _text_of(content: Any) -> str:
    """Plain text of a message content: a string, or a list of text parts/blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
                continue
            kind = str(_get(block, "type", None) or _get(block, "block_type", None) or "text")
            if kind in ("text", "input_text", "output_text"):
                text = _get(block, "text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(p for p in parts if p)
    text = _get(content, "text")
    return text if isinstance(text, str) else str(content)


def _tool_calls(message: Any) -> list[tuple[str | None, str, Any]]:
    """(call id, tool name, arguments) of every tool call an assistant message makes."""
    calls: list[tuple[str | None, str, Any]] = []
    sources: list[Any] = []
    for found in (_get(message, "tool_calls"),
                  (_get(message, "additional_kwargs") or {}).get("tool_calls")
                  if isinstance(_get(message, "additional_kwargs"), Mapping) else None):
        if found:
            sources.extend(found)
            break
    for call in sources:
        function = _get(call, "function")
        if function is not None:  # OpenAI: {"id", "function": {"name", "arguments"}}
            name, args = _get(function, "name"), _get(function, "arguments")
        else:  # LangChain: {"name", "args", "id"}
            name = _get(call, "name")
            args = _get(call, "args", _get(call, "arguments", _get(call, "input")))
        call_id = _get(call, "id", None) or _get(call, "tool_call_id", None) or _get(call, "call_id", None)
        if name:
            calls.append((call_id, str(name), _parse_arguments(args)))
    legacy = _get(message, "function_call")
    if not calls and legacy:  # OpenAI's legacy single function call
        calls.append((None, str(_get(legacy, "name") or "function"),
                      _parse_arguments(_get(legacy, "arguments"))))
    if not calls:  # content blocks: Anthropic tool_use, LangChain tool_call, LlamaIndex ToolCallBlock
        blocks = _get(message, "blocks")
        if not isinstance(blocks, (list, tuple)):
            blocks = _get(message, "content")
        if isinstance(blocks, (list, tuple)):
            for block in blocks:
                if isinstance(block, str):
                    continue
                kind = str(_get(block, "type", None) or _get(block, "block_type", None) or "")
                if kind in ("tool_use", "tool_call", "function_call"):
                    name = _get(block, "name") or _get(block, "tool_name")
                    args = _get(block, "input", _get(block, "args", _get(block, "arguments",
                                _get(block, "tool_kwargs"))))
                    call_id = _get(block, "id", None) or _get(block, "tool_call_id", None) \
                        or _get(block, "call_id", None)
                    if name:
                        calls.append((call_id, str(name), _parse_arguments(args)))
    return calls


def _tool_results(message: Any) -> list[tuple[str | None, str | None, str]]:
    """Tool results carried as content blocks of a user message (Anthropic style)."""
    content = _get(message, "content")
    results: list[tuple[str | None, str | None, str]] = []
    if isinstance(content, (list, tuple)):
        for block in content:
            if not isinstance(block, str) and _get(block, "type") == "tool_result":
                inner = _get(block, "content")
                results.append((_get(block, "tool_use_id"), None,
                                _text_of(inner) if not isinstance(inner, str) else inner))
    return results


def _tool_call_id(message: Any) -> str | None:
    value = _get(message, "tool_call_id")
    if value is None:
        extra = _get(message, "additional_kwargs")
        if isinstance(extra, Mapping):
            value = extra.get("tool_call_id") or extra.get("call_id")
    return None if value is None else str(value)


def _tool_name(message: Any) -> str | None:
    name = _get(message, "name")
    if not name:
        extra = _get(message, "additional_kwargs")
        if isinstance(extra, Mapping):
            name = extra.get("name") or extra.get("tool_name")
    return str(name) if name else None


def _normalise_item(item: Any) -> Any:
    """("role", "text") pairs and OpenAI Responses API items become chat-completion dicts."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
        return {"role": item[0], "content": item[1]}
    if isinstance(item, Mapping) and "role" not in item:
        kind = item.get("type")
        if kind == "function_call":
            return {"role": "assistant", "content": None, "tool_calls": [
                {"id": item.get("call_id") or item.get("id"),
                 "function": {"name": item.get("name"), "arguments": item.get("arguments")}}]}
        if kind == "function_call_output":
            return {"role": "tool", "tool_call_id": item.get("call_id"),
                    "content": item.get("output")}
    return item


def steps_from_messages(messages: Sequence[Any]) -> tuple[list[Step], str | None]:
    """Turn a chat trajectory into steps; returns (steps, text of the first user message).

    Accepts LangChain message objects (`.type`, `.content`, `.tool_calls`, `.tool_call_id`),
    LlamaIndex `ChatMessage` (`.role`, `.content`, `.blocks`, `.additional_kwargs`), and dicts in
    OpenAI chat-completions form (`role`, `content`, `tool_calls`, role "tool" with
    `tool_call_id`), Anthropic content blocks and OpenAI Responses items, all duck-typed.
    Assistant text becomes a thought, each tool call an action with its input, each tool result
    the observation of the call it answers (by id, else the oldest open call of that name), later
    user messages observations, and a final assistant text a last "final answer" step.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidInputError("messages must be a list of chat messages")
    messages = list(messages)
    if len(messages) > MAX_MESSAGES:
        raise InvalidInputError(f"{len(messages)} messages; at most {MAX_MESSAGES} are recorded")
    steps: list[Step] = []
    first_user: str | None = None
    open_calls: dict[str, int] = {}  # call id -> step index
    pending: list[int] = []  # steps with an action and no observation yet, oldest first
    items = [_normalise_item(m) for m in messages]
    last_assistant = max((i for i, m in enumerate(items) if _role(m) == "assistant"), default=-1)

    def observe(call_id: str | None, name: str | None, text: str) -> None:
        index = open_calls.pop(call_id, None) if call_id else None
        if index is None:
            index = next((i for i in pending if name is None or steps[i].action == name), None)
        if index is None:
            steps.append(Step(action=name, observation=text))
            return
        if index in pending:
            pending.remove(index)
        step = steps[index]
        observation = text if step.observation is None else f"{step.observation}\n{text}"
        steps[index] = step.model_copy(update={"observation": observation[:MAX_TEXT]})

    for position, message in enumerate(items):
        role = _role(message)
        if role == "system":
            continue
        if role == "tool":
            observe(_tool_call_id(message), _tool_name(message), _text_of(_get(message, "content")))
            continue
        if role == "user":
            results = _tool_results(message)
            for call_id, name, text in results:
                observe(call_id, name, text)
            text = _text_of(_get(message, "content")).strip()
            if results and not text:
                continue
            if first_user is None and text:
                first_user = text
            elif text:
                steps.append(Step(observation=f"User: {text}"[:MAX_TEXT]))
            continue
        if role != "assistant":
            continue
        text = _text_of(_get(message, "content")).strip()
        calls = _tool_calls(message)
        if calls:
            for number, (call_id, name, args) in enumerate(calls):
                steps.append(Step(thought=(text or None) if number == 0 else None, action=name,
                                  action_input=_jsonable(args)))
                pending.append(len(steps) - 1)
                if call_id:
                    open_calls[str(call_id)] = len(steps) - 1
        elif text and position == last_assistant:
            steps.append(Step(action="final answer", observation=text))
        elif text:
            steps.append(Step(thought=text))
    return _fit_steps(steps), first_user


def _fit_steps(steps: list[Step]) -> list[Step]:
    """Keep the head and the tail of an over-long trajectory, with a marker between."""
    if len(steps) <= MAX_STEPS:
        return steps
    head = MAX_STEPS // 2
    tail = MAX_STEPS - head - 1
    skipped = len(steps) - head - tail
    marker = Step(thought=f"[{skipped} steps omitted]")
    return steps[:head] + [marker] + steps[-tail:]


def _jsonable(value: Any) -> Any:
    """Tool inputs as plain JSON data (anything else becomes its string form)."""
    try:
        return json.loads(json.dumps(value, default=str, allow_nan=False))
    except (TypeError, ValueError):
        return str(value)


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------

def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _normalise_text(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", (text or "").lower()))


def _timestamp(value: datetime) -> float:
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.timestamp()


def _since_timestamp(since: Any) -> float | None:
    """`since` as a unix time: a datetime, an ISO string, a number, or a timedelta (ago)."""
    if since is None:
        return None
    if isinstance(since, timedelta):
        return time.time() - since.total_seconds()
    if isinstance(since, datetime):
        return _timestamp(since)
    if isinstance(since, (int, float)) and not isinstance(since, bool) and math.isfinite(since):
        return float(since)
    if isinstance(since, str):
        try:
            return _timestamp(datetime.fromisoformat(since.strip().replace("Z", "+00:00")))
        except ValueError:
            pass
    raise InvalidInputError(
        f"since={since!r} is not a time: pass a datetime, an ISO date such as '2026-01-31', "
        "a unix timestamp, or a timedelta meaning 'within the last …'")


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
        if data.get(field) is not None and not isinstance(data[field], str):
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
            out = Lesson(text=lesson.strip(), when_to_use=when_to_use[:MAX_SHORT])
        elif isinstance(lesson, Mapping):
            data = dict(lesson)
            if isinstance(data.get("text"), str):
                data["text"] = data["text"].strip()
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
        tag = " ".join(tag.split())
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


# ------------------------------------------------------------------------------------------------
# Index items
# ------------------------------------------------------------------------------------------------

def embed_text(record: Experience) -> str:
    """What is embedded: the task (or the lesson text) and the `when_to_use` line."""
    head = record.task.strip()
    if len(head) > TASK_EMBED_CHARS:
        head = head[:TASK_EMBED_CHARS].rsplit(" ", 1)[0]
    when = record.when_to_use.strip()
    return f"{head}\n{when}" if when and when not in head else head


def keyword_text(record: Experience) -> str:
    """What BM25 sees: task, when_to_use, feedback, lessons, tags and outcome."""
    parts = [record.task, record.when_to_use, record.feedback or ""]
    parts += [lesson.text for lesson in record.lessons]
    parts += [lesson.when_to_use for lesson in record.lessons if lesson.when_to_use != record.when_to_use]
    parts += [" ".join(record.tags), record.outcome]
    return "\n".join(p for p in parts if p)


def content_key(record: Experience) -> str:
    """What two records must share, beyond a near-identical task, to be one (see `record`)."""
    if record.kind == "lesson":
        return ""
    text = " | ".join([record.feedback or ""] + [lesson.text for lesson in record.lessons])
    return hashlib.sha256(_normalise_text(text).encode()).hexdigest()[:16]


def _duplicate_clauses(record: Experience) -> list[dict[str, Any]]:
    """What an active record must share with this one to be its near-duplicate (see `record`)."""
    clauses: list[dict[str, Any]] = [
        {"namespace": record.namespace}, {"status": "active"}, {"kind": record.kind},
        {"outcome": record.outcome}]
    if record.kind == "experience":
        clauses.append({"content": content_key(record)})
    return clauses


def _bucket(record: Experience) -> tuple[str, ...]:
    """`_duplicate_clauses` as a key: records in one bucket may fold into each other."""
    return (record.namespace, record.kind, record.outcome, content_key(record))


def _index_item(record: Experience, loc: str, digest: str, status: str, duplicates: int) -> IndexItem:
    metadata = {
        "kind": record.kind,
        "outcome": record.outcome,
        "namespace": record.namespace,
        "tags": list(record.tags) or None,  # Chroma refuses empty lists; absent means none
        "created": _timestamp(record.created),
        "status": status,
        "source": record.source or None,
        "hash": digest,
        "content": content_key(record),
        "loc": loc,
        "duplicates": int(duplicates),
    }
    return IndexItem(id=record.id, embed_texts=[embed_text(record)],
                     keyword_text=keyword_text(record), metadata=metadata)


def _digest(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:32]


def _predicate(where: dict[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """`index.matches(where, meta)` as one flat function, for the `$and` filters recall builds.

    Scanning thousands of candidates per query is where the time goes under a selective filter;
    a flat list of checks costs about half of the generic recursive evaluation.
    """
    clauses = where.get("$and") if list(where) == ["$and"] else [where]
    checks: list[tuple[str, str, Any]] = []
    for clause in clauses or []:
        if not isinstance(clause, dict) or len(clause) != 1:
            return lambda meta: matches(where, meta)
        (key, condition), = clause.items()
        if key.startswith("$"):
            return lambda meta: matches(where, meta)
        if not isinstance(condition, dict):
            condition = {"$eq": condition}
        for op, value in condition.items():
            if op not in ("$eq", "$in", "$contains", "$gte"):
                return lambda meta: matches(where, meta)
            checks.append((key, op, frozenset(value) if op == "$in" else value))

    def passes(meta: Mapping[str, Any]) -> bool:
        for key, op, value in checks:
            found = meta.get(key)
            if op == "$eq":
                if found != value:
                    return False
            elif op == "$in":
                if found not in value:
                    return False
            elif op == "$contains":
                if not isinstance(found, (list, tuple)) or value not in found:
                    return False
            elif found is None or found < value:
                return False
        return True

    return passes


class _Pending:
    """The folded state of one record while a sync replays events."""

    __slots__ = ("record", "loc", "digest", "status", "duplicates")

    def __init__(self) -> None:
        self.record: Experience | None = None
        self.loc = ""
        self.digest = ""
        self.status: str | None = None
        self.duplicates: int | None = None


class _Pool:
    """Unit vectors of the records a batch added to one duplicate bucket, for exact cosines."""

    __slots__ = ("ids", "matrix")

    def __init__(self, dim: int) -> None:
        self.ids: list[str] = []
        self.matrix = np.empty((8, dim), dtype=np.float32)

    def add(self, record_id: str, unit: np.ndarray) -> None:
        if len(self.ids) == len(self.matrix):
            self.matrix = np.concatenate([self.matrix, np.empty_like(self.matrix)])
        self.matrix[len(self.ids)] = unit
        self.ids.append(record_id)

    def best(self, unit: np.ndarray) -> tuple[str, float]:
        similarities = self.matrix[:len(self.ids)] @ unit
        position = int(np.argmax(similarities))
        return self.ids[position], float(similarities[position])


def _unit(vector: Any) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


class _Batch:
    """Records being stored together, made with the write lock held (see `record_many`).

    `store` decides for one record what `record` decides (fold it into a near-duplicate, or add
    it and its lesson records) as if every record stored before it in the batch were already
    indexed: the index holds what it held before the batch, and the batch's own adds are
    compared here, exactly, bucketed by what a duplicate must share. A near-duplicate is the
    most similar qualifying record at or above the threshold, wherever it is. `flush` appends
    every event to the journal at once and applies them to the index in one upsert.
    """

    def __init__(self, memory: "ExperienceMemory", vectors: Mapping[str, Any]) -> None:
        self.memory = memory
        self.vectors = vectors  # embedded text -> vector (ExperienceMemory._embed)
        self.threshold = float(memory.settings.duplicate_threshold)
        self.events: list[dict[str, Any]] = []
        self.record_vectors: dict[str, Any] = {}  # id -> vector, so the upsert embeds nothing
        self.added: set[str] = set()
        self.counts: dict[str, int] = {}  # duplicate counts of records folded into so far
        self.pools: dict[tuple[str, ...], _Pool] = {}

    def taken(self, record_id: str) -> bool:
        """Whether an id is in use, in the index or in this batch."""
        return record_id in self.added or self.memory.index.metadata(record_id) is not None

    def _duplicate_of(self, record: Experience, vector: Any) -> str | None:
        if self.threshold > 1.0:
            return None
        found, similarity = self.memory._nearest_indexed(record, vector)
        pool = self.pools.get(_bucket(record))
        if pool is not None:
            twin, twin_similarity = pool.best(_unit(vector))
            if twin_similarity >= self.threshold - 1e-6 and twin != record.id and \
                    (found is None or twin_similarity > similarity):
                found = twin
        return found

    def store(self, experience: Experience, *, with_lessons: bool = True,
              status: str = "active") -> str:
        """Plan one record (and its lesson records) unless it is a duplicate; returns its id,
        or the id of the record it was folded into."""
        vector = self.vectors[embed_text(experience)]
        existing = self._duplicate_of(experience, vector)
        if existing is not None:
            if existing in self.counts:
                count = self.counts[existing] + 1
            else:
                meta = self.memory.index.metadata(existing) or {}
                count = int(meta.get("duplicates", 0) or 0) + 1
            self.counts[existing] = count
            self.events.append({"op": "duplicate", "id": experience.id, "of": existing,
                                "count": count, "at": utcnow().isoformat()})
            return existing
        records = [(experience, vector)]
        if with_lessons and experience.kind == "experience" and experience.lessons:
            # Lessons are checked against what was stored before this record, not each other.
            for lesson in self.memory._lesson_candidates(experience):
                lesson_vector = self.vectors[embed_text(lesson)]
                if self._duplicate_of(lesson, lesson_vector) is None:
                    records.append((lesson, lesson_vector))
        for record, record_vector in records:
            self.events.append({"op": "add", "record": self.memory._dump(record)})
            self.record_vectors[record.id] = record_vector
            self.added.add(record.id)
        if status != "active":
            self.events.append({"op": "retire", "id": experience.id, "reason": "imported retired",
                                "at": utcnow().isoformat()})
        for record, record_vector in records:
            if record is experience and status != "active":
                continue  # a retired record is no one's twin
            unit = _unit(record_vector)
            pool = self.pools.get(_bucket(record))
            if pool is None:
                pool = self.pools[_bucket(record)] = _Pool(len(unit))
            pool.add(record.id, unit)
        return experience.id

    def flush(self) -> None:
        """One journal append (one fsync) for every event, then one upsert of the adds."""
        if self.events:
            self.memory._append(self.events, self.record_vectors)
        self.events = []


# ------------------------------------------------------------------------------------------------
# The memory
# ------------------------------------------------------------------------------------------------

class ExperienceMemory:
    """Experiences and lessons: journal on disk, hybrid index in Chroma, usage-aware recall."""

    def __init__(
        self,
        folder: Path,
        index: HybridIndex,
        usage: UsageLog,
        *,
        settings: Any = None,
        distiller: Callable[[], Any] | Any = None,
        write_lock: Any = None,
    ) -> None:
        from skillbank.settings import Settings

        self.folder = Path(folder)
        self.index = index
        self.usage = usage
        self.settings = settings or Settings()
        self._distiller = distiller
        self.write_lock = write_lock or threading.RLock()
        self._cache: OrderedDict[str, Experience] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.folder.mkdir(parents=True, exist_ok=True)

    # Properties ---------------------------------------------------------------------------------
    @property
    def distiller(self) -> Any:
        """The bank's distiller (the bank passes a callable so it is built only when used)."""
        value = self._distiller
        if value is None:
            from skillbank.distill import RuleDistiller

            return RuleDistiller()
        if callable(value) and not hasattr(value, "lessons_from_experience"):
            return value()
        return value

    @property
    def checkpoint_path(self) -> Path:
        return self.folder / CHECKPOINT

    def _namespace(self, namespace: str | None) -> str:
        value = self.settings.namespace if namespace is None else namespace
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAMESPACE \
                or any(ord(c) < 32 for c in value):
            raise InvalidInputError(
                f"invalid namespace {value!r}: use 1-{MAX_NAMESPACE} printable characters")
        return value

    # Recording ----------------------------------------------------------------------------------
    def record(
        self,
        task: str | None = None,
        outcome: str = "unknown",
        steps: Sequence[Step | Mapping[str, Any]] | None = None,
        score: float | None = None,
        feedback: str | None = None,
        lessons: Sequence[str | Lesson | Mapping[str, Any]] | None = None,
        when_to_use: str = "",
        tags: Sequence[str] | None = None,
        namespace: str | None = None,
        messages: Sequence[Any] | None = None,
        distill: bool = False,
    ) -> str:
        """Store one experience; returns its id (`exp-…`), or the id of the one it duplicates.

        `steps` are Step objects or dicts; `messages` is a raw chat trajectory instead (see
        `steps_from_messages`), whose first user message is the task when `task` is None.
        `lessons` are stored on the experience and also as lesson records (`lsn-…`, kind
        "lesson", source = the experience) so recall finds them on their own. `distill=True`
        asks the distiller for lessons as well.

        Near-duplicates are folded, not stored twice: when an active record of the same namespace
        has the same outcome, a cosine of at least `settings.duplicate_threshold` on the embedded
        text (task + when_to_use) and the same feedback and lessons (compared after lower-casing
        and dropping punctuation), a `duplicate` event counts one more on it and its id is
        returned. Differing feedback or lessons are new knowledge, so they are kept.
        To store many at once, `record_many` is the same in one journal write and one upsert.
        """
        if not isinstance(distill, bool):
            raise InvalidInputError("distill must be true or false")
        experience = self._prepare(task=task, outcome=outcome, steps=steps, score=score,
                                   feedback=feedback, lessons=lessons, when_to_use=when_to_use,
                                   tags=tags, namespace=namespace, messages=messages)
        eid = self._commit([experience])[0]
        if distill:
            self._distill_quietly(eid)
        return eid

    def record_many(self, records: Iterable[Mapping[str, Any]]) -> list[str]:
        """Store many experiences at once; returns their ids in input order.

        Each item is a dict of `record`'s keyword arguments (task, outcome, steps, score,
        feedback, lessons, when_to_use, tags, namespace, messages, distill). The result is what
        calling `record` on each in turn gives (near-duplicates fold the same way, into earlier
        records of the same batch too, and a folded item returns the id it was counted into),
        but every item is validated before anything is written (an invalid one raises
        `InvalidInputError` naming `records[i]`, and nothing is stored), all texts are embedded
        in one call, and the batch is one journal append and one index upsert: 3-4x the rate of
        `record` in a loop with the real model, which is then most of the cost, and 15x with
        the hash embedding (docs/benchmarks.md). The whole batch is held in memory: pass
        batches of a few hundred to a few thousand.
        """
        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
            raise InvalidInputError("records must be a list of dicts of `record` arguments "
                                    "(task, outcome, steps, …)")
        signature = inspect.signature(ExperienceMemory.record)
        prepared: list[Experience] = []
        distill: list[bool] = []
        for number, item in enumerate(records):
            try:
                if not isinstance(item, Mapping):
                    raise InvalidInputError(
                        f"is {type(item).__name__}, not a dict of `record` arguments")
                try:
                    bound = signature.bind(self, **item)
                except TypeError as exc:  # an unknown or non-string key
                    raise InvalidInputError(
                        f"{exc}; `record` takes "
                        f"{', '.join(p for p in signature.parameters if p != 'self')}") from None
                bound.apply_defaults()
                arguments = dict(bound.arguments)
                del arguments["self"]
                wanted = arguments.pop("distill")
                if not isinstance(wanted, bool):  # "no" is not False
                    raise InvalidInputError("distill must be true or false")
                distill.append(wanted)
                prepared.append(self._prepare(**arguments))
            except InvalidInputError as exc:
                raise InvalidInputError(f"records[{number}]: {exc}", exc.findings) from None
        ids = self._commit(prepared)
        for eid, wanted in zip(ids, distill):
            if wanted:
                self._distill_quietly(eid)
        return ids

    def record_messages(self, messages: Sequence[Any], task: str | None = None,
                        outcome: str = "unknown", **kw: Any) -> str:
        """`record` from a raw chat trajectory (LangChain, LlamaIndex or OpenAI-style messages)."""
        return self.record(task=task, outcome=outcome, messages=messages, **kw)

    def _distill_quietly(self, eid: str) -> None:
        try:
            self.distill(eid)
        except Exception as exc:  # the experience is stored; a distiller failure must not lose it
            log.warning("distilling %s failed: %s", eid, exc)

    def _prepare(self, **fields: Any) -> Experience:
        """Validate one record's fields (see `_build`) and make sure it can be journaled."""
        try:
            experience = self._build(**fields)
            # Lone surrogates pass pydantic but cannot be journaled as UTF-8: refuse them first.
            check_text(json.dumps(experience.model_dump(mode="python"), default=str,
                                  ensure_ascii=False), "experience")
        except (UnicodeError, PydanticSerializationError):
            raise InvalidInputError("the experience contains characters that are not valid "
                                    "Unicode text (lone surrogates)") from None
        return experience

    def _build(self, *, task: Any, outcome: Any, steps: Any, score: Any, feedback: Any,
               lessons: Any, when_to_use: Any, tags: Any, namespace: Any, messages: Any,
               record_id: str | None = None, created: datetime | None = None,
               kind: str = "experience", source: str | None = None) -> Experience:
        if messages is not None and steps:
            raise InvalidInputError("pass either steps or messages, not both")
        message_steps: list[Step] = []
        if messages is not None:
            message_steps, first_user = steps_from_messages(messages)
            if task is None:
                task = first_user
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
            "namespace": self._namespace(namespace),
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

    def _lesson_records(self, experience: Experience, lessons: Sequence[Lesson]) -> list[Experience]:
        out = []
        for lesson in lessons:
            out.append(Experience(
                id=_new_id("lsn"), task=lesson.text, lessons=[lesson],
                when_to_use=lesson.when_to_use or experience.when_to_use,
                outcome=experience.outcome, tags=list(experience.tags),
                namespace=experience.namespace, kind="lesson", source=experience.id,
            ))
        return out

    def _lesson_candidates(self, experience: Experience) -> list[Experience]:
        """The lesson records an experience brings, one per distinct lesson text."""
        seen: set[str] = set()
        out = []
        for lesson in self._lesson_records(experience, experience.lessons):
            key = _normalise_text(embed_text(lesson))
            if key not in seen:
                out.append(lesson)
            seen.add(key)
        return out

    def _embed(self, items: Sequence[tuple[Experience, bool]]) -> dict[str, Any]:
        """Vectors of every text these records (and, when flagged, their lessons) would embed.

        One embedding call for the lot, each distinct text once; keyed by text, because the
        ids of lesson records (and of imported records) are only settled when they are stored.
        """
        from skillbank.embeddings import embed_texts

        texts: dict[str, None] = {}
        for record, with_lessons in items:
            texts[embed_text(record)] = None
            if with_lessons and record.kind == "experience" and record.lessons:
                for lesson in self._lesson_candidates(record):
                    texts[embed_text(lesson)] = None
        order = list(texts)
        vectors = embed_texts(self.index.embedding_function, order) if order else []
        return dict(zip(order, vectors))

    def _commit(self, records: Sequence[Experience], *, with_lessons: bool = True) -> list[str]:
        """Store prepared records as `record` would one by one: one embedding call (made
        before the write lock is taken), one journal append, one index upsert. Returns the id
        each record was stored or folded under, in order."""
        if not records:
            return []
        vectors = self._embed([(record, with_lessons) for record in records])
        with self.write_lock:
            batch = _Batch(self, vectors)
            ids = [batch.store(record, with_lessons=with_lessons) for record in records]
            batch.flush()
        return ids

    def _dump(self, record: Experience) -> dict[str, Any]:
        return record.model_dump(mode="json", exclude={"usage", "status", "duplicates"})

    def _nearest_indexed(self, record: Experience, vector: Any) -> tuple[str | None, float]:
        """The indexed active record this one would only repeat (or None), and its cosine.

        That is the most similar record at or above `settings.duplicate_threshold` that has
        the same namespace, kind, outcome and content key (see `record`).
        """
        threshold = float(self.settings.duplicate_threshold)
        where = {"$and": _duplicate_clauses(record)}
        # Nearest records of any namespace first (an unfiltered query is the cheap one); only
        # when all of them are that close and none qualifies is the filter given to Chroma.
        nearest = self.index.dense(vector, DUPLICATE_CANDIDATES, None)
        ranked = sorted(nearest.items(), key=lambda kv: kv[1], reverse=True)
        for found, similarity in ranked:
            if similarity < threshold - 1e-6:
                return None, 0.0
            meta = self.index.metadata(found)
            if found != record.id and meta is not None and matches(where, meta):
                return found, similarity
        if len(ranked) < DUPLICATE_CANDIDATES:
            return None, 0.0
        best = self.index.dense(vector, DUPLICATE_CANDIDATES, where)
        if best:
            found, similarity = max(best.items(), key=lambda kv: kv[1])
            if similarity >= threshold - 1e-6 and found != record.id:
                return found, similarity
        return None, 0.0

    # Journal ------------------------------------------------------------------------------------
    def _journal_files(self) -> list[Path]:
        try:
            names = sorted(e.name for e in os.scandir(self.folder)
                           if e.is_file() and _JOURNAL.match(e.name))
        except FileNotFoundError:
            return []
        return [self.folder / name for name in names]

    def _current_journal(self) -> Path:
        return self.folder / f"{utcnow():%Y-%m}.jsonl"

    def _append(self, events: list[dict[str, Any]], vectors: Mapping[str, Any] | None = None
                ) -> None:
        """Append events to this month's journal (one fsync), then apply them to the index.

        Called with the write lock held. The checkpoint moves past the new lines only when it
        already covered everything before them; otherwise the next sync catches up.
        """
        path = self._current_journal()
        size = path.stat().st_size if path.exists() else 0
        if size and not _ends_with_newline(path):
            append_line(path, "")  # end a torn last line so it cannot swallow this event
            size = path.stat().st_size
        lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events]
        for line in lines:
            if len(line.encode("utf-8")) > MAX_RECORD_BYTES * 2:
                raise InvalidInputError("record is too large to store")
        append_line(path, "\n".join(lines))
        end = path.stat().st_size
        offset = size
        parsed = []
        for line, event in zip(lines, events):
            parsed.append((event, f"{path.name}:{offset}", _digest(line)))
            offset += len(line.encode("utf-8")) + 1
        checkpoint = self._read_checkpoint()
        self._apply(parsed, vectors=vectors)
        if checkpoint.get("collection") == self._collection_id() and \
                int(checkpoint.get("files", {}).get(path.name, 0)) == size and \
                all(int(checkpoint.get("files", {}).get(p.name, -1)) == p.stat().st_size
                    for p in self._journal_files() if p != path):
            checkpoint["files"][path.name] = end
            self._write_checkpoint(checkpoint)

    def _apply(self, parsed: list[tuple[dict[str, Any], str, str]],
               report: SyncReport | None = None, vectors: Mapping[str, Any] | None = None
               ) -> None:
        """Apply journal events to the index: adds (upsert, skipping same-hash), status events."""
        state: dict[str, _Pending] = {}
        order: list[str] = []
        for event, loc, digest in parsed:
            op = event.get("op")
            if op == "add":
                raw = event.get("record")
                try:
                    record = Experience.model_validate(raw)
                except (ValidationError, TypeError):
                    if report is not None:
                        report.skipped.append(loc)
                    continue
                entry = state.get(record.id)
                if entry is None:
                    entry = state[record.id] = _Pending()
                    order.append(record.id)
                entry.record, entry.loc, entry.digest = record, loc, digest
                entry.status = entry.status if entry.status is not None else "active"
                if record.status != "active" and entry.status == "active":
                    entry.status = record.status
                entry.duplicates = entry.duplicates if entry.duplicates is not None else record.duplicates
            elif op in ("retire", "duplicate", "restore"):
                target = event.get("of") if op == "duplicate" else event.get("id")
                if not isinstance(target, str):
                    if report is not None:
                        report.skipped.append(loc)
                    continue
                entry = state.get(target)
                if entry is None:
                    entry = state[target] = _Pending()
                    order.append(target)
                if op == "retire":
                    entry.status = "retired"
                elif op == "restore":
                    entry.status = "active"
                else:
                    try:
                        entry.duplicates = max(int(event.get("count", 1)), entry.duplicates or 0)
                    except (TypeError, ValueError):
                        entry.duplicates = (entry.duplicates or 0) + 1
            # unknown ops are ignored: a newer version may write events this one does not know
        upserts: list[IndexItem] = []
        for record_id in order:
            entry = state[record_id]
            current = self.index.metadata(record_id)
            if entry.record is not None:
                status = entry.status or "active"
                duplicates = entry.duplicates or 0
                if current is not None and current.get("hash") == entry.digest:
                    changes = {}
                    if current.get("status") != status:
                        changes["status"] = status
                    if int(current.get("duplicates", 0) or 0) != duplicates:
                        changes["duplicates"] = duplicates
                    if current.get("loc") != entry.loc:
                        changes["loc"] = entry.loc
                    if changes:
                        self.index.update_metadata(record_id, **changes)
                        if report is not None:
                            report.changed.append(record_id)
                    elif report is not None:
                        report.unchanged += 1
                    continue
                item = _index_item(entry.record, entry.loc, entry.digest, status, duplicates)
                if vectors and vectors.get(record_id) is not None:
                    item.vectors = [vectors[record_id]]
                upserts.append(item)
                if report is not None:
                    (report.changed if current is not None else report.added).append(record_id)
                with self._cache_lock:
                    self._cache.pop(record_id, None)
            elif current is not None:
                changes = {}
                if entry.status is not None and current.get("status") != entry.status:
                    changes["status"] = entry.status
                if entry.duplicates is not None and int(current.get("duplicates", 0) or 0) != entry.duplicates:
                    changes["duplicates"] = entry.duplicates
                if changes:
                    self.index.update_metadata(record_id, **changes)
                    if report is not None:
                        report.changed.append(record_id)
        for start in range(0, len(upserts), _BATCH):
            embedded = self.index.upsert(upserts[start:start + _BATCH])
            if report is not None:
                report.embedded += embedded

    def _read_events(self, path: Path, start: int, report: SyncReport
                     ) -> tuple[list[tuple[dict[str, Any], str, str]], int]:
        """Complete lines of one journal file from `start`; returns events and the end offset.

        A last line without its newline is left for later (it may be a crash's torn write).
        """
        events: list[tuple[dict[str, Any], str, str]] = []
        offset = start
        with path.open("rb") as handle:
            handle.seek(start)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break
                line_offset = offset
                offset += len(raw)
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if not text.strip():
                    continue
                try:
                    event = json.loads(text)
                    if not isinstance(event, dict):
                        raise ValueError("not an object")
                except ValueError:
                    report.skipped.append(f"{path.name}:{line_offset}")
                    continue
                events.append((event, f"{path.name}:{line_offset}", _digest(text)))
        return events, offset

    # Checkpoint ---------------------------------------------------------------------------------
    def _collection(self) -> Any:
        """The index's Chroma collection, looked up by name through the index's public client.

        Only for its id and count, which need no mirror load: `HybridIndex.count()` reads
        every item's metadata from Chroma first (tens of seconds at 100k records), and a no-change
        sync must stay a few milliseconds.
        """
        return self.index.client.get_collection(
            self.index.name, embedding_function=self.index.embedding_function)

    def _collection_id(self) -> str:
        """The id of the Chroma collection: a new one (reindex, new server) means replay all."""
        try:
            return str(self._collection().id)
        except Exception:
            return ""

    def _collection_count(self) -> int:
        try:
            return int(self._collection().count())
        except Exception:
            return self.index.count()

    def _read_checkpoint(self) -> dict[str, Any]:
        try:
            data = json.loads(self.checkpoint_path.read_text("utf-8"))
            if isinstance(data, dict) and isinstance(data.get("files"), dict):
                return data
        except (OSError, ValueError):
            pass
        return {"collection": "", "files": {}}

    def _write_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        atomic_write(self.checkpoint_path, json.dumps(checkpoint, sort_keys=True))

    # Sync ---------------------------------------------------------------------------------------
    def sync(self) -> SyncReport:
        """Replay the journal into the index from the checkpoint (all of it when the index is new).

        Fast when nothing changed: a few `stat` calls and one collection lookup, no reads.
        """
        started = time.perf_counter()
        report = SyncReport()
        with self.write_lock:
            checkpoint = self._read_checkpoint()
            done: dict[str, int] = {str(k): int(v) for k, v in checkpoint.get("files", {}).items()}
            files = self._journal_files()
            sizes = {p.name: p.stat().st_size for p in files}
            collection = self._collection_id()
            full = (checkpoint.get("collection") != collection
                    or any(done.get(n, 0) > s for n, s in sizes.items())
                    or any(n not in sizes for n in done))
            if not full and any(sizes.values()) and self._collection_count() == 0:
                full = True  # the index was emptied (reindex) while the checkpoint remained
            starts = {n: 0 if full else done.get(n, 0) for n in sizes}
            if not full and all(starts[n] >= sizes[n] for n in sizes):
                report.unchanged = self._collection_count() if sizes else 0
                report.seconds = time.perf_counter() - started
                return report
            events: list[tuple[dict[str, Any], str, str]] = []
            ends: dict[str, int] = {}
            for path in files:
                found, ends[path.name] = self._read_events(path, starts[path.name], report)
                events.extend(found)
            known_before = set(self.index.ids()) if full else set()
            self._apply(events, report)
            if full:
                in_journal = {e["record"].get("id") for e, _, _ in events
                              if e.get("op") == "add" and isinstance(e.get("record"), dict)}
                stale = sorted(known_before - in_journal)
                if stale:
                    self.index.delete(stale)
                    report.removed = stale
                with self._cache_lock:
                    self._cache.clear()
            self._write_checkpoint({"collection": self._collection_id(), "files": ends})
        report.seconds = time.perf_counter() - started
        return report

    # Reading ------------------------------------------------------------------------------------
    def _read_record(self, record_id: str, meta: Mapping[str, Any]) -> Experience:
        with self._cache_lock:
            cached = self._cache.get(record_id)
            if cached is not None:
                self._cache.move_to_end(record_id)
        if cached is None:
            cached = self._load_from_journal(record_id, str(meta.get("loc", "")))
            with self._cache_lock:
                self._cache[record_id] = cached
                if len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return cached.model_copy(update={
            "status": meta.get("status", "active"),
            "duplicates": int(meta.get("duplicates", 0) or 0),
            "usage": self.usage.get(record_id),
        })

    def _load_from_journal(self, record_id: str, loc: str) -> Experience:
        name, _, offset = loc.rpartition(":")
        path = self.folder / name
        if _JOURNAL.match(name) and offset.isdigit() and path.is_file():
            with path.open("rb") as handle:
                handle.seek(int(offset))
                raw = handle.readline()
            try:
                event = json.loads(raw)
                if event.get("op") == "add" and event["record"].get("id") == record_id:
                    return Experience.model_validate(event["record"])
            except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
                pass
        # The pointer is stale (a hand-edited journal): look the record up the slow way.
        for path in reversed(self._journal_files()):
            with path.open("rb") as handle:
                for raw in handle:
                    if record_id.encode() not in raw:
                        continue
                    try:
                        event = json.loads(raw)
                        if event.get("op") == "add" and event["record"].get("id") == record_id:
                            return Experience.model_validate(event["record"])
                    except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
                        continue
        raise NotFoundError(
            f"experience {record_id!r} is indexed but not in the journal; run `skillbank reindex`")

    def get(self, record_id: str) -> Experience:
        """One experience or lesson by id, with its status, duplicate count and usage."""
        if not isinstance(record_id, str) or not _ID.match(record_id.strip()):
            raise NotFoundError(
                f"no experience {record_id!r}: ids look like 'exp-' or 'lsn-' and 12 hex digits")
        record_id = record_id.strip()
        meta = self.index.metadata(record_id)
        if meta is None:
            raise NotFoundError(f"no experience or lesson with id {record_id!r}")
        return self._read_record(record_id, meta)

    def __contains__(self, record_id: object) -> bool:
        return isinstance(record_id, str) and self.index.metadata(record_id) is not None

    def _selected(self, namespace: str | None, kind: str | None,
                  include_retired: bool = False) -> list[tuple[str, dict[str, Any]]]:
        ns = None if namespace == "*" else self._namespace(namespace)
        if kind not in (None, "experience", "lesson"):
            raise InvalidInputError(f"unknown kind {kind!r}; use 'experience' or 'lesson'")
        out = []
        for record_id in self.index.ids():
            meta = self.index.metadata(record_id) or {}
            if ns is not None and meta.get("namespace") != ns:
                continue
            if kind is not None and meta.get("kind") != kind:
                continue
            if not include_retired and meta.get("status", "active") != "active":
                continue
            out.append((record_id, meta))
        return out

    def list(self, namespace: str | None = None, kind: str | None = None, limit: int = 50,
             *, include_retired: bool = False) -> list[Experience]:
        """Newest first. `namespace=None` is the bank's namespace; "*" lists every namespace."""
        if not isinstance(limit, int) or limit < 0:
            raise InvalidInputError("limit must be a non-negative integer")
        selected = self._selected(namespace, kind, include_retired)
        selected.sort(key=lambda item: (float(item[1].get("created", 0.0)), item[0]), reverse=True)
        return [self._read_record(i, m) for i, m in selected[:limit]]

    def count(self, namespace: str | None = None, kind: str | None = None) -> int:
        """Active records (experiences and lessons unless `kind`); "*" counts every namespace."""
        return len(self._selected(namespace, kind))

    # Recall -------------------------------------------------------------------------------------
    def _where(self, namespace: str, outcome: Any, tags: Any, since: Any, kind: Any,
               ) -> dict[str, Any]:
        clauses: list[dict[str, Any]] = [{"namespace": namespace}, {"status": "active"}]
        outcomes = _outcomes(outcome)
        if outcomes:
            clauses.append({"outcome": outcomes[0]} if len(outcomes) == 1
                           else {"outcome": {"$in": outcomes}})
        for tag in _clean_tags(tags):
            clauses.append({"tags": {"$contains": tag}})
        since_ts = _since_timestamp(since)
        if since_ts is not None:
            clauses.append({"created": {"$gte": since_ts}})
        if kind is not None:
            if kind not in ("experience", "lesson"):
                raise InvalidInputError(f"unknown kind {kind!r}; use 'experience' or 'lesson'")
            clauses.append({"kind": kind})
        return {"$and": clauses}

    def _filtered(self, fetch: Callable[[int, Any], dict[str, float]], where: dict[str, Any],
                  n: int, *, enough: int | None = None, cap: int = MAX_OVERFETCH
                  ) -> dict[str, float]:
        """The top `n` of `fetch` among items passing `where`, as `fetch(n, where)` gives them.

        Both sides of the index are much cheaper unfiltered (Chroma's filtered query and the
        BM25 filter mask cost time in proportion to the collection: 0.1-0.5 s at 100k records),
        so fetch more unfiltered and keep what passes, widening by the share that passed, up to
        `cap` times `n`. What is returned is always the exact head of the filtered ranking
        (nothing that passes can rank below an item that was fetched): all `n` of it, or every
        candidate there is, or, once the cap is reached, at least `enough` of it. A filter too
        rare for that is handed to the index.
        """
        enough = n if enough is None else min(enough, n)
        passes = _predicate(where)
        limit = n * cap
        wide = min(n * OVERFETCH, limit)
        scanned: dict[str, bool] = {}
        while True:
            got = fetch(wide, None)
            kept: dict[str, float] = {}
            for item_id, score in sorted(got.items(), key=lambda kv: kv[1], reverse=True):
                passed = scanned.get(item_id)
                if passed is None:
                    meta = self.index.metadata(item_id)
                    passed = scanned[item_id] = meta is not None and passes(meta)
                if passed:
                    kept[item_id] = score
                    if len(kept) >= n:
                        return kept
            if len(got) < wide:
                return kept
            if wide >= limit:
                return kept if len(kept) >= enough else fetch(n, where)
            # Widen by the share that passed (all the way when none did): even the widest
            # unfiltered fetch costs less than a filtered one on a large collection.
            share = len(kept) / len(got)
            wide = limit if not kept else min(limit, max(wide * 2, math.ceil(1.3 * n / share)))

    def _search(self, task: str, where: dict[str, Any], candidates: int,
                enough: int | None = None) -> list[IndexHit]:
        """`HybridIndex.search(task, where=where, candidates=candidates)`, filtering adaptively.

        The same reciprocal-rank fusion over the same ranked lists, except that equal scores
        share a rank (so the prior, not list order, decides between twins); under a selective
        filter a list may be cut shorter, but never below `enough` (see `_filtered`).
        """
        from skillbank.embeddings import embed_query

        index = self.index
        if not index.count():
            return []
        vector = embed_query(index.embedding_function, task)
        dense = self._filtered(lambda n, w: index.dense(vector, n, w), where, candidates * 2,
                               enough=enough)
        keyword = self._filtered(lambda n, w: index.keyword(task, n, w), where, candidates,
                                 enough=enough, cap=MAX_OVERFETCH_KEYWORD)
        fused: dict[str, float] = {}
        for scores in (dense, keyword):
            ranked = sorted(scores, key=scores.__getitem__, reverse=True)
            rank, previous = 0, None
            for position, item_id in enumerate(ranked):
                value = round(scores[item_id], 6)
                if value != previous:  # equal scores share a rank: the prior breaks the tie
                    rank, previous = position, value
                fused[item_id] = fused.get(item_id, 0.0) + 1.0 / (RRF_K + rank + 1)
        hits = []
        for item_id, score in fused.items():
            meta = index.metadata(item_id)
            if meta is None:
                continue
            in_dense, in_keyword = item_id in dense, item_id in keyword
            why = "both" if in_dense and in_keyword else ("dense" if in_dense else "keyword")
            hits.append(IndexHit(id=item_id, score=score, dense=dense.get(item_id),
                                 keyword=keyword.get(item_id), why=why, metadata=meta))
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits

    def prior(self, record_id: str, meta: Mapping[str, Any], now: float | None = None) -> float:
        """The rank bonus of a record: helpfulness, exploration and recency (see module doc)."""
        usage = self.usage.get(record_id)
        judged = usage.successes + usage.failures
        utility = 0.0
        if judged:
            confidence = judged / (judged + 3)
            utility = UTILITY_WEIGHT * (2 * usage.successes / judged - 1) * confidence
        explore = EXPLORE_WEIGHT / math.sqrt(1 + usage.uses)
        age_days = max(0.0, ((now or time.time()) - float(meta.get("created", 0.0) or 0.0)) / 86400)
        recency = RECENCY_WEIGHT * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
        return utility + explore + recency

    def recall(
        self,
        task: str,
        k: int = 5,
        outcome: str | Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        namespace: str | None = None,
        since: Any = None,
        kind: str | None = None,
        *,
        count_use: bool = True,
        min_score: float | None = None,
    ) -> list[Hit[Experience]]:
        """Past experiences and lessons for a task, best first; [] when nothing matches.

        Filters (all applied inside the search, never after it): `outcome` (one or a list),
        `tags` (every tag given must be on the record), `since` (datetime, ISO date, unix time, or
        a timedelta meaning "within the last …"), `kind` ("experience" or "lesson"). The
        namespace is always a filter (`None` is the bank's namespace) and retired records never
        come back. A hit needs a dense similarity of at least `min_score` (default
        `settings.min_score`) or BM25 evidence; each returned hit counts a use unless
        `count_use=False`.
        """
        if not isinstance(task, str) or not task.strip():
            return []
        if isinstance(k, bool) or not isinstance(k, int) or k < 0 or k > MAX_K:
            raise InvalidInputError(f"k must be an integer from 0 to {MAX_K}")
        if k == 0:
            return []
        where = self._where(self._namespace(namespace), outcome, tags, since, kind)
        floor = self.settings.min_score if min_score is None else float(min_score)
        raw = self._search(task[:MAX_TEXT], where, candidates=max(50, 3 * k),
                           enough=max(10, 2 * k))
        now = time.time()
        scored = []
        for hit in raw:
            dense_ok = hit.dense is not None and hit.dense >= floor
            keyword_ok = hit.keyword is not None and hit.keyword >= MIN_KEYWORD
            if not (dense_ok or keyword_ok):
                continue
            scored.append((hit.score + self.prior(hit.id, hit.metadata, now), hit))
        scored.sort(key=lambda pair: pair[0], reverse=True)
        hits: list[Hit[Experience]] = []
        for score, hit in scored[:k]:
            try:
                record = self._read_record(hit.id, hit.metadata)
            except NotFoundError:
                log.warning("recall: %s is indexed but missing from the journal", hit.id)
                continue
            hits.append(Hit[Experience](id=hit.id, score=round(score, 6), why=hit.why,
                                        record=record, dense=hit.dense, keyword=hit.keyword))
        if count_use:
            for hit in hits:
                self.usage.record(hit.id, use=1)
        return hits

    # Learning -----------------------------------------------------------------------------------
    def mark(self, record_id: str, helped: bool = True) -> Experience:
        """Say whether a recalled experience or lesson helped; feeds ranking and pruning."""
        self.get(record_id)
        self.usage.record(record_id.strip(), use=0, ok=bool(helped))
        return self.get(record_id)

    def distill(self, record_id: str) -> list[str]:
        """Ask the distiller for lessons from one experience and store them; returns their ids.

        The distiller sees a few similar experiences of the same namespace with the opposite
        outcome, so it can write comparisons. Lessons it repeats are folded into the existing
        lesson records (their ids are returned), so distilling twice stores nothing new.
        """
        experience = self.get(record_id)
        if experience.kind != "experience":
            raise InvalidInputError(f"{record_id} is a lesson; distill experiences (exp-…)")
        similar: list[Experience] = []
        opposite = OPPOSITE.get(experience.outcome)
        if opposite:
            hits = self.recall(experience.task, k=4, outcome=opposite,
                               namespace=experience.namespace, kind="experience", count_use=False)
            similar = [h.record for h in hits if h.id != experience.id][:3]
        raw = self.distiller.lessons_from_experience(experience, similar=similar) or []
        lessons = [_coerce_lesson(l, i, experience.when_to_use) for i, l in enumerate(raw)]
        records = [self._lesson_records(experience, [lesson])[0] for lesson in lessons[:MAX_LESSONS]]
        return list(dict.fromkeys(self._commit(records, with_lessons=False)))

    def prune(self, dry_run: bool = True, namespace: str | None = "*") -> list[Experience]:
        """Retire what keeps being recalled without helping; returns what is (or would be) retired.

        Rule: a record recalled at least `settings.prune_min_uses` times (default 5) whose help
        rate, helped marks / uses, is at most `settings.prune_max_help_rate` (default 0.2), and
        which someone has judged at least once. Why these defaults: five uses is the fewest at
        which a share says anything (one help in five is 20 %); a memory that helps less than
        once in five recalls spends context tokens four times for each time it pays off (ReMe
        prunes on the same used-often-but-rarely-useful signal). The judged-at-least-once guard
        keeps a bank whose agents never mark anything from pruning its most recalled, i.e. most
        relevant, records. Retiring journals a `retire` event and flags the index entry, so the
        record stays readable with `get` and in `export`; recall no longer returns it.
        """
        min_uses = int(self.settings.prune_min_uses)
        max_rate = float(self.settings.prune_max_help_rate)
        counts = self.usage.all()
        doomed: list[tuple[str, dict[str, Any]]] = []
        for record_id, meta in self._selected(namespace, None):
            usage = counts.get(record_id)
            if usage is None or usage.uses < min_uses or usage.uses == 0:
                continue
            if usage.successes + usage.failures == 0:
                continue
            if usage.successes / usage.uses <= max_rate:
                doomed.append((record_id, meta))
        records = [self._read_record(i, m) for i, m in doomed]
        if dry_run or not doomed:
            return records
        with self.write_lock:
            now = utcnow().isoformat()
            events = [{"op": "retire", "id": record_id, "reason": "prune", "at": now}
                      for record_id, _ in doomed]
            self._append(events)
        return [r.model_copy(update={"status": "retired"}) for r in records]

    # Export / import ----------------------------------------------------------------------------
    def export(self, path: str | os.PathLike, namespace: str | None = "*",
               include_retired: bool = True) -> int:
        """Write every record (all namespaces by default) as JSONL; returns how many."""
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        selected = self._selected(namespace, None, include_retired)
        selected.sort(key=lambda item: (float(item[1].get("created", 0.0)), item[0]))
        atomic_write(target, (self._read_record(record_id, meta).model_dump_json() + "\n"
                              for record_id, meta in selected))
        return len(selected)

    def import_(self, path: str | os.PathLike) -> SyncReport:
        """Read records written by `export` (or any JSONL of experience dicts) and record them.

        Ids are kept when they are well-formed and not taken; a lesson's `source` follows its
        experience when that got a new id. Near-duplicates fold as in `record` (counted in
        `unchanged`); lines that are not valid records are listed in `skipped` with findings.
        Lines are stored in batches of `IMPORT_BATCH` as `record_many` stores them (one
        embedding call, journal append and index upsert each), with the same result as one by
        one.
        """
        started = time.perf_counter()
        report = SyncReport()
        source_path = Path(path).expanduser()
        if not source_path.is_file():
            raise NotFoundError(f"no file {str(source_path)!r} to import")
        renamed: dict[str, str] = {}
        has_lesson_records: set[str] = set()  # experiences whose lessons the file carries itself
        with source_path.open("rb") as handle:
            for raw in handle:
                if b'"lesson"' in raw:
                    try:
                        data = json.loads(raw)
                        if data.get("kind") == "lesson" and isinstance(data.get("source"), str):
                            has_lesson_records.add(data["source"])
                    except (ValueError, AttributeError):
                        pass
        chunk: list[tuple[dict[str, Any], Experience]] = []
        with source_path.open("rb") as handle, self.write_lock:
            for number, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                where = f"{source_path.name}:{number}"
                try:
                    data = json.loads(raw)
                    if not isinstance(data, dict):
                        raise InvalidInputError("a line must be a JSON object")
                    kind = data.get("kind", "experience")
                    if kind not in ("experience", "lesson"):
                        raise InvalidInputError(f"unknown kind {kind!r}")
                    created = data.get("created")
                    # The id and a renamed source are settled when the line is stored.
                    record = self._prepare(
                        task=data.get("task"), outcome=data.get("outcome", "unknown"),
                        steps=data.get("steps"), score=data.get("score"),
                        feedback=data.get("feedback"), lessons=data.get("lessons"),
                        when_to_use=data.get("when_to_use", ""), tags=data.get("tags"),
                        namespace=data.get("namespace"), messages=data.get("messages"),
                        created=datetime.fromisoformat(created.replace("Z", "+00:00"))
                        if isinstance(created, str) else None,
                        kind=kind,
                        source=data.get("source") if isinstance(data.get("source"), str) else None)
                except (InvalidInputError, ValueError, TypeError) as exc:
                    report.skipped.append(where)
                    report.findings.append(Finding(severity="error", code="invalid-record",
                                                   message=str(exc), path=where))
                    continue
                chunk.append((data, record))
                if len(chunk) >= IMPORT_BATCH:
                    self._import_batch(chunk, report, renamed, has_lesson_records)
                    chunk = []
            self._import_batch(chunk, report, renamed, has_lesson_records)
        report.seconds = time.perf_counter() - started
        return report

    def _import_batch(self, chunk: list[tuple[dict[str, Any], Experience]], report: SyncReport,
                      renamed: dict[str, str], has_lesson_records: set[str]) -> None:
        """Store parsed import lines (write lock held), settling ids and sources line by line."""
        if not chunk:
            return

        def wanted_id(data: dict[str, Any]) -> str:
            return data["id"] if isinstance(data.get("id"), str) else ""

        vectors = self._embed([(record, wanted_id(data) not in has_lesson_records)
                               for data, record in chunk])
        batch = _Batch(self, vectors)
        for data, record in chunk:
            wanted = wanted_id(data)
            prefix = "lsn" if record.kind == "lesson" else "exp"
            update: dict[str, Any] = {}
            if _ID.match(wanted) and wanted.startswith(prefix) and not batch.taken(wanted):
                update["id"] = wanted
            if record.source is not None and record.source in renamed:
                update["source"] = renamed[record.source]
            if update:
                record = record.model_copy(update=update)
            status = "retired" if data.get("status") == "retired" else "active"
            stored = batch.store(record, with_lessons=wanted not in has_lesson_records,
                                 status=status)
            if wanted and wanted != stored:
                renamed[wanted] = stored
            if stored == record.id:
                report.added.append(stored)
            else:
                report.unchanged += 1
        batch.flush()

def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


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
