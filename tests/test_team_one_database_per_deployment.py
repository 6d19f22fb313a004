"""A team deployment's Chroma database belongs to one PostgreSQL database (hunt-teamport #1,
session 35).

Before: a second PostgreSQL database opened under the same deployment name on the same Chroma
server (a restore drill into a fresh database, as docs/team.md step 8 invites) synced the
deployment's index to its own records. Every entry of the live deployment it lacked was
deleted; the live worker went on answering `search_mode: "hybrid"` with no hits and no note,
its rows intact in PostgreSQL and its index checkpoint up to date, so nothing repaired it. The
check that refuses a second root folder (`claim_deployment`) was skipped in team mode. Now the
first database to open a deployment is recorded on its Chroma, and another database is refused
at open, before anything is synced; the workers of that database (other machines, restarts, a
`pg_restore --clean` into it) keep opening. Real PostgreSQL, real `chroma run`, and a real
`skillbank server` worker serving while the second database is opened.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest

from conftest import stop_process
from mcp_http import bearer_session, call_ok, team_env
from pg_cluster import PG_BIN
from skillbank.errors import InvalidInputError
from team_worker import open_bank, start_server, until

TOKEN = "one-database-token"
TASK = "Warm the redis cache before the launch"


def _database(postgres, owner: str | None = None) -> tuple[str, str]:
    """(name, URL) of a fresh database in the session's cluster."""
    name = "dep_" + uuid.uuid4().hex[:10]
    with psycopg.connect(postgres.url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}" + (f" OWNER {owner}" if owner else ""))
    return name, postgres.url_for(name)


def _cli(root: Path, chroma: str, database: str, deployment: str, *args: str,
         **extra: str) -> subprocess.CompletedProcess:
    env = {**team_env(), "SKILLBANK_CHROMA_URL": chroma, "SKILLBANK_DATABASE_URL": database,
           "SKILLBANK_DEPLOYMENT": deployment, **extra}
    return subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root), *args],
                          capture_output=True, text=True, env=env, timeout=300,
                          cwd=str(root.parent))


def _indexed(root: Path, chroma: str, database: str, deployment: str) -> list[str]:
    """The experiences Chroma holds for the deployment, read by a bank that does not sync."""
    with open_bank(root, chroma, database, deployment, sync=False) as view:
        return sorted(view.index("experiences").ids())


def _refused(root: Path, chroma: str, database: str, deployment: str) -> str:
    with pytest.raises(InvalidInputError) as refused:
        open_bank(root, chroma, database, deployment).close()
    return str(refused.value)


@pytest.mark.parametrize("worker", [False, True], ids=["in-process", "skillbank-server"])
async def test_a_second_database_under_a_deployment_is_refused_before_it_syncs(
        tmp_path, chroma_server, postgres, worker):
    """The live deployment is a bank in this process, or a `skillbank server` worker (a
    process of its own, serving MCP) while the second database is opened: team mode has no
    owner process to be a client of (each process opens PostgreSQL and Chroma itself), so the
    worker stands for the other process. Before, the second open succeeded and the live
    side's recall came back empty ([] in `hybrid` mode)."""
    deployment = "dep-" + uuid.uuid4().hex[:10]
    live_name, live_url = _database(postgres)
    drill_name, drill_url = _database(postgres)
    live_root = tmp_path / "live"
    proc = live = None
    try:
        if worker:
            proc, url = start_server(live_root, chroma_server, live_url, "--token", TOKEN,
                                     "--trust", deployment=deployment)
            async with bearer_session(url, TOKEN, timeout=120) as client:
                eid = (await call_ok(client, "record_experience",
                                     {"task": TASK, "outcome": "success"}))["id"]
        else:
            live = open_bank(live_root, chroma_server, live_url, deployment)
            eid = live.experiences.record(task=TASK, outcome="success")
        # A restore drill: a fresh database, the same deployment name, the same Chroma.
        said = _refused(tmp_path / "drill", chroma_server, drill_url, deployment)
        assert f"deployment {deployment!r} belongs to the PostgreSQL database {live_name!r}" \
            in said, said
        assert f"this is the PostgreSQL database {drill_name!r}" in said, said
        assert "deployment of its own" in said and "another Chroma server" in said, said
        assert f"SKILLBANK_DEPLOYMENT_TAKEOVER=1 skillbank --root {tmp_path / 'drill'} " \
               "reindex" in said, said
        # The CLI, as in the hunt (`skillbank stats` on the drill's root): exit 2, one line.
        done = _cli(tmp_path / "drill-cli", chroma_server, drill_url, deployment, "stats")
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "belongs to the PostgreSQL database" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        # The live side still finds its experience, by its dense side too.
        if worker:
            async with bearer_session(url, TOKEN, timeout=120) as client:
                seen = await call_ok(client, "recall_experiences", {"task": TASK})
            assert seen["search_mode"] == "hybrid", seen
            assert eid in [e["id"] for e in seen["experiences"]], seen
        else:
            hits = live.experiences.recall(TASK, count_use=False)
            assert eid in [h.id for h in hits]
        assert eid in _indexed(tmp_path / "view", chroma_server, live_url, deployment)
        # Nothing of the drill's was written: its database holds no experience.
        with psycopg.connect(drill_url) as conn:
            assert conn.execute("SELECT count(*) FROM sb_experience_events").fetchone() == (0,)
    finally:
        if proc is not None:
            stop_process(proc)
        if live is not None:
            live.close()


