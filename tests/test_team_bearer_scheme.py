"""`Authorization: bearer <token>` is `Bearer <token>` (issue 24): the scheme is
case-insensitive (RFC 7235 section 2.1; RFC 6750 uses it). A worker's `/metrics` compared the
whole header with `Bearer <token>`, so a scraper or proxy that sends the scheme in lower case
got 401. The tokens-file path on /mcp (the guard and the MCP SDK's bearer check) takes any case
already; a real MCP session with `bearer` proves it stays so. A real worker process over a
private PostgreSQL cluster and `chroma run`.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx
import pytest

from conftest import stop_process
from mcp_http import call_ok
from team_worker import start_server

pytest.importorskip("psycopg")

SECRET = "scrape-me-4d1c"


@asynccontextmanager
async def session(url: str, authorization: str) -> AsyncIterator[Any]:
    """A real MCP client session sending exactly `authorization` as its Authorization header."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": authorization}, timeout=120) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
            yield client


async def test_the_bearer_scheme_is_case_insensitive(tmp_path, chroma_server, postgres):
    from skillbank.mcp_server.identity import add_principal

    tokens = tmp_path / "tokens.toml"
    alice = add_principal(tokens, "alice", namespace="alice", role="contributor")
    proc, url = start_server(tmp_path / "root", chroma_server, postgres.url, "--tokens",
                             str(tokens), "--metrics-token", SECRET)
    try:
        for scheme in ("Bearer", "bearer", "BEARER"):
            scraped = httpx.get(url + "/metrics", headers={"Authorization": f"{scheme} {SECRET}"},
                                timeout=30)
            assert scraped.status_code == 200, (scheme, scraped.text)
            assert "skillbank_tool_calls_total" in scraped.text
        for wrong in (f"Basic {SECRET}", f"bearer {SECRET}x", f"Bearer{SECRET}", SECRET):
            refused = httpx.get(url + "/metrics", headers={"Authorization": wrong}, timeout=30)
            assert refused.status_code == 401, wrong

        async with session(url, f"bearer {alice}") as client:
            recorded = await call_ok(client, "record_experience",
                                     {"task": "Rotate the staging keys", "outcome": "success"})
            found = await call_ok(client, "recall_experiences", {"task": "Rotate the staging keys"})
            assert recorded["id"] in {e["id"] for e in found["experiences"]}
        refused = httpx.post(url + "/mcp", json={}, timeout=30,
                             headers={"Authorization": "bearer sbk_not-a-token"})
        assert refused.status_code == 401 and "no principal" in refused.text
    finally:
        stop_process(proc)
