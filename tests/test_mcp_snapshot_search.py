"""#27: the MCP server's first skill searches are answered from the root's snapshot, before Chroma
is imported, with the answers the opened bank gives; a snapshot that may be stale is not used.

Through real stdio sessions (the official SDK's client) against `python -m skillbank.mcp_server`
on one root: a first server syncs and keeps the vectors beside the snapshot; a second answers
from the snapshot (its stats count `snapshot_answers`); a third, with the snapshot turned off,
answers from the opened bank: the answers must be equal, trust marks and the tool gate included.
`SKILLBANK_MCP_EARLY_HOLD` makes the bank wait for the first answer, so which one answered is
known, whatever the machine's speed.
"""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest
from mcp import Client, StdioServerParameters

from conftest import write_skill
from test_mcp_transports import base_env

TASKS = [
    ("extract the tables of a PDF report", None),
    ("fix a failing docker build in CI", ["Read", "Write"]),  # the CI skill needs Bash
    ("rebase my branch onto main", None),
    ("what is the capital of France", None),  # no skill fits
]


def library(tmp_path: Path) -> tuple[Path, Path]:
    """A root with one skill of its own and a read-only folder of third-party skills."""
    root, folder = tmp_path / "root", tmp_path / "skills"
    write_skill(root / "skills", "pdf-tables", "Extract tables from PDF reports into CSV files")
    write_skill(folder, "docker-ci", "Fix failing docker builds in CI pipelines",
                extra="allowed-tools: Bash(docker:*) Read\n")  # it runs docker: needs Bash
    write_skill(folder, "git-rebase", "Rebase a git branch onto main and resolve conflicts")
    write_skill(folder, "sql-tuning", "Speed up slow SQL queries with indexes and EXPLAIN")
    return root, folder


@asynccontextmanager
async def session(root: Path, folder: Path, **env: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillbank.mcp_server", "--root", str(root), "--skills-dir", str(folder),
              "--no-bundled"],
        env=base_env(SKILLBANK_MCP_EARLY_HOLD="120", **env), cwd=str(root.parent))
    async with Client(params, read_timeout_seconds=180) as client:
        yield client


async def find(client: Client, task: str, tools: list[str] | None) -> dict[str, Any]:
    args: dict[str, Any] = {"task": task, "k": 3}
    if tools is not None:
        args["available_tools"] = tools
    result = await client.call_tool("find_skills", args)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def startup(client: Client) -> dict[str, Any]:
    stats = json.loads((await client.read_resource("skillbank://stats")).contents[0].text)
    return stats["server"]["startup_seconds"]


async def prime(root: Path, folder: Path, **env: str) -> None:
    """A first server: syncs and embeds, then keeps the vectors beside the snapshot."""
    async with session(root, folder, **env) as client:
        await find(client, "warm up", None)
        with anyio.fail_after(120):
            while "snapshot_saved" not in await startup(client):
                await anyio.sleep(0.2)


async def answers(root: Path, folder: Path, **env: str) -> tuple[list[Any], dict[str, Any]]:
    async with session(root, folder, **env) as client:
        first = [await find(client, task, tools) for task, tools in TASKS[:1]]
        async with anyio.create_task_group() as group:  # the rest at once, while it opens
            found: dict[int, Any] = {}

            async def one(i: int) -> None:
                found[i] = await find(client, *TASKS[i])

            for i in range(1, len(TASKS)):
                group.start_soon(one, i)
        return first + [found[i] for i in range(1, len(TASKS))], await startup(client)


@pytest.mark.parametrize("embedding", ["minilm", "hash"])
def test_first_answers_from_the_snapshot_equal_the_opened_banks(tmp_path, embedding, model_dir):
    root, folder = library(tmp_path)
    env = {"SKILLBANK_EMBEDDING": embedding}

    async def main() -> None:
        await prime(root, folder, **env)
        fast, fast_startup = await answers(root, folder, **env)
        full, full_startup = await answers(root, folder, SKILLBANK_MCP_SNAPSHOT="0", **env)
        assert fast_startup.get("snapshot_answers", 0) >= 1, fast_startup
        assert "snapshot_ready" in fast_startup
        assert "snapshot_answers" not in full_startup
        assert fast == full
        top = fast[0]["skills"][0]
        assert top["name"] == "pdf-tables" and top["trust"] == "own"
        assert fast[1]["missing_tools"] == {"docker-ci": ["bash"]}
        third_party = [s for answer in fast for s in answer["skills"] if s["trust"] != "own"]
        assert third_party and all(s["trust"] == "third-party" for s in third_party)

    anyio.run(main)


def test_a_snapshot_older_than_the_skill_files_is_not_used(tmp_path):
    root, folder = library(tmp_path)
    env = {"SKILLBANK_EMBEDDING": "hash"}

    async def main() -> None:
        await prime(root, folder, **env)
        # Edited after the snapshot was kept: the sync would re-index it.
        write_skill(folder, "git-rebase", "Squash and reorder commits with interactive rebase")
        # Added: the sync would index it.
        write_skill(folder, "csv-clean", "Clean messy CSV files: encodings, delimiters, dates")
        fast, startup_seconds = await answers(root, folder, **env)
        assert "snapshot_answers" not in startup_seconds
        assert "snapshot_ready" not in startup_seconds
        rebase = [s for s in fast[2]["skills"] if s["name"] == "git-rebase"]
        assert rebase and rebase[0]["description"].startswith("Squash and reorder")

    anyio.run(main)


def test_a_write_since_the_snapshot_means_it_is_not_used(tmp_path):
    """A process that wrote to the index (DIRTY) and died: the snapshot is not trusted."""
    root, folder = library(tmp_path)
    env = {"SKILLBANK_EMBEDDING": "hash"}

    async def main() -> None:
        await prime(root, folder, **env)
        snapshots = root / ".cache" / "index" / "skillbank_skills"
        (snapshots / "DIRTY").write_text("a write is in progress or was not snapshotted\n")
        _, startup_seconds = await answers(root, folder, **env)
        assert "snapshot_answers" not in startup_seconds
        assert "snapshot_ready" not in startup_seconds

    anyio.run(main)


def test_not_used_while_another_process_owns_the_root(tmp_path):
    """Another process owns the root (it may be writing): the server asks it, as a client."""
    from test_cli_owner import holding_root

    root, folder = library(tmp_path)
    env = {"SKILLBANK_EMBEDDING": "hash"}

    async def main() -> None:
        await prime(root, folder, **env)
        with holding_root(root, base_env()):
            found, startup_seconds = await answers(root, folder, **env)
        assert "snapshot_answers" not in startup_seconds
        assert "snapshot_ready" not in startup_seconds
        assert found[0]["skills"][0]["name"] == "pdf-tables"

    anyio.run(main)