def test_the_workers_of_one_database_keep_opening_it(tmp_path, chroma_server, postgres):
    """Workers on two machines (roots of their own), a restart, a `pg_restore --clean` into
    the same database (step 8's restore) open as before; a fresh database is refused, and so
    is a database restored after the recorded one was dropped (`dropdb`, `createdb`,
    `pg_restore`) until the move is said by hand: two databases opened at once both took it
    over by themselves (review 2, session 35). A multi-host URL (libpq failover) opens: its
    port could not be read from the URL and every open failed (review 2)."""
    deployment = "dep-" + uuid.uuid4().hex[:10]
    name, url = _database(postgres)
    with open_bank(tmp_path / "a", chroma_server, url, deployment) as a, \
            open_bank(tmp_path / "b", chroma_server, url, deployment) as b:
        eid = a.experiences.record(task=TASK, outcome="success")
        until(lambda: eid in [h.id for h in b.experiences.recall(TASK, count_use=False)])
    dump = tmp_path / "team.dump"
    subprocess.run([str(PG_BIN / "pg_dump"), "--format=custom", f"--file={dump}", url],
                   check=True, capture_output=True, timeout=120)
    subprocess.run([str(PG_BIN / "pg_restore"), "--clean", "--if-exists", "--dbname", url,
                    str(dump)], check=True, capture_output=True, timeout=120)
    with open_bank(tmp_path / "a", chroma_server, url, deployment) as a:  # a restart
        assert eid in [h.id for h in a.experiences.recall(TASK, count_use=False)]
    _, fresh_url = _database(postgres)
    assert "belongs to the PostgreSQL database" in _refused(
        tmp_path / "fresh", chroma_server, fresh_url, deployment)
    with psycopg.connect(postgres.url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name}")
        admin.execute(f"CREATE DATABASE {name}")
    subprocess.run([str(PG_BIN / "pg_restore"), "--dbname", url, str(dump)], check=True,
                   capture_output=True, timeout=120)
    assert "SKILLBANK_DEPLOYMENT_TAKEOVER=1" in _refused(tmp_path / "a", chroma_server, url,
                                                         deployment)
    moved = _cli(tmp_path / "a", chroma_server, url, deployment, "reindex",
                 SKILLBANK_DEPLOYMENT_TAKEOVER="1")
    assert moved.returncode == 0, moved.stderr
    host_port = url.split("@", 1)[1].split("/", 1)[0]
    multi = url.replace(host_port, f"{host_port},{host_port}")  # libpq's failover form
    with open_bank(tmp_path / "a", chroma_server, multi, deployment) as a:
        assert eid in [h.id for h in a.experiences.recall(TASK, count_use=False)]
    assert "belongs to the PostgreSQL database" in _refused(
        tmp_path / "fresh", chroma_server, fresh_url, deployment)


