"""A bank started while its Chroma server is down (`start_without_chroma`, as `skillbank serve
--chroma-url` and a team worker open) reaches the server again when a memory reads its index,
not only when it is searched (hunt-chroma #3 and #4, session 24).

Before: a root holding experiences did not open at all (the experience sync read `metadata` of
a detached index and raised); one that opened recalled nothing while the server was down, nothing
after it was back, not even experiences recorded since, until it was restarted; and `save_skill`
failed with the old "Connection refused" until some search re-attached the skill index. An empty
library answered a search while the server was down as "hybrid".

A root on a Chroma server is never served to other processes by an owner (every process opens
the server itself), so the other-process face here is the process agents use: `skillbank serve
--chroma-url`, driven over stdio by a real MCP client.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.index_outage import INDEX_RETRY_SECONDS, ChromaUnavailableError
from test_chroma_outage import own_chroma  # noqa: F401 - the fixture
from test_mcp_transports import base_env

TASK = "rotate the kubernetes secrets"
SKILL = dict(name="gecko-expenses", description="File a gecko expense report with its receipts.",
             body="# Steps\n\n1. Scan the receipts.\n")


def _opts(url: str) -> dict[str, Any]:
    return dict(embedding_function=HashEmbedding(), include_bundled=False, chroma_url=url)


def _recorded_before_the_outage(root: Path, url: str) -> str:
    with Skillbank.open(root, **_opts(url)) as bank:
        return bank.experiences.record(
            task="Rotate the kubernetes secrets of the billing cluster", outcome="success")


def _found(hits: Any) -> list[tuple[str, str]]:
    return sorted((h.id, h.why) for h in hits)


def test_experiences_are_recalled_by_keyword_while_down_and_hybrid_once_it_is_back(
        tmp_path, own_chroma):  # noqa: F811 - the fixture
    """hunt-chroma #3: the root's experience kept the bank from opening; one that opened
    recalled [] while the server was down, after it was back, and for runs recorded since."""
    root = tmp_path / "root"
    before = _recorded_before_the_outage(root, own_chroma.url)
    own_chroma.stop()
    bank = Skillbank.open(root, start_without_chroma=True, **_opts(own_chroma.url))  # raised
    try:
        during = bank.experiences.record(
            task="Rotate the kubernetes secrets of the search cluster", outcome="success")
        hits = bank.experiences.recall(TASK, count_use=False)  # [] before
        assert _found(hits) == sorted([(before, "keyword"), (during, "keyword")])
        assert not hits.dense_complete and hits.note.startswith("the Chroma server does not")
        own_chroma.start()
        deadline = time.monotonic() + 120
        while _found(hits) != sorted([(before, "both"), (during, "both")]):  # [] before
            assert time.monotonic() < deadline, _found(hits)
            time.sleep(0.5)
            hits = bank.experiences.recall(TASK, count_use=False)
        assert getattr(hits, "note", "") == ""  # no outage note once it is back
        after = bank.experiences.record(  # was kept in the journal, "Connection refused"
            task="Rotate the kubernetes secrets of the audit cluster", outcome="success")
        assert (after, "both") in _found(bank.experiences.recall(TASK, count_use=False))
        assert bank.experiences.sync().findings == []  # nothing left behind
    finally:
        bank.close()


def test_a_record_staged_while_down_is_embedded_though_another_process_indexed_it_first(
        tmp_path, own_chroma):  # noqa: F811 - the fixture
    """A record staged while the index had not reached its server waits for its vectors in
    this process; when another process indexed it first (moving the shared checkpoint past
    it), this one's sync, finding nothing new in the journal, left it keyword-only for good."""
    import subprocess

    root = tmp_path / "root"
    _recorded_before_the_outage(root, own_chroma.url)
    own_chroma.stop()
    bank = Skillbank.open(root, start_without_chroma=True, **_opts(own_chroma.url))
    try:
        during = bank.experiences.record(
            task="Rotate the kubernetes secrets of the search cluster", outcome="success")
        own_chroma.start()
        time.sleep(INDEX_RETRY_SECONDS + 0.5)
        assert during in bank.index("experiences").ids()  # reached again, still to embed
        other = ("from skillbank import Skillbank; from skillbank.embeddings import "
                 "HashEmbedding; Skillbank.open(%r, embedding_function=HashEmbedding(), "
                 "include_bundled=False, chroma_url=%r).close()" % (str(root), own_chroma.url))
        subprocess.run([sys.executable, "-c", other], check=True, timeout=300,
                       env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
        deadline = time.monotonic() + 120
        while (during, "both") not in _found(hits := bank.experiences.recall(TASK)):
            assert time.monotonic() < deadline, _found(hits)
            time.sleep(0.5)
    finally:
        bank.close()


@pytest.mark.parametrize("searched_first", [False, True], ids=["written-first", "searched-first"])
def test_a_skill_write_fails_while_down_and_succeeds_once_the_server_is_back(
        tmp_path, own_chroma, searched_first):  # noqa: F811 - the fixture
    """Skill writes need Chroma (docs/team.md, section 5), whether or not a search ran first;
    the first one after the server is back succeeds without a search before it."""
    root = tmp_path / "root"
    own_chroma.stop()
    bank = Skillbank.open(root, start_without_chroma=True, **_opts(own_chroma.url))
    try:
        if searched_first:
            hits = bank.skills.search("file a gecko expense report")
            assert list(hits) == [] and not hits.dense_complete  # said hybrid when empty
            assert bank.search_mode() == "keyword"
        with pytest.raises(ChromaUnavailableError, match="check that it is running"):
            bank.skills.save(**SKILL)
        assert not (root / "skills" / SKILL["name"]).exists()  # refused before writing
        own_chroma.start()
        time.sleep(INDEX_RETRY_SECONDS + 0.5)  # the server is asked again at most every 2 s
        assert bank.skills.save(**SKILL).name == SKILL["name"]  # the old "Connection refused"
        hits = bank.skills.search("file a gecko expense report")
        assert [h.name for h in hits] == [SKILL["name"]]
    finally:
        bank.close()


async def _tool(client: Any, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    if result.structured_content is not None:
        return result.is_error, result.structured_content
    return result.is_error, " ".join(getattr(b, "text", "") for b in result.content)


@pytest.mark.slow  # a stdio subprocess
async def test_skillbank_serve_started_while_down_recalls_and_writes_once_it_is_back(
        tmp_path, own_chroma):  # noqa: F811 - the fixture
    """The same over MCP: an empty library's find_skills said "hybrid" while down, save_skill
    kept failing after the server was back, recall_experiences answered nothing."""
    root = tmp_path / "root"
    before = _recorded_before_the_outage(root, own_chroma.url)
    own_chroma.stop()
    errlog = (tmp_path / "stderr.txt").open("w")
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "skillbank"),
        args=["serve", "--root", str(root), "--chroma-url", own_chroma.url, "--no-bundled"],
        env=base_env(SKILLBANK_EMBEDDING="hash"), cwd=str(tmp_path))
    async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
        failed, found = await _tool(client, "find_skills", {"task": "file a gecko expense report"})
        assert not failed and found["skills"] == [] and found["search_mode"] == "keyword", found
        failed, said = await _tool(client, "save_skill", SKILL)
        assert failed and "Chroma server" in said, said
        failed, recorded = await _tool(client, "record_experience", {
            "task": "Rotate the kubernetes secrets of the search cluster", "outcome": "success"})
        assert not failed, recorded
        during = recorded["id"]
        failed, recalled = await _tool(client, "recall_experiences", {"task": TASK})
        assert not failed and recalled["search_mode"] == "keyword", recalled
        assert sorted(e["id"] for e in recalled["experiences"]) == sorted([before, during])
        own_chroma.start()
        time.sleep(INDEX_RETRY_SECONDS + 0.5)  # the server is asked again at most every 2 s
        failed, saved = await _tool(client, "save_skill", SKILL)
        assert not failed and saved["action"] == "created", saved
        deadline = time.monotonic() + 120
        while True:
            failed, recalled = await _tool(client, "recall_experiences", {"task": TASK})
            ids = sorted(e["id"] for e in recalled["experiences"]) if not failed else []
            if ids == sorted([before, during]) and recalled["search_mode"] == "hybrid":
                break
            assert time.monotonic() < deadline, json.dumps(recalled)[:2000]
            time.sleep(0.5)
    errlog.close()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
    assert (root / "skills" / SKILL["name"] / "SKILL.md").is_file()
