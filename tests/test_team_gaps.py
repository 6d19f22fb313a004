"""Team mode's remaining gaps (issue 24), on a real PostgreSQL (private cluster) and, where the
index matters, a real `chroma run`.

- The change feed is NOTIFY only: before, every write also added a row to `sb_changes` that
  nothing ever read back, so the table grew forever. A worker whose listener lost PostgreSQL
  still learns of the writes it missed (it flags everything when it reconnects).
"""

from __future__ import annotations


import pytest

from team_worker import until

psycopg = pytest.importorskip("psycopg")



def _rows(url: str, table: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_the_change_feed_stores_no_rows_and_a_reconnected_worker_learns_what_it_missed(
        own_postgres):
    from skillbank.store.postgres import PostgresStore

    with PostgresStore(own_postgres.url, deployment="gaps") as a, \
            PostgresStore(own_postgres.url, deployment="gaps") as b:
        a.migrate()
        feed_a, feed_b = a.change_feed(), b.change_feed()
        for n in range(20):
            feed_a.wrote("experiences", [f"ex-{n}"])
        assert feed_b.wait("experiences", 2)
        assert _rows(own_postgres.url, "sb_changes") == 0, "every write left a row behind"

        # PostgreSQL restarts; a write lands before B's listener is back: B still learns of it.
        feed_b.take("experiences")
        own_postgres.stop()
        own_postgres.start()
        until(lambda: _try_write(feed_a), 30)
        assert until(lambda: feed_b.take("experiences") is not False, 10) is not False
        assert _rows(own_postgres.url, "sb_changes") == 0


def _try_write(feed) -> bool:
    try:
        feed.wrote("experiences", ["ex-after-restart"])
        return True
    except Exception:  # the pool is still reconnecting
        return False


# Experience writes: the deployment's write lock is not held across Chroma's upsert ------------

def _bank(root, chroma_url: str, database_url: str, deployment: str):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          chroma_url=chroma_url, database_url=database_url,
                          deployment=deployment)


def _journaled(url: str, deployment: str, task: str) -> bool:
    with psycopg.connect(url) as conn:
        return bool(conn.execute(
            "SELECT count(*) FROM sb_experience_events WHERE deployment = %s "
            "AND event->'record'->>'task' = %s", (deployment, task)).fetchone()[0])


def test_an_experience_write_lets_go_of_the_write_lock_before_chromas_upsert(
        tmp_path, chroma_server, postgres):
    import threading
    import uuid

    from skillbank.errors import BusyError

    deployment = uuid.uuid4().hex[:12]
    a = _bank(tmp_path / "a", chroma_server, postgres.url, deployment)
    b = _bank(tmp_path / "b", chroma_server, postgres.url, deployment)
    try:
        index = a.experiences.index
        upserting, go_on = threading.Event(), threading.Event()
        real_upsert = index.upsert

        def slow_upsert(*args, **kwargs):
            upserting.set()
            assert go_on.wait(60)
            return real_upsert(*args, **kwargs)

        index.upsert = slow_upsert
        done: list = []
        writer = threading.Thread(target=lambda: done.append(a.experiences.record(
            "Rotate the staging database password", "success",
            feedback="Update the vault entry first.")))
        writer.start()
        try:
            assert upserting.wait(30)
            assert _journaled(postgres.url, deployment, "Rotate the staging database password")
            try:  # another worker takes the deployment's write lock while Chroma is busy
                b.write_lock.acquire(timeout=1.0)
            except BusyError:
                pytest.fail("the write lock is held across Chroma's upsert")
            b.write_lock.release()
        finally:
            go_on.set()
            writer.join(60)
        index.upsert = real_upsert
        eid = done[0]
        hits = until(lambda: b.experiences.recall("rotate the staging database password", k=3), 5)
        assert hits[0].id == eid
    finally:
        b.close()
        a.close()


