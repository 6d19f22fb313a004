"""A long conversation's journal grows linearly (agents hunt, session 18, defect 5).

Each turn of a thread appended the whole merged record again as an `add` event: one LangChain
thread with ~300-character answers wrote 2.4 MiB of journal after 100 turns and 15 MiB after
250, and every turn past the 500-step cap still appended ~150 KiB. A later turn now appends an
`update` delta on the version it read (`skillbank.store.deltas`), and every reader folds it:
reads after a reopen, the replay after a crash, forget, export/import, review, a client of
another process, team mode's PostgreSQL log and the migration into it.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from chromadb.errors import InternalError

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

GOAL = "Refine the onboarding guide"


def turn(number: int) -> list[dict[str, str]]:
    """One turn: a user message and a ~300-character answer, words unique to the turn."""
    return [{"role": "user", "content": f"Turn {number}: refine section quux{number}x"},
            {"role": "assistant", "content": f"Answer {number} zork{number}q " + "details " * 35}]


def talk(bank, turns: range, thread: str = "long", **kw) -> str:
    eid = ""
    for number in turns:
        eid = bank.experiences.record_messages(turn(number), task=GOAL, thread=thread,
                                               followup=number > 0, **kw)
    return eid


def journal_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in (root / "experiences").glob("*.jsonl"))


def journal_text(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((root / "experiences").glob("*.jsonl")))


def same(a, b) -> None:
    """Two reads of one record agree on everything a turn writes."""
    assert [s.model_dump() for s in a.steps] == [s.model_dump() for s in b.steps]
    assert (a.task, a.outcome, a.score, a.feedback, a.tags, a.status) == \
        (b.task, b.outcome, b.score, b.feedback, b.tags, b.status)
    assert [l.model_dump() for l in a.lessons] == [l.model_dump() for l in b.lessons]


def open_hash(root: Path, **kw) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False, **kw)


# -- size -----------------------------------------------------------------------------------------

def test_a_long_threads_journal_grows_linearly_not_quadratically(hash_bank):
    talk(hash_bank, range(50))
    fifty = journal_bytes(hash_bank.root)
    talk(hash_bank, range(50, 200))
    two_hundred = journal_bytes(hash_bank.root)
    # Whole records every turn made 4x the turns ~16x the bytes. Now the journal holds the
    # deltas (one copy of the conversation) and whole copies written at doubling sizes (at
    # most two more): 2-3 copies whatever the turn, so 4x the turns is 2.7x to 6x the bytes.
    assert two_hundred < 7 * fifty
    [record] = hash_bank.experiences.list(kind="experience")
    assert two_hundred < 4 * len(record.model_dump_json())
    # Past the 500-step cap the record is rewritten in the middle (its fit drops steps), and a
    # turn still appends a delta, not the whole ~70 KiB record.
    talk(hash_bank, range(200, 260))
    capped = journal_bytes(hash_bank.root)
    talk(hash_bank, range(260, 300))
    [record] = hash_bank.experiences.list(kind="experience")
    assert len(record.steps) == 500 and "omitted" in (record.steps[250].thought or "")
    whole = len(record.model_dump_json())
    assert journal_bytes(hash_bank.root) - capped < 40 * whole / 5  # 40 turns, whole: 40x
    events = [json.loads(l) for l in journal_text(hash_bank.root).splitlines()]
    assert sum(e.get("op") == "update" for e in events) > 200


# -- reading back -------------------------------------------------------------------------------

@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client"])
def test_a_thread_read_back_after_a_reopen_equals_the_record_written(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        talk(bank, range(120))
        eid = bank.experiences.record_messages(
            turn(120), task=GOAL, thread="long", followup=True, score=0.9,
            feedback="Keep each section short.", lessons=["Split long sections in two."])
        talk(bank, range(121, 269))  # past the step cap: the fit drops middle steps
        assert bank.experiences.record_messages(turn(269), task=GOAL, thread="long",
                                                followup=True, outcome="success") == eid
        written = bank.experiences.get(eid)
    assert written.outcome == "success" and written.lessons and len(written.steps) == 500
    with open_hash(tmp_path / "root") as bank:
        same(bank.experiences.get(eid), written)
        assert bank.experiences._get_from_journal(eid).steps == written.steps  # the scan
        bank.reindex()  # a full replay into a new collection
        same(bank.experiences.get(eid), written)


def test_an_old_journal_of_whole_records_reads_as_before(tmp_path):
    """Journals written before: every turn an `add` of the whole record flagged "update"."""
    folder = tmp_path / "root" / "experiences"
    folder.mkdir(parents=True)
    record = {"id": "exp-0123456789ab", "task": GOAL, "namespace": "default", "thread": "t",
              "created": "2025-01-02T03:04:05+00:00", "steps": [{"thought": "one"}]}
    from skillbank.records import Experience

    def stored(raw):  # a record as older versions wrote it (`_dump`)
        return Experience.model_validate(raw).model_dump(
            mode="json", exclude={"usage", "status", "duplicates"})

    lines = [{"op": "add", "record": stored(record)},
             {"op": "add", "record": stored({**record, "steps": [{"thought": "one"},
                                                                 {"thought": "two"}]}),
              "update": True},
             {"op": "add", "record": stored({**record, "steps": [{"thought": "one"},
                                                                 {"thought": "two"}],
                                             "feedback": "Short."}), "update": True}]
    (folder / "2025-01.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines))
    with open_hash(tmp_path / "root") as bank:
        got = bank.experiences.get("exp-0123456789ab")
        assert [s.thought for s in got.steps] == ["one", "two"] and got.feedback == "Short."
        # The next turn continues it with a delta on the old month file's last version.
        assert bank.experiences.record_messages([{"role": "user", "content": "three"}],
                                                task=GOAL, thread="t", followup=True) == got.id
        steps = bank.experiences.get(got.id).steps
        assert [s.thought for s in steps[:2]] == ["one", "two"] and len(steps) == 3
    newest = sorted(folder.glob("*.jsonl"))[-1].read_text().splitlines()[-1]
    assert '"op":"update"' in newest and '"base":"2025-01.jsonl:' in newest
    with open_hash(tmp_path / "root") as bank:
        assert len(bank.experiences.get(got.id).steps) == 3


# -- forget means gone --------------------------------------------------------------------------

@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client"])
def test_forget_of_a_long_thread_leaves_none_of_its_text_in_the_journal(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        eid = talk(bank, range(80))
        bank.experiences.record_messages(turn(80), task=GOAL, thread="long", followup=True,
                                         lessons=["Plover the glossary first."])
        assert b'"op":"update"' in journal_text(tmp_path / "root")
        bank.forget(eid)
    data = journal_text(tmp_path / "root")
    for number in range(81):
        assert f"quux{number}x".encode() not in data and f"zork{number}q".encode() not in data
    assert b"Plover" not in data and GOAL.encode() not in data


def test_a_forgotten_lesson_leaves_the_threads_later_versions_too(hash_bank):
    """The lesson's text is in an update's `set`: it leaves it, and the index's record."""
    talk(hash_bank, range(3))
    eid = hash_bank.experiences.record_messages(turn(3), task=GOAL, thread="long", followup=True,
                                                lessons=["Plover the glossary first."])
    talk(hash_bank, range(4, 8))  # later deltas that do not set lessons
    lines = [json.loads(l) for l in journal_text(hash_bank.root).splitlines()]
    assert any(e["op"] == "update" and "Plover" in json.dumps(e.get("set")) for e in lines)
    assert lines[-1]["op"] == "update" and "lessons" not in lines[-1].get("set", {})
    [lesson] = [r for r in hash_bank.experiences.list(kind="lesson") if r.source == eid]
    hash_bank.forget(lesson.id)
    assert b"Plover" not in journal_text(hash_bank.root)
    record = hash_bank.experiences.get(eid)
    assert record.lessons == [] and len(record.steps) == 16
    hits = hash_bank.experiences.recall("plover glossary", kind="experience")
    assert all("Plover" not in l.text for h in hits for l in h.record.lessons)


