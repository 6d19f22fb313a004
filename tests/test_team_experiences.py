"""Team mode's experience journal in PostgreSQL (issue 24): workers with their OWN root folders
share one memory through the store, on a real PostgreSQL (private cluster) and a real
`chroma run` server.

Before, the journal was the root's month files even in team mode: a worker on another machine
(another root) found the other's experience in the shared index but not in its own journal,
so recall skipped it ("indexed but missing from the journal"), a `reindex` on that worker
deleted everything it had not written itself, and a write while Chroma was down failed.
"""

from __future__ import annotations

import contextlib
import uuid

import pytest

from team_worker import open_bank, reindex_drafts, until
from test_chroma_outage import ChromaServer  # noqa: F401 - the own_chroma fixture's server

pytest.importorskip("psycopg")


@contextlib.contextmanager
def two_workers(tmp_path, postgres):
    """A `chroma run` server and two in-process workers of one deployment, each with its own
    root (closed and stopped when the block ends)."""
    import sys
    from pathlib import Path

    if not (Path(sys.executable).parent / "chroma").exists():
        pytest.skip("chroma CLI not installed")
    chroma = ChromaServer(tmp_path / "chroma-data")
    chroma.start()
    deployment = uuid.uuid4().hex[:16]
    a = open_bank(tmp_path / "machine-a", chroma.url, postgres.url, deployment)
    b = open_bank(tmp_path / "machine-b", chroma.url, postgres.url, deployment)
    try:
        yield chroma, a, b, deployment
    finally:
        b.close()
        a.close()
        chroma.stop()


def test_an_experience_recorded_through_a_is_recalled_by_b_within_a_second(two_machines, tmp_path):
    a, b = two_machines
    assert b.experiences.recall("rotate the staging database password") == []  # loaded first
    eid = a.experiences.record("Rotate the staging database password", "success",
                               feedback="Update the vault entry before restarting the pods.")
    hits = until(lambda: b.experiences.recall("rotate the staging database password", k=3))
    assert hits[0].id == eid
    assert "vault entry" in b.experiences.get(eid).feedback
    # The journal is PostgreSQL's: neither root holds a month file.
    for root in ("machine-a", "machine-b"):
        assert not list((tmp_path / root / "experiences").glob("*.jsonl"))


def test_reindex_on_another_root_rebuilds_the_experience_index_from_postgresql(two_machines):
    a, b = two_machines
    ids = [a.experiences.record(f"Deploy service {name} to the cluster", "success",
                                feedback=f"{name} needs its config map first.")
           for name in ("billing", "search", "mailer")]
    b.reindex()  # B's root holds no journal: the rebuild reads PostgreSQL's
    assert b.index("experiences").count() == 3
    assert sorted(r.id for r in b.experiences.list(namespace="*")) == sorted(ids)
    assert b.experiences.recall("deploy the mailer service", k=1)[0].id == ids[2]
    assert a.experiences.recall("deploy the billing service", k=1)[0].id == ids[0]


def test_forget_deletes_the_rows_in_postgresql(two_machines, postgres):
    import psycopg

    a, b = two_machines
    eid = a.experiences.record("Reset the kiosk badge printer", "failure",
                               lessons=["The zebrafinch firmware needs a cold boot."])
    deployment = a.store.deployment

    def rows() -> int:
        with psycopg.connect(postgres.url) as conn:
            return sum(conn.execute(sql, (deployment,)).fetchone()[0] for sql in (
                "SELECT count(*) FROM sb_experience_events WHERE deployment = %s "
                "AND event::text LIKE '%%zebrafinch%%'",
                "SELECT count(*) FROM sb_experiences WHERE deployment = %s "
                "AND record::text LIKE '%%zebrafinch%%'"))

    assert rows() >= 2  # the experience and its lesson record, events and records
    result = b.experiences.forget(eid)
    assert result["forgotten"] and result["lessons"]
    assert rows() == 0
    assert a.experiences.recall("kiosk badge printer zebrafinch") == []


