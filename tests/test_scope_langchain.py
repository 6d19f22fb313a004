"""The scope matrix through a LangChain agent: `SkillbankMiddleware(namespace="{user_id}")` in a
real `create_agent` (scripted chat model). Bob's run never sees alice's memory — not in the
context the middleware injects, nor through the memory tools (search, recall, context) — and
its tools cannot change alice's items (rate) or skills (save). The LangChain faces have no
list, pending, get, forget or review tools; those rows are covered for every face by
tests/test_scope.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from scripted import Scripted, call  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.scope import Scope  # noqa: E402

SECRET = "saffron-otter"
TASK = "Migrate the users table of the billing service"
TOOLS = ["search_guidelines", "recall_experiences", "memory_context", "rate_memory",
         "save_skill"]


@dataclass
class User:
    user_id: str = ""


@pytest.fixture
def bank(tmp_path):
    bank = Skillbank.open(tmp_path / "bank", embedding_function=HashEmbedding())
    yield bank
    bank.close()


def everything_seen(model: Scripted) -> str:
    return "\n".join(str(m.content) for messages in model.seen for m in messages)


def tool_replies(model: Scripted) -> dict[str, str]:
    return {m.tool_call_id: str(m.content) for m in model.seen[-1] if isinstance(m, ToolMessage)}


def test_bobs_run_never_sees_nor_changes_alices_memory(bank):
    alice = bank.scoped(Scope(principal="alice", namespace="alice", role="contributor"))
    gl = alice.guidelines.add(f"Always lock the users table with the {SECRET} lock before a migration.",
                              when_to_use="When migrating a table").guideline_id
    exp = alice.experiences.record(task=TASK, outcome="failure",
                                   feedback=f"The {SECRET} lock was not taken on the users table.")
    alice.skills.save("users-migration", "Migrate the users table safely.", "# Alice's steps\n")

    middleware = SkillbankMiddleware(bank, namespace="{user_id}", tools=TOOLS, background=False)
    ask = {"messages": [{"role": "user", "content": TASK}]}

    # Alice's own run: her rule is in the context the middleware gives the model.
    own = Scripted(messages=iter([AIMessage(content="done")]))
    create_agent(own, [], middleware=[middleware], context_schema=User).invoke(
        ask, context=User("alice"))
    assert SECRET in everything_seen(own)

    # Bob's run: a model that goes looking for alice's memory and tries to change it.
    model = Scripted(messages=iter([
        call("search_guidelines", {"task": TASK}, "s"),
        call("recall_experiences", {"task": TASK}, "r"),
        call("memory_context", {"task": TASK}, "c"),
        call("rate_memory", {"id": gl, "helpful": False}, "v1"),
        call("rate_memory", {"id": gl, "helpful": False}, "v2"),
        call("rate_memory", {"id": gl, "helpful": False}, "v3"),
        call("rate_memory", {"id": gl, "helpful": False}, "v4"),
        call("rate_memory", {"id": exp, "helpful": False}, "v5"),
        call("save_skill", {"name": "users-migration", "description": "Bob's now.",
                            "body": "# Bob's steps\n"}, "k"),
        AIMessage(content="done"),
    ]))
    agent = create_agent(model, [], middleware=[middleware], context_schema=User)
    agent.invoke(ask, context=User("bob"))

    assert SECRET not in everything_seen(model)
    replies = tool_replies(model)
    for cid in ("v1", "v2", "v3", "v4", "v5"):
        assert "no guideline" in replies[cid] or "no experience" in replies[cid], replies[cid]
    assert "reviewer role" in replies["k"]
    rule = bank.guidelines.get(gl)
    assert (rule.status, rule.harmful, rule.untrusted_harmful) == ("active", 0, 0)
    assert bank.experiences.get(exp).usage.failures == 0
    skill = bank.skills.load("users-migration")
    assert skill.body.startswith("# Alice's steps")
    assert skill.frontmatter["metadata"]["skillbank-author"] == "alice"
    # What bob's run recorded is bob's.
    assert {e.namespace for e in bank.experiences.list("*", kind="experience", limit=50)} == \
        {"alice", "bob"}