def test_a_deployment_moves_to_another_database_by_hand(tmp_path, chroma_server, postgres):
    """docs/team.md step 8: a database that replaces the recorded one in another cluster (a
    new machine, a major upgrade) is said once, by hand; the other is refused from then on.
    A deployment opened before the check (no record) is the first database's to open it."""
    import chromadb

    from skillbank.index_ownership import database_for
    from skillbank.team.index_claim import DATABASE_CLAIMS

    deployment = "dep-" + uuid.uuid4().hex[:10]
    old_name, old_url = _database(postgres)
    _, new_url = _database(postgres)
    with open_bank(tmp_path / "old", chroma_server, old_url, deployment) as old:
        old.experiences.record(task=TASK, outcome="success")
    host, port = chroma_server.rsplit("//", 1)[1].split(":")
    chroma = chromadb.HttpClient(host=host, port=int(port), database=database_for(deployment))
    chroma.delete_collection(DATABASE_CLAIMS)  # as a deployment opened before this change
    with open_bank(tmp_path / "old", chroma_server, old_url, deployment):
        pass  # the first database to open it now: recorded
    assert old_name in _refused(tmp_path / "new", chroma_server, new_url, deployment)
    moved = _cli(tmp_path / "new", chroma_server, new_url, deployment, "reindex",
                 SKILLBANK_DEPLOYMENT_TAKEOVER="1")
    assert moved.returncode == 0, moved.stderr
    with open_bank(tmp_path / "new", chroma_server, new_url, deployment) as new:
        eid = new.experiences.record(task="Rotate the staging keys", outcome="success")
    assert _indexed(tmp_path / "view", chroma_server, new_url, deployment) == [eid]
    said = _refused(tmp_path / "old", chroma_server, old_url, deployment)
    assert f"this is the PostgreSQL database {old_name!r}" in said, said
    assert _indexed(tmp_path / "view", chroma_server, new_url, deployment) == [eid]


def test_a_role_that_may_not_read_the_clusters_identifier_is_told_apart_by_oid(
        tmp_path, chroma_server, postgres):
    """A hosting provider may revoke `pg_control_system()`: the database is then its oid and
    name, and a database that is not the recorded one is refused (never taken for one that
    was dropped: the cluster cannot be told)."""
    role = "plain_" + uuid.uuid4().hex[:8]
    with psycopg.connect(postgres.url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'plain-pw'")
    urls = []
    for _ in range(2):
        name, url = _database(postgres, owner=role)
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC")
        urls.append(url.replace(postgres.url.split("@")[0].split("//")[1], f"{role}:plain-pw"))
    deployment = "dep-" + uuid.uuid4().hex[:10]
    with open_bank(tmp_path / "a", chroma_server, urls[0], deployment) as bank:
        assert bank.store.identity()["system"] is None
        eid = bank.experiences.record(task=TASK, outcome="success")
    with open_bank(tmp_path / "b", chroma_server, urls[0], deployment):
        pass  # another worker of that database
    assert "belongs to the PostgreSQL database" in _refused(
        tmp_path / "c", chroma_server, urls[1], deployment)
    assert _indexed(tmp_path / "view", chroma_server, urls[0], deployment) == [eid]


def test_a_root_without_a_database_is_refused_a_team_deployment(tmp_path, chroma_server,
                                                                postgres):
    """Left by the fix of hunt-teamport #1 (session 35): a root with no database_url that
    names a team's deployment on the same Chroma was checked against other roots only, so its
    open synced the team's index to its own (empty) files and deleted the team's entries."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    deployment = "dep-" + uuid.uuid4().hex[:10]
    _, url = _database(postgres)
    with open_bank(tmp_path / "team", chroma_server, url, deployment) as team:
        eid = team.experiences.record(task=TASK, outcome="success")
    with pytest.raises(InvalidInputError) as refused:
        Skillbank.open(tmp_path / "solo", embedding_function=HashEmbedding(),
                       include_bundled=False, chroma_url=chroma_server,
                       deployment=deployment).close()
    said = str(refused.value)
    assert f"deployment {deployment!r}" in said and "is a team deployment of the" in said, said
    assert "has no database_url" in said and "deployment of its own" in said, said
    assert eid in _indexed(tmp_path / "view", chroma_server, url, deployment)


def test_a_team_is_refused_the_deployment_of_a_root_without_a_database(
        tmp_path, chroma_server, postgres):
    """Review 2 of session 35: a team's first open of a deployment a root without a database
    held synced that index to the team's records and deleted the root's entries (and the
    root was then refused its own deployment)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    deployment = "dep-" + uuid.uuid4().hex[:10]
    with Skillbank.open(tmp_path / "solo", embedding_function=HashEmbedding(),
                        include_bundled=False, chroma_url=chroma_server,
                        deployment=deployment) as solo:
        eid = solo.experiences.record(task=TASK, outcome="success")
    _, url = _database(postgres)
    said = _refused(tmp_path / "team", chroma_server, url, deployment)
    assert f"is the index of root {(tmp_path / 'solo').resolve()}" in said, said
    assert "skillbank migrate" in said, said
    with Skillbank.open(tmp_path / "solo", embedding_function=HashEmbedding(),
                        include_bundled=False, chroma_url=chroma_server,
                        deployment=deployment) as solo:
        assert eid in [h.id for h in solo.experiences.recall(TASK, count_use=False)]
