"""The background writer and buffered usage counts: writes leave the hot path, none is lost."""

from __future__ import annotations

import json
import logging
import threading

import pytest

from skillbank import Skillbank
from skillbank.background import BackgroundWriter
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError

WAIT = 30  # generous bound for events; never a timing assertion


def test_jobs_run_in_order_and_flush_waits_for_them():
    writer = BackgroundWriter()
    gate = threading.Event()
    seen: list[int] = []
    writer.submit(gate.wait, WAIT)
    futures = [writer.submit(seen.append, n) for n in range(5)]
    assert writer.pending == 6 and seen == []  # nothing ran while the first job was held
    gate.set()
    assert writer.flush(timeout=WAIT)
    assert seen == [0, 1, 2, 3, 4] and all(f.done() for f in futures)
    assert writer.pending == 0 and writer.failed == 0
    writer.close()


def test_a_failing_job_is_logged_counted_and_kept(caplog):
    writer = BackgroundWriter()

    def broken() -> None:
        raise InvalidInputError("bad record")

    with caplog.at_level(logging.WARNING, logger="skillbank.background"):
        future = writer.submit(broken, what="recording a run")
        after = writer.submit(lambda: "still runs")
        assert writer.flush(timeout=WAIT)
    with pytest.raises(InvalidInputError):
        future.result()
    assert after.result() == "still runs"
    assert writer.failed == 1 and isinstance(writer.last_error, InvalidInputError)
    assert "recording a run" in caplog.text and "bad record" in caplog.text
    writer.close()


def test_a_full_queue_makes_the_caller_wait_and_drops_nothing():
    writer = BackgroundWriter(maxsize=1)
    gate = threading.Event()
    seen: list[int] = []
    writer.submit(gate.wait, WAIT)       # running
    writer.submit(seen.append, 1)        # waiting: the queue is full
    third_in = threading.Event()

    def submit_third() -> None:
        writer.submit(seen.append, 2)
        third_in.set()

    thread = threading.Thread(target=submit_third)
    thread.start()
    assert not third_in.wait(0.2)        # held back while the queue is full
    gate.set()
    assert third_in.wait(WAIT) and writer.flush(timeout=WAIT)
    thread.join(WAIT)
    assert seen == [1, 2]
    assert writer.close(timeout=WAIT)
    assert writer.submit(seen.append, 3).result(timeout=0) is None  # inline once closed
    assert seen == [1, 2, 3]


def test_flush_gives_up_after_its_timeout():
    writer = BackgroundWriter()
    gate = threading.Event()
    writer.submit(gate.wait, WAIT)
    assert writer.flush(timeout=0.05) is False
    gate.set()
    assert writer.close(timeout=WAIT)


@pytest.fixture
def root(tmp_path):
    return tmp_path / "bank"


def test_closing_the_bank_writes_what_was_queued(root):
    bank = Skillbank.open(root, embedding_function=HashEmbedding())
    gate = threading.Event()
    bank.background.submit(gate.wait, WAIT)
    future = bank.background.submit(bank.experiences.record, task="Refund order 1234",
                                     outcome="success")
    assert not future.done()
    gate.set()
    bank.close()
    eid = future.result(timeout=0)
    with Skillbank.open(root, embedding_function=HashEmbedding()) as again:
        assert again.experiences.get(eid).task == "Refund order 1234"


def test_recall_counts_are_buffered_and_durable_on_close(root):
    bank = Skillbank.open(root, embedding_function=HashEmbedding())
    eid = bank.experiences.record(task="Refund order 1234", outcome="success")
    log_path = root / "usage" / "experiences.jsonl"
    for _ in range(3):
        assert bank.experiences.recall("refund an order", k=1)[0].id == eid
    assert not log_path.exists() or log_path.read_text() == ""  # no write (or fsync) per recall
    assert bank.experiences.usage.get(eid).uses == 3          # but counted at once
    bank.experiences.mark(eid, helped=True)                    # a rating is written through
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert [e.get("ok") for e in lines] == [None, None, None, True]
    bank.experiences.recall("refund an order", k=1)
    bank.close()
    with Skillbank.open(root, embedding_function=HashEmbedding()) as again:
        usage = again.experiences.usage.get(eid)
        assert usage.uses == 4 and usage.successes == 1


def test_bank_repr_names_its_root(root):
    with Skillbank.open(root, embedding_function=HashEmbedding()) as bank:
        assert repr(bank) == f"Skillbank({str(root)!r})"
