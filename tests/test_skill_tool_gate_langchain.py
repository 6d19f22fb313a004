"""The LangChain middleware passes the agent's tool names to skill search (#26): a skill whose
declared tools the agent lacks stays out of the memory context. A real `create_agent` run with a
scripted chat model, a real bank (hash embedding)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, SystemMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from conftest import write_skill  # noqa: E402
from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402


class Model(GenericFakeChatModel):
    seen: list = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> "Model":
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


@tool
def bash(command: str) -> str:
    """Run a shell command."""
    return "ok"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return "text"


@pytest.fixture
def bank(tmp_path):
    folder = tmp_path / "skills"
    write_skill(folder, "git-branch-cleanup", "Clean up stale git branches after merges",
                extra="allowed-tools: Bash(git:*)\n")
    bank = Skillbank.open(tmp_path / "root", skill_roots=[folder],
                          embedding_function=HashEmbedding(), include_bundled=False, sync=False)
    bank.skills.sync()
    yield bank
    bank.close()


def _system(model: Model) -> str:
    return "\n".join(m.content for m in model.seen[0] if isinstance(m, SystemMessage))


@pytest.mark.parametrize("tools, shown", [([bash, read_file], True), ([read_file], False)])
def test_context_leaves_out_skills_needing_tools_the_agent_lacks(bank, tools, shown):
    model = Model(messages=iter([AIMessage(content="done")]))
    agent = create_agent(model, tools, middleware=[SkillbankMiddleware(bank, record=False,
                                                                       raise_errors=True)])
    agent.invoke({"messages": [{"role": "user", "content": "clean up stale git branches"}]})
    assert ("git-branch-cleanup" in _system(model)) is shown
