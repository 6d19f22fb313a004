"""`SkillbankCallbackHandler(bank, namespace="bob")` records bob's run as bob (hunt-agents-team
#4, session 31).

The experience landed in namespace "bob", but the audit log named the OS user as its principal
and face "python": the handler recorded without acting as the namespace's principal, where the
middleware and the LlamaIndex faces record a per-user run as that user, face "langchain" /
"llamaindex" (docs/scope.md, "Adapters"). Now the audit log says bob did it, through LangChain.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.audit import FileAuditLog


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_callback_handler_records_as_the_namespace_principal(tmp_path, remote):
    pytest.importorskip("langchain_core")
    from langchain_core.runnables import RunnableLambda

    from skillbank.adapters.langchain import SkillbankCallbackHandler

    with bank_for(tmp_path, remote) as bank:
        handler = SkillbankCallbackHandler(bank, namespace="bob", outcome="success")
        chain = RunnableLambda(lambda text: f"Upgraded: {text}")
        chain.invoke("Upgrade the pipeline runners", config={"callbacks": [handler]})
        eid = handler.last_experience_id
        assert eid and handler.last_error is None
        assert bank.experiences.get(eid).namespace == "bob"
        events = FileAuditLog(tmp_path / "root" / "audit").query()  # the owner's, when remote
        logged = [(e.principal, e.face, e.action) for e in events if e.id == eid]
        assert logged == [("bob", "langchain", "record")], events
