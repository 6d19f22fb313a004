"""Never on the event loop (issue 25): an agent's lookups and recordings run off the asyncio
loop, and the embedding model loads on a thread when the face is built, not in the first turn.

How the loop is shown to stay free without timing anything: the bank call under test is gated
on a ticker task running on the loop — it returns only after the ticker has ticked three more
times. Run on the loop, it could never see a tick (the wait gives up after a generous timeout
and the test fails); run on a worker thread, it sees them at once.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from skillbank import Skillbank

GIVE_UP = 30.0  # seconds a gated call waits for ticks before it reports a blocked loop


class Ticker:
    """A task on the loop counting ticks, and a gate bank calls pass only after 3 new ticks."""

    def __init__(self) -> None:
        self.ticks = 0
        self.stop = False
        self.passed: list[bool] = []
        self._lock = threading.Lock()
        self._waiters: list[tuple[int, threading.Event]] = []

    async def run(self) -> None:
        while not self.stop:
            await asyncio.sleep(0.001)
            with self._lock:
                self.ticks += 1
                for target, event in self._waiters:
                    if self.ticks >= target:
                        event.set()

    def gate(self) -> None:
        event = threading.Event()
        with self._lock:
            self._waiters.append((self.ticks + 3, event))
        self.passed.append(event.wait(GIVE_UP))


def gated(ticker: Ticker, fn: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        ticker.gate()
        return fn(*args, **kwargs)
    return call


async def with_ticker(ticker: Ticker, work: Any) -> Any:
    task = asyncio.create_task(ticker.run())
    try:
        return await work
    finally:
        ticker.stop = True
        await task


@pytest.fixture
def bank(hash_bank):
    return hash_bank  # conftest: a temp root, the hash embedding, no bundled skills


async def test_langchain_lookup_and_recording_leave_the_loop_free(bank, monkeypatch):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from scripted import Scripted

    from skillbank.adapters.langchain import SkillbankMiddleware

    ticker = Ticker()
    monkeypatch.setattr(bank, "context_for", gated(ticker, bank.context_for))
    monkeypatch.setattr(bank.experiences, "record_messages",
                        gated(ticker, bank.experiences.record_messages))
    agent = create_agent(Scripted(messages=iter([AIMessage(content="Migrated.")])), [],
                         middleware=[SkillbankMiddleware(bank, background=False,
                                                         raise_errors=True)])
    result = await with_ticker(ticker, agent.ainvoke(
        {"messages": [{"role": "user", "content": "Migrate the orders table"}]}))
    assert result["messages"][-1].content == "Migrated."
    assert ticker.passed == [True, True]  # the lookup and the recording, both off the loop
    assert len(bank.experiences.list(kind="experience")) == 1


async def test_llamaindex_lookup_and_recording_leave_the_loop_free(tmp_path, monkeypatch):
    """Through a client of an owner in another process: each call is a round trip to it."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import Memory
    from test_shared_root import owner_process
    from workers.common import open_bank

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock

    root = tmp_path / "root"
    with owner_process(root):
        bank = open_bank(root)
        try:
            assert bank.is_remote
            ticker = Ticker()
            monkeypatch.setattr(bank, "context_for", gated(ticker, bank.context_for))
            monkeypatch.setattr(bank.experiences, "record_messages",
                                gated(ticker, bank.experiences.record_messages))
            llm = MockFunctionCallingLLM(response_generator=lambda messages, **kw: ChatMessage(
                role="assistant", content="Done."))
            block = SkillbankMemoryBlock(bank, raise_errors=True)
            memory = Memory.from_defaults(session_id="s", memory_blocks=[block])
            agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are a DBA.")

            async def run() -> Any:
                await agent.run(user_msg="Migrate the orders table", memory=memory)
                return await block.arecord_run(memory, outcome="success")

            eid = await with_ticker(ticker, run())
            assert eid and eid.startswith("exp-")
            assert ticker.passed == [True, True]
        finally:
            bank.close()


def test_the_model_loads_on_a_thread_when_a_face_is_built(tmp_path):
    """The first lookup no longer loads the model: building the face starts it on a thread."""
    pytest.importorskip("langchain.agents")
    from skillbank.embeddings import MiniLMEmbedding, resolve_model_dir

    try:
        resolve_model_dir(None)
    except Exception:  # noqa: BLE001
        pytest.skip("the embedding model is not available here")
    from skillbank.adapters.langchain import SkillbankMiddleware

    function = MiniLMEmbedding()
    bank = Skillbank.open(tmp_path / "bank", embedding_function=function, include_bundled=False)
    try:
        assert function._session is None  # opening a bank loads no model
        SkillbankMiddleware(bank)
        done = threading.Event()

        def wait_for_model() -> None:
            while function._session is None and not done.is_set():
                done.wait(0.05)
        waiter = threading.Thread(target=wait_for_model, daemon=True)
        waiter.start()
        waiter.join(60)
        done.set()
        assert function._session is not None  # loaded with no lookup made
        assert function.calls == 0  # nothing embedded or counted to warm it
    finally:
        bank.close()


@pytest.mark.parametrize("face", ["llamaindex", "langchain"])
def test_a_script_that_builds_a_face_and_ends_at_once_exits_cleanly(tmp_path, face):
    """The model loads on a thread the interpreter waits for: a script that built a face and
    ended while the model was still loading aborted (exit 134, "terminate called without an
    active exception": onnxruntime torn down under the loading thread)."""
    import subprocess
    import sys

    from skillbank.embeddings import resolve_model_dir

    pytest.importorskip("llama_index.core" if face == "llamaindex" else "langchain.agents")
    try:
        resolve_model_dir(None)
    except Exception:  # noqa: BLE001
        pytest.skip("the embedding model is not available here")
    build = ("from skillbank.adapters.llamaindex import SkillbankMemoryBlock as Face"
             if face == "llamaindex" else
             "from skillbank.adapters.langchain import SkillbankMiddleware as Face")
    script = (f"from skillbank import Skillbank\n{build}\n"
              f"with Skillbank.open({str(tmp_path / 'bank')!r}, include_bundled=False) as bank:\n"
              "    Face(bank)\nprint('closed')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "SKILLBANK_CLI_OWNER": "0"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "closed"