# -- crash and replay ---------------------------------------------------------------------------

def test_a_crash_between_a_delta_append_and_the_index_write_is_repaired_by_the_next_sync(
        tmp_path, monkeypatch):
    root = tmp_path / "root"
    with open_hash(root) as bank:
        memory = bank.experiences
        eid = talk(bank, range(10))
        original = memory.index.upsert

        def disk_full(*args, **kwargs):
            raise InternalError("Error in compaction: Failed to apply logs to the metadata segment")

        monkeypatch.setattr(memory.index, "upsert", disk_full)
        assert memory.record_messages(turn(10), task=GOAL, thread="long", followup=True) == eid
        assert memory.index_behind  # the delta is in the journal, the index is behind
        last = json.loads(journal_text(root).splitlines()[-1])
        assert last["op"] == "update" and last["id"] == eid
        monkeypatch.setattr(memory.index, "upsert", original)
        memory.sync()
        assert "quux10x" in memory.get(eid).steps[-2].observation
        written = memory.get(eid)
    # A torn last line (a crash mid-append) is never applied, and the next turn still reads.
    path = sorted((root / "experiences").glob("*.jsonl"))[-1]
    with path.open("ab") as handle:
        handle.write(b'{"op":"update","id":"' + eid.encode() + b'","base":"')
    with open_hash(root) as bank:
        same(bank.experiences.get(eid), written)
        talk(bank, range(11, 13))
        assert len(bank.experiences.get(eid).steps) == len(written.steps) + 4


