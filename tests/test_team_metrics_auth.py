"""Who may read a worker's `/metrics` (issue 24, item 7): as a Prometheus deployment decides.

Default (documented in docs/team.md): open, like any Prometheus exporter — it holds counts and
latencies per tool and dependency, never a principal or memory text (tests/test_team_metrics.py
scrapes it without a token). `--metrics-token` makes it ask for `Authorization: Bearer`
(Prometheus's `authorization.credentials_file`); `--metrics-port` serves it on a listener of
its own, so the listener a load balancer exposes no longer answers it. A real worker process
over a private PostgreSQL cluster and `chroma run`.
"""

from __future__ import annotations

import httpx
import pytest

from conftest import free_port, stop_process
from team_worker import start_server

pytest.importorskip("psycopg")

SECRET = "scrape-me-0f3a"


def test_a_metrics_token_and_a_listener_of_its_own(tmp_path, chroma_server, postgres):
    port = free_port()
    proc, url = start_server(tmp_path / "root", chroma_server, postgres.url, "--token", "mcp-t",
                             "--metrics-token", SECRET, "--metrics-port", str(port))
    try:
        metrics = f"http://127.0.0.1:{port}/metrics"
        assert httpx.get(metrics, timeout=30).status_code == 401
        wrong = httpx.get(metrics, headers={"Authorization": "Bearer mcp-t"}, timeout=30)
        assert wrong.status_code == 401 and "Bearer" in wrong.headers["www-authenticate"]
        ok = httpx.get(metrics, headers={"Authorization": f"Bearer {SECRET}"}, timeout=30)
        assert ok.status_code == 200 and "skillbank_tool_calls_total" in ok.text

        on_main = httpx.get(url + "/metrics", headers={"Authorization": f"Bearer {SECRET}"},
                            timeout=30)
        assert on_main.status_code == 404 and str(port) in on_main.text
        assert httpx.get(url + "/healthz", timeout=30).status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=30).status_code == 404
        assert httpx.post(f"http://127.0.0.1:{port}/mcp", json={}, timeout=30).status_code == 404
    finally:
        stop_process(proc)


def test_a_metrics_token_on_the_main_listener(tmp_path, chroma_server, postgres):
    # As read from a secret file, with its newline: Prometheus sends the token without it.
    proc, url = start_server(tmp_path / "root", chroma_server, postgres.url, "--token", "mcp-t",
                             "--metrics-token", SECRET + "\n")
    try:
        assert httpx.get(url + "/metrics", timeout=30).status_code == 401
        ok = httpx.get(url + "/metrics", headers={"Authorization": f"Bearer {SECRET}"},
                       timeout=30)
        assert ok.status_code == 200 and "skillbank_dependency_calls_total" in ok.text
    finally:
        stop_process(proc)


def test_a_metrics_port_already_taken_stops_the_worker_with_a_clear_error(tmp_path, chroma_server,
                                                                          postgres):
    import socket
    import subprocess
    import sys
    import uuid

    from mcp_http import team_env

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    busy = taken.getsockname()[1]
    try:
        (tmp_path / "root").mkdir()
        done = subprocess.run(
            [sys.executable, "-m", "skillbank.team.server", "--root", str(tmp_path / "root"),
             "--chroma-url", chroma_server, "--database-url", postgres.url, "--deployment",
             uuid.uuid4().hex[:12], "--port", str(free_port()), "--metrics-port",
             str(busy)],
            env=team_env(), capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    finally:
        taken.close()
    assert done.returncode != 0
    assert f"cannot serve metrics on 127.0.0.1:{busy}" in done.stderr, done.stderr[-2000:]


def test_a_metrics_token_from_a_secret_file_is_stripped_and_an_empty_one_refused(tmp_path):
    """A token read from a secret with its trailing newline (a Kubernetes secret, an env file)
    is the token: Prometheus trims its credentials_file, so it never sends the newline (before,
    every scrape got 401). An empty one (SKILLBANK_METRICS_TOKEN= set from an unset secret)
    stops the worker naming it — before, /metrics was served open without a word."""
    import subprocess
    import sys
    import uuid

    from mcp_http import team_env
    from skillbank.team import server

    assert server.metrics_token_of(f"{SECRET}\n") == SECRET
    assert server.metrics_token_of(None) is None
    (tmp_path / "root").mkdir()
    env = {**team_env(), "SKILLBANK_METRICS_TOKEN": " \n"}
    done = subprocess.run(
        [sys.executable, "-m", "skillbank.team.server", "--root", str(tmp_path / "root"),
         "--chroma-url", "http://127.0.0.1:9", "--database-url", "postgresql://nobody@127.0.0.1:9/x",
         "--deployment", uuid.uuid4().hex[:12], "--port", str(free_port())],
        env=env, capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert done.returncode == 2, done.stderr[-2000:]
    assert "SKILLBANK_METRICS_TOKEN" in done.stderr and "empty" in done.stderr, done.stderr[-2000:]
