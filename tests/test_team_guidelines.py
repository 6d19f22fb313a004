"""Guideline records behind the store (issue 24): in team mode they live in PostgreSQL, so two
workers with their OWN root folders share them through one database and one Chroma server.

Real parts: a private PostgreSQL 15 cluster (tests/pg_cluster.py), real `chroma run` servers
(the session's, or one of this test's own that it stops and starts), the hash embedding (this
is about where records live, not retrieval quality). Before this change the records were the
root's files: worker B, on its own root, never saw what worker A wrote.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Callable

import psycopg
import pytest

from skillbank import Skillbank
from skillbank.errors import NotFoundError
from skillbank.index_outage import CHROMA_DOWN
from skillbank.scope import Scope
from skillbank.store.base import StoreUnavailableError
from team_worker import open_bank, two_banks
from test_chroma_outage import ChromaServer, own_chroma  # noqa: F401 - a fixture
from test_scope import (
    ALICE, ALICE_REVIEWER, ALICE_UNTRUSTED, BOB, MISSING, SECRET, same_answer_as_missing)

AGENT = Scope(principal="agent", namespace="default", role="contributor", trusted=False,
              face="test")


@pytest.fixture
def workers(tmp_path, chroma_server, postgres):
    """Two workers of one deployment, each with its own root folder."""
    with two_banks(tmp_path / "a", tmp_path / "b", chroma_server, postgres.url) as pair:
        yield pair


def _within(seconds: float, check: Callable[[], Any]) -> float:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < seconds, "worker B did not see it in time"
        time.sleep(0.02)
    return time.monotonic() - started


def _status(bank: Skillbank, gid: str) -> str | None:
    found = {g.id: g for g in bank.guidelines.list(namespace="*")}
    return found[gid].status if gid in found else None


def test_learn_approve_vote_retire_on_a_are_seen_on_b_within_a_second(workers, tmp_path):
    a, b = workers
    assert b.guidelines.list(namespace="*") == []  # loaded before the writes
    learned = a.guidelines.learn("Always quote identifiers in generated SQL.").ids()[0]
    _within(1.0, lambda: _status(b, learned) == "active")
    proposed = a.scoped(AGENT).guidelines.add("Never log secrets such as tokens.").guideline_id
    _within(1.0, lambda: _status(b, proposed) == "pending")
    a.guidelines.approve(proposed)
    _within(1.0, lambda: _status(b, proposed) == "active")
    a.guidelines.vote(learned, helpful=True)
    _within(1.0, lambda: b.guidelines.get(learned).helpful == 1)
    a.guidelines.retire(learned)
    _within(1.0, lambda: _status(b, learned) == "retired")
    assert [h.id for h in b.guidelines.search("never log secrets tokens", k=3)] == [proposed]
    # Nothing of it is in either root: the records are PostgreSQL's.
    for root in (tmp_path / "a", tmp_path / "b"):
        assert list((root / "guidelines").rglob("*.md")) == []
    # B's own writes reach A too, and a forget removes the row on both.
    b.forget(proposed)
    _within(1.0, lambda: _status(a, proposed) is None)


def test_status_links_votes_and_the_pending_queue_are_rows(workers):
    a, _ = workers
    old = a.guidelines.add("Use tabs to indent Makefiles.").guideline_id
    new = a.guidelines.add("Use spaces to indent Makefiles.", replaces=old).guideline_id
    pending = a.scoped(AGENT).guidelines.add("Always pin the Docker base image.").guideline_id
    a.scoped(AGENT).guidelines.vote(new, helpful=False)  # untrusted: counted apart
    records = a.store.guidelines()
    assert records.pending() == [pending]
    assert records.links(new) == [("supersedes", old)]
    with psycopg.connect(a.store.db.url) as conn:
        rows = dict(((r[0], r[1:]) for r in conn.execute(
            "SELECT id, status, superseded_by, harmful, untrusted_harmful FROM sb_guidelines "
            "WHERE deployment = %s", (a.store.deployment,))))
    assert rows[old] == ("superseded", new, 0, 0)
    assert rows[new] == ("active", None, 0, 1)
    assert rows[pending][0] == "pending"


def test_reindex_rebuilds_the_chroma_index_from_postgres(workers):
    a, b = workers
    ids = [a.guidelines.add(text).guideline_id for text in (
        "Always quote identifiers in generated SQL.", "Never log secrets such as tokens.")]
    index = b.index("guidelines")
    index.reset()  # the index is lost (only this deployment's entries)
    assert index.ids() == []
    b.reindex()
    assert sorted(b.index("guidelines").ids()) == sorted(ids)
    assert b.guidelines.search("quote sql identifiers", k=1)[0].id == ids[0]
    hits = b.guidelines.search("quote sql identifiers", k=1)
    assert hits[0].why == "both" and getattr(hits, "note", "") == ""


def test_while_chroma_is_down_writes_are_kept_and_search_uses_full_text(tmp_path, postgres,
                                                                        own_chroma):
    deployment = uuid.uuid4().hex[:16]
    a = open_bank(tmp_path / "a", own_chroma.url, postgres.url, deployment)
    b = open_bank(tmp_path / "b", own_chroma.url, postgres.url, deployment)
    try:
        first = a.guidelines.add("Always quote identifiers in generated SQL.").guideline_id
        _within(1.0, lambda: _status(b, first) == "active")
        assert b.guidelines.search("quote sql identifiers", k=1)[0].why == "both"
        own_chroma.stop()
        # A write while Chroma is down: kept in PostgreSQL, acknowledged, seen by B.
        second = a.guidelines.learn("Never put user input into SQL with f-strings.").ids()[0]
        _within(1.0, lambda: _status(b, second) == "active")
        hits = b.guidelines.search("user input f-strings in sql", k=3)
        assert hits and hits[0].id == second and hits[0].why == "keyword"
        assert hits.note.startswith(CHROMA_DOWN) and "full-text" in hits.note
        assert hits.dense_complete is False  # what the faces report as a keyword-only answer
        assert a.forget(first)["forgotten"]  # a removal too: the row goes, the entry later
        _within(1.0, lambda: _status(b, first) is None)
        own_chroma.start()  # same folder and port
        # Indexed when Chroma returns: the next read catches the index up.
        deadline = time.monotonic() + 30
        while True:
            hits = a.guidelines.search("user input f-strings in sql", k=1)
            if not getattr(hits, "note", "") and second in a.index("guidelines").ids():
                break
            assert time.monotonic() < deadline, "the write was not indexed after Chroma returned"
            time.sleep(0.5)
        assert hits[0].id == second and hits[0].why == "both"
        got = a.index("guidelines")._collection.get(ids=[second, first])
        assert got["ids"] == [second]  # in Chroma itself (and the forgotten one gone from it)
    finally:
        b.close()
        a.close()


def test_scope_rules_hold_in_postgres_across_workers(workers):
    """The shape of test_scope's matrix, written through worker A and read through B."""
    a, b = workers
    gl = a.scoped(ALICE).guidelines.add(
        f"Always lock the {SECRET} table before a migration.").guideline_id
    pending = a.scoped(ALICE_UNTRUSTED).guidelines.add(
        f"Never migrate the {SECRET} table on a Friday.").guideline_id
    bob_rule = a.scoped(BOB).guidelines.add("Always back up the orders table.").guideline_id
    alice, bob, lead = (b.scoped(s) for s in (ALICE, BOB, ALICE_REVIEWER))
    _within(1.0, lambda: gl in {h.id for h in alice.guidelines.search(
        f"migrate the {SECRET} table")})
    # Namespaces: bob never sees alice's rules, and an out-of-scope id is "not found".
    assert bob.guidelines.search(f"migrate the {SECRET} table") == []
    assert {g.id for g in bob.guidelines.list(namespace="*")} == {bob_rule}
    same_answer_as_missing(bob.guidelines.get, gl, MISSING["gl"])
    # Roles: the pending proposal is shown to alice's reviewer only, and only it approves.
    assert pending not in {g.id for g in alice.guidelines.list(status="pending", namespace="*")}
    assert {g.id for g in lead.guidelines.list(status="pending", namespace="*")} == {pending}
    # Not told it exists either: not found, as a made-up id (it was "needs the reviewer
    # role" to alice's own contributors; session 33, tests/test_pending_no_oracle.py).
    same_answer_as_missing(b.scoped(ALICE_UNTRUSTED).guidelines.approve, pending,
                           MISSING["gl"])
    with pytest.raises(NotFoundError):
        bob.guidelines.approve(pending)
    # Untrusted votes are kept apart: counted, never changing a status or the ranking.
    for _ in range(4):
        b.scoped(ALICE_UNTRUSTED).guidelines.vote(gl, helpful=False)
    seen = a.scoped(ALICE).guidelines.get(gl)
    assert (seen.status, seen.harmful, seen.untrusted_harmful) == ("active", 0, 4)
    assert lead.guidelines.approve(pending).status == "active"
    _within(1.0, lambda: a.scoped(ALICE).guidelines.get(pending).status == "active")