def test_while_chroma_is_down_writes_are_kept_and_recall_uses_full_text_search(
        tmp_path, postgres):
    with two_workers(tmp_path, postgres) as (chroma, a, b, deployment):
        first = a.experiences.record("Renew the TLS certificate of the intranet", "success")
        assert until(lambda: b.experiences.recall("renew the intranet TLS certificate",
                                                   k=1))[0].id == first
        chroma.stop()
        kept = a.experiences.record("Drain the print queue of the third floor", "success",
                                    feedback="Pause the spooler, then purge the queue.")
        hits = b.experiences.recall("drain the third floor print queue", k=2)
        assert hits and hits[0].id == kept and hits[0].why == "keyword"
        assert "full-text search" in hits.note and not hits.dense_complete
        assert b.experiences.recall("renew the intranet TLS certificate", k=1)[0].id == first
        chroma.start()  # same folder and port
        hits = until(lambda: [h for h in a.experiences.recall(
            "drain the third floor print queue", k=2) if h.why != "keyword"])
        assert hits[0].id == kept  # indexed now that Chroma is back
        assert not getattr(hits, "note", "")
        assert kept in a.index("experiences").ids()
        hits = until(lambda: [h for h in b.experiences.recall(
            "drain the third floor print queue", k=2) if h.why != "keyword"])
        assert hits[0].id == kept


def test_while_chroma_is_down_an_unread_task_is_recalled_as_recall_recalls_it(tmp_path,
                                                                              postgres):
    """Session 23: the full-text fallback kept a run only when the request shared a quarter of
    its words (`recall.MIN_KEYWORD`), and to PostgreSQL a clause of Japanese or Chinese is one
    word: the run's task and two sentences more shared 0.2 with it, so recall had the run while
    the index answered and the fallback dropped it (18 of 20 such requests). A task the model
    does not read is judged by the tokens it shares (`recall.MIN_SHARED_TOKENS`) either way.
    Asked by the other worker, as the full-text tests above."""
    task = "リリースノートを日本語に翻訳する"  # translate the release notes into Japanese
    request = (task + "。来週のリリースまでに終わらせたいので、注意点を教えてください。"
               "テスト環境はもう用意してあります。レビューは田中さんにお願いする予定です。")
    with two_workers(tmp_path, postgres) as (chroma, a, b, deployment):
        a.experiences.record("Rotate the API keys for the payment service", "success",
                             feedback="Revoke the old keys only after every service reloads.")
        run = a.experiences.record(task=task, outcome="partial",
                                   feedback="敬語を使ってください。技術用語は英語のままにしてください。")
        assert until(lambda: b.experiences.recall(request, k=3))[0].id == run  # the index
        chroma.stop()
        a.experiences.record("Drain the print queue of the third floor", "success")
        # An English request finds the server down (its dense side asks it); from then on
        # B's recall answers by the journal's full-text search, whatever the script.
        assert "full-text search" in b.experiences.recall("rotate the payment API keys").note
        hits = b.experiences.recall(request, k=3)
        assert "full-text search" in hits.note
        assert [h.id for h in hits] == [run]
        assert b.experiences.recall(task, k=3)[0].id == run
        assert b.experiences.recall("会議の議事録をまとめる", k=3) == []


def _count(url: str, sql: str, *params) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchone()[0]


def test_a_forgotten_drafts_name_does_not_survive_in_postgresqls_audit_table(two_machines,
                                                                            postgres):
    a, _ = two_machines
    ids = [a.experiences.record(
        task=f"Repair the quokkazanzibar pipeline run {n}", outcome="success",
        when_to_use="When repairing the quokkazanzibar pipeline",
        steps=[{"action": "inspect"}, {"action": "restart"}]) for n in range(3)]
    drafts = a.skills.propose(min_support=3)
    assert any("quokkazanzibar" in d.name for d in drafts)
    deployment = a.store.deployment
    sql = ("SELECT count(*) FROM sb_audit WHERE deployment = %s "
           "AND item_id LIKE '%%quokkazanzibar%%'")
    assert _count(postgres.url, sql, deployment) >= 1  # the propose event names the draft
    for record_id in ids:
        a.forget(record_id)
    assert _count(postgres.url, sql, deployment) == 0
    for table, column in (("sb_drafts", "files"), ("sb_draft_ledger", "entry")):
        assert _count(postgres.url, f"SELECT count(*) FROM {table} WHERE deployment = %s "
                      f"AND {column}::text LIKE '%%quokkazanzibar%%'", deployment) == 0
    assert a.skills.drafts() == []


