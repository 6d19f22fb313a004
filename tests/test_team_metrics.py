"""`/metrics` and structured logs of a `skillbank server` worker (issue 24, item 7).

A real worker over a private PostgreSQL cluster and a private `chroma run`, driven by a real MCP
session: Prometheus metrics count calls, latency and errors per tool and per dependency; every
tool call is one JSON log line (who, which tool, how long, how it ended); with PostgreSQL and
then Chroma stopped, the failed call's metrics and log line name the dependency, its host and
what to check.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from conftest import free_port, stop_process
from mcp_http import bearer_session, call, team_env, wait_until_serving
from test_chroma_outage import own_chroma  # noqa: F401 - a fixture: a private `chroma run`

TOKEN = "metrics-test-token"
MARK = "Quillmarrow" + uuid.uuid4().hex[:6]  # in failed calls' arguments, never in the log


def samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = httpx.get(url + "/metrics", timeout=30)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def call_lines(log: Path) -> list[dict[str, Any]]:
    lines = []
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            entry = json.loads(line)  # every JSON-looking line is one whole JSON object
            if entry.get("event") == "tool_call":
                lines.append(entry)
    return lines


async def test_metrics_and_one_json_line_per_call_name_the_failing_dependency(
        tmp_path, own_postgres, own_chroma):  # noqa: F811
    root = tmp_path / "root"
    root.mkdir()
    port = free_port()
    log = tmp_path / "worker.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillbank.team.server", "--root", str(root), "--chroma-url",
         own_chroma.url, "--database-url", own_postgres.url, "--deployment",
         uuid.uuid4().hex[:12], "--port", str(port), "--token", TOKEN, "--trust"],
        env=team_env(), stdout=subprocess.DEVNULL, stderr=log.open("w"), cwd=str(tmp_path))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, url, log, probe="/healthz", status=200, seconds=180)
        async with bearer_session(url, TOKEN, timeout=60) as client:
            ok, recorded = await call(client, "record_experience", {
                "task": "Rotate the database password", "outcome": "success"})
            assert ok, recorded
            ok, _ = await call(client, "recall_experiences", {"task": "rotate the password"})
            assert ok
            ok, refused = await call(client, "recall_experiences", {"task": "x", "k": 0})
            assert not ok  # the caller's input: an error that names no dependency
            # Failed calls whose messages quote their arguments (hunt-oidc #3, session 26):
            # the log said the error in full, so memory text and names reached log shipping.
            for tool, args in (("load_skill", {"name": f"{MARK} customer password"}),
                               ("add_guideline", {"text": f"{MARK} " + "x " * 2000}),
                               ("save_skill", {"name": f"bad name {MARK}", "description": "d",
                                               "body": "b"})):
                ok, refused = await call(client, tool, args)
                assert not ok and MARK in refused, refused  # the caller is told, in full
            found = samples(url)
            assert value(found, "skillbank_tool_calls_total", tool="record_experience",
                         outcome="ok") == 1
            assert value(found, "skillbank_tool_calls_total", tool="recall_experiences",
                         outcome="ok") == 1
            assert value(found, "skillbank_tool_calls_total", tool="recall_experiences",
                         outcome="error") == 1
            assert value(found, "skillbank_tool_errors_total", tool="recall_experiences",
                         dependency="none") == 1
            assert value(found, "skillbank_tool_call_seconds_count", tool="record_experience") == 1
            assert value(found, "skillbank_dependency_calls_total", dependency="postgres") > 0
            assert value(found, "skillbank_dependency_calls_total", dependency="chroma") > 0
            assert value(found, "skillbank_dependency_seconds_count", dependency="chroma") > 0
            assert value(found, "skillbank_dependency_errors_total", dependency="postgres") == 0

            own_postgres.stop()
            ok, error = await call(client, "record_experience", {
                "task": "Write while the database is down", "outcome": "failure"})
            assert not ok and "PostgreSQL" in error and "127.0.0.1" in error, error
            found = samples(url)
            assert value(found, "skillbank_tool_errors_total", tool="record_experience",
                         dependency="postgres") == 1
            assert value(found, "skillbank_dependency_errors_total", dependency="postgres") > 0
            own_postgres.start()

            own_chroma.stop()
            # An experience write goes on (kept in PostgreSQL, indexed when Chroma is back, as
            # docs/team.md says; it was refused when the worker first caught up with a change,
            # team hunt session 19); a skill write names Chroma.
            ok, kept = await call(client, "record_experience", {
                "task": "Write while the index is down", "outcome": "failure"})
            assert ok, kept
            ok, error = await call(client, "save_skill", {
                "name": "outage-probe", "description": "Write a skill while the index is down.",
                "body": "# Steps\n\n1. Wait for Chroma.\n"})
            assert not ok and "Chroma" in error, error
            found = samples(url)
            assert value(found, "skillbank_tool_errors_total", tool="save_skill",
                         dependency="chroma") == 1
            assert value(found, "skillbank_dependency_errors_total", dependency="chroma") > 0
            own_chroma.start()
            # A made-up tool name is the caller's input: counted and logged as `unknown`, never
            # a label of its own (the worker's observer was built without `known`).
            ok, error = await call(client, f"no_such_tool_{MARK}", {})
            assert not ok, error
            labels = {v for (_, pairs), _ in samples(url).items() for _, v in pairs}
            assert "unknown" in labels and not [v for v in labels if MARK in v], labels
        time.sleep(0.2)  # the last line is flushed with the call's answer; allow the write
        lines = call_lines(log)
        assert [(e["tool"], e["outcome"]) for e in lines] == [
            ("record_experience", "ok"), ("recall_experiences", "ok"),
            ("recall_experiences", "error"), ("load_skill", "error"),
            ("add_guideline", "error"), ("save_skill", "error"), ("record_experience", "error"),
            ("record_experience", "ok"), ("save_skill", "error"), ("unknown", "error")]
        for entry in lines:
            assert {"time", "level", "pid", "ms", "principal", "face"} <= set(entry), entry
            assert entry["pid"] == proc.pid
        assert "dependency" not in lines[2]
        assert [e["error"] for e in lines[2:6]] == [
            "invalid_arguments", "tool_error", "invalid_arguments", "tool_error"], lines[2:6]
        postgres_down, chroma_down = lines[6], lines[8]
        assert postgres_down["dependency"] == "PostgreSQL" and postgres_down["level"] == "warning"
        assert "127.0.0.1" in postgres_down["error"] and "check" in postgres_down["error"]
        assert chroma_down["dependency"] == "Chroma"
        assert "check" in chroma_down["error"]
        assert "127.0.0.1" in chroma_down["error"]
        assert "Rotate the database password" not in log.read_text()  # no memory in the logs
        assert MARK not in log.read_text()  # nor the arguments of a failed call
    finally:
        stop_process(proc)
