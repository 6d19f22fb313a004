"""Which of the messages a LlamaIndex ``Memory`` flushes a run already recorded.

``arecord_run(memory, outcome=...)`` records the episode's turns, the ones still in Memory's
short-term queue too, and an outcome ends the episode. Memory flushes those same queued messages
to the block later, oldest first, once the queue outgrows its token limit. The block took them
for turns of the session's next episode and recorded them there: the failure of episode 2
claimed episode 1's closing "ok thanks" and its answer, and episode 2's first answer was stored
twice (hunt-exp #6, session 27). Deciding this from the records' text would drop a genuinely
repeated "ok" or "Done." of the next episode; the queue's order says it exactly.

So at each ``arecord_run`` the block notes Memory's queue as it stands, each message with whether
a run recorded it; a flush takes the queue's oldest messages, so it is matched in order against
the front of that note, and only what no run recorded is handed on to be recorded. A flush that
does not match (the memory was reset or set anew since) drops the note: its messages are new.

The note was taken only when an outcome closed the episode. Within an open episode a flush was
then judged by the record's text alone: a flushed stretch equal to the record's last turns was
kept as the user asking again, and the next run's transcript, no longer ending like the record,
was appended whole: with tool calls, turns and calls were stored two and three times
(hunt-threads #2, session 38). Open or closed, a run's messages are recorded: the note is taken
at every recording.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, Sequence, TypeVar

#: Sessions whose queue at their last close is remembered (each note is at most one queue).
MAX_SESSIONS = 1024

T = TypeVar("T")


class QueuedAtRecord:
    """Per conversation (a session in one namespace): Memory's queue when a run was last
    recorded, as (message key, recorded)."""

    def __init__(self) -> None:
        self._notes: OrderedDict[Any, list[tuple[Hashable, bool]]] = OrderedDict()
        self._lock = threading.Lock()  # closes and flushes of one session may overlap

    def recorded(self, session: Any, queue: Sequence[Hashable], recorded_from: int) -> None:
        """A run was recorded with `queue` (message keys, oldest first) in Memory's queue, from
        position `recorded_from` on. The front of the queue is what an earlier recording noted
        and no flush took yet: those keep what that note said."""
        with self._lock:
            before = self._notes.get(session, [])
            self._notes[session] = [
                (key, position >= recorded_from or (
                    position < len(before) and before[position] == (key, True)))
                for position, key in enumerate(queue)]
            self._notes.move_to_end(session)
            while len(self._notes) > MAX_SESSIONS:
                self._notes.popitem(last=False)

    def has(self, session: Any) -> bool:
        """Whether a recording of `session` was noted here (and no flush has used it up)."""
        with self._lock:
            return bool(self._notes.get(session))

    def unrecorded(self, session: Any, flushed: Sequence[T], key: Callable[[T], Hashable]
                   ) -> list[T]:
        """The flushed messages (oldest first) no run recorded: the rest were in the queue
        when a run was recorded, and its record holds them."""
        with self._lock:
            note = self._notes.get(session)
            if not note:
                return list(flushed)
            fresh: list[T] = []
            for position, message in enumerate(flushed):
                if not note or note[0][0] != key(message):
                    self._notes.pop(session, None)  # not the noted queue: the rest is new
                    return fresh + list(flushed[position:])
                _, recorded = note.pop(0)
                if not recorded:
                    fresh.append(message)
            if not note:
                self._notes.pop(session, None)
            return fresh


async def note_queue(notes: QueuedAtRecord, memory: Any, conversation: Any,
                     history: Sequence[T], start: int, key: Callable[[T], Hashable]) -> None:
    """Note `memory`'s queue as a run of `conversation` is recorded (its session in one
    namespace: two users' Memories may share a session name; None: no session): `history` is
    the session's messages as the run read them (``aget_all()``, archived first, no system
    message) and the run recorded them from `start` on. A memory with no short-term queue
    flushes nothing."""
    from llama_index.core.memory import Memory
    from llama_index.core.storage.chat_store.base_db import MessageStatus

    if conversation is None or not isinstance(memory, Memory):
        return
    queue = [m for m in await memory.aget_all(status=MessageStatus.ACTIVE)
             if getattr(m.role, "value", str(m.role)) != "system"]
    notes.recorded(conversation, [key(m) for m in queue], start - (len(history) - len(queue)))


async def held_by_record(bank: Any, memory: Any, thread: str | None, namespace: str | None,
                         flushed: Sequence[Any], *, trusted: bool, face: str) -> list[Any]:
    """The flushed messages (oldest first) the thread's open record does not hold, told by
    position, for a block with no note of the queue (see `QueuedAtRecord`).

    The note lives in the block: a web handler that builds a block and a Memory per request
    over a persistent chat store, or a restarted process, had none, so each flush was recorded
    whole and the next `arecord_run`, no longer matching the record's end, appended the whole
    queue again (26 steps stored as 89; review 1 #1, session 38). The Memory (the running
    step's) holds the conversation: the flushed stretch is the last archived, and a run recorded
    it when the record's steps are exactly the conversation's from its goal's message up to a
    turn boundary at or after the stretch (after a "[N steps omitted]" marker: its latest steps
    end so). Anything else (no such Memory, no open record, no match): all are new, as before.
    """
    from llama_index.core.memory import Memory
    from llama_index.core.storage.chat_store.base_db import MessageStatus

    from skillbank.adapters._runs import clip_task, open_record, plain_messages
    from skillbank.memories.experiences.threads import step_key
    from skillbank.memories.experiences.transcript import _is_marker, steps_from_messages

    if thread is None or not flushed or not isinstance(memory, Memory) \
            or str(memory.session_id) != thread:
        return list(flushed)

    def role(message: Any) -> str:
        return getattr(message.role, "value", str(message.role))

    history = [m for m in await memory.aget_all() if role(m) != "system"]
    archived = sum(role(m) != "system"
                   for m in await memory.aget_all(status=MessageStatus.ARCHIVED))
    start = archived - len(flushed)
    if start < 0 or [(role(m), m.content) for m in history[start:archived]] != \
            [(role(m), m.content) for m in flushed]:
        return list(flushed)  # not this memory's latest flush
    try:
        record = await asyncio.to_thread(open_record, bank, thread, namespace,
                                         trusted=trusted, face=face)
    except Exception:  # noqa: BLE001 - memory must not break the agent: new, as before
        return list(flushed)
    if record is None or not record.steps:
        return list(flushed)
    # Every user message whose text is the record's task may be where it starts, earliest
    # first, and the conversation is read turn by turn as the record was written: a turn that
    # repeats the task (a user asking the conversation's first question again) is recorded
    # without its request. Anchored at the latest such message, read whole, no end matched and
    # the flush was recorded whole, its turns twice (review 4 #2, session 38).
    goals = [i for i in range(start + 1) if role(history[i]) == "user"
             and clip_task((history[i].content or "").strip()) == record.task]
    if not goals:
        return list(flushed)
    marker = max((n + 1 for n, step in enumerate(record.steps) if _is_marker(step)), default=0)
    held = [step_key(step) for step in record.steps[marker:]]
    turns = [i for i in range(goals[0], len(history)) if role(history[i]) == "user"]
    bounds = [*turns, len(history)]

    def keys(messages: Sequence[Any]) -> list[Any]:
        steps = steps_from_messages(plain_messages(messages), task=record.task)[0]
        return [step_key(step) for step in steps]

    try:
        by_turn = {here: keys(history[here:after]) for here, after in zip(bounds, bounds[1:])}
    except Exception:  # noqa: BLE001 - too long to compare: taken as new, as before
        return list(flushed)
    for end in range(len(history), start, -1):  # the latest turn boundary the record ends at
        if end < len(history) and role(history[end]) != "user":
            continue
        for goal in goals:
            read = [[key for here in turns if goal <= here < end for key in by_turn[here]]]
            try:  # as one stretch too: a flush recorded several turns as one
                read.append(keys(history[goal:end]))
            except Exception:  # noqa: BLE001 - too long to compare: taken as new, as before
                return list(flushed)
            if any(given == held or (marker and held and len(given) >= len(held)
                                     and given[len(given) - len(held):] == held)
                   for given in read):
                return list(flushed[end - start:])
    return list(flushed)
