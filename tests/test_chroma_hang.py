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
        tmp_path, own_chroma):  # noqa: F811
    bank = Skillbank.open(tmp_path / "root", chroma_url=own_chroma.url, chroma_timeout=2,
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
            box = _within(GIVE_UP, lambda: bank.experiences.record(
                task="Import the refunds CSV", outcome="success"))
            assert "error" not in box, box  # kept in the journal, indexed when it answers
            recorded = box["value"]
        finally:
            os.kill(own_chroma.proc.pid, signal.SIGCONT)
        hits = bank.skills.search("slow sql query plan", k=1)  # back: both sides again
        assert [(h.name, h.why) for h in hits] == [("sql-tuning", "both")]
        recalled = bank.experiences.recall("Import the refunds CSV", k=1)
        assert [h.id for h in recalled] == [recorded]
    finally:
        bank.close()


def test_no_timeout_when_it_is_switched_off():
    from skillbank.index import _timeout

    assert _timeout(None) is None and _timeout(0) is None and _timeout(-1) is None
    limit = _timeout(60)
    assert limit.read == 60 and limit.connect == 10
    assert _timeout(2).connect == 2
