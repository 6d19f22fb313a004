"""`context_for(task, topic=...)` (#25) on every face that exposes the call: the MCP tool
`memory_context`, the LangChain and LlamaIndex `memory_context` tools and `skillbank context
--topic`. Each face is thin: it hands the topic to the facade, which filters the guidelines to
that topic's family. Run through a client of another process that owns the root (the faces of
a second process), so the topic also crosses the wire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from owner_client import client_bank, owner_process
from test_cli_owner import cli
from test_learning_blocks import FAMILY_RULES, FAMILY_TASK


def _rules(root: Path) -> dict[str, str]:
    """The family-vote rules (the code rules out-vote the support rule for FAMILY_TASK),
    written before the owner process opens the root: id -> topic."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        return {bank.guidelines.add(text, topic=t).guideline_id: t for text, t in FAMILY_RULES}


def _support(topics: dict[str, str]) -> str:
    [gid] = [i for i, t in topics.items() if t == "support"]
    return gid


def test_every_face_passes_the_stated_topic(tmp_path):
    root = tmp_path / "root"
    topics = _rules(root)
    support = _support(topics)
    code = [i for i, t in topics.items() if t != "support"]
    with owner_process(root), client_bank(root) as bank:
        # The facade through the client: the vote, then the stated topic.
        assert support not in bank.context_for(FAMILY_TASK, budget_tokens=1600).ids
        assert bank.context_for(FAMILY_TASK, budget_tokens=1600, topic="support").ids == [support]

        # LangChain tool.
        from skillbank.adapters.langchain import skillbank_tools

        lc = {t.name: t for t in skillbank_tools(bank, include=["memory_context"])}
        voted = lc["memory_context"].invoke({"task": FAMILY_TASK, "budget_tokens": 1600})
        stated = lc["memory_context"].invoke({"task": FAMILY_TASK, "budget_tokens": 1600,
                                              "topic": "support"})
        assert support not in voted and all(i in voted for i in code), voted
        assert support in stated and not any(i in stated for i in code), stated

        # LlamaIndex tool.
        from skillbank.adapters.llamaindex import SkillbankToolSpec

        li = {t.metadata.name: t for t in SkillbankToolSpec(bank).to_tool_list()}
        assert "topic" in li["memory_context"].metadata.get_parameters_dict()["properties"]
        stated = li["memory_context"].call(task=FAMILY_TASK, budget_tokens=1600,
                                           topic="support").content
        assert support in stated and not any(i in stated for i in code), stated

        # The CLI, a second process attached to the owner.
        out = cli(root, "--no-bundled", "--json", "context", FAMILY_TASK, "--budget", "1600",
                  "--topic", "support")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["ids"] == [support]
        bad = cli(root, "--no-bundled", "--json", "context", FAMILY_TASK, "--topic", "   ")
        assert "InvalidInputError" in bad.stderr and "topic must be" in bad.stderr, bad.stderr


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_mcp_tool_passes_the_stated_topic(tmp_path, mode):
    from skillbank.mcp_server import build_server

    root = tmp_path / "root"
    topics = _rules(root)
    support = _support(topics)
    with owner_process(root), client_bank(root) as bank:
        async with Client(build_server(bank, trusted=True), mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["memory_context"].input_schema["properties"]["topic"]
            assert "topic" in schema["description"]
            voted = await client.call_tool("memory_context", {"task": FAMILY_TASK,
                                                              "budget_tokens": 1600})
            assert not voted.is_error and support not in voted.structured_content["ids"]
            stated = await client.call_tool("memory_context", {
                "task": FAMILY_TASK, "budget_tokens": 1600, "topic": "support"})
            assert not stated.is_error, stated.content[0].text
            assert stated.structured_content["ids"] == [support]
            # The start_task prompt (an optional argument; a client's empty one is no topic).
            code = [i for i, t in topics.items() if t != "support"]
            prompt = await client.get_prompt("start_task", {"task": FAMILY_TASK,
                                                            "topic": "support"})
            text = prompt.messages[0].content.text
            assert support in text and not any(i in text for i in code), text
            prompt = await client.get_prompt("start_task", {"task": FAMILY_TASK, "topic": ""})
            text = prompt.messages[0].content.text
            assert support not in text and all(i in text for i in code), text
            for bad in ("", "   ", "x" * 101):
                refused = await client.call_tool("memory_context", {"task": FAMILY_TASK,
                                                                    "topic": bad})
                assert refused.is_error and "topic" in refused.content[0].text
                assert "Traceback" not in refused.content[0].text


async def test_the_automatic_memory_of_both_frameworks_keeps_to_a_stated_topic(tmp_path):
    """SkillbankMiddleware (LangChain) and SkillbankMemoryBlock (LlamaIndex) put the memory in
    the prompt themselves: an agent that does one kind of task names it once (topic=)."""
    pytest.importorskip("langchain.agents")
    pytest.importorskip("llama_index.core")
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from llama_index.core.base.llms.types import ChatMessage

    from skillbank.adapters.langchain import SkillbankMiddleware
    from skillbank.adapters.llamaindex import SkillbankMemoryBlock
    from test_langchain_adapter import ScriptedChatModel, system_text

    root = tmp_path / "root"
    topics = _rules(root)
    support = _support(topics)
    code = [i for i, t in topics.items() if t != "support"]
    with owner_process(root), client_bank(root) as bank:
        for topic, shown, hidden in (("support", [support], code), (None, code, [support])):
            model = ScriptedChatModel(messages=iter([AIMessage(content="Done.")]))
            middleware = SkillbankMiddleware(bank, record=False, raise_errors=True,
                                             background=False, budget_tokens=1600, topic=topic)
            await create_agent(model, [], middleware=[middleware]).ainvoke(
                {"messages": [{"role": "user", "content": FAMILY_TASK}]})
            text = system_text(model.seen[0])
            assert all(i in text for i in shown) and not any(i in text for i in hidden), text

            block = SkillbankMemoryBlock(bank, record=False, raise_errors=True,
                                         budget_tokens=1600, topic=topic)
            text = await block.aget([ChatMessage(role="user", content=FAMILY_TASK)])
            assert all(i in text for i in shown) and not any(i in text for i in hidden), text
