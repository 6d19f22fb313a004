"""A small LlamaIndex support agent that gains memory from skillbank.

Without skillbank this is an ordinary `FunctionAgent` with one tool, `order_status`, and a
`Memory`. The lines marked `# + skillbank` are all that changes: a memory block puts what the
bank remembers about the task in front of the LLM (inside <memory>), the tool spec gives the
LLM a compact set of skillbank tools, and `arecord_run` records each run as an experience (a
run that raises too, with `error=` and the run's `ctx`). The user's
critique of the first answer becomes a guideline, and the second run follows it.

Run offline (a scripted LLM, no API key needed):

    python examples/llamaindex_agent.py

With a real LLM (needs `llama-index-llms-openai` and OPENAI_API_KEY):

    SKILLBANK_EXAMPLE_LLM=gpt-4o-mini python examples/llamaindex_agent.py

Options: --root DIR keeps the memory in DIR (default: a fresh temp folder), --hash-embedding
uses skillbank's tiny lexical embedding instead of the MiniLM model (no model download).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool

from skillbank import Skillbank  # + skillbank
from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankToolSpec  # + skillbank

ORDERS = {"1234": "shipped on Monday, arriving Thursday", "5678": "delayed at the depot, now due Friday"}


def order_status(order_id: str) -> str:
    """Look up where a customer's order is."""
    return ORDERS.get(order_id, "not found")


def show_prompt(messages: list[ChatMessage]) -> None:
    system = "\n".join(m.content or "" for m in messages if m.role.value == "system")
    print("--- the LLM's system messages ---\n" + system + "\n---------------------------------")


def offline_llm() -> MockFunctionCallingLLM:
    """A scripted stand-in for an LLM: look the order up, then answer.

    Like a real model it reads its system messages: when the memory holds a guideline about
    tracking links, its answer follows it.
    """

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        last = messages[-1]
        if last.role.value == "user":
            show_prompt(messages)
            order = re.search(r"\d+", last.content or "")
            return ChatMessage(role="assistant", blocks=[ToolCallBlock(
                tool_call_id=f"call-{len(messages)}", tool_name="order_status",
                tool_kwargs={"order_id": order.group() if order else "?"})])
        system = "\n".join(m.content or "" for m in messages if m.role.value == "system").lower()
        order_id = next((b.tool_kwargs.get("order_id", "?") for m in reversed(messages)
                         for b in m.blocks if isinstance(b, ToolCallBlock)), "?")
        text = f"Order {order_id} is {last.content}."
        if "tracking link" in system:
            text = f"Sorry for the wait! {text} Track it here: https://example.com/track/{order_id}"
        return ChatMessage(role="assistant", content=text)

    return MockFunctionCallingLLM(response_generator=respond)


def make_llm(fake: bool) -> Any:
    name = os.environ.get("SKILLBANK_EXAMPLE_LLM")
    if fake or not name:
        return offline_llm()
    from llama_index.llms.openai import OpenAI  # pip install llama-index-llms-openai

    return OpenAI(model=name)


def open_bank(root: str, hash_embedding: bool) -> Skillbank:
    embedding = None
    if hash_embedding:
        from skillbank.embeddings import HashEmbedding

        embedding = HashEmbedding()
    return Skillbank.open(root, embedding_function=embedding)


async def ask(agent: FunctionAgent, bank_block: SkillbankMemoryBlock, question: str,
              session: str) -> str | None:
    print(f"\nUser: {question}")
    memory = Memory.from_defaults(session_id=session, token_limit=8000,
                                  memory_blocks=[bank_block])  # + skillbank (memory_blocks)
    handler = agent.run(user_msg=question, memory=memory)
    try:
        answer = await handler
    except Exception as exc:  # + skillbank: record the failure and the tool calls before it
        await bank_block.arecord_run(memory, error=exc, ctx=handler.ctx)
        raise
    print(f"Agent: {answer}")
    return await bank_block.arecord_run(memory)  # + skillbank: record the run


async def run(args: argparse.Namespace) -> int:
    root = args.root or tempfile.mkdtemp(prefix="skillbank-example-")
    with open_bank(root, args.hash_embedding) as bank:  # + skillbank
        block = SkillbankMemoryBlock(bank)  # + skillbank
        agent = FunctionAgent(
            tools=[FunctionTool.from_defaults(order_status),
                   *SkillbankToolSpec(bank).to_tool_list()],  # + skillbank
            llm=make_llm(args.fake),
            system_prompt="You are a friendly support agent for an online shop.",
        )

        first = await ask(agent, block, "Where is my order 1234?", "demo-1")
        critique = "Always include the tracking link, and apologise when an order is late."
        print(f"\nUser feedback: {critique}")
        report = bank.guidelines.learn(critique, task="Where is my order 1234?")  # + skillbank
        for entry in report.entries:
            print(f"  learned ({entry.action}): {entry.text}")

        second = await ask(agent, block, "My order 5678 is late. Where is it?", "demo-2")
        print(f"\nRecorded experiences: {first}, {second}")
        print(f"Memory folder: {root}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="memory folder (default: a new temp folder)")
    parser.add_argument("--fake", action="store_true",
                        help="use the scripted offline LLM even if SKILLBANK_EXAMPLE_LLM is set")
    parser.add_argument("--hash-embedding", action="store_true",
                        help="lexical test embedding instead of MiniLM (no model needed)")
    return asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
