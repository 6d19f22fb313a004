"""`skills.propose` refuses an untrusted caller in the core, so every face holds.

Users met this (hunt s18, defect 8): docs/mcp.md lists `propose_skills` as trusted only, yet an
`--untrusted` token's principal ran it and wrote drafts from the team's experiences (in a
session offering sampling its own model would have written them): the MCP tool checked only the
server's flag, and a server with a tokens file is built trusted. Checked in process, through a
client of an owner process, and through a real MCP session with tokens.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.errors import PermissionDeniedError
from skillbank.scope import Scope
from test_skill_drafts import record_groups

AGENT = Scope(principal="agent", namespace="default", role="contributor", trusted=False)


def _check(bank) -> None:
    record_groups(bank)
    for refused in (lambda: bank.scoped(AGENT).skills.propose(min_support=3),
                    lambda: bank.skills.propose(min_support=3, trusted=False)):
        with pytest.raises(PermissionDeniedError, match="needs a trusted caller"):
            refused()
    assert bank.skills.drafts() == [] and not (bank.root / "drafts").exists()
    assert len(bank.skills.propose(min_support=3)) == 2  # a trusted caller drafts


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_untrusted_caller_cannot_propose_skills(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank)


@pytest.mark.slow  # a server process
async def test_an_untrusted_token_cannot_propose_skills_over_mcp(tmp_path):
    from mcp_http import bearer_session, call
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server.identity import add_principal
    from test_scope_faces import http_server

    root, path = tmp_path / "root", tmp_path / "tokens.toml"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        record_groups(bank)
    agent = add_principal(path, "agent", namespace="default", role="contributor", trusted=False)
    lead = add_principal(path, "lead", namespace="default", role="reviewer")
    async with http_server(root, path) as url:
        async with bearer_session(url, agent) as session:
            ok, answer = await call(session, "propose_skills", {"min_support": 3})
            assert not ok and "needs a trusted caller" in answer, answer
        assert not (root / "drafts").exists()
        async with bearer_session(url, lead) as session:
            ok, answer = await call(session, "propose_skills", {"min_support": 3})
            assert ok and len(answer["drafts"]) == 2, answer
