"""A privilege PostgreSQL refuses reaches the caller as a clear error naming the cause and the
fix, counted as PostgreSQL's failure — not a bare "Error executing tool X".

Only connection errors were converted: `InsufficientPrivilege` (a psycopg ProgrammingError)
escaped the store, the MCP SDK answered "Error executing tool record_experience" with no text,
the worker logged a traceback and /metrics counted it as dependency="none", a caller's mistake
(hunt-pg #3, session 28).

A real worker over a real PostgreSQL, as a role that lacks one privilege (the test's own
database and role on the session's cluster; the cluster's own user is a superuser, whom
PostgreSQL never refuses).
"""

from __future__ import annotations

import uuid

import httpx
import psycopg
import pytest

from conftest import stop_process
from mcp_http import bearer_session, call
from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres import PostgresStore
from skillbank.store.postgres.db import Database
from team_worker import start_server

TOKEN = "privilege-test-token"


@pytest.fixture
def limited_url(postgres):
    """A URL of a fresh database whose role may do everything but INSERT experience events."""
    name = "priv_" + uuid.uuid4().hex[:10]
    with psycopg.connect(postgres.url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
        admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'limited-pw'")
    PostgresStore(postgres.url_for(name), deployment="setup").close()  # the schema, as owner
    with psycopg.connect(postgres.url_for(name), autocommit=True) as admin:
        for sql in ("GRANT ALL ON SCHEMA public TO {r}",
                    "GRANT ALL ON ALL TABLES IN SCHEMA public TO {r}",
                    "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {r}",
                    "REVOKE INSERT ON sb_experience_events FROM {r}"):
            admin.execute(sql.format(r=name))
    yield postgres.url_for(name).replace(
        postgres.url.split("@")[0].split("//")[1], f"{name}:limited-pw")


def test_a_refused_privilege_is_a_clear_store_error(limited_url):
    db = Database(limited_url)
    try:
        with pytest.raises(StoreUnavailableError) as raised:
            db.execute("INSERT INTO sb_experience_events (deployment, event) "
                       "VALUES ('d', '{}'::jsonb)")
        said = str(raised.value)
        assert "permission denied for table sb_experience_events" in said, said
        assert "lacks a privilege" in said and "docs/team.md" in said, said
        assert "PostgreSQL at" in said and "limited-pw" not in said, said
        assert db.execute("SELECT 1") == [(1,)]  # the connection is not lost
    finally:
        db.close()


async def test_worker_tool_call_names_the_refused_privilege(tmp_path, chroma_server,
                                                            limited_url):
    proc, url = start_server(tmp_path / "root", chroma_server, limited_url,
                             "--token", TOKEN, "--trust")
    try:
        async with bearer_session(url, TOKEN, timeout=60) as client:
            ok, text = await call(client, "record_experience",
                                  {"task": "Rotate the Quillmore keys", "outcome": "success"})
        assert not ok
        assert "permission denied for table sb_experience_events" in text, text
        assert "lacks a privilege" in text, text
        metrics = httpx.get(f"{url}/metrics", timeout=30).text
        assert ('skillbank_tool_errors_total{dependency="postgres",tool="record_experience"} 1.0'
                in metrics), [line for line in metrics.splitlines() if "tool_errors" in line]
    finally:
        stop_process(proc)


def test_a_shorter_statement_timeout_the_dba_set_on_the_role_is_kept(postgres):
    """`database_statement_timeout` replaced the role's own: a DBA's 5 s became 60 s, and 0 (no
    limit) removed it (review of session 28). The shorter one wins; a longer role limit gives
    way to ours."""
    name = "sto_" + uuid.uuid4().hex[:10]
    with psycopg.connect(postgres.url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'sto-pw'")
        admin.execute(f"ALTER ROLE {name} SET statement_timeout = '5s'")
    url = postgres.url.replace(postgres.url.split("@")[0].split("//")[1], f"{name}:sto-pw")
    for ours, expected in ((60.0, "5s"), (None, "5s"), (2.0, "2s")):
        db = Database(url, statement_timeout=ours)
        try:
            assert db.execute("SHOW statement_timeout") == [(expected,)], ours
        finally:
            db.close()
