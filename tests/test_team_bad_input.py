"""Bad input at a team worker's start (issue 24, "Bad input and faults"): a wrong database URL
stops it with one line naming the dependency and what to fix (the password hidden), and an
unreachable Chroma is named with its URL, never a traceback. Real `skillbank server` processes, a private PostgreSQL cluster.
"""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from conftest import free_port
from mcp_http import team_env

pytest.importorskip("psycopg")


def _server(tmp_path, chroma: str, database: str) -> subprocess.CompletedProcess:
    (tmp_path / "root").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "skillbank.team.server", "--root", str(tmp_path / "root"),
         "--chroma-url", chroma, "--database-url", database, "--deployment",
         uuid.uuid4().hex[:12], "--port", str(free_port())],
        env=team_env(), capture_output=True, text=True, timeout=300, cwd=str(tmp_path))


def test_a_wrong_database_url_stops_the_worker_naming_what_to_fix(tmp_path, chroma_server,
                                                                 postgres):
    wrong_password = postgres.url.replace("test-password", "not-the-password")
    done = _server(tmp_path, chroma_server, wrong_password)
    assert done.returncode != 0
    assert "PostgreSQL" in done.stderr and "database_url" in done.stderr, done.stderr[-2000:]
    assert "not-the-password" not in done.stderr and "Traceback" not in done.stderr

    no_database = postgres.url.rsplit("/", 1)[0] + "/no_such_database"
    done = _server(tmp_path, chroma_server, no_database)
    assert done.returncode != 0
    assert "no_such_database" in done.stderr and "createdb" in done.stderr, done.stderr[-2000:]

    nobody = f"postgresql://skillbank:pw@127.0.0.1:{free_port()}/skillbank"
    done = _server(tmp_path, chroma_server, nobody)
    assert done.returncode != 0
    assert "unreachable" in done.stderr and "host and port" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_an_unreachable_chroma_is_named_with_its_url(tmp_path, postgres):
    """Since session 20 a worker whose Chroma server does not answer at its start serves by
    keyword from its files (`/readyz` not ready; tests/test_team_outage.py) instead of
    stopping, since containers start in any order. What it says is still one line naming the
    URL, never a traceback (before: a traceback ending in chromadb's ValueError)."""
    import time

    nowhere = f"http://127.0.0.1:{free_port()}"
    (tmp_path / "root").mkdir(exist_ok=True)
    log = tmp_path / "worker.log"
    with log.open("w") as sink:
        worker = subprocess.Popen(
            [sys.executable, "-m", "skillbank.team.server", "--root", str(tmp_path / "root"),
             "--chroma-url", nowhere, "--database-url", postgres.url, "--deployment",
             uuid.uuid4().hex[:12], "--port", str(free_port())],
            env=team_env(), stdout=sink, stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path))
        try:
            deadline = time.monotonic() + 240  # a ceiling for a loaded machine
            while nowhere.split("//")[1] not in log.read_text() and time.monotonic() < deadline:
                assert worker.poll() is None or nowhere.split("//")[1] in log.read_text(), \
                    log.read_text()[-2000:]
                time.sleep(0.5)
        finally:
            worker.terminate()
            worker.wait(timeout=60)
    said = log.read_text()
    assert nowhere.split("//")[1] in said, said[-2000:]
    assert "Traceback" not in said, said[-2000:]
