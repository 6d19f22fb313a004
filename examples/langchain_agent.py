"""A small LangChain support agent that gains memory from skillbank.

Without skillbank this is an ordinary `create_agent` agent with one tool, `order_status`. The
lines marked `# + skillbank` are all that changes: the middleware puts what the bank remembers
about the task into the system prompt, records every run (failures too) as an experience in the
background, and (tools=True) gives the model a compact set of skillbank tools. The user's
critique of the first answer becomes a guideline, and the second run follows it. Memory is
per user: `namespace="{user_id}"` is filled from each run's `configurable`.

Run offline (a scripted model, no API key needed):

    python examples/langchain_agent.py

With a real chat model (needs its LangChain integration package and API key):

    SKILLBANK_EXAMPLE_MODEL=openai:gpt-4o-mini python examples/langchain_agent.py

Options: --root DIR keeps the memory in DIR (default: a fresh temp folder), --hash-embedding
uses skillbank's tiny lexical embedding instead of the MiniLM model (no model download).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from skillbank import Skillbank  # + skillbank
from skillbank.adapters.langchain import SkillbankMiddleware  # + skillbank

ORDERS = {"1234": "shipped on Monday, arriving Thursday", "5678": "delayed at the depot, now due Friday"}


@tool
def order_status(order_id: str) -> str:
    """Look up where a customer's order is."""
    return ORDERS.get(order_id, "not found")


class OfflineSupportModel(BaseChatModel):
    """A scripted stand-in for a chat model: look the order up, then answer.

    Like a real model it reads its system prompt: when the memory holds a guideline about
    tracking links, its answer follows it.
    """

    @property
    def _llm_type(self) -> str:
        return "offline-support-demo"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "OfflineSupportModel":
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        last = messages[-1]
        system = "\n".join(str(m.text) for m in messages if m.type == "system").lower()
        if last.type == "human":
            order = re.search(r"\d+", str(last.text))
            reply = AIMessage(content="", tool_calls=[{
                "name": "order_status", "args": {"order_id": order.group() if order else "?"},
                "id": f"call-{len(messages)}"}])
        else:
            order_id = next((c["args"]["order_id"] for m in reversed(messages)
                             for c in getattr(m, "tool_calls", []) or []), "?")
            reply_text = f"Order {order_id} is {last.text}."
            if "tracking link" in system:
                reply_text = (f"Sorry for the wait! {reply_text} "
                              f"Track it here: https://example.com/track/{order_id}")
            reply = AIMessage(content=reply_text)
        return ChatResult(generations=[ChatGeneration(message=reply)])


class ShowPrompt(BaseCallbackHandler):
    """Print the system prompt the model receives on the first call of each run."""

    def __init__(self) -> None:
        self.shown = False

    def on_chat_model_start(self, serialized, messages, **kwargs) -> None:
        if not self.shown:
            self.shown = True
            system = "\n".join(str(m.text) for m in messages[0] if m.type == "system")
            print("--- the model's system prompt ---\n" + system + "\n---------------------------------")


def make_model(fake: bool) -> Any:
    name = os.environ.get("SKILLBANK_EXAMPLE_MODEL")
    if fake or not name:
        return OfflineSupportModel()
    from langchain.chat_models import init_chat_model

    return init_chat_model(name)


def open_bank(root: str, hash_embedding: bool) -> Skillbank:
    embedding = None
    if hash_embedding:
        from skillbank.embeddings import HashEmbedding

        embedding = HashEmbedding()
    return Skillbank.open(root, embedding_function=embedding)


def ask(agent: Any, question: str) -> dict:
    print(f"\nUser: {question}")
    state = agent.invoke({"messages": [{"role": "user", "content": question}]},
                         config={"callbacks": [ShowPrompt()],
                                 "configurable": {"user_id": "shop-support"}})
    print(f"Agent: {state['messages'][-1].text}")
    return state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="memory folder (default: a new temp folder)")
    parser.add_argument("--fake", action="store_true",
                        help="use the scripted offline model even if SKILLBANK_EXAMPLE_MODEL is set")
    parser.add_argument("--hash-embedding", action="store_true",
                        help="lexical test embedding instead of MiniLM (no model needed)")
    args = parser.parse_args(argv)
    root = args.root or tempfile.mkdtemp(prefix="skillbank-example-")

    with open_bank(root, args.hash_embedding) as bank:  # + skillbank
        memory = SkillbankMiddleware(bank, namespace="{user_id}", tools=True)  # + skillbank
        agent = create_agent(
            make_model(args.fake),
            tools=[order_status],
            system_prompt="You are a friendly support agent for an online shop.",
            middleware=[memory],  # + skillbank
        )

        ask(agent, "Where is my order 1234?")
        bank.flush()  # + skillbank: the run is recorded in the background; make it visible now
        first = memory.last_experience_id
        critique = "Always include the tracking link, and apologise when an order is late."
        print(f"\nUser feedback: {critique}")
        report = bank.guidelines.learn(critique, task="Where is my order 1234?",  # + skillbank
                                       namespace="shop-support")
        for entry in report.entries:
            print(f"  learned ({entry.action}): {entry.text}")

        second = ask(agent, "My order 5678 is late. Where is it?")
        bank.flush()

        print(f"\nRecorded experiences: {first}, {memory.last_experience_id}")
        print(f"Memory shown in run 2: {second.get('skillbank_memory_ids', [])}")
        print(f"Memory folder: {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
