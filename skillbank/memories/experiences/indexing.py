"""What the index sees of a record: the embedded text, the keyword text and the metadata.

What is embedded is what a future task will resemble: the task and its `when_to_use` line (for a
lesson, the lesson text and its `when_to_use`), never the whole trajectory, whose tool dumps would
drown the signal. The keyword side (BM25) also sees the feedback, lesson texts, tags and outcome.
Every record's metadata carries `loc` ("<file>:<byte offset>"), so reading a recalled record is
one seek in the journal, and the index stays small.
"""

from __future__ import annotations

import hashlib
import re

from skillbank.index import IndexItem
from skillbank.records import Experience
from skillbank.memories.experiences.validation import _timestamp

TASK_EMBED_CHARS = 1_500  # the model reads ~256 tokens: keep room for when_to_use


def _normalise_text(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", (text or "").lower()))


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


_NUMBER = re.compile(r"\d+")


def content_key(record: Experience) -> str:
    """What two records must share, beyond a near-identical task, to be one (see `record`).

    The numbers in the task are part of it: "Refund order 1234" and "Refund order 5678" embed
    almost the same but are two runs on two things, never one experience counted twice. (A task
    without numbers keeps the key it always had.)
    """
    if record.kind == "lesson":
        return ""
    text = " | ".join([record.feedback or ""] + [lesson.text for lesson in record.lessons])
    numbers = _NUMBER.findall(record.task)
    if numbers:
        text += " | #" + " ".join(numbers)
    return hashlib.sha256(_normalise_text(text).encode()).hexdigest()[:16]



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
