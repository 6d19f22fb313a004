"""A conversation is one experience: each later turn of a thread updates its record.

Users think of "the task plus the three follow-ups" as one piece of work. Recorded turn by turn
as separate experiences, the follow-ups ("add an index on email", "rename the column") were
folded away as near-duplicates of the first turn, an outcome given on the last turn left a
second record beside the first one's `unknown`, and the thread recalled its own first turn as a
"past experience". So a turn recorded with ``thread=<id>`` (a LangChain thread id, a LlamaIndex
session) finds the active record of that thread in the caller's namespace with the same task
(the thread's goal; a new goal after an outcome starts a new record) and writes it again with
the turn's steps appended and, when given, its outcome and feedback.

The journal stays append-only: a later turn is one ``update`` event holding what changed since
the version it read (the new steps, a changed outcome, feedback or lessons), folded onto that
version by every reader (`skillbank.store.deltas`); every so often, and whenever a delta would
not pay, the whole record is written again as an ``add`` flagged ``"update": true`` (the last
one wins). Writing the whole record every turn made one 250-turn conversation 15 MiB of
journal (agents hunt, session 18). A forget erases every line of the id, and an older journal
of full adds reads the same way. A thread's records are never folded
into another conversation's near-duplicate (their later turns would have nothing to update).
A follow-up whose earlier record is gone (forgotten, pruned, never written) starts a new record
and logs why: never an error in the agent. Turns of one thread may overlap (see `record_turn`):
the record a turn updates, and the version it extends, are looked up under the write lock.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING, Any, Mapping

from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.records import MAX_SHORT, MAX_TAGS, Experience, Step, utcnow
from skillbank.memories.experiences.folding import _Batch
from skillbank.memories.experiences.transcript import _fit_steps
from skillbank.memories.experiences.validation import MAX_LESSONS, MAX_RECORD_BYTES, _fit_record
from skillbank.store.deltas import make_update

if TYPE_CHECKING:
    from skillbank.memories.experiences.memory import ExperienceMemory
    from skillbank.records import Lesson
    from skillbank.store.deltas import Version

    #: A turn merged into its thread's record: (its id, the merged record, the version it
    #: extends, the lessons the turn adds).
    _Turn = tuple[str, Experience, Version, list[Lesson]]

log = logging.getLogger("skillbank.experiences")

__all__ = ["check_thread", "in_open_episode", "last_turn", "open_episode", "record_turn"]


def check_thread(thread: Any) -> str:
    """A thread id as stored: a non-empty string of at most MAX_SHORT characters."""
    if not isinstance(thread, str) or not thread.strip():
        raise InvalidInputError("thread must be a non-empty string (a conversation's id)")
    if len(thread) > MAX_SHORT:
        raise InvalidInputError(f"thread is {len(thread)} characters; at most {MAX_SHORT}")
    return thread


#: Outcomes that end an episode (the adapters' `closes_episode` reads runs the same way).
CLOSING_OUTCOMES = frozenset({"success", "failure", "partial"})


def in_open_episode(metadata: Mapping[str, Any] | None, thread: str | None) -> bool:
    """Whether an index entry is `thread`'s own open episode, which the thread must not recall
    as a "past experience" of itself.

    Only the open episode: a closed one (an outcome ended it) is a past experience like any
    other. Hiding every record of the thread hid a user's whole history from them when the
    session id is per user (the README's ``session_id="user-1"``), or when a long-lived
    thread's chat history was flushed or lost."""
    meta = metadata or {}
    return bool(thread) and meta.get("thread") == thread \
        and meta.get("outcome") not in CLOSING_OUTCOMES


def _thread_record(memory: "ExperienceMemory", thread: str, namespace: str, task: str,
                   status: str, *, fresh: bool = False) -> tuple[str, Mapping[str, Any]] | None:
    """The newest open record of `thread` in `namespace` with this task and status, if any;
    with `fresh`, their index entries re-read from a shared index first.

    A record with an outcome (success, failure, partial) is a closed episode: the same request
    asked again later in the thread is a new one. Updating it overwrote a success with the
    later failure, the successful run's steps filed under it."""
    where = {"$and": [{"thread": thread}, {"namespace": namespace}, {"kind": "experience"},
                      {"status": status}]}
    ids = list(memory.index.ids_where(where))
    if fresh:
        memory._catch_up(ids)
    best: tuple[str, Mapping[str, Any]] | None = None
    for found in ids:
        meta = memory.index.metadata(found)
        if meta is None or meta.get("thread") != thread or meta.get("status") != status:
            continue
        try:
            record = memory._read_record(found, meta)
        except NotFoundError:
            continue
        if record.task != task or record.outcome in CLOSING_OUTCOMES:
            continue  # an earlier episode of the thread (an outcome closed it)
        if best is None or float(meta.get("created", 0.0)) > float(best[1].get("created", 0.0)):
            best = (found, meta)
    return best


#: The clock a thread's last turn is compared with (`open_episode`); a test ages an episode
#: by moving it on.
clock = time.time


def last_turn(meta: Mapping[str, Any]) -> float:
    """When a thread record's index entry was last written by a turn (unix time): its
    ``updated``, else (an entry indexed before it was kept) its ``created``."""
    return float(meta.get("updated") or meta.get("created") or 0.0)


def open_episode(memory: "ExperienceMemory", thread: str, namespace: str, status: str, *,
                 within: float = math.inf) -> Experience | None:
    """The open (no closing outcome) record of `thread` in `namespace` with `status` (the one
    the caller's own turns would update: "active" for a trusted caller, "pending" for an
    untrusted one; a pending record never feeds a trusted caller) whose last turn is newest:
    the conversation's goal and its steps so far. None when that turn is more than `within`
    seconds old (0: always None).

    Most episodes are never closed (a run given no outcome records ``unknown``), and a thread
    id is reused (``thread_id "1"`` in every LangGraph example): a new conversation on it days
    later, in a process that lost the old one's state, was filed as a follow-up of the old
    task, which then got the new run's outcome (review 1 #2, session 32)."""
    where = {"$and": [{"thread": thread}, {"namespace": namespace}, {"kind": "experience"},
                      {"status": status}]}
    best: tuple[float, str, Mapping[str, Any]] | None = None
    for found in memory.index.ids_where(where):
        meta = memory.index.metadata(found)
        if meta is None or not in_open_episode(meta, thread):
            continue
        last = last_turn(meta)
        if best is None or last > best[0]:
            best = (last, found, meta)
    if best is None or within <= 0 or clock() - best[0] > within:
        return None
    try:
        return memory._read_record(best[1], best[2])
    except NotFoundError:
        return None


def record_turn(memory: "ExperienceMemory", experience: Experience, *, thread: str,
                status: str, followup: bool) -> tuple[str, bool, str]:
    """Store one turn of `thread`: update its record, or start one. Returns (id, updated,
    note): the note says how many of the turn's new lessons the record's list has no room for
    ("" when none). Those are stored as lesson items all the same (`lsn-…`, found by recall on
    their own): only the record's list is capped, and a capped turn dropped them with a log
    line alone (review 4 #1, session 38). Not for an untrusted caller ("pending"): approving
    its record approves its lesson items, so they stay those the reviewer sees on it.

    `experience` is the turn as `record` would store it (validated, in the caller's namespace);
    `status` is what the caller may write ("active", or "pending" for an untrusted caller:
    untrusted input only ever continues a pending record, never changes an active one).

    Turns of one thread may overlap (a LangChain middleware recording in the background, two
    replicas or two threads of an app on one conversation). The turn is embedded before the
    write lock, as the thread stands now; its record and the version it extends are looked up
    again once the lock is held (`_turn`, `fresh`), so each turn extends the one journaled
    before it. Both were looked up before the lock: two overlapping turns extended one version
    and the later update dropped the other's steps, and two first turns each started a record,
    splitting the thread (12 of 20 turns kept, in one process as across workers;
    hunt-teamclock #3, session 30)."""
    experience = experience.model_copy(update={"thread": thread})
    seen = _turn(memory, experience, status)
    # What the write under the lock most likely holds; a text it holds besides (a concurrent
    # turn gave feedback or a lesson) is embedded by the index's upsert.
    vectors = memory._embed([(experience, True) if seen is None else (seen[1], False)])
    with memory.write_lock:
        turn = _turn(memory, experience, status, fresh=True, seen=seen)
        if turn is None:
            if followup:
                log.info("thread %r: no open record of its earlier turns in %r (an outcome "
                         "closed it, or it was forgotten, pruned or never written); this "
                         "follow-up starts a new experience", thread, experience.namespace)
            return _store(memory, experience, status, vectors), False, ""
        record_id, merged, version, new_lessons = turn
        _store(memory, merged, status, vectors, base=version)
    kept = {lesson.text for lesson in merged.lessons}
    left = sum(lesson.text not in kept for lesson in new_lessons)
    if status == "pending":  # approved with the record, so only those its reviewer sees on it
        new_lessons = [lesson for lesson in new_lessons if lesson.text in kept]
    if new_lessons:
        memory._commit(memory._lesson_records(merged, new_lessons), with_lessons=False,
                       statuses=[status] * len(new_lessons))
    note = "" if not left else (
        f"{left} lesson(s) of this turn not kept on the record {record_id} (its list is full "
        "or at its size limit); " + ("not stored: a record waiting for review holds only the "
                                     "lessons its reviewer sees" if status == "pending"
                                     else "each is stored as a lesson item"))
    return record_id, True, note


def _turn(memory: "ExperienceMemory", experience: Experience, status: str, *,
          fresh: bool = False, seen: _Turn | None = None) -> _Turn | None:
    """The thread's open record this turn updates, as (its id, the record with the turn
    merged in, the version it extends, the lessons the turn adds: every one the record did not
    hold, also those its list has no room for, which are stored as lesson items all the same,
    `record_turn`); None when the turn
    starts a record. `fresh` (under the write lock): the thread's entries re-read from a
    shared index first (`JournalMixin._catch_up`), another worker may have written a turn;
    `seen` is this turn as merged before the lock, taken as is while its record's newest
    version is still the one it extends (the same location and digest)."""
    found = _thread_record(memory, str(experience.thread), experience.namespace,
                           experience.task, status, fresh=fresh)
    if found is None:
        return None
    record_id, meta = found
    if seen is not None and seen[0] == record_id and \
            (seen[2].loc, seen[2].digest) == (str(meta.get("loc", "")), str(meta.get("hash", ""))):
        return seen
    version = memory._version(record_id, meta)  # the version this turn extends, as stored
    old = Experience.model_validate(version.record)
    known = {lesson.text for lesson in old.lessons}
    new_lessons = [lesson for lesson in experience.lessons if lesson.text not in known]
    # A record holds at most MAX_LESSONS, as a single `record` does: merged without a cap, two
    # turns of 50 held 100 (review 1 #2, session 38). A record stored before the cap
    # keeps what it has.
    room = max(0, MAX_LESSONS - len(old.lessons))
    listed = new_lessons[:room]
    if len(new_lessons) > room:
        log.warning("thread %r: %d lesson(s) of this turn left out of the record, which holds at "
                    "most %d; they are stored as lesson items", experience.thread,
                    len(new_lessons) - room, MAX_LESSONS)
    appended = _new_steps(old.steps, experience.steps)
    steps = [*old.steps, *appended]
    fields = {
        **memory._dump(old),
        "outcome": experience.outcome if experience.outcome != "unknown" else old.outcome,
        "score": experience.score if experience.score is not None else old.score,
        "feedback": experience.feedback or old.feedback,
        "lessons": [l.model_dump(mode="json") for l in old.lessons],
        "tags": list(dict.fromkeys([*old.tags, *experience.tags]))[:MAX_TAGS],
        "when_to_use": old.when_to_use or experience.when_to_use,
        "updated": _turn_time(old),
    }
    without = _fitted(fields, steps)  # the turn's steps and outcome, no new lessons
    if not listed:
        return record_id, without, version, new_lessons
    # The turn's steps and outcome come before its new lessons: lessons that pushed the record
    # past the byte limit got the whole turn refused, its steps and outcome lost, and lessons
    # close to it left of the turn only its last step (review 1 #2, session 38). Older middle
    # steps give way to lessons as they do to new steps.
    lessons = [l.model_dump(mode="json") for l in [*old.lessons, *listed]]
    try:
        merged = _fitted({**fields, "lessons": lessons}, steps)
    except InvalidInputError:
        merged = None
    latest = len(appended)
    if merged is None or (latest and merged.steps[-latest:] != without.steps[-latest:]):
        log.warning("thread %r: the %d new lesson(s) of this turn left out of the record: with "
                    "them it passes %d bytes and its latest steps would be cut; they are "
                    "stored as lesson items", experience.thread, len(listed), MAX_RECORD_BYTES)
        return record_id, without, version, new_lessons
    return record_id, merged, version, new_lessons


def _fitted(fields: dict[str, Any], steps: list[Step]) -> Experience:
    """The record of `fields` with `steps`, bounded in bytes as a single `record` is, not only
    in steps: the head, the latest steps and the outcome kept, the middle counted by the
    marker. Bounded by count alone, a long thread with large tool outputs outgrew what the
    journal stores and every later turn, the outcome too, was refused (hunt-threads #1,
    session 38). InvalidInputError when the record is too large even so."""
    bare = Experience.model_validate({**fields, "steps": []})
    budget = MAX_RECORD_BYTES - len(bare.model_dump_json().encode("utf-8"))
    return _fit_record(Experience.model_validate({
        **fields, "steps": [s.model_dump(mode="json") for s in _fit_steps(steps, budget)]}))


#: A later turn's time is kept to this many seconds (`Experience.updated`): a burst of turns
#: writes it once, not into every turn's update event (the journal of a long thread).
TURN_TIME_STEP = 60.0


def _turn_time(old: Experience) -> Any:
    """The `updated` of a record a turn is merged into: now, unless the record's last turn
    time is less than TURN_TIME_STEP old (then that, unchanged)."""
    now = utcnow()
    last = old.updated or old.created
    return now if (now - last).total_seconds() >= TURN_TIME_STEP else old.updated


def step_key(step: Step) -> tuple[Any, ...]:
    """What a step says, for telling a turn delivered again (`_new_steps`, and the LlamaIndex
    face's flushes): an answer is its text, as the thought it reads as when more messages
    follow it."""
    answer = step.action == "final answer"
    return (None if answer else step.action,
            step.thought or (step.observation if answer else None),
            None if answer else step.observation, repr(step.action_input))


def _new_steps(old: list[Step], turn: list[Step]) -> list[Step]:
    """The steps of `turn` the record does not hold yet. A caller that passes the whole
    transcript on every turn (not only the new messages) repeats the earlier turns first: their
    steps were appended again each turn (the tool calls twice, three times ...). The earlier
    turn's final answer reads as a thought once more messages follow it, so both count alike.
    A turn equal to the record's last steps is kept (asking the same thing twice is two
    turns); the record's last steps opening a longer turn, or a run of two or more steps the
    record holds just before its last turn, are not appended again.

    Steps are compared by everything they say, the user's words of a follow-up ("User: …", an
    observation without an action) included: left out, every follow-up looked alike, so a turn
    whose answer repeated an earlier one ("Done.", "ok") was taken for that turn delivered again
    and dropped (4 turns of a thread answered "Done." kept 3; hunt-exp #3, session 27)."""
    held, given = [step_key(s) for s in old], [step_key(s) for s in turn]
    if not held or not given:
        return turn
    if given == held:
        return []  # the same transcript again, nothing new (a retried call)
    # A turn equal to the record's last steps is a genuine repeat (a user polling "Is the
    # deploy done?", an agent retrying the same failing command), also when an earlier poll
    # said the same: the third "Is the deploy done?" / "Not yet." was dropped (hunt-exp #3).
    size = len(given)
    if size <= len(held) and held[-size:] == given:
        return turn
    # A turn the record holds whole, in order, just before its end (only the record's last
    # turn after it): turns recorded already and passed again (a LlamaIndex Memory flushing
    # turns that arecord_run recorded: a 40-turn session ended with 150 steps, every answer
    # twice; agents hunt, session 18). Only there, as docs/api.md says: a copy anywhere
    # earlier dropped a question asked again later ("is it done?" … "restart the worker" … two
    # turns on, "is it done?" lost; hunt-threads #3, session 38).
    if size >= 2 and any(held[i:i + size] == given and _one_turn(old[i + size:])
                         for i in range(len(held) - size)):
        return []
    # The longest run that ends the record and starts the turn, with something new after it:
    # the earlier turns again (the whole transcript, or all a memory still queues).
    for size in range(min(len(held), len(given) - 1), 0, -1):
        if (size >= 2 or size == len(held)) and held[-size:] == given[:size]:
            return turn[size:]
    return turn


def _one_turn(steps: list[Step]) -> bool:
    """Whether `steps` are one follow-up turn: the user's request ("User: …", an observation
    without an action) first and no other after it."""
    asks = [n for n, step in enumerate(steps)
            if step.action is None and (step.observation or "").startswith("User: ")]
    return asks == [0]


def _store(memory: "ExperienceMemory", record: Experience, status: str,
           vectors: Mapping[str, Any], *, base: "Version | None" = None) -> str:
    """One event for `record`: an `add` (and, when new, its lesson records), or, for a later
    turn of the record at `base`, an `update` holding what changed (`make_update`; the whole
    record as an `add` flagged "update" when a delta does not pay). Never folded. Called with
    the write lock held (`record_turn`), `vectors` embedded before it."""
    update = base is not None
    batch = _Batch(memory, vectors)
    batch.threshold = 2.0  # never folded into another conversation's record
    # An untrusted caller's new record waits in the review queue: its cap. A later turn
    # only updates a record already queued, adding nothing (refusing it lost the turns,
    # the outcome and the feedback of conversations in the queue; review, session 19).
    batch.capped = status == "pending" and base is None
    eid = batch.store(record, with_lessons=not update, status=status)
    if base is not None:
        for number, event in enumerate(batch.events):
            if event.get("op") == "add" and event["record"].get("id") == record.id:
                delta = make_update(base, event["record"])
                batch.events[number] = delta if delta is not None else {**event, "update": True}
    batch.flush()
    return eid
