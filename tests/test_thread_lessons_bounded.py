"""A thread's lessons stay within MAX_LESSONS and never cost a turn its steps or outcome
(review 1 #2, session 38).

A later turn merged its lessons into the thread's record with no cap and outside the byte
budget: two turns of 50 lessons held 100, and once the lessons pushed the record past 1 MiB the
whole turn was refused (its steps and its outcome lost); lessons close to the limit left of the
turn only its last step. Now the merged lessons are capped, and a turn whose new lessons would
cut its own steps keeps its steps and outcome and leaves those lessons out, with a warning.
"""

from __future__ import annotations

import logging

from skillbank.memories.experiences import MAX_RECORD_BYTES
from skillbank.memories.experiences.validation import MAX_LESSONS

TASK = "Tune the cache"
BIG = "😀" * 1900  # 7.6 KB of UTF-8


def _texts(record) -> list[str]:
    return [s.observation or s.thought or "" for s in record.steps]


def test_a_thread_holds_at_most_max_lessons_and_every_turn(hash_bank, caplog):
    eid = None
    for n in range(4):
        lessons = [f"t{n} lesson {i} {BIG}" for i in range(MAX_LESSONS)] if n < 3 else []
        msgs = [{"role": "user", "content": TASK if n == 0 else f"step {n}"},
                {"role": "assistant", "content": f"answer {n}"}]
        extra = {"outcome": "success", "feedback": "fine"} if n == 3 else {}
        with caplog.at_level(logging.WARNING, logger="skillbank.experiences"):
            eid = hash_bank.experiences.record_messages(
                msgs, task=TASK, thread="L", followup=n > 0, lessons=lessons, **extra)
    record = hash_bank.experiences.get(eid)
    assert len(record.lessons) == MAX_LESSONS
    assert all(lesson.text.startswith("t0 ") for lesson in record.lessons)
    assert _texts(record) == ["answer 0", "User: step 1", "answer 1", "User: step 2",
                              "answer 2", "User: step 3", "answer 3"]
    assert record.outcome == "success" and record.feedback == "fine"
    assert len(record.model_dump_json().encode("utf-8")) <= MAX_RECORD_BYTES
    assert "lesson(s) of this turn left out" in caplog.text


def test_new_lessons_that_would_cut_the_turn_are_left_out_not_its_steps(hash_bank, caplog):
    # Lessons of 16 KB each (text and when_to_use at their limit, 4-byte characters): the
    # first turn's 25 and the second turn's 25 are 800 KB, leaving too little for the second
    # turn's four 76 KB tool outputs.
    def lessons(turn: int) -> list[dict[str, str]]:
        return [{"text": f"t{turn}.{i} " + "😀" * 1990, "when_to_use": "😀" * 2000}
                for i in range(25)]

    first = [{"role": "user", "content": TASK}, {"role": "assistant", "content": "On it."}]
    eid = hash_bank.experiences.record_messages(first, task=TASK, thread="M", lessons=lessons(0))
    outputs = [f"log {k} " + "😀" * 19_000 for k in range(4)]
    second = [{"role": "user", "content": "read the logs"},
              *({"role": "assistant", "content": text} for text in outputs),
              {"role": "assistant", "content": "The cache is too small."}]
    with caplog.at_level(logging.WARNING, logger="skillbank.experiences"):
        assert hash_bank.experiences.record_messages(
            second, task=TASK, thread="M", followup=True, lessons=lessons(1),
            outcome="success", feedback="right") == eid
    record = hash_bank.experiences.get(eid)
    assert _texts(record) == ["On it.", "User: read the logs", *outputs,
                              "The cache is too small."]
    assert record.outcome == "success" and record.feedback == "right"
    assert [lesson.text for lesson in record.lessons] == [l["text"] for l in lessons(0)]
    assert len(record.model_dump_json().encode("utf-8")) <= MAX_RECORD_BYTES
    assert "new lesson(s) of this turn left out" in caplog.text
    # The lessons left off the record's list are stored as lesson items all the same
    # (review 4 #1, session 38: they were lost with a log line alone).
    stored = {r.lessons[0].text for r in hash_bank.experiences.list(
        kind="lesson", include_retired=True, limit=1000)}
    assert {l["text"] for l in lessons(1)} <= stored


def test_lessons_past_the_records_cap_are_stored_as_items_and_noted(hash_bank, caplog):
    # review 4 #1, session 38: two turns of 30 lessons; the record's list holds 50, the other 10
    # were dropped with a log line alone, their lesson items never stored (a single `record`
    # of 60 is refused loudly). Now every lesson is a lesson item and the id's note says so.
    alpha = [f"Lesson alpha number {i} about rotating keys" for i in range(30)]
    beta = [f"Lesson beta number {i} about draining pools" for i in range(30)]
    ex = hash_bank.experiences
    first = ex.record_messages([{"role": "user", "content": "Rotate the keys"},
                                {"role": "assistant", "content": "done 1"}],
                               lessons=alpha, thread="th-1")
    assert first.note == ""
    with caplog.at_level(logging.WARNING, logger="skillbank.experiences"):
        second = ex.record_messages([{"role": "user", "content": "and the db ones"},
                                     {"role": "assistant", "content": "done 2"}],
                                    task="Rotate the keys", lessons=beta, thread="th-1",
                                    followup=True)
    assert second == first
    assert second.note.startswith("10 lesson(s) of this turn not kept on the record")
    assert "10 lesson(s) of this turn left out" in caplog.text
    record = ex.get(first)
    assert len(record.lessons) == MAX_LESSONS
    stored = {r.lessons[0].text for r in ex.list(kind="lesson", include_retired=True,
                                                 limit=1000)}
    assert stored == set(alpha) | set(beta)


def test_an_untrusted_threads_lessons_stay_those_its_reviewer_sees(hash_bank):
    # A pending record's lesson items are approved with it: past its list they would be
    # approved unseen, so an untrusted thread keeps the cap and is told (review 4 #1).
    ex = hash_bank.experiences
    first = ex.record_messages([{"role": "user", "content": "Rotate the keys"},
                                {"role": "assistant", "content": "done 1"}],
                               lessons=[f"alpha {i}" for i in range(30)], thread="u-1",
                               trusted=False)
    second = ex.record_messages([{"role": "user", "content": "and the db ones"},
                                 {"role": "assistant", "content": "done 2"}],
                                task="Rotate the keys", lessons=[f"beta {i}" for i in range(30)],
                                thread="u-1", followup=True, trusted=False)
    assert second == first and second.status == "pending"
    assert "10 lesson(s) of this turn not kept" in second.note and "not stored" in second.note
    items = ex.list(kind="lesson", status="pending", limit=1000)
    assert len(items) == MAX_LESSONS
