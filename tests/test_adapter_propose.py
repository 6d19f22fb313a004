"""`propose_skills` in the LangChain and LlamaIndex tool sets (the full set; trusted only)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from test_skill_drafts import bank, record_groups  # noqa: E402,F401 - the fixture and data


def test_langchain_propose_skills_writes_drafts_for_a_person(bank):  # noqa: F811
    from skillbank.adapters.langchain import skillbank_tools

    record_groups(bank)
    (tool,) = skillbank_tools(bank, include=["propose_skills"])
    result = json.loads(tool.invoke({"min_support": 3}))
    assert len(result["drafts"]) == 2 and "skillbank skills adopt" in result["note"]
    assert {d["name"] for d in result["drafts"]} == {d.name for d in bank.skills.drafts()}
    assert "propose_skills" in [t.name for t in skillbank_tools(bank, include="all")]


def test_llamaindex_propose_skills_is_refused_to_an_untrusted_agent(bank):  # noqa: F811
    from skillbank.adapters.llamaindex import SkillbankToolSpec

    record_groups(bank)
    (tool,) = SkillbankToolSpec(bank, include=["propose_skills"], trusted=False).to_tool_list()
    from skillbank.errors import PermissionDeniedError

    with pytest.raises(PermissionDeniedError, match="trusted"):
        tool.call(min_support=3)  # inside an agent run, the model reads this message
    assert bank.skills.drafts() == []
    (trusted,) = SkillbankToolSpec(bank, include=["propose_skills"]).to_tool_list()
    assert len(json.loads(str(trusted.call(min_support=3)))["drafts"]) == 2
