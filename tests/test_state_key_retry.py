"""A requestState key that cannot be read (PostgreSQL down) is not asked for on every call,
and a team deployment's key is read on a thread as the server is built (review 2 of session
36: every sampling call, or a request carrying a junk requestState, stalled the worker's event
loop for the pool's timeout)."""

from __future__ import annotations

import threading

import pytest

from skillbank.mcp_server import state_key


def test_a_failed_read_is_not_retried_on_every_call(monkeypatch):
    calls = []

    def resolve() -> bytes:
        calls.append(1)
        raise RuntimeError("PostgreSQL does not answer")

    codec = state_key.SharedKeyCodec(resolve)
    for _ in range(5):
        with pytest.raises(RuntimeError):
            codec.seal(b"state")
    assert len(calls) == 1
    monkeypatch.setattr(state_key, "RETRY_SECONDS", 0.0)  # the wait is over: asked again
    with pytest.raises(RuntimeError):
        codec.seal(b"state")
    assert len(calls) == 2


def test_warm_reads_the_key_off_the_calling_thread():
    read_on: list[str] = []
    done = threading.Event()

    def resolve() -> bytes:
        read_on.append(threading.current_thread().name)
        done.set()
        return b"k" * 64

    codec = state_key.SharedKeyCodec(resolve)
    codec.warm()
    assert done.wait(60)
    assert read_on == ["skillbank-state-key"]
    assert codec.unseal(codec.seal(b"state")) == b"state"
    assert len(read_on) == 1  # kept
