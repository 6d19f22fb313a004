"""The LlamaIndex tool spec takes every argument its schema shows the model.

Before session 16 `SkillbankToolSpec.add_guideline` was written by hand without `replaces`,
while the schema the model saw offered it: a model that replaced a rule got "unexpected
keyword argument 'replaces'" as its tool result and the old rule stayed active. The methods are
now made from the tool definitions. A real `FunctionAgent` run with a scripted LLM, in process
and over a bank that is a client of another process owning the root.
"""

from __future__ import annotations

import inspect
import json

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from scripted_llama import scripted, tool_call  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters._tools import TOOL_NAMES, tool_defs  # noqa: E402
from skillbank.adapters.llamaindex import SkillbankToolSpec  # noqa: E402


def test_every_method_takes_the_fields_of_its_schema():
    for definition in tool_defs(TOOL_NAMES):
        method = getattr(SkillbankToolSpec, definition.name)
        params = list(inspect.signature(method).parameters)[1:]
        assert params == list(definition.args_schema.model_fields), definition.name
        assert method.__doc__ == definition.description
        assert inspect.iscoroutinefunction(getattr(SkillbankToolSpec, f"a{definition.name}"))


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_an_agent_replaces_a_rule(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        old = bank.guidelines.add("Keep slides to ten bullets.").guideline_id
        spec = SkillbankToolSpec(bank, include="all")
        llm, _seen = scripted([
            tool_call("add_guideline", {"text": "Keep slides to five bullets.",
                                        "replaces": old}, "t1"),
            ChatMessage(role="assistant", content="Noted."),
        ])
        agent = FunctionAgent(tools=spec.to_tool_list(), llm=llm, system_prompt="You help.")
        handler = agent.run(user_msg="From now on, at most five bullets per slide.")
        results = {}
        async for event in handler.stream_events():
            if type(event).__name__ == "ToolCallResult":
                results[event.tool_id] = event.tool_output
        await handler
        assert not results["t1"].is_error, results["t1"].content
        entry = json.loads(results["t1"].content)
        assert entry["action"] == "superseded" and entry["superseded_id"] == old
        assert bank.guidelines.get(old).status == "superseded"
        # Python callers keep positional arguments and Python's own errors
        found = json.loads(spec.search_guidelines("slides bullets", 3))
        assert entry["guideline_id"] in json.dumps(found)
        assert json.loads(await spec.asearch_guidelines("slides bullets", 3)) == found
        with pytest.raises(TypeError, match="repl"):
            spec.add_guideline("Number every slide.", repl="x")
