"""What the index sees of a record: the embedded text, the keyword text and the metadata.

What is embedded is what a future task will resemble: the task and its `when_to_use` line (for a
lesson, the lesson text and its `when_to_use`), never the whole trajectory, whose tool dumps would
drown the signal. An experience with no `when_to_use` but with feedback or lessons gets a second
vector for them (the index keeps an item's best-matching vector): `when_to_use` is the cue a
record carries for retrieval (ReMe indexes it); without one, what was learnt is the only thing
that tells apart the many runs agents record under one generic task ("ALFWorld household task",
"support ticket"), whose task vectors are all one vector. A record with a `when_to_use` keeps
one vector: its lessons read like any other agent's lessons, and embedding them too made
unrelated requests match (the share of them answered with nothing fell from 18% to 6% on the
AppWorld lessons, with recall unchanged). The keyword side (BM25) also sees the feedback,
lesson texts, tags and outcome.
Every record's metadata carries `loc` ("<file>:<byte offset>"), so reading a recalled record is
one seek in the journal, and the index stays small.
"""

from __future__ import annotations

import hashlib
import re

from skillbank.index import IndexItem
from skillbank.keyword import words
from skillbank.records import Experience
from skillbank.memories.experiences.validation import _timestamp

TASK_EMBED_CHARS = 1_500  # the model reads ~256 tokens: keep room for when_to_use
CONTENT_EMBED_CHARS = 1_200  # the head of feedback + lessons: what fits the model's window
#: The most vectors one record has (`embed_texts_of`). A dense query for `n` texts returns the
#: best text of each item among them, so fewer than `n` items; asking for `n * MAX_EMBED_TEXTS`
#: texts gives at least `n` items unless the collection holds fewer (what callers rely on).
MAX_EMBED_TEXTS = 2
#: What an index built by this version embeds, kept in the sync checkpoint: 1, task and
#: when_to_use only; 2, also a second vector for records without when_to_use. An index built
#: with another layout is replayed in full once, and records whose vectors differ are re-embedded.
EMBED_LAYOUT = 2
#: How `content_key` reads a record, kept in the sync checkpoint beside `EMBED_LAYOUT`: 1, a-z0-9
#: words only (up to 2026-12-04); 2, words of every script (de6191f). Folding compares the stored
#: key verbatim, so a record keyed by another version is no one's twin: after an upgrade, a run
#: with German or Japanese feedback recorded again was stored twice, until a manual reindex
#: (hunt-upgrade #1, session 23). An index keyed by another version is replayed once, and the
#: records whose key changed get the new one (a metadata update; nothing is embedded again).
#: Bump it with every change to what `content_key` returns for a record.
CONTENT_KEY_VERSION = 2


def _normalise_text(text: str) -> str:
    """A text as folding compares it: its words (any script, casefolded), punctuation out.

    Words of every script, not only a-z0-9: every Chinese task normalised to "", so offline a
    letter of apology was folded into a database migration, and Chinese feedback was no part of
    `content_key`. A text with no word at all (emoji, symbols) is kept whitespace-collapsed, so
    it is never "" either: an empty key would make it the twin of every other such text.
    """
    text = text or ""
    return " ".join(words(text)) or " ".join(text.split())


def embed_text(record: Experience) -> str:
    """What is embedded: the task (or the lesson text) and the `when_to_use` line."""
    head = record.task.strip()
    if len(head) > TASK_EMBED_CHARS:
        head = head[:TASK_EMBED_CHARS].rsplit(" ", 1)[0]
    when = record.when_to_use.strip()
    return f"{head}\n{when}" if when and when not in head else head


def content_embed_text(record: Experience) -> str:
    """The second vector of an experience with no `when_to_use`: its feedback and lesson texts
    ("" when it has none, or has a `when_to_use`; see the module docstring).

    Lesson records are their own lesson text already, so they have no second vector.
    """
    if record.kind == "lesson" or record.when_to_use.strip():
        return ""
    parts = [record.feedback or ""] + [lesson.text for lesson in record.lessons]
    text = "\n".join(p.strip() for p in parts if p and p.strip())
    if len(text) > CONTENT_EMBED_CHARS:
        text = text[:CONTENT_EMBED_CHARS].rsplit(" ", 1)[0]
    return text


def embed_texts_of(record: Experience) -> list[str]:
    """Every text embedded for a record: `embed_text` first (folding compares that one), then
    `content_embed_text` when there is one and it says something the first does not."""
    main = embed_text(record)
    content = content_embed_text(record)
    if content and _normalise_text(content) not in _normalise_text(main):
        return [main, content]
    return [main]


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
        "thread": record.thread or None,  # a conversation's turns update one record
        # Its last turn (`open_episode` picks a thread up only while it is recent).
        "updated": _timestamp(record.updated or record.created) if record.thread else None,
    }
    return IndexItem(id=record.id, embed_texts=embed_texts_of(record),
                     keyword_text=keyword_text(record), metadata=metadata)


def _digest(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:32]