def test_a_write_is_one_transaction_and_a_refusal_is_a_clear_error(workers, postgres):
    a, b = workers
    kept = a.guidelines.add("Always quote identifiers in generated SQL.").guideline_id
    deployment = a.store.deployment
    with psycopg.connect(postgres.url, autocommit=True) as conn:  # refuse this deployment's
        conn.execute(f"""  -- guideline rows at commit: after every statement of the write
            CREATE FUNCTION refuse_{deployment}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.deployment = '{deployment}' THEN
                RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$;
            CREATE CONSTRAINT TRIGGER refuse_{deployment} AFTER INSERT OR UPDATE ON sb_guidelines
                DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION refuse_{deployment}();""")
    try:
        with pytest.raises(StoreUnavailableError,
                           match=r"PostgreSQL at .*refused the write of guideline gl-.*nothing "
                                 r"of it was written.*database_url"):
            a.guidelines.add("Never log secrets such as tokens.")
        with pytest.raises(StoreUnavailableError, match="refused the write"):
            a.guidelines.vote(kept, helpful=False)
    finally:
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            conn.execute(f"DROP TRIGGER refuse_{deployment} ON sb_guidelines; "
                         f"DROP FUNCTION refuse_{deployment}()")
    # Nothing half-written: no row, no vote, and neither worker shows either.
    with psycopg.connect(postgres.url) as conn:
        rows = conn.execute("SELECT id, harmful FROM sb_guidelines WHERE deployment = %s",
                            (deployment,)).fetchall()
    assert rows == [(kept, 0)]
    for bank in (a, b):
        assert [g.id for g in bank.guidelines.list(namespace="*")] == [kept]
        assert bank.guidelines.get(kept).harmful == 0