def test_forgotten_ids_are_rows_in_postgresql_never_text(two_machines, postgres, tmp_path):
    a, b = two_machines
    eid = a.experiences.record("Wipe the ocelotmarmot kiosk", "success",
                               lessons=["Unplug the ocelotmarmot scanner first."])
    gid = a.guidelines.learn("Never reboot the ocelotmarmot kiosk during opening hours.").ids()[0]
    lessons = b.forget(eid)["lessons"]
    b.forget(gid)
    rows = b.store.forgotten().list()
    assert {r["id"]: r["kind"] for r in rows} == {
        eid: "experience", gid: "guideline", **{l: "lesson" for l in lessons}}
    assert _count(postgres.url, "SELECT count(*) FROM sb_forgotten WHERE deployment = %s "
                  "AND (id || kind || principal) LIKE '%%ocelot%%'", a.store.deployment) == 0
    assert not (tmp_path / "machine-b" / "guidelines" / ".trash" / "forgotten.jsonl").exists()


def test_a_draft_proposed_on_one_worker_is_listed_and_discarded_on_the_other(two_machines):
    a, b = two_machines
    names = reindex_drafts(a)
    assert [d.name for d in b.skills.drafts()] == names  # B's own root never saw them
    assert "reindex" in open(b.skills.draft(names[0]).path, encoding="utf-8").read()
    b.skills.discard(names[0])
    assert a.skills.drafts() == []
    assert a.skills.propose(min_support=3) == []  # the ledger is shared: not proposed again


def test_a_conversation_updated_on_a_reaches_b_even_after_b_read_it(two_machines):
    a, b = two_machines
    turn = [{"role": "user", "content": "Plan the team offsite in Lisbon"},
            {"role": "assistant", "content": "Shortlisted three venues."}]
    eid = a.experiences.record_messages(turn, thread="offsite-1")
    assert until(lambda: eid in b.experiences and b.experiences.get(eid)).outcome == "unknown"
    a.experiences.record_messages(turn + [{"role": "user", "content": "Book the second one"},
                                          {"role": "assistant", "content": "Booked."}],
                                  thread="offsite-1", outcome="success", followup=True)
    assert until(lambda: b.experiences.get(eid).outcome == "success")


def test_a_write_kept_during_an_outage_is_read_back_and_reaches_every_worker(tmp_path, postgres):
    """Session 16: `get` of an experience written while Chroma was down raised the outage (MCP
    record_experience answered an error for a stored write, and a retry stored it twice); and
    only a recall on the worker that wrote it indexed it once Chroma was back."""
    with two_workers(tmp_path, postgres) as (chroma, a, b, deployment):
        a.experiences.record("Renew the TLS certificate of the intranet", "success")
        chroma.stop()
        kept = a.experiences.record("Drain the print queue of the third floor", "success",
                                    feedback="Pause the spooler, then purge the queue.")
        record = a.experiences.get(kept)  # read back from the journal
        assert record.task == "Drain the print queue of the third floor"
        assert record.status == "active" and record.feedback.startswith("Pause the spooler")
        assert _count(postgres.url, "SELECT count(*) FROM sb_experiences WHERE deployment = %s "
                      "AND record->>'task' = %s", deployment, record.task) == 1
        chroma.start()  # only B recalls: it indexes what A kept
        hits = until(lambda: [h for h in b.experiences.recall(
            "drain the third floor print queue", k=2) if h.why != "keyword"], seconds=15)
        assert hits[0].id == kept and not getattr(hits, "note", "")


def test_the_journal_fallback_reads_a_records_latest_version(tmp_path):
    """The files journal's scan (no location: the index did not answer) returned a thread's
    first version, not the one its later turns wrote (session 16 review)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        turn = lambda user, reply: [{"role": "user", "content": user},  # noqa: E731
                                    {"role": "assistant", "content": reply}]
        eid = bank.experiences.record_messages(turn("Book the team offsite", "Which dates?"),
                                               thread="t1")
        bank.experiences.record_messages(turn("Book the team offsite", "Booked."), thread="t1",
                                         outcome="success", followup=True)
        fallback = bank.experiences._get_from_journal(eid)
        current = bank.experiences.get(eid)
        assert (fallback.outcome, len(fallback.steps)) == (current.outcome, len(current.steps))
        assert fallback.outcome == "success"


def test_an_import_keeps_its_usage_and_b_reads_it(two_machines, tmp_path):
    """`experiences import` carries the counts `export` writes, into PostgreSQL's table."""
    import json

    a, b = two_machines
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "exp-0123456789ab", "task": "Rotate the staging keys",
                               "outcome": "failure", "usage": {"uses": 4, "successes": 1,
                                                                "failures": 3}}) + "\n")
    assert a.experiences.import_(out).added == ["exp-0123456789ab"]
    usage = b.experiences.usage.get("exp-0123456789ab")
    assert (usage.uses, usage.successes, usage.failures) == (4, 1, 3)


