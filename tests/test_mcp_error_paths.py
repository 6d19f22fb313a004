"""Errors show an HTTP client the host's folders as `skillbank://stats` does
(hunt-mcp-longlived #3, session 31).

An untrusted HTTP client's `load_skill` of a third-party skill whose SKILL.md did not parse was
told "skill 'zeta-one' is being edited: its SKILL.md at /tmp/…/skills/zeta-one/SKILL.md does not
parse right now (invalid YAML frontmatter in /tmp/…/SKILL.md …)", and `resources/read` of
`skill://zeta-one/SKILL.md` the same, while stats showed that folder as `…/skills`. Every error
the server replies with now passes through `identity.shown_paths_in` (in the server's
middleware): the memory root and the skill roots written relative to the root, or by their last
part. A local (stdio) client still sees them whole. Real MCP sessions over a bank opened here
and over a client of an owner process.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from owner_client import bank_for

GOOD = ("---\nname: csv-report\ndescription: Summarise a CSV file into a short report.\n---\n"
        "# Steps\nTotal each column.\n")


def _vendor(tmp_path: Path) -> Path:
    folder = tmp_path / "vendor" / "csv-report"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(GOOD)
    return folder / "SKILL.md"


async def _errors(client: Client) -> list[str]:
    """The load_skill error and the resources/read error of the skill being edited."""
    result = await client.call_tool("load_skill", {"name": "csv-report"})
    assert result.is_error
    texts = [result.content[0].text]
    with pytest.raises(Exception) as read:
        await client.read_resource("skill://csv-report/SKILL.md")
    texts.append(str(read.value))
    for text in texts:
        assert "being edited" in text, text
    return texts


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_an_http_client_is_not_shown_host_paths_in_errors(tmp_path, remote):
    from skillbank import Scope, scope as scopes
    from skillbank.mcp_server import build_server
    from skillbank.mcp_server.identity import FACE

    skill_md = _vendor(tmp_path)
    with bank_for(tmp_path, remote, skill_roots=(skill_md.parents[1],)) as bank:
        assert "csv-report" in bank.skills.names()
        skill_md.write_text(GOOD.replace("description:", "description: [broken"))
        bank.skills.sync()
        http = Scope(principal="visitor", namespace="default", role="contributor",
                     trusted=False, face=FACE)
        with scopes.using(http):  # the scope the HTTP guard sets for a client without a token
            async with Client(build_server(bank, trusted=False)) as client:
                for text in await _errors(client):
                    # Before: "… its SKILL.md at /tmp/…/vendor/csv-report/SKILL.md …" twice.
                    assert str(tmp_path) not in text, text
                    assert "…/vendor/csv-report/SKILL.md" in text, text
        async with Client(build_server(bank, trusted=True)) as local:  # stdio: whole paths
            for text in await _errors(local):
                assert str(skill_md) in text, text
