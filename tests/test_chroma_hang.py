"""A Chroma server that accepts connections and never answers: a bounded wait, then what an
outage does (a clear error on open, keyword answers, writes kept for later), never a hang.

chromadb's HttpClient builds its httpx session with `timeout=None` and asks the server inside
its constructor, so a stopped `chroma run` (the kernel still accepts its connections) hung
`Skillbank.open` and then every call, for good. `chroma_timeout` (SKILLBANK_CHROMA_TIMEOUT)
bounds both.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import uuid
from typing import Any, Callable

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.index_outage import ChromaUnavailableError
from test_chroma_outage import own_chroma  # noqa: F401  (a fixture: a server of our own)

#: Generous for a loaded machine: the calls under test wait 1-2 s before giving up.
GIVE_UP = 120


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()`'s result or exception, failing the test if it has not returned in `seconds`."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    return box


@pytest.fixture
def silent_server():
    """A loopback port that accepts connections and reads them, and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    listener.close()


def test_opening_on_a_server_that_never_answers_gives_up_with_the_clear_error(
        tmp_path, silent_server):
    def open_and_list() -> None:
        with Skillbank.open(tmp_path / "root", chroma_url=silent_server, chroma_timeout=1,
                            embedding_function=HashEmbedding(), include_bundled=False) as bank:
            bank.skills.list()

    box = _within(GIVE_UP, open_and_list)
    error = box.get("error")
    assert isinstance(error, ChromaUnavailableError), box
    assert f"Chroma server at {silent_server} does not answer" in str(error)
    assert "SKILLBANK_CHROMA_URL" in str(error)


def test_a_server_stopped_after_the_open_answers_by_keyword_and_keeps_writes(
        tmp_path, own_chroma, monkeypatch):  # noqa: F811
    from skillbank import index as index_module

    monkeypatch.setattr(index_module, "DENSE_QUIET_SECONDS", 1.0)
    bank = Skillbank.open(tmp_path / "root", chroma_url=own_chroma.url, chroma_timeout=5,
                          embedding_function=HashEmbedding(), include_bundled=False)
    try:
        bank.skills.save("sql-tuning", "Speed up a slow SQL query by reading its query plan.",
                         "# Steps\n")
        assert bank.skills.search("slow sql query plan", k=1)[0].why == "both"
        os.kill(own_chroma.proc.pid, signal.SIGSTOP)
        try:
            box = _within(GIVE_UP, lambda: bank.skills.search("slow sql query plan", k=1))
            assert "error" not in box, box
            assert [(h.name, h.why) for h in box["value"]] == [("sql-tuning", "keyword")]
            assert "Chroma server does not answer" in bank.index("skills").dense_error
            # It timed out: the next search does not wait for the server again.
            monkeypatch.setattr(index_module, "DENSE_QUIET_SECONDS", 600.0)
            bank.index("skills")._dense_quiet_until = time.monotonic() + 600
            started = time.monotonic()
            hits = bank.skills.search("slow sql query plan", k=1)
            assert [(h.name, h.why) for h in hits] == [("sql-tuning", "keyword")]
            assert time.monotonic() - started < 5, "the second search waited for the server"
            box = _within(GIVE_UP, lambda: bank.experiences.record(
                task="Import the refunds CSV", outcome="success"))
            assert "error" not in box, box  # kept in the journal, indexed when it answers
            recorded = box["value"]
        finally:
            os.kill(own_chroma.proc.pid, signal.SIGCONT)
        for index in ("skills", "experiences"):
            bank.index(index)._dense_quiet_until = 0.0  # as after DENSE_QUIET_SECONDS
        deadline = time.monotonic() + GIVE_UP
        while True:  # the server works through what it was sent while stopped
            hits = bank.skills.search("slow sql query plan", k=1)
            if [(h.name, h.why) for h in hits] == [("sql-tuning", "both")] or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert [(h.name, h.why) for h in hits] == [("sql-tuning", "both")]
        recalled = bank.experiences.recall("Import the refunds CSV", k=1)
        assert [h.id for h in recalled] == [recorded]
    finally:
        bank.close()


def test_what_a_timeout_setting_means():
    from skillbank.errors import InvalidInputError
    from skillbank.chroma_client import MAX_TIMEOUT, httpx_timeout, timeout_of

    assert [timeout_of(v) for v in (None, 0, -1, float("inf"), "inf")] == [None] * 5
    assert timeout_of("2.5") == 2.5 and timeout_of(" 60 ") == 60 and timeout_of(1e12) == MAX_TIMEOUT
    for bad in ("soon", float("nan"), [1], True, False):
        with pytest.raises(InvalidInputError, match="chroma_timeout"):
            timeout_of(bad)
    limit = httpx_timeout(60.0)
    assert limit.read == 60 and limit.connect == 10
    assert httpx_timeout(2.0).connect == 2


