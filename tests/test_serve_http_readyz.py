"""`skillbank serve --transport http --tokens FILE` (one host, not a team worker) answers
/healthz and /readyz as a worker does, with the tokens file's state.

Users met: a broken edit of the tokens file (a member removed, a typo in the same edit) showed
only in the server's log; the server kept the last good tokens (the removed member still got
in) and nothing an operator probes said so. A team worker's /readyz carried it since session 19;
the single host now answers with the same routes (skillbank.team.server.HealthRoutes).
"""

from __future__ import annotations

import subprocess
import sys

import httpx

from conftest import free_port, stop_process
from mcp_http import bearer_session, call, wait_until_serving
from test_mcp_transports import base_env
from test_tokens_broken_edit_visible import break_by_removing_bob, tokens_file  # noqa: F401


async def test_single_host_readyz_shows_a_broken_tokens_edit_and_keeps_the_last_good(
        tmp_path, tokens_file):  # noqa: F811 - the fixture
    path, bob = tokens_file
    port = free_port()
    log = tmp_path / "serve.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillbank.cli", "serve", "--transport", "http", "--port",
         str(port), "--root", str(tmp_path / "root"), "--no-bundled", "--tokens", str(path)],
        stdout=log.open("w"), stderr=subprocess.STDOUT, env=base_env(SKILLBANK_EMBEDDING="hash"))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, url, log, probe="/readyz", status=200, seconds=180)
        assert httpx.get(url + "/healthz", timeout=30).status_code == 200
        ready = httpx.get(url + "/readyz", timeout=30).json()
        assert ready["status"] == "ready" and ready["tokens"]["in_force"] is True, ready
        assert ready["tokens"]["principals"] == 2
        break_by_removing_bob(path)
        answer = httpx.get(url + "/readyz", timeout=30)
        body = answer.json()
        assert answer.status_code == 200 and body["status"] == "ready", body  # last good tokens
        assert body["tokens"]["in_force"] is False
        assert "line 7" in body["tokens"]["problem"], body
        async with bearer_session(url, bob, timeout=60) as client:  # kept, as a worker keeps it
            ok, answer = await call(client, "find_skills", {"task": "deploy the service"})
            assert ok, answer
        path.write_text(path.read_text().replace('role = "admin', 'role = "admin"', 1))
        path.chmod(0o600)  # fixed, bob removed: in force now, and his token is refused
        assert httpx.get(url + "/readyz", timeout=30).json()["tokens"]["in_force"] is True
        refused = httpx.post(url + "/mcp", headers={"Authorization": f"Bearer {bob}"},
                             json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                             timeout=30)
        assert refused.status_code == 401, refused.text
    finally:
        stop_process(proc)
