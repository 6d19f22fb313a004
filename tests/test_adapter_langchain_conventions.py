"""LangChain conventions: retriever options, serialisable config, toolkit, tool schema size."""

from __future__ import annotations

import copy
import json

import pytest

pytest.importorskip("langchain.agents")

from langchain_core.tools import BaseToolkit  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import (  # noqa: E402
    COMPACT_TOOLS,
    TOOL_NAMES,
    ExperienceRetriever,
    SkillbankToolkit,
    SkillRetriever,
)
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402
from skillbank.tokens import count_tokens  # noqa: E402


@pytest.fixture
def bank(tmp_path):
    bank = Skillbank.open(tmp_path / "bank", embedding_function=HashEmbedding())
    bank.skills.create("db-migration", "Plans and runs database schema migrations: lock the "
                       "table, copy rows, swap. Use to migrate a table.",
                       "# Migrate\n\n1. Lock the table.\n2. Copy rows.\n")
    yield bank
    bank.close()


def test_k_search_kwargs_and_invoke_options(bank):
    # Four runs and a failure: five documents (each run's lesson restates its run's line, and a
    # retriever shows a fact once, as the memory block does: hunt-rag #4, session 24).
    for where in ("staging", "the test cluster", "a laptop", "the CI runner"):
        bank.experiences.record(task=f"Migrate the users table on {where}", outcome="success",
                                lessons=[f"When migrating the users table on {where}, copy "
                                         "the users in batches."])  # lessons about the task
    failed = bank.experiences.record(task="Migrate the users table in production",
                                     outcome="failure", tags=["prod"], feedback="No lock taken.")
    assert len(ExperienceRetriever(bank).invoke("migrate the users table")) == 5
    assert len(ExperienceRetriever(bank, k=2).invoke("migrate the users table")) == 2
    assert len(ExperienceRetriever(bank, search_kwargs={"k": 1}).invoke("migrate users")) == 1
    assert len(ExperienceRetriever(bank).invoke("migrate the users table", k=1)) == 1
    only = ExperienceRetriever(bank, search_kwargs={"filter": {"outcome": "failure"}})
    assert [d.id for d in only.invoke("migrate the users table")] == [failed]
    assert [d.id for d in ExperienceRetriever(bank).invoke(
        "migrate the users table", filter={"tags": {"$in": ["prod"]}})] == [failed]
    with pytest.raises(ValueError, match="unknown search option"):  # pydantic's ValidationError
        ExperienceRetriever(bank, search_kwargs={"fetch_k": 3})
    with pytest.raises(InvalidInputError):
        ExperienceRetriever(bank).invoke("x", filter={"score": {"$gt": 1}})


def test_config_is_plain_data_and_documents_are_clean(bank):
    retriever = SkillRetriever(bank, k=2, search_kwargs={"filter": {"kind": "skill"}})
    dumped = json.loads(retriever.model_dump_json())
    assert dumped["k"] == 2 and dumped["kind"] == "skills" and "bank" not in dumped
    clone = copy.deepcopy(retriever)
    assert clone.bank is bank and clone.search_kwargs == retriever.search_kwargs
    assert clone.search_kwargs is not retriever.search_kwargs
    assert repr(retriever).startswith(f"SkillRetriever(bank=Skillbank({str(bank.root)!r})")

    [doc] = retriever.invoke("migrate a table")
    assert doc.page_content.count("lock the table, copy rows") == 1
    assert "path" not in doc.metadata and "description" not in doc.metadata
    assert all(v not in (None, "", []) for v in doc.metadata.values())
    [full] = SkillRetriever(bank, include_body=True).invoke("migrate a table")
    assert "2. Copy rows." in full.page_content


def test_toolkit_and_schema_tokens(bank):
    toolkit = SkillbankToolkit(bank=bank)
    assert isinstance(toolkit, BaseToolkit)
    compact = toolkit.get_tools()
    full = SkillbankToolkit(bank, include="all").get_tools()
    assert [t.name for t in compact] == list(COMPACT_TOOLS)
    assert [t.name for t in full] == list(TOOL_NAMES)

    def tokens(tools):
        return sum(count_tokens(json.dumps(convert_to_openai_tool(t))) for t in tools)

    assert tokens(compact) * 2 < tokens(full)  # the default is well under half the full set
    assert "bank" not in json.loads(toolkit.model_dump_json())
