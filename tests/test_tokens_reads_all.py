"""`reads = ["*"]` in a tokens file, and what an untrusted caller is told (session 16).

docs/scope.md lets a principal read every namespace with "*", and `Scope` takes it, but the
tokens file refused `skillbank tokens add ops --reads '*'` with a message about "namespace '*'"
(the namespace given was 'ops'). A pending experience's note said "this server does not trust
its clients" also when the server trusted them and the caller's token did not.
"""

from __future__ import annotations

import json

import pytest
from mcp import Client
from typer.testing import CliRunner

from skillbank.cli import app
from test_mcp_server import make_bank


def test_a_principal_may_read_every_namespace(cli_root, tmp_path):
    from skillbank.mcp_server.identity import TokensFile

    path = tmp_path / "tokens.toml"
    added = CliRunner().invoke(app, ["tokens", "add", "ops", "--namespace", "ops", "--role",
                                     "admin", "--reads", "*", "--file", str(path)])
    assert added.exit_code == 0, added.stderr
    token = added.stdout.strip().splitlines()[0]
    principal = TokensFile(path).lookup(token)
    assert principal.namespace == "ops" and principal.reads == ("*",)
    listed = CliRunner().invoke(app, ["--json", "tokens", "list", "--file", str(path)])
    assert json.loads(listed.stdout)[0]["reads"] == ["*"]
    bad = CliRunner().invoke(app, ["tokens", "add", "dev", "--namespace", "dev", "--reads", "",
                                   "--file", str(path)])
    assert bad.exit_code == 2 and "reads:" in bad.stderr, bad.stderr


@pytest.fixture
def bank(tmp_path):
    bank = make_bank(tmp_path)
    yield bank
    bank.close()


async def test_an_untrusted_caller_is_told_why_its_experience_waits(bank):
    from skillbank.mcp_server import build_server

    async with Client(build_server(bank, trusted=False), mode="legacy") as client:
        result = await client.call_tool("record_experience", {"task": "Rotate the keys",
                                                               "outcome": "success"})
    note = result.structured_content["note"]
    assert result.structured_content["status"] == "pending"
    assert "this caller is not trusted" in note and "does not trust its clients" not in note