def test_a_crash_between_the_journal_row_and_the_upsert_is_caught_up_by_the_next_sync(
        tmp_path, chroma_server, postgres):
    import uuid

    deployment = uuid.uuid4().hex[:12]
    a = _bank(tmp_path / "a", chroma_server, postgres.url, deployment)
    try:
        a.experiences.recall("anything")  # opened and synced
        index = a.experiences.index

        def crash(*args, **kwargs):
            raise KeyboardInterrupt("the worker died here")

        index.upsert = crash
        with pytest.raises(KeyboardInterrupt):
            a.experiences.record("Drain the node before the kernel upgrade", "success",
                                 feedback="Cordon it first.")
        assert _journaled(postgres.url, deployment, "Drain the node before the kernel upgrade")
        assert not a.experiences.index.ids()
    finally:
        a.close()
    c = _bank(tmp_path / "c", chroma_server, postgres.url, deployment)  # the next worker
    try:
        hits = c.experiences.recall("drain the node before the kernel upgrade", k=3)
        assert hits and hits[0].record.task == "Drain the node before the kernel upgrade"
        assert c.experiences.index.ids()
    finally:
        c.close()


# Forgetting a lesson is one transaction ----------------------------------------------------------

def test_forgetting_a_lesson_and_dropping_its_text_from_the_parent_is_one_transaction(
        tmp_path, chroma_server, postgres):
    import uuid

    deployment = uuid.uuid4().hex[:12]
    secret = "The staging vault token is kept in the ops wiki."
    a = _bank(tmp_path / "a", chroma_server, postgres.url, deployment)
    try:
        eid = a.experiences.record("Rotate the staging database password", "success",
                                   lessons=[secret, "Restart the pods after rotating."])
        lesson = next(r.id for r in a.experiences.list(kind="lesson")
                      if r.task == secret)
        with psycopg.connect(postgres.url, autocommit=True) as conn:  # refuse, at commit,
            conn.execute(f"""  -- any rewrite of this deployment's records: a failure there
                CREATE FUNCTION refuse_{deployment}() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.deployment = '{deployment}' THEN
                    RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$;
                CREATE CONSTRAINT TRIGGER refuse_{deployment} AFTER UPDATE ON sb_experiences
                    DEFERRABLE INITIALLY DEFERRED
                    FOR EACH ROW EXECUTE FUNCTION refuse_{deployment}();""")
        try:
            with pytest.raises(Exception):
                a.experiences.forget(lesson)
        finally:
            with psycopg.connect(postgres.url, autocommit=True) as conn:
                conn.execute(f"DROP TRIGGER refuse_{deployment} ON sb_experiences; "
                             f"DROP FUNCTION refuse_{deployment}()")
        with psycopg.connect(postgres.url) as conn:
            kept = dict(conn.execute(
                "SELECT id, record::text FROM sb_experiences WHERE deployment = %s",
                (deployment,)).fetchall())
        # All or nothing: never the lesson forgotten while its text stays in the parent.
        assert lesson in kept, "the forget committed without its parent's rewrite"
        assert secret in kept[eid]

        a.experiences.forget(lesson)  # and when nothing refuses, the text is gone everywhere
        with psycopg.connect(postgres.url) as conn:
            everything = conn.execute(
                "SELECT string_agg(event::text, ' ') FROM sb_experience_events "
                "WHERE deployment = %s", (deployment,)).fetchone()[0]
            records = conn.execute(
                "SELECT string_agg(record::text, ' ') FROM sb_experiences "
                "WHERE deployment = %s", (deployment,)).fetchone()[0]
        assert secret not in everything and secret not in records
        assert "Restart the pods" in records
        assert [l.text for l in a.experiences.get(eid).lessons] == [
            "Restart the pods after rotating."]
        assert all(secret not in (h.record.task or "") for h in
                   a.experiences.recall("staging vault token ops wiki", k=5))
    finally:
        a.close()


# `skillbank migrate`: the root's write lock while reading it; usage counts that grew since ----

def _embedded(root):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)


def _successes(url: str, deployment: str, item_id: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT successes FROM sb_usage WHERE deployment = %s AND "
                           "item_id = %s AND trusted", (deployment, item_id)).fetchone()
    return row[0] if row else 0