# -- export / import, review ---------------------------------------------------------------------

@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client"])
def test_export_and_import_of_a_long_thread(tmp_path, remote):
    out = tmp_path / "out.jsonl"
    with bank_for(tmp_path, remote) as bank:
        eid = talk(bank, range(90))
        bank.experiences.export(out)
        written = bank.experiences.get(eid)
    with open_hash(tmp_path / "other") as other:
        assert eid in other.experiences.import_(out).added
        same(other.experiences.get(eid), written)


def test_an_untrusted_thread_stays_pending_with_every_turn_until_approved(hash_bank):
    eid = talk(hash_bank, range(12), trusted=False)
    [pending] = hash_bank.experiences.pending()
    assert pending.id == eid and pending.status == "pending" and len(pending.steps) == 24
    hash_bank.experiences.approve(eid)
    hash_bank.experiences.sync()
    record = hash_bank.experiences.get(eid)
    assert record.status == "active" and len(record.steps) == 24


# -- team mode ------------------------------------------------------------------------------------

def _event_bytes(url: str, deployment: str, record_id: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return int(conn.execute(
            "SELECT coalesce(sum(octet_length(event::text)), 0) FROM sb_experience_events "
            "WHERE deployment = %s AND (record_id = %s OR event::text LIKE %s)",
            (deployment, record_id, f"%{record_id}%")).fetchone()[0])


def test_team_mode_logs_deltas_and_the_other_worker_reads_the_whole_thread(tmp_path, postgres,
                                                                           chroma_server):
    pytest.importorskip("psycopg")
    from team_worker import open_bank, until

    deployment = uuid.uuid4().hex[:16]
    a = open_bank(tmp_path / "machine-a", chroma_server, postgres.url, deployment)
    b = open_bank(tmp_path / "machine-b", chroma_server, postgres.url, deployment)
    try:
        eid = talk(a, range(40))
        forty = _event_bytes(postgres.url, deployment, eid)
        talk(a, range(40, 160))
        assert _event_bytes(postgres.url, deployment, eid) < 4 * forty + 4096
        written = a.experiences.get(eid)
        assert until(lambda: len(b.experiences.get(eid).steps) == len(written.steps), 30)
        same(b.experiences.get(eid), written)
        b.reindex()  # a full replay of PostgreSQL's log into a new collection
        same(b.experiences.get(eid), written)
        a.forget(eid)
        assert _event_bytes(postgres.url, deployment, eid) < 200  # the ids-only forget event
    finally:
        b.close()
        a.close()


def test_migrating_a_root_with_a_long_thread_brings_the_whole_record(tmp_path, postgres,
                                                                     chroma_server):
    pytest.importorskip("psycopg")
    from skillbank.team.migrate import migrate_root

    with open_hash(tmp_path / "laptop") as bank:
        eid = talk(bank, range(30))
        written = bank.experiences.get(eid)
    deployment = uuid.uuid4().hex[:16]
    migrate_root(tmp_path / "laptop", postgres.url, deployment=deployment)
    worker = open_hash(tmp_path / "worker", chroma_url=chroma_server, database_url=postgres.url,
                       deployment=deployment)
    try:
        same(worker.experiences.get(eid), written)
        talk(worker, range(30, 33))  # the deployment's own next turns are deltas there
        assert len(worker.experiences.get(eid).steps) == len(written.steps) + 6
    finally:
        worker.close()