def _shared_index(name: str):
    """An index on an in-memory Chroma, marked shared (as on a server), whose queries to
    Chroma time out (httpx's ReadTimeout, what a stopped server gives) until allowed again."""
    import chromadb
    import httpx
    from chromadb.config import Settings as ChromaSettings

    from skillbank.index import HybridIndex, IndexItem

    client = chromadb.EphemeralClient(settings=ChromaSettings(anonymized_telemetry=False))
    index = HybridIndex(client, name, HashEmbedding(), shared=True)
    index._dense.enabled = False  # every dense search asks Chroma (as experiences, guidelines)
    index.upsert([IndexItem(id=f"i{k}", embed_texts=[f"text number {k} about topic {k % 3}"],
                            keyword_text=f"text number {k} about topic {k % 3}")
                  for k in range(12)])
    asked: list[int] = []
    query = index._collection.query

    def stopped(*args, **kwargs):
        asked.append(1)
        if index.stopped:
            raise httpx.ReadTimeout("timed out")
        return query(*args, **kwargs)

    index.stopped = True
    index._collection.query = stopped
    return index, asked


def test_a_timed_out_server_is_not_asked_again_for_a_while_alone_or_batched():
    index, asked = _shared_index(f"quiet_{uuid.uuid4().hex[:8]}")
    hits = index.search("topic 1", 3)
    assert len(asked) == 1 and {h.why for h in hits} == {"keyword"}
    assert index.dense_error.startswith("the Chroma server does not answer")
    assert [len(index.search(q, 3)) for q in ("topic 2", "number 5")] == [3, 3]
    assert len(asked) == 1, "asked again within the quiet window"
    # Concurrent searches answered together do not ask either (index_batch.prefetch).
    from skillbank import index_batch

    from skillbank.index import embed_query

    requests = [index_batch.Request((q, 3, None, 50, "z", 1.0, 1.0,
                                     embed_query(index.embedding_function, q), None))
                for q in ("topic 0", "number 7")]
    with index._lock:
        index._answer(requests)
    assert len(asked) == 1 and all(r.done and r.error is None for r in requests)
    # A write meanwhile clears nothing: the search still says why it is keyword-only.
    index.dense_error = None
    index.search("topic 1", 3)
    assert index.dense_error and index.dense_error.startswith("the Chroma server")
    index.stopped = False
    index._dense_quiet_until = 0.0  # as after DENSE_QUIET_SECONDS
    assert {h.why for h in index.search("topic 1", 3)} != {"keyword"}
    assert index.dense_error is None and len(asked) == 2


def test_a_refused_connection_does_not_start_the_quiet_window():
    import httpx

    index, asked = _shared_index(f"refused_{uuid.uuid4().hex[:8]}")

    def refused(*args, **kwargs):
        asked.append(1)
        raise httpx.ConnectError("connection refused")

    index._collection.query = refused
    index.search("topic 1", 3)
    index.search("topic 2", 3)
    assert len(asked) == 2 and not index._dense_quiet_until


