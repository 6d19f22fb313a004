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


def test_reviews_are_refused_where_they_could_never_be_used(cli_root, tmp_path):
    """Left of session 27: `tokens add --reviews team` without `--reads team` (or with a role
    below reviewer) was stored and did nothing, and `tokens list` never showed reviews."""
    from skillbank.mcp_server.identity import TokensFile

    path = tmp_path / "tokens.toml"

    def add(*words: str):
        return CliRunner().invoke(app, ["tokens", "add", *words, "--file", str(path)])

    unread = add("rev", "--namespace", "rev", "--role", "reviewer", "--reviews", "team")
    assert unread.exit_code == 2 and "does not read 'team'" in unread.stderr \
        and "--reads team" in unread.stderr, unread.stderr
    low = add("con", "--namespace", "con", "--reads", "team", "--reviews", "team")
    assert low.exit_code == 2 and "reviews nothing" in low.stderr, low.stderr
    assert not path.exists() or "rev" not in path.read_text()  # nothing stored by a refusal

    added = add("rev", "--namespace", "rev", "--role", "reviewer", "--reads", "team",
                "--reviews", "team")
    assert added.exit_code == 0, added.stderr
    principal = TokensFile(path).lookup(added.stdout.strip().splitlines()[0])
    assert principal.scope().can_review("team")
    listed = CliRunner().invoke(app, ["--json", "tokens", "list", "--file", str(path)])
    assert json.loads(listed.stdout)[0]["reviews"] == ["team"]
    shown = CliRunner().invoke(app, ["tokens", "list", "--file", str(path)])
    assert "team" in shown.stdout.split("rev", 1)[1]