def test_stats_after_a_skill_changed_twice_in_team_mode(two_machines):
    """Skill stats' outcome flags read the files column's dated usage log; team mode keeps
    totals in PostgreSQL (no log file), and stats() must still answer (review, session 18)."""
    a, _ = two_machines
    a.skills.save("release-notes", "Write release notes from merged PRs.", "# One\n")
    a.skills.sync()
    a.skills.update("release-notes", body="# Two\n")
    a.skills.sync()
    a.rate("skill:release-notes", False)
    assert a.stats()["skill_trust"]["flagged_by_outcome"] == []


def test_accepted_untrusted_votes_join_the_trusted_counts_in_postgresql(two_machines):
    a, b = two_machines
    eid = a.experiences.record("Rotate the staging keys", "success")
    a.rate(eid, True)
    a.rate(eid, False, trusted=False)
    assert b.experiences.usage.get(eid).failures == 0  # apart until accepted
    accepted = a.accept_votes(eid)["usage"]
    assert (accepted["successes"], accepted["failures"]) == (1, 1)
    assert b.experiences.usage.untrusted(eid).failures == 0


def test_a_reindex_while_another_worker_writes_rebuilds_every_experience(two_machines):
    """Team hunt, session 19: `skillbank reindex` under traffic left 60 of 700 experiences in
    the index and recall empty on every worker. The collection is emptied (not replaced) on a
    Chroma server; a write by another worker between the emptying and the replay upserted its
    one entry and moved the shared checkpoint to the journal's end, so the replay found a
    non-empty, current index and rebuilt nothing. The write is made at exactly that moment,
    by a worker whose last catch-up was before the reindex (as under steady traffic)."""
    a, b = two_machines
    ids = [a.experiences.record(f"Deploy service {name} to the cluster", "success",
                                feedback=f"{name} needs its config map first.")
           for name in ("billing", "search", "mailer", "ledger")]
    memory, other = a.experiences, b.experiences  # both caught up now
    replay = memory.sync

    def another_worker_writes_first():
        memory.sync = replay  # once
        ids.append(other.record("Rotate the payments vault key", "success"))
        return replay()

    memory.sync = another_worker_writes_first
    try:
        a.reindex()
    finally:
        memory.sync = replay
    assert len(set(ids)) == 5
    indexed = {item for item in memory._collection().get(include=[])["ids"]}
    assert {i.split("#")[0] for i in indexed} >= set(ids), indexed  # Chroma holds them all
    for worker in (a, b):
        hits = until(lambda: worker.experiences.recall("deploy the billing service", k=1))
        assert hits[0].id == ids[0]


def test_a_write_just_as_chroma_stops_is_kept(tmp_path, postgres):
    """Team hunt, session 19: in the first second of a Chroma outage under load, 3 of 120
    experience writes were refused ("the index could not be read ... try again") and not
    stored: the worker caught up with another worker's write first, and that sync could not
    read the index. The other worker's change notice is made to arrive just then."""
    with two_workers(tmp_path, postgres) as (chroma, a, b, deployment):
        earlier = a.experiences.record("Renew the TLS certificate of the intranet", "success")
        b.experiences  # caught up
        chroma.stop()
        take = b.changes.take
        b.changes.take = lambda kind: [earlier] if kind == "experiences" else take(kind)
        try:
            kept = b.experiences.record("Drain the print queue of the third floor", "success")
        finally:
            b.changes.take = take
        chroma.start()
        hits = until(lambda: [h for h in a.experiences.recall(
            "drain the third floor print queue", k=2) if h.why != "keyword"])
        assert hits[0].id == kept
