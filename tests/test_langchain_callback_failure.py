"""A run that raises is a failure whatever outcome the callback handler was given (hunt-rag #1,
session 24).

`SkillbankCallbackHandler(bank, outcome="success")`, built once per pipeline with the outcome
its runs are expected to have, recorded every run that crashed as a success (with an "error"
step): recall then ranked the crash as a way that works, and `outcome="success"` filters
returned it. Only the default "unknown" gave way to "failure". A misspelt outcome lost every run
(each record refused, a warning logged) where it should fail when the handler is made. Real
LCEL runnables, in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")

from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from owner_client import bank_for  # noqa: E402
from skillbank.adapters.langchain import SkillbankCallbackHandler  # noqa: E402
from skillbank.errors import InvalidInputError  # noqa: E402


def _fail(_: object) -> str:
    raise ValueError("the export step failed")


@tool
def export_report(quarter: str) -> str:
    """Export the quarterly report."""
    raise RuntimeError("disk full")


CHAIN_THAT_RAISES = RunnableLambda(lambda x: x) | RunnableLambda(_fail)
CHAIN_THAT_ENDS = RunnableLambda(lambda x: x) | RunnableLambda(lambda x: "exported")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_run_that_raises_is_a_failure_whatever_outcome_was_given(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        handler = SkillbankCallbackHandler(bank, outcome="success", tags=["reports"])
        with pytest.raises(ValueError, match="export step failed"):
            CHAIN_THAT_RAISES.invoke({"question": "Export the Q3 report"},
                                     config={"callbacks": [handler]})
        with pytest.raises(ValueError, match="export step failed"):
            await CHAIN_THAT_RAISES.ainvoke({"question": "Export the Q4 report"},
                                            config={"callbacks": [handler]})
        with pytest.raises(RuntimeError, match="disk full"):  # a tool as the root run
            export_report.invoke({"quarter": "Q1"}, config={"callbacks": [handler]})
        CHAIN_THAT_ENDS.invoke({"question": "Export the Q2 report"},
                               config={"callbacks": [handler]})

        assert handler.last_error is None and len(handler.experience_ids) == 4
        recorded = [bank.experiences.get(i) for i in handler.experience_ids]
        assert [e.outcome for e in recorded] == ["failure", "failure", "failure", "success"]
        assert [recorded[i].task for i in (0, 1, 3)] == [
            "Export the Q3 report", "Export the Q4 report", "Export the Q2 report"]
        assert recorded[0].steps[-1].action == "error"
        assert "export step failed" in recorded[0].steps[-1].observation
        successes = bank.experiences.recall("Export the report", outcome="success", k=10,
                                            count_use=False)
        assert [h.record.id for h in successes
                if h.record.id in handler.experience_ids] == [handler.experience_ids[3]]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_misspelt_outcome_is_refused_when_the_handler_is_made(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        with pytest.raises(InvalidInputError, match="unknown outcome 'sucess'.*success"):
            SkillbankCallbackHandler(bank, outcome="sucess")
        handler = SkillbankCallbackHandler(bank, outcome="partial")
        CHAIN_THAT_ENDS.invoke("Export the Q2 report", config={"callbacks": [handler]})
        assert bank.experiences.get(handler.last_experience_id).outcome == "partial"
