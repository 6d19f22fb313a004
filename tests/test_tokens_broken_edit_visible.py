"""A broken edit of the tokens file is seen where operators look (team hunt, session 19, defect 5).

An admin removed bob's section and left a typo in the same edit: every worker kept the last good
tokens (bob still got in), `/readyz` stayed "ready" and only a log line said "still using the
tokens read before". Now `/readyz` carries the file's problem (its line) while the worker stays
ready with the last good tokens, `skillbank_tokens_file_stale` is 1, and `skillbank tokens
list/remove` refuse the broken file, naming its line and what running servers still accept.
"""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest

from mcp_http import team_env
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.mcp_server.identity import TokensFile, add_principal

pytest.importorskip("prometheus_client")


def break_by_removing_bob(path) -> None:
    """bob leaves, and a typo slips into alice's entry (an unterminated string, line 7)."""
    text = re.sub(r'\[principals\."bob"\][^\[]*', "", path.read_text())
    path.write_text(text.replace('role = "admin"', 'role = "admin', 1))
    path.chmod(0o600)


@pytest.fixture
def tokens_file(tmp_path):
    path = tmp_path / "tokens.toml"
    add_principal(path, "alice", namespace="alice", role="admin")
    bob = add_principal(path, "bob", namespace="bob", role="reader")
    return path, bob


async def test_readyz_and_metrics_show_a_broken_edit_and_the_worker_stays_ready(tmp_path,
                                                                               tokens_file):
    from prometheus_client import generate_latest

    from skillbank.team.metrics import Metrics
    from skillbank.team.server import HealthRoutes

    path, bob = tokens_file
    tokens = TokensFile(path)
    metrics = Metrics()
    metrics.watch_tokens(tokens)
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(), share=False)
    try:
        routes = HealthRoutes(None, bank, tokens=tokens)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=routes),
                                     base_url="http://worker") as client:
            good = await client.get("/readyz")
            assert good.json()["tokens"]["in_force"] is True
            assert b"skillbank_tokens_file_stale 0.0" in generate_latest(metrics.registry)
            break_by_removing_bob(path)
            answer = await client.get("/readyz")  # no request came in meanwhile: re-read now
        body = answer.json()
        assert answer.status_code == 200 and body["status"] == "ready"  # last good tokens
        assert body["tokens"]["in_force"] is False
        problem = body["tokens"]["problem"]
        assert "not valid TOML" in problem and "line 7" in problem
        assert "removed in this edit still gets in" in problem
        assert b"skillbank_tokens_file_stale 1.0" in generate_latest(metrics.registry)
        assert tokens.lookup(bob).name == "bob"  # the documented keep-the-last-good choice
    finally:
        bank.close()


def test_tokens_list_and_remove_name_the_broken_line(tokens_file):
    path, _ = tokens_file
    break_by_removing_bob(path)
    before = path.read_bytes()
    for args in (["list"], ["remove", "alice"]):
        done = subprocess.run([sys.executable, "-m", "skillbank.cli", "tokens", *args,
                               "--file", str(path)], env=team_env(), capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2, (done.stdout, done.stderr)
        said = " ".join(done.stderr.split())
        assert "line 7" in said and "still accept the tokens" in said, said
        assert "nothing was changed" in said
    assert path.read_bytes() == before
