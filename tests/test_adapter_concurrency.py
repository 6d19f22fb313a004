"""Concurrent agent runs on one bank: tasks that differ only by a number stay apart."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import Field

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from scripted import Scripted  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402


class Echo(Scripted):
    """Answers every request with the same words (the runs differ only in their task)."""

    messages: Any = Field(default=None)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        from langchain_core.outputs import ChatGeneration, ChatResult

        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Refunded."))])


@pytest.fixture
def bank(tmp_path, minilm):
    # The real model: it embeds "Refund order 1001" and "... 1002" almost the same (the hash
    # embedding would keep them apart on its own and hide the folding).
    bank = Skillbank.open(tmp_path / "bank", embedding_function=minilm)
    yield bank
    bank.close()


@pytest.mark.slow
def test_concurrent_runs_differing_by_a_number_are_not_folded(bank):
    agent = create_agent(Echo(), [], middleware=[SkillbankMiddleware(bank)])
    orders = ["4521", "4522", "4523", "4524"]  # MiniLM cosine between these tasks: ~0.99

    def run(order: str) -> None:
        agent.invoke({"messages": [{"role": "user", "content": f"Process invoice #{order} for ACME"}],
                      "outcome": "success"})

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(run, orders))
    run("4521")  # the very same task again: this one is a duplicate
    assert bank.flush(timeout=60)
    records = bank.experiences.list(kind="experience", limit=50)
    assert sorted(r.task for r in records) == [f"Process invoice #{o} for ACME" for o in orders]
    again = next(r for r in records if r.task == "Process invoice #4521 for ACME")
    assert again.duplicates == 1
