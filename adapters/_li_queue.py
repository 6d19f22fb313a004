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