def test_concurrent_opens_share_one_opener_and_fail_without_queueing(tmp_path, silent_server):
    def openers() -> int:
        return sum(t.name == "skillbank-chroma-open" and t.is_alive()
                   for t in threading.enumerate())

    before = openers()
    bank = Skillbank.open(tmp_path / "root", chroma_url=silent_server, chroma_timeout=1,
                          embedding_function=HashEmbedding(), include_bundled=False, sync=False)
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            bank.client
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors.append(exc)

    try:
        callers = [threading.Thread(target=ask) for _ in range(3)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(GIVE_UP)
        assert not any(caller.is_alive() for caller in callers)
        assert len(errors) == 3 and all(isinstance(e, ChromaUnavailableError) for e in errors)
        assert openers() <= before + 1, "every caller started an opener of its own"
    finally:
        bank.close()


def test_a_frozen_server_is_not_asked_again_by_every_recall(tmp_path, own_chroma):  # noqa: F811
    """hunt-chroma #2, session 29: skill searches kept the quiet window after a request timed
    out, experience recalls (and with them `context_for`, MCP `memory_context`) did not: each
    waited the whole chroma_timeout again, up to three times after a record (its catch-up sync
    asked for the collection and the record's metadata, then the dense query). Counted by the
    requests asked, not by time: after the first timeout, neither the dense query nor the
    catch-up sync is tried within the window."""
    bank = Skillbank.open(tmp_path / "root", chroma_url=own_chroma.url, chroma_timeout=2,
                          embedding_function=HashEmbedding(), include_bundled=False)
    try:
        old = bank.experiences.record(task="Migrate the billing schema with alembic",
                                      outcome="success")
        assert [h.why for h in bank.experiences.recall("migrate billing schema", k=1)] == \
            ["both"]
        os.kill(own_chroma.proc.pid, signal.SIGSTOP)
        try:
            box = _within(GIVE_UP, lambda: bank.experiences.recall("migrate billing schema",
                                                                   k=1))
            assert "error" not in box, box  # it timed out once: keyword
            assert [(h.id, h.why) for h in box["value"]] == [(old, "keyword")]
            box = _within(GIVE_UP, lambda: bank.experiences.record(
                task="Rotate the nginx TLS certificate with certbot", outcome="success"))
            assert "error" not in box, box  # kept in the journal
            index, memory, asked = bank.index("experiences"), bank.experiences, []
            real_dense, real_sync = index.dense_texts, memory.sync
            index.dense_texts = lambda *a, **k: (asked.append("query"), real_dense(*a, **k))[1]
            memory.sync = lambda *a, **k: (asked.append("sync"), real_sync(*a, **k))[1]
            for _ in range(2):
                box = _within(GIVE_UP, lambda: bank.experiences.recall(
                    "migrate billing schema", k=1))
                assert "error" not in box, box
                assert [(h.id, h.why) for h in box["value"]] == [(old, "keyword")]
                box = _within(GIVE_UP, lambda: bank.context_for("migrate the billing schema"))
                assert "error" not in box, box
            assert asked == [], asked
        finally:
            os.kill(own_chroma.proc.pid, signal.SIGCONT)
    finally:
        bank.close()


def test_a_sync_does_not_ask_a_frozen_server_for_each_collection(tmp_path, own_chroma):  # noqa: F811
    """Review (session 29): before a sync, the bank looks each index's collection up by name
    (a server that lost them is rebuilt from the files); on a frozen server each of the three
    lookups waited the whole `chroma_timeout`, in or out of the quiet window a timed-out recall
    had just started (a sync of 10 s at a 2 s timeout, 6 of them lookups). Now a quiet window
    asks none, and a lookup that times out stops the others. Counted by requests, not time
    (the skills' and guidelines' collections, which their syncs do not ask for): fails before
    with two."""
    bank = Skillbank.open(tmp_path / "root", chroma_url=own_chroma.url, chroma_timeout=2,
                          embedding_function=HashEmbedding(), include_bundled=False)
    try:
        bank.experiences.record(task="Migrate the billing schema with alembic",
                                outcome="success")
        clients = {id(bank.index(kind).client): bank.index(kind).client
                   for kind in ("skills", "experiences", "guidelines")}
        asked: list[str] = []

        def lookups() -> list[str]:  # the experiences' own sync reads its checkpoint's id too
            return [name for name in asked if name != bank.index("experiences").name]

        for client in clients.values():
            real = client.get_collection
            client.get_collection = lambda name, *a, _real=real, **k: (
                asked.append(name), _real(name, *a, **k))[1]
        os.kill(own_chroma.proc.pid, signal.SIGSTOP)
        try:
            assert "error" not in _within(GIVE_UP, lambda: bank.experiences.recall(
                "migrate billing schema", k=1))  # times out once: the quiet window starts
            asked.clear()
            box = _within(GIVE_UP, bank.sync)
            assert "error" not in box, box
            assert lookups() == [], asked
        finally:
            os.kill(own_chroma.proc.pid, signal.SIGCONT)
        for index in (bank.index(kind) for kind in ("skills", "experiences", "guidelines")):
            index._dense_quiet_until = 0.0  # the window's end, without waiting for it
        os.kill(own_chroma.proc.pid, signal.SIGSTOP)
        try:
            asked.clear()
            box = _within(GIVE_UP, bank.sync)  # no window: the first lookup times out alone
            assert "error" not in box, box
            assert len(lookups()) <= 1, asked
        finally:
            os.kill(own_chroma.proc.pid, signal.SIGCONT)
        bank.experiences.record(task="Rotate the nginx TLS certificate", outcome="success")
        assert bank.sync()["experiences"].findings == []  # the server is back: synced
    finally:
        bank.close()


def test_a_record_that_meets_a_frozen_server_starts_the_quiet_window(tmp_path, own_chroma):  # noqa: F811
    """Session 31's review: a record whose index write timed out on a frozen server detached
    the index (so the record is recalled by keyword) with the 2 s retry of a refused
    connection, not the quiet window of a timeout: a recall 2 s later waited a whole
    `chroma_timeout` again (60 s by default). The detach reads the timeout from the error's
    context, as `quiet_after_timeout` does. Checked on the retry time the detach set, not by
    timing a call."""
    from skillbank.index_outage import INDEX_RETRY_SECONDS

    bank = Skillbank.open(tmp_path / "root", chroma_url=own_chroma.url, chroma_timeout=2,
                          embedding_function=HashEmbedding(), include_bundled=False)
    try:
        bank.experiences.record(task="Migrate the billing schema with alembic", outcome="success")
        os.kill(own_chroma.proc.pid, signal.SIGSTOP)
        try:
            box = _within(GIVE_UP, lambda: bank.experiences.record(
                task="Rotate the nginx TLS certificate with certbot", outcome="success"))
            assert "error" not in box, box  # kept in the journal
            index = bank.index("experiences")
            assert index._detached
            assert index._attach_after - time.monotonic() > INDEX_RETRY_SECONDS
        finally:
            os.kill(own_chroma.proc.pid, signal.SIGCONT)
    finally:
        bank.close()
