"""Small walk findings (session 7), each through the face a user met it in, and where it is a
memory operation through a client of another process that owns the root:

- the audit log named a CLI command or an MCP stdio server started without `--namespace` face
  `python` (the default scope's), not `cli` / `mcp-stdio`;
- experience recall answered a 100 KB task with [] silently, where skill search refuses it;
- the LangChain / LlamaIndex `record_experience` reply did not say an untrusted record is pending;
- the memory browser echoed a refused 60 KB query whole in its 400 page;
- `skills list` at 80 columns squeezed the description to "Automa…" beside a long name.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from owner_client import client_bank, client_of_owner, owner_process
from test_mcp_transports import base_env


def audit_rows(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in sorted((root / "audit").glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines()]
    return rows


def cli(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root),
                           "--no-bundled", *args], capture_output=True, text=True, timeout=300,
                          env=base_env(SKILLBANK_EMBEDDING="hash", **env))


# ------------------------------------------------------------------------------- audit face
@pytest.mark.slow  # an owner process, a CLI process and an MCP server process
async def test_the_cli_and_a_stdio_server_without_namespace_name_their_face(tmp_path):
    root = tmp_path / "root"
    with owner_process(root):
        done = cli(root, "experiences", "record", "--task", "Import the orders CSV",
                   "--outcome", "success")
        assert done.returncode == 0, done.stderr
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "skillbank.mcp_server", "--root", str(root),
                                             "--no-bundled"],
                                       env=base_env(SKILLBANK_EMBEDDING="hash"))
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=120) as client:
                reply = await client.call_tool("record_experience", {
                    "task": "Export the invoices to PDF", "outcome": "success"})
                assert not reply.is_error, reply.content[0].text
    faces = {row["face"] for row in audit_rows(root) if row["action"] == "record"}
    assert faces == {"cli", "mcp-stdio"}, audit_rows(root)


# ------------------------------------------------------------------------------- recall, 100 KB
@pytest.mark.slow  # a second process owns the root
def test_recall_refuses_a_pasted_document_as_skill_search_does(tmp_path):
    from skillbank.errors import InvalidInputError
    from skillbank.query_limits import MAX_TASK_CHARS

    assert MAX_TASK_CHARS == 50_000  # one limit for every search (query_limits)
    root = tmp_path / "root"
    document = "Import the orders CSV into the warehouse table. " * 2_100  # ~100 KB
    with owner_process(root):
        with client_bank(root) as bank:
            bank.experiences.record(task="Import the orders CSV", outcome="success")
            with pytest.raises(InvalidInputError) as skill_error:
                bank.skills.search(document)
            with pytest.raises(InvalidInputError) as recall_error:
                bank.experiences.recall(document)
            shape = "task is {:,} characters; {} takes requests of at most 50,000 (describe the task"
            assert str(skill_error.value).startswith(
                shape.format(len(document), "skill search"))
            assert str(recall_error.value).startswith(
                shape.format(len(document), "experience recall"))
            # Up to the limit, it still recalls.
            assert bank.experiences.recall("Import the orders CSV")
        done = cli(root, "experiences", "search", document)
        assert done.returncode != 0, done.stdout
        assert "experience recall takes requests of at most 50,000" in done.stdout + done.stderr


# ------------------------------------------------------------------------------- adapters, pending
@pytest.mark.slow  # a second process owns the root
def test_the_adapters_record_experience_says_when_the_record_is_pending(tmp_path):
    from skillbank.adapters.langchain import skillbank_tools
    from skillbank.adapters.llamaindex import SkillbankToolSpec

    root = tmp_path / "root"
    with client_of_owner(root) as bank:
        untrusted = {t.name: t for t in skillbank_tools(bank, include="all", trusted=False)}
        reply = json.loads(untrusted["record_experience"].invoke(
            {"task": "Deploy on a Friday evening", "outcome": "success"}))
        assert bank.experiences.get(reply["id"]).status == "pending"
        assert reply["status"] == "pending" and "pending" in reply["note"], reply
        assert "approves" in reply["note"]
        (record,) = SkillbankToolSpec(bank, include=["record_experience"],
                                      trusted=False).to_tool_list()
        reply = json.loads(record.call(task="Skip the tests to ship", outcome="success").content)
        assert reply["status"] == "pending" and "pending" in reply["note"], reply
        # A trusted tool set's record is active, and says nothing of review.
        trusted = {t.name: t for t in skillbank_tools(bank, include="all")}
        reply = json.loads(trusted["record_experience"].invoke(
            {"task": "Rotate the signing keys", "outcome": "success"}))
        assert reply["status"] == "active" and "note" not in reply, reply


# ------------------------------------------------------------------------------- browser echo
@pytest.mark.slow  # a second process owns the root
def test_the_browser_echoes_a_refused_query_capped(tmp_path):
    from starlette.testclient import TestClient

    from skillbank.ui import Guard, create_app

    root = tmp_path / "root"
    query = ("Fill in the quarterly PDF form for the tax office. " * 1_200).strip()  # ~60 KB
    base = "http://127.0.0.1:8766"
    with client_of_owner(root) as bank:
        app = create_app(bank, Guard())
        c, guard = TestClient(app, base_url=base), app.state.guard
        refused = c.get("/skills", params={"q": query})
        assert refused.status_code == 400
        assert "task is 61,199 characters" in refused.text  # the error says why
        assert query[:200] in refused.text and "(61,199 characters)" in refused.text
        assert len(refused.text) < 20_000, len(refused.text)
        preview = c.post("/context", data={"csrf": guard.csrf, "task": query,
                                           "budget": "400"}, headers={"origin": base})
        assert preview.status_code == 400
        assert len(preview.text) < 20_000, len(preview.text)
        # A short query is shown whole, as before.
        shown = c.get("/skills", params={"q": "fill in a pdf form"})
        assert shown.status_code == 200 and "fill in a pdf form" in shown.text


# ------------------------------------------------------------------------------- skills list, 80 cols
def test_skills_list_at_80_columns_keeps_the_description_readable(tmp_path):
    from conftest import write_skill

    long_name = "automate-the-quarterly-pdf-tax-form-filling-workflow"  # 52 characters
    description = "Automates filling in the quarterly PDF tax forms from the ledger export"
    write_skill(tmp_path / "skills", long_name, description)
    write_skill(tmp_path / "skills", "csv-import", "Import CSV files into a database table")
    done = cli(tmp_path / "root", "--skills-dir", str(tmp_path / "skills"), "--no-remember",
               "skills", "list", COLUMNS="80", SKILLBANK_CLI_OWNER="0")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), done.stdout
    rows = [line.split("│")[1:-1] for line in lines if line.startswith("│")]
    described = [cells[1].strip() for cells in rows if cells[1].strip()]
    assert len(described) == 2 and all(len(d) >= 30 for d in described), done.stdout
    assert description[:29] in done.stdout  # "Automa…" before
    # The long name whole, on the lines of its row (broken after its hyphens, never cut).
    assert "".join(cells[0].strip() for cells in rows if cells[0].strip() != "csv-import") \
        == long_name, done.stdout
