"""Every face says what a skill search left out and why its answer is empty (hunt-routing #2,
#3, #11, session 28).

#2: `skills search --tool … --json` printed `[]`, the gated skill named nowhere (human mode
names it on stderr; the API, MCP and the adapters carry `missing_tools`).
#3: `skills search --tool ""` was accepted, and the empty name gated every skill that declares
tools; MCP's schema refuses an empty name. One core check now refuses a blank one on every face.
#11: for an emoji-only request the API says why the answer is empty (`hits.reason`); the CLI,
MCP's find_skills and the adapters' find_skills said "No skill fits this task" instead.

Real parts: Chroma, the real CLI, a real MCP client session, the LangChain tools; in process
and as a client of another process that owns the root.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import bank_for, owner_process
from skillbank.cli import app
from skillbank.errors import InvalidInputError

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
KNIT = "knit a wool sweater with ribbed cuffs"
EMOJI = "🚀🔥💯 ?!"
REASON = "the request has no letters or digits to search for"


def _root_skills(root):
    write_skill(root / "skills", "knit-sweater", "Knit a wool sweater and rib the cuffs.",
                extra="allowed-tools: Bash(git:*) Read Write\n")
    write_skill(root / "skills", "helm-chart", "Write Helm charts for Kubernetes applications.")


@contextlib.contextmanager
def _cli_for(root, remote):
    """The CLI on `root`, in this process or as a client of an owner process of it."""
    _root_skills(root)
    with owner_process(root) if remote else contextlib.nullcontext():
        yield lambda *args: CliRunner().invoke(app, ["--no-bundled", *args])


@REMOTE
def test_cli_json_carries_what_the_gate_left_out(cli_root, remote):
    """#2. Fails before: stdout `[]`, stderr empty; the human line said "No skill fits"."""
    with _cli_for(cli_root, remote) as run:
        result = run("--json", "skills", "search", KNIT, "--tool", "Read")
        human = run("skills", "search", KNIT, "--tool", "Read")
        served = run("--json", "skills", "search", KNIT, "--tool", "Bash")
        plain = run("--json", "skills", "search", KNIT)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert json.loads(result.stdout) == {"skills": [], "missing_tools": {"knit-sweater": ["bash"]},
                                         "reason": ""}
    assert "left out knit-sweater: it needs bash" in human.stderr
    assert "No skill you can use fits this task" in human.stdout
    assert [h["name"] for h in json.loads(served.stdout)["skills"]][:1] == ["knit-sweater"]
    assert [h["name"] for h in json.loads(plain.stdout)][:1] == ["knit-sweater"]  # no --tool: a list


@REMOTE
def test_a_blank_tool_name_is_refused_on_every_face(tmp_path, cli_root, remote):
    """#3. Fails before: the CLI answered "No skill fits" (exit 0); the API took it too."""
    with _cli_for(cli_root, remote) as run:
        for blank in ("", "  "):
            result = run("skills", "search", KNIT, "--tool", "Read", "--tool", blank)
            assert result.exit_code == 2, (result.stdout, result.stderr)
            assert "--tool holds an empty tool name" in result.stderr
    with bank_for(tmp_path, remote, skill_roots=(cli_root / "skills",)) as bank:
        with pytest.raises(InvalidInputError, match="available_tools holds an empty tool name"):
            bank.skills.search(KNIT, available_tools=["Read", " "])


@REMOTE
async def test_mcp_refuses_a_blank_tool_name(tmp_path, remote):
    """#3, MCP: its schema refuses "" and the core check refuses "  ". Fails before for "  "."""
    from mcp import Client

    from skillbank.mcp_server import build_server
    from test_mcp_server import fails

    folder = tmp_path / "skills"
    write_skill(folder, "knit-sweater", "Knit a wool sweater.", extra="allowed-tools: Bash(git:*)\n")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        async with Client(build_server(bank, trusted=True)) as client:
            assert "must not be empty" in await fails(
                client, "find_skills", {"task": KNIT, "available_tools": [""]})
            assert "available_tools holds an empty tool name" in await fails(
                client, "find_skills", {"task": KNIT, "available_tools": ["Read", "  "]})


@REMOTE
async def test_every_face_says_why_an_emoji_request_gets_no_skill(tmp_path, cli_root, remote):
    """#11. Fails before: MCP, LangChain and the CLI said "No skill fits this task"."""
    from mcp import Client

    from skillbank.adapters.langchain import SkillbankToolkit
    from skillbank.mcp_server import build_server

    with _cli_for(cli_root, remote) as run:
        human = run("skills", "search", EMOJI)
        scripted = run("--json", "skills", "search", EMOJI)
        gated = run("--json", "skills", "search", EMOJI, "--tool", "Read")
    assert REASON in human.stdout and "No skill fits" not in human.stdout
    assert json.loads(scripted.stdout) == [] and REASON in scripted.stderr
    assert json.loads(gated.stdout)["reason"] == REASON
    with bank_for(tmp_path, remote, skill_roots=(cli_root / "skills",)) as bank:
        assert bank.skills.search(EMOJI).reason == REASON
        async with Client(build_server(bank, trusted=True)) as client:
            reply = await client.call_tool("find_skills", {"task": EMOJI})
        tools = {t.name: t for t in SkillbankToolkit(bank, include=["find_skills"]).get_tools()}
        langchain = json.loads(tools["find_skills"].invoke({"task": EMOJI}))
    assert REASON in reply.structured_content["hint"]
    assert langchain["skills"] == [] and REASON in langchain["note"]
    assert "No skill fits" not in reply.structured_content["hint"] + langchain["note"]


@REMOTE
async def test_every_memory_block_face_says_why_an_emoji_request_gets_nothing(
        tmp_path, cli_root, remote):
    """Left from #11 (session 28), mended in session 29: `skillbank context`, MCP memory_context,
    the adapters' memory_context and `bank.context_for` answered "No memory is relevant" for a
    request with nothing to route on. Fails before: no `reason`, the plain empty note."""
    from mcp import Client

    from skillbank.adapters.langchain import SkillbankToolkit
    from skillbank.mcp_server import build_server

    with _cli_for(cli_root, remote) as run:
        human = run("context", EMOJI)
        scripted = run("--json", "context", EMOJI)
        worded = run("--json", "context", KNIT)
    assert human.exit_code == 0 and REASON in human.stderr, (human.stdout, human.stderr)
    assert "No memory is relevant" not in human.stderr
    assert json.loads(scripted.stdout)["reason"] == REASON
    assert json.loads(worded.stdout)["reason"] == ""  # a worded task is searched
    with bank_for(tmp_path, remote, skill_roots=(cli_root / "skills",)) as bank:
        assert bank.context_for(EMOJI).reason == REASON
        async with Client(build_server(bank, trusted=True)) as client:
            reply = await client.call_tool("memory_context", {"task": EMOJI})
        tools = {t.name: t for t in SkillbankToolkit(bank, include=["memory_context"]).get_tools()}
        langchain = tools["memory_context"].invoke({"task": EMOJI})
    assert reply.structured_content["text"] == "" and REASON in reply.structured_content["note"]
    assert REASON in langchain and "No relevant memory" not in langchain
