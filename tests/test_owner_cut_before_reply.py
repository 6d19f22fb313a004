"""A call whose connection the owner closed before its reply began never ran: the client sends
it again instead of raising "it may or may not have been applied".

Session 32's CI: an owner closing after its own work shut a kept-alive connection just as a
client's `experiences.record` arrived on it; the client got `OwnerLostError` (connection reset)
for a write that never ran, and the worker failed. The owner starts a call's work only after its
reply's headers are out, so "cut before any reply" is "never run"; a cut once the reply began
stays the caller's decision. And a call the owner admitted just before it began closing is
waited for (it was counted only once a pool thread picked it up).
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import httpx
import pytest

from owner_client import client_bank, owner_process
from skillbank.sharing import endpoint as ep
from skillbank.sharing.connection import _Connection, _NotRun
from skillbank.sharing.owner import InFlight, TicketedReply


def _one_shot_server(path: Path, answer: bytes | None, read_request: bool) -> threading.Thread:
    """A Unix socket that takes one connection and closes it: after reading the request (or
    not: unread data makes the close a reset) and writing `answer` (or nothing)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn, listener:
            if read_request:
                seen = b""
                while b"\r\n\r\n" not in seen:
                    seen += conn.recv(65536)
            else:
                threading.Event().wait(0.2)  # let the whole request arrive, unread
            if answer:
                conn.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def _connection(path: Path) -> _Connection:
    return _Connection(ep.Endpoint(socket=str(path), token="t", pid=1, root="/nowhere",
                                   started=0.0), timeout=10.0)


@pytest.mark.parametrize("read_request", [True, False], ids=["closed", "reset"])
def test_a_connection_closed_before_any_reply_is_a_call_never_run(tmp_path, read_request):
    path = tmp_path / "s.sock"
    server = _one_shot_server(path, None, read_request)
    conn = _connection(path)
    try:
        with pytest.raises(_NotRun) as raised:
            conn.call(b'{"target": "experiences", "name": "record"}')
        assert isinstance(raised.value.__cause__, httpx.TransportError)
    finally:
        conn.close()
        server.join(5)


def test_a_connection_closed_once_the_reply_began_may_have_run(tmp_path):
    """Headers and a keep-alive space came: the owner had begun the call."""
    path = tmp_path / "s.sock"
    begun = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
             b"transfer-encoding: chunked\r\n\r\n1\r\n \r\n")
    server = _one_shot_server(path, begun, True)
    conn = _connection(path)
    try:
        with pytest.raises(httpx.TransportError):  # not _NotRun: the client may not resend it
            conn.call(b'{"target": "experiences", "name": "record"}')
    finally:
        conn.close()
        server.join(5)


# The owner process cuts the first CUTS connections a /call arrives on, before answering it (as
# uvicorn's shutdown closes a kept-alive connection whose request it has not read yet).
CUT_CALLS = """
import uvicorn.protocols.http.h11_impl as _h11, uvicorn.protocols.http.httptools_impl as _ht
_cut = {'left': CUTS}
def _cutting(real):
    def data_received(self, data):
        if _cut['left'] and data.startswith(b'POST /call'):
            _cut['left'] -= 1
            self.transport.abort()
            return
        return real(self, data)
    return data_received
for _protocol in (_h11.H11Protocol, _ht.HttpToolsProtocol):
    _protocol.data_received = _cutting(_protocol.data_received)
"""


def test_a_write_the_owner_cut_before_replying_is_sent_again_and_lands_once(tmp_path):
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    with owner_process(root, preamble="CUTS = 1" + CUT_CALLS), client_bank(root) as bank:
        eid = bank.experiences.record(task="Rotate the signing key", outcome="success")
        found = [e for e in bank.experiences.list() if e.task == "Rotate the signing key"]
        assert [e.id for e in found] == [eid]  # applied, once


def test_an_owner_that_cuts_every_call_is_told_not_retried_without_end(tmp_path):
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    from skillbank.sharing.client import OwnerLostError

    with owner_process(root, preamble="CUTS = 1000" + CUT_CALLS), client_bank(root) as bank:
        with pytest.raises(OwnerLostError, match="closed the connection before running "
                                                 "experiences.record, 5 times; it was not applied"):
            bank.experiences.record(task="Rotate the signing key", outcome="success")


def test_a_call_admitted_before_closing_is_waited_for_and_none_after():
    flight = InFlight()
    ticket = flight.admit()
    assert ticket is not None
    flight.close()
    assert flight.admit() is None  # turned away unrun once closing began
    assert not flight.wait_idle(0.05)  # the admitted call, not yet picked up, is waited for
    ticket.release()
    ticket.release()  # given back once, however often
    assert flight.wait_idle(0.05)


def test_a_reply_that_ends_before_its_work_began_gives_its_ticket_back():
    import asyncio

    flight = InFlight()
    ticket = flight.admit()

    async def gone(scope, receive, send):
        raise OSError("the client went away")

    with pytest.raises(OSError):
        asyncio.run(TicketedReply(ticket, gone)({}, None, None))
    assert flight.wait_idle(0.05)
