"""A dependency outage on a real `skillbank server` worker reaches the MCP client as a clear tool
error naming the dependency and what to check (issue 24, "Bad input and faults"), for reads and
writes — never an internal error, a bare "Error executing tool", or a call that hangs; and once
the dependency is back the same worker serves again with no restart.

PostgreSQL (a private cluster, tests/pg_cluster.py) and Chroma (`chroma run`) are each stopped
for real under a running worker.
"""

from __future__ import annotations

import time

import httpx

from conftest import stop_process
from mcp_http import bearer_session, call, call_ok
from team_worker import start_server
from test_chroma_outage import own_chroma  # noqa: F401 - the fixture

TOKEN = "outage-test-token"
WRITES = {
    "record_experience": {"task": "Rotate the Pellucid cache keys", "outcome": "success"},
    "learn_from_critique": {"critique": "Always drain the Pellucid queue before a deploy.",
                            "task": "Deploy Pellucid"},
}
READS = {
    "recall_experiences": {"task": "rotate the pellucid cache keys"},
    "search_guidelines": {"task": "drain the queue before a deploy"},
    "memory_context": {"task": "deploy pellucid"},
    "find_skills": {"task": "deploy pellucid"},
}


def _clear(tool: str, text: str, dependency: str, check: str) -> None:
    """The tool error names the dependency and what to check, and nothing internal."""
    assert dependency in text, (tool, text)
    assert check in text, (tool, text)
    assert "Traceback" not in text and "psycopg" not in text and "httpx" not in text, (tool, text)
    assert text.strip() != f"Error executing tool {tool}", (tool, text)


async def test_postgres_stopped_reads_and_writes_are_clear_tool_errors(
        tmp_path, chroma_server, own_postgres):
    proc, url = start_server(tmp_path / "root", chroma_server, own_postgres.url, "--token", TOKEN,
                             "--trust")
    try:
        async with bearer_session(url, TOKEN, timeout=60) as client:
            for tool, args in WRITES.items():
                await call_ok(client, tool, args)
            own_postgres.stop()
            failed = []
            for tool, args in {**WRITES, **READS}.items():
                ok, answer = await call(client, tool, args)
                if not ok:
                    failed.append(tool)
                    _clear(tool, answer, "PostgreSQL at", "check that PostgreSQL is running")
            assert set(WRITES) <= set(failed), failed  # a write is never acknowledged unstored
            own_postgres.start()
            deadline = time.monotonic() + 30
            while True:  # the same worker, no restart
                ok, answer = await call(client, "record_experience", WRITES["record_experience"])
                if ok:
                    break
                assert time.monotonic() < deadline, answer
                time.sleep(0.5)
        assert proc.poll() is None
    finally:
        stop_process(proc)


async def test_chroma_stopped_reads_answer_and_memory_writes_are_kept(
        tmp_path, own_chroma, postgres):  # noqa: F811 - the fixture
    proc, url = start_server(tmp_path / "root", own_chroma.url, postgres.url, "--token", TOKEN,
                             "--trust")
    try:
        async with bearer_session(url, TOKEN, timeout=60) as client:
            for tool, args in WRITES.items():
                await call_ok(client, tool, args)
            own_chroma.stop()
            for tool, args in WRITES.items():  # kept in PostgreSQL, indexed when it is back
                ok, answer = await call(client, tool, args)
                assert ok, (tool, answer)  # a stored write is never answered as an error
            skill = {"name": "pellucid-deploy", "description": "Deploy Pellucid safely.",
                     "body": "# Steps\n\n1. Drain the queue.\n"}
            ok, answer = await call(client, "save_skill", skill)  # a skill write needs Chroma:
            assert not ok  # refused, clearly, and nothing half-written
            _clear("save_skill", answer, "Chroma", "check")
            assert not (tmp_path / "root" / "skills" / "pellucid-deploy").exists()
            for tool in READS:  # reads degrade to keyword search, with a note
                ok, answer = await call(client, tool, READS[tool])
                assert ok, (tool, answer)
            ready = httpx.get(url + "/readyz", timeout=30)
            assert ready.status_code == 503 and "Chroma" in ready.json()["checks"]["chroma"]
            own_chroma.start()
            deadline = time.monotonic() + 60
            while True:
                ok, answer = await call(client, "record_experience", WRITES["record_experience"])
                if ok:
                    break
                assert time.monotonic() < deadline, answer
                time.sleep(0.5)
        assert proc.poll() is None
    finally:
        stop_process(proc)


PELLUCID = ("---\nname: pellucid-deploy\ndescription: Deploy the Pellucid service safely, "
            "draining its queue first.\n---\n# Steps\n\n1. Drain the Pellucid queue.\n")


async def test_worker_started_while_chroma_is_down_answers_by_keyword_then_hybrid(
        tmp_path, own_chroma, postgres):  # noqa: F811 - the fixture
    """A worker that starts while the Chroma server is down did not start at all (its open
    synced through Chroma) and, once it did, answered find_skills and memory_context with the
    Chroma error: its keyword side was only ever read from Chroma. The skill files are the
    truth: it answers by keyword, as a worker warmed before the outage does, and is indexed
    in Chroma (hybrid again) once the server is back."""
    root = tmp_path / "root"
    (root / "skills" / "pellucid-deploy").mkdir(parents=True)
    (root / "skills" / "pellucid-deploy" / "SKILL.md").write_text(PELLUCID)
    own_chroma.stop()
    proc, url = start_server(root, own_chroma.url, postgres.url, "--token", TOKEN, "--trust")
    try:
        async with bearer_session(url, TOKEN, timeout=60) as client:
            found = await call_ok(client, "find_skills", READS["find_skills"])
            assert [s["name"] for s in found["skills"]][:1] == ["pellucid-deploy"], found
            assert found["skills"][0]["why"] == "keyword" and found["search_mode"] == "keyword"
            assert "Keyword search only" in found["hint"]
            # Why: the server, not a missing model (session 24's hint blamed the model).
            assert "Chroma server does not answer" in found["hint"], found["hint"]
            assert "embedding model" not in found["hint"], found["hint"]
            block = await call_ok(client, "memory_context", READS["memory_context"])
            assert "skill:pellucid-deploy" in block["ids"] and block["search_mode"] == "keyword"
            for tool in ("recall_experiences", "search_guidelines"):
                await call_ok(client, tool, READS[tool])
            ready = httpx.get(url + "/readyz", timeout=30)
            assert ready.status_code == 503 and "Chroma" in ready.json()["checks"]["chroma"]
            own_chroma.start()
            deadline = time.monotonic() + 120
            while True:  # the same worker reaches it, embeds what it staged, searches hybrid
                found = await call_ok(client, "find_skills", READS["find_skills"])
                if found["search_mode"] == "hybrid":
                    break
                assert time.monotonic() < deadline, found
                time.sleep(0.5)
            assert found["skills"][0]["name"] == "pellucid-deploy"
            assert found["skills"][0]["why"] == "both"
            block = await call_ok(client, "memory_context", READS["memory_context"])
            assert "skill:pellucid-deploy" in block["ids"] and block["search_mode"] == "hybrid"
        assert proc.poll() is None
    finally:
        stop_process(proc)
