"""A SKILL.md that is there but does not load is named so, on every face (hunt-mcpcorpus #1,
session 38).

Over MCP a 1.6 MB or Latin-1 SKILL.md vanished without a word: the server logged the first 20
sync findings at INFO (nothing at its default WARNING), and `load_skill`, `read_skill_resource`
and `skill://NAME/SKILL.md` answered "no skill named 'big-body'". Now the read says why, in the
sync's words (the size and the limit; the byte), as for a file that cannot be read (0600), on
the core, the CLI and MCP; and the server logs each file it skipped at WARNING, errors first,
bounded by a count line.
"""

from __future__ import annotations

import json
import logging
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.errors import NotFoundError, UnreadableError
from test_cli import Run
from test_mcp_transports import base_env

BIG, LATIN1 = "big-body", "latin1-skill"


def broken_skills(folder: Path) -> tuple[Path, Path]:
    """A 1.25 MB SKILL.md and a Latin-1 one (byte 39 is the 'é'), beside a good skill."""
    write_skill(folder, "ok-skill", "A fine skill.")
    big = write_skill(folder, BIG, "Large body.", body="word " * 250_000)
    latin1 = folder / LATIN1 / "SKILL.md"
    latin1.parent.mkdir(parents=True)
    latin1.write_bytes(b"---\nname: latin1-skill\ndescription: caf\xe9 notes\n---\nbody\n")
    return big, latin1


def _says_why(message: str, big: Path, latin1: Path, name: str) -> None:
    if name == BIG:
        assert f"{big} is larger than 1048576 bytes (it has {big.stat().st_size} bytes)" \
            in message, message
    else:
        assert f"{latin1} is not valid UTF-8 (byte 39)" in message, message
    assert "no skill named" not in message, message


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_md_that_does_not_load_is_named_by_the_core(tmp_path, remote):
    """Fails before: NotFoundError "no skill named 'big-body'; search or list the skills"."""
    folder = tmp_path / "extra"
    big, latin1 = broken_skills(folder)
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        report = bank.skills.sync()
        assert bank.skills.names() == ["ok-skill"]
        assert {str(big), str(latin1)} <= set(report.skipped)
        for name in (BIG, LATIN1):
            for call in (lambda: bank.skills.load(name),
                         lambda: bank.skills.read_resource(name, "SKILL.md")):
                with pytest.raises(UnreadableError) as caught:
                    call()
                _says_why(str(caught.value), big, latin1, name)
        with pytest.raises(NotFoundError) as unknown:  # an unknown name stays unknown
            bank.skills.load("no-such-skill")
        assert not isinstance(unknown.value, UnreadableError)


def test_the_cli_names_a_skill_md_that_does_not_load(cli_root, tmp_path, monkeypatch):
    """Fails before: `skills show big-body` exited 3, "no skill named 'big-body'"."""
    monkeypatch.setenv("SKILLBANK_CLI_OWNER", "0")
    folder = tmp_path / "extra"
    big, latin1 = broken_skills(folder)
    for name in (BIG, LATIN1):
        shown = Run()("--json", "--no-bundled", "--skills-dir", folder, "skills", "show", name,
                      code=5)
        _says_why(json.loads(shown.stderr.strip().splitlines()[-1])["error"], big, latin1, name)


async def test_mcp_names_and_logs_a_skill_md_that_does_not_load(tmp_path):
    """Through a real stdio session at the default log level. Fails before: every read said
    "no skill named", and the server's stderr was empty."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError

    folder = tmp_path / "extra"
    big, latin1 = broken_skills(folder)
    errlog = tmp_path / "serve.err"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillbank.mcp_server", "--root", str(tmp_path / "root"), "--skills-dir",
              str(folder), "--no-bundled"],
        env=base_env(SKILLBANK_EMBEDDING="hash"), cwd=str(tmp_path))
    async with AsyncExitStack() as stack:
        err = stack.enter_context(errlog.open("w"))
        client = await stack.enter_async_context(
            Client(stdio_client(params, errlog=err), read_timeout_seconds=180))
        assert not (await client.call_tool("load_skill", {"name": "ok-skill"})).is_error
        for name in (BIG, LATIN1):
            for tool, args in (("load_skill", {"name": name}),
                               ("read_skill_resource", {"name": name, "path": "SKILL.md"})):
                result = await client.call_tool(tool, args)
                assert result.is_error
                _says_why(result.content[0].text, big, latin1, name)
            with pytest.raises(MCPError) as caught:
                await client.read_resource(f"skill://{name}/SKILL.md")
            _says_why(str(caught.value), big, latin1, name)
        missing = await client.call_tool("load_skill", {"name": "nope"})
        assert missing.is_error and "no skill named 'nope'" in missing.content[0].text
    logged = errlog.read_text()
    for path, why in ((big, "is larger than 1048576 bytes"), (latin1, "is not valid UTF-8")):
        lines = [line for line in logged.splitlines() if f"{path}: error [" in line]
        assert len(lines) == 1 and why in lines[0], logged  # once, not once per sync


def test_the_server_log_puts_errors_first_and_counts_past_its_limit(tmp_path, caplog):
    """A corpus of broken files is a count, not a flood; its errors come before its warnings
    and are not logged again by the next sync."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server.loader import LOGGED_ERRORS, log_sync_findings

    folder = tmp_path / "extra"
    write_skill(folder, "odd-keys", "Has an unknown key.", extra="colour: blue\n")
    for i in range(LOGGED_ERRORS + 5):
        (folder / f"broken-{i:03}").mkdir(parents=True)
        (folder / f"broken-{i:03}" / "SKILL.md").write_bytes(b"---\nname: x\n---\n\xff\n")
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False, skill_roots=[folder]) as bank:
        report = bank.skills.sync()
        assert any(f.severity == "warning" for f in report.findings)
        logged: set[str] = set()
        with caplog.at_level(logging.INFO, logger="skillbank.mcp"):
            log_sync_findings(report, logged)
        records = [r for r in caplog.records if r.name == "skillbank.mcp"]
        warned = [r.getMessage() for r in records if r.levelno == logging.WARNING]
        assert len(warned) == LOGGED_ERRORS + 1, warned
        assert all("error [encoding]" in line for line in warned[:-1])
        assert warned[-1] == ("skill sync: 5 more skill files not served; `skillbank skills "
                              "sync` lists them all")
        assert records[LOGGED_ERRORS].levelno == logging.WARNING  # errors before warnings
        assert any(r.levelno == logging.INFO and "odd-keys" in r.getMessage() for r in records)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="skillbank.mcp"):
            log_sync_findings(bank.skills.sync(), logged)
        assert not [r for r in caplog.records if r.name == "skillbank.mcp"]
