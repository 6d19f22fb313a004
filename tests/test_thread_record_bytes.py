"""A thread's record stays within the record size limit, so every turn and the outcome land
(hunt-threads #1, session 38).

A thread's record was bounded by its step count only. A long conversation with large tool
outputs grew past `MAX_RECORD_BYTES`; its turns were journaled as small deltas until a whole
copy was due, which the journal refused ("record is too large to store"), and from then on
every turn and the final outcome were refused (200 turns: 40 lost, the record stuck with
outcome unknown). Now the record keeps its first steps, its latest steps and the outcome
within the limit, one "[N steps omitted]" marker counting every step left out. Embedded, and
on a team deployment (PostgreSQL refuses an oversized line the same way) with the turns
alternating between two workers.
"""

from __future__ import annotations

import re

from skillbank.memories.experiences import MAX_RECORD_BYTES
from skillbank.records import MAX_TEXT

TASK = "Find why the nightly backup fails"
TURNS = 16  # about 200 KB a turn: the record would pass 2 MiB, twice what is stored
LOGS = 10  # large tool outputs a turn


def _turn(number: int) -> list[dict[str, str]]:
    """One turn: the request, ten log chunks of MAX_TEXT characters, the answer."""
    said = [{"role": "user", "content": TASK if number == 0 else f"now read part {number}"}]
    for chunk in range(LOGS):
        head = f"log {number}.{chunk}: "
        said.append({"role": "assistant",
                     "content": head + "ERROR disk full on /var\n" * ((MAX_TEXT - len(head)) // 24)})
    said.append({"role": "assistant", "content": f"Part {number} says the disk is full."})
    return said


def _text(step) -> str:
    return step.observation or step.thought or ""


def _check(record, given: int) -> None:
    assert record.outcome == "success"
    assert len(record.model_dump_json().encode("utf-8")) <= MAX_RECORD_BYTES
    texts = [_text(s) for s in record.steps]
    markers = [t for t in texts if re.fullmatch(r"\[\d+ steps omitted\]", t)]
    assert len(markers) == 1, markers
    omitted = int(re.search(r"\d+", markers[0]).group())
    assert omitted + len(texts) - 1 == given  # every step accounted for
    # The start and the end of the conversation are kept.
    assert texts[0].startswith("log 0.0: ")
    assert texts[-1] == f"Part {TURNS - 1} says the disk is full."
    assert texts[-2 - LOGS] == f"User: now read part {TURNS - 1}"


def _record(banks, thread: str) -> tuple[str, int]:
    """All the turns, on the banks in turn, the outcome on the last; (the id, steps given)."""
    ids, given = set(), 0
    for number in range(TURNS):
        bank = banks[number % len(banks)]
        extra = {"outcome": "success"} if number == TURNS - 1 else {}
        ids.add(bank.experiences.record_messages(_turn(number), task=TASK, thread=thread,
                                                 followup=number > 0, **extra))
        given += LOGS + (1 if number == 0 else 2)  # a follow-up's request is a step too
    assert len(ids) == 1
    return ids.pop(), given


def test_a_long_thread_with_large_outputs_keeps_every_turn_and_its_outcome(hash_bank):
    eid, given = _record([hash_bank], "big-1")
    _check(hash_bank.experiences.get(eid), given)
    (record,) = hash_bank.experiences.list(kind="experience", include_retired=True)
    assert record.id == eid


def test_the_same_on_a_team_deployment_across_two_workers(two_machines):
    a, b = two_machines
    eid, given = _record([a, b], "big-2")
    _check(a.experiences.get(eid), given)
    _check(b.experiences.get(eid), given)
