"""Looking a method up on a client bank does no I/O and waits on no lock (hunt-async #3,
session 34): an asyncio agent that offloads `await asyncio.to_thread(b.experiences.record, ...)`
evaluates `b.experiences.record` on its event loop thread. That lookup took the client's
takeover lock (`_MemoryProxy.__getattr__ -> _member -> _ensure`), so while a worker thread took
the root over from an owner that went away, the whole loop stalled for 2-3 s."""

from __future__ import annotations

import asyncio
import threading

import pytest

from owner_client import client_bank, owner_process

#: A generous bound for a lookup that must not wait at all (only a hang fails it).
HANG = 30.0


def _lookup_in_thread(get):
    """Run `get()` on another thread; (done, result) after at most HANG seconds."""
    box: dict = {}
    done = threading.Event()

    def run():
        try:
            box["value"] = get()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done.wait(HANG), box


def test_a_method_is_looked_up_while_another_thread_holds_the_takeover_lock(tmp_path):
    """Before: the lookups below waited until the other thread let the lock go."""
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root), client_bank(root) as bank:
        held, release = threading.Event(), threading.Event()

        def hold():  # as a worker taking the root over holds it
            with bank._switch:
                held.set()
                release.wait()

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        held.wait()
        try:
            for get in (lambda: bank.experiences.record, lambda: bank.guidelines.learn,
                        lambda: bank.skills.search, lambda: bank.context_for):
                done, box = _lookup_in_thread(get)
                assert done, "looking a method up waited for the takeover lock"
                assert callable(box.get("value")), box
            # What the lookup checked before still holds: a name the owner does not serve.
            done, box = _lookup_in_thread(lambda: bank.experiences.no_such_call)
            assert done and isinstance(box.get("error"), AttributeError), box
        finally:
            release.set()
            holder.join()
        eid = bank.experiences.record("task one", outcome="success")
        assert eid in [e.id for e in bank.experiences.list()]


def test_the_takeover_runs_in_the_offloaded_call_not_in_the_lookup(tmp_path):
    """The owner goes away; the lookup on the loop thread connects to nothing (before: it
    ran the connect-or-take-over loop itself), and the worker's call takes the root over."""
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root) as owner, client_bank(root) as bank:
        owner.stdin.close()
        owner.wait(timeout=60)
        loop_thread = threading.get_ident()
        where: list[int] = []
        ensure = bank._ensure

        def spying_ensure():
            where.append(threading.get_ident())
            return ensure()

        bank._ensure = spying_ensure

        async def agent():
            return await asyncio.to_thread(bank.experiences.record, "after the owner left",
                                           outcome="success")

        eid = asyncio.run(agent())
        assert where and loop_thread not in where, "the loop thread connected or took over"
        assert not bank.is_remote  # this process owns the root now
        assert eid in [e.id for e in bank.experiences.list()]


def test_a_closed_client_still_says_so_on_lookup(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root), client_bank(root) as bank:
        bank.close()
        from skillbank.errors import ClosedError

        with pytest.raises(ClosedError):
            bank.experiences.record