async def test_two_worker_processes_with_their_own_roots_share_guidelines(
        tmp_path, chroma_server, postgres):
    """The same through `skillbank server`: two real worker processes, each on its own root,
    driven by real MCP client sessions."""
    from team_worker import start_server
    from test_team_server import TOKEN, _seen_within, call_ok, mcp, stop_process

    deployment = uuid.uuid4().hex[:12]
    roots = [tmp_path / name for name in ("root-a", "root-b")]
    for root in roots:
        root.mkdir()
    workers = [start_server(root, chroma_server, postgres.url, "--token", TOKEN, "--trust",
                            deployment=deployment, log=tmp_path / f"w{n}.log")
               for n, root in enumerate(roots)]
    (_, a), (_, b) = workers
    try:
        async with mcp(a) as on_a, mcp(b) as on_b:
            await call_ok(on_a, "learn_from_critique", {
                "critique": "Always quote identifiers in generated SQL.", "task": "Write SQL"})

            async def b_finds_rule(client: Any) -> bool:
                found = await call_ok(client, "search_guidelines",
                                      {"task": "quote sql identifiers"})
                return any("quote" in g["text"].lower() for g in found["guidelines"])

            assert await _seen_within(on_b, 1.0, b_finds_rule) < 1.0
            found = await call_ok(on_b, "search_guidelines", {"task": "quote sql identifiers"})
            gid = found["guidelines"][0]["id"]
            await call_ok(on_b, "rate_memory", {"id": gid, "helpful": True})
        for root in roots:
            assert list((root / "guidelines").rglob("*.md")) == []
        with psycopg.connect(postgres.url) as conn:
            helpful = conn.execute("SELECT helpful FROM sb_guidelines WHERE deployment = %s "
                                   "AND id = %s", (deployment, gid)).fetchone()
        assert helpful == (1,)
    finally:
        for proc, _ in workers:
            stop_process(proc)


@pytest.fixture(params=["files", "postgres"])
def two_record_stores(request, tmp_path):
    """The guideline records of one deployment as two workers hold them, in either column."""
    from skillbank.store import open_store

    if request.param == "files":
        stores = [open_store(tmp_path / "root"), open_store(tmp_path / "root")]
    else:
        url, deployment = request.getfixturevalue("postgres").url, uuid.uuid4().hex
        stores = [open_store(None, url, deployment=deployment) for _ in range(2)]
    yield [store.guidelines() for store in stores]
    for store in stores:
        store.close()


def test_both_columns_keep_guideline_records_alike(two_record_stores):
    """The contract the guideline memory relies on, whichever column it is handed."""
    from skillbank.records import Guideline
    from skillbank.store.base import GuidelineRecords

    a, b = two_record_stores
    assert isinstance(a, GuidelineRecords)
    assert a.load().records == {} and not a.stale()
    rule = Guideline(id="gl-0123456789ab", topic="sql", text="Always quote SQL identifiers.",
                     namespace="team", supersedes=["gl-ba9876543210"])
    saved, digest = a.save(rule)
    assert not a.stale() and b.load().records[rule.id] == (saved, digest)
    assert saved.model_dump(exclude={"path"}) == rule.model_dump(exclude={"path"})
    voted, new_digest = b.save(saved.model_copy(update={"untrusted_harmful": 2}), saved)
    assert new_digest != digest and a.stale() and a.changed(saved)
    assert a.load().records[rule.id][0].untrusted_harmful == 2 and not a.changed(voted)
    found = a.search_text("how to quote identifiers in sql", 10)
    assert found is None or found == {rule.id: 1.0}  # every word of the task, stemmed
    a.delete(a.load().records[rule.id][0])
    assert b.stale() and b.load().records == {}
