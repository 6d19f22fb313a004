"""The LlamaIndex faces gate skill search on the agent's tools (#26): `SkillbankToolSpec` and
`SkillbankMemoryBlock` take the tools given to the agent (`available_tools=`), and a skill whose
declared tools are not among them is neither found nor put in the memory. A real `FunctionAgent`
run with a scripted LLM, a real bank (hash embedding)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402

from scripted_llama import scripted, tool_call  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankMemoryBlock, SkillbankToolSpec  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402
from tool_gate import bank  # noqa: E402,F401 - the fixture


def bash(command: str) -> str:
    """Run a shell command."""
    return "ok"


def read_file(path: str) -> str:
    """Read a file."""
    return "text"


@pytest.mark.parametrize("functions, shown", [([bash, read_file], True), ([read_file], False)])
async def test_function_agent_finds_only_skills_it_has_the_tools_for(bank, functions, shown):
    """Fails before: the LlamaIndex faces took no tool names, so a skill needing bash was found
    and put in the memory of an agent without one."""
    tools = [FunctionTool.from_defaults(f) for f in functions]
    llm, seen = scripted([tool_call("find_skills", {"task": "clean up stale git branches"}, "t1"),
                          ChatMessage(role="assistant", content="done")])
    block = SkillbankMemoryBlock(bank, record=False, raise_errors=True, available_tools=tools)
    memory = Memory.from_defaults(session_id="s1", token_limit=8000, memory_blocks=[block])
    spec = SkillbankToolSpec(bank, include=["find_skills"], available_tools=tools)
    agent = FunctionAgent(tools=[*tools, *spec.to_tool_list()], llm=llm)
    handler = agent.run(user_msg="clean up stale git branches", memory=memory)
    results = {}
    async for event in handler.stream_events():
        if type(event).__name__ == "ToolCallResult":
            results[event.tool_id] = event.tool_output
    await handler
    found = [s["name"] for s in json.loads(str(results["t1"].content)).get("skills", [])]
    assert ("git-branch-cleanup" in found) is shown
    assert ("git-branch-cleanup" in "".join(str(m.content) for m in seen[0])) is shown


def test_tool_names_are_checked():
    with pytest.raises(InvalidInputError):
        SkillbankToolSpec(None, available_tools="bash")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        SkillbankToolSpec(None, available_tools=[object()])  # type: ignore[arg-type]
    assert SkillbankToolSpec(None, available_tools=["bash"]).available_tools == ["bash"]  # type: ignore[arg-type]