def test_a_migrate_rerun_carries_usage_counts_that_grew_since_and_no_more(tmp_path, postgres):
    import uuid

    from skillbank.team.migrate import migrate_root

    root, deployment = tmp_path / "laptop", uuid.uuid4().hex[:12]
    bank = _embedded(root)
    try:
        eid = bank.experiences.record("Rotate the staging database password", "success")
        bank.experiences.mark(eid, helped=True)
    finally:
        bank.close()
    migrate_root(root, postgres.url, deployment=deployment)
    assert _successes(postgres.url, deployment, eid) == 1
    bank = _embedded(root)  # the laptop goes on using it
    try:
        bank.experiences.mark(eid, helped=True)
        bank.experiences.mark(eid, helped=True)
    finally:
        bank.close()
    again = migrate_root(root, postgres.url, deployment=deployment)
    assert _successes(postgres.url, deployment, eid) == 3, "the root's newer counts were dropped"
    assert again.imported["usage"] == 1
    third = migrate_root(root, postgres.url, deployment=deployment)
    assert _successes(postgres.url, deployment, eid) == 3 and not third.changed, third.imported


def test_migrate_takes_the_roots_write_lock_while_reading_it(tmp_path, postgres):
    import uuid

    from skillbank.errors import BusyError
    from skillbank.locks import write_lock
    from skillbank.team.migrate import migrate_root

    root, deployment = tmp_path / "laptop", uuid.uuid4().hex[:12]
    bank = _embedded(root)
    try:
        bank.experiences.record("Rotate the staging database password", "success")
        with bank.write_lock:  # the running process is mid-write
            with pytest.raises(BusyError, match="memory at .*laptop"):
                migrate_root(root, postgres.url, deployment=deployment, timeout=1.0)
    finally:
        bank.close()
    with psycopg.connect(postgres.url) as conn:
        assert not conn.execute("SELECT count(*) FROM sb_experience_events WHERE deployment "
                                "= %s", (deployment,)).fetchone()[0], "imported mid-write"
    assert migrate_root(root, postgres.url, deployment=deployment).imported["experiences"]
    with write_lock(root, timeout=0.1):  # and migrate let go of it
        pass


# OIDC: an ID token is not an access token (RFC 9068 `typ: at+jwt`) ------------------------------

@pytest.fixture
def issuer():
    from oidc_issuer import Issuer

    made = Issuer()
    yield made
    made.close()


def _identity(issuer, tmp_path, **extra: str):
    from skillbank.team.auth import TeamIdentity, load_oidc

    config = tmp_path / "auth.toml"
    config.write_text(issuer.config_toml(**extra))
    return TeamIdentity(oidc=load_oidc(config, {}))


def test_an_id_token_whose_audience_is_the_client_id_is_not_an_access_token(issuer, tmp_path):
    from oidc_issuer import AUDIENCE

    from skillbank.team.auth import Admitted, Refusal

    # The issuer's ID token for a client whose id is the audience configured here: same
    # issuer, key and `aud`, but it proves a login to that client, not a grant to call us.
    id_token = issuer.token("alice", typ="JWT", azp=AUDIENCE, nonce="n-0S6_WzA2Mj")
    access = issuer.token("alice")  # typ at+jwt
    strict = _identity(issuer, tmp_path)
    refused = strict.check_token(id_token)
    assert isinstance(refused, Refusal) and refused.status == 401, refused
    assert "not an access token" in refused.reason and "require_at_jwt" in refused.reason
    assert isinstance(strict.check_token(access), Admitted)
    assert isinstance(strict.check_token(issuer.token("bob", typ="application/at+jwt")),
                      Admitted)

    # An issuer that does not mark its access tokens: the documented option lets them in,
    # and a token that says it is an ID token is still refused.
    lax = _identity(issuer, tmp_path, require_at_jwt="false")
    assert isinstance(lax.check_token(issuer.token("carol", typ=None)), Admitted)
    verdict = lax.check_token(issuer.token("dave", typ="id_token"))
    assert isinstance(verdict, Refusal) and "not an access token" in verdict.reason
