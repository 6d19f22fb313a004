"""`ExperienceMemory.record_many`: the batched write path, and the batched import built on it.

Every test holds the batch to what `record` one by one gives: the same journal events (ids and
timestamps aside), the same folds of near-duplicates (into earlier records of the same batch
too), the same index and the same recall, while the batch is validated before anything is
written and costs one embedding call, one journal append and one upsert.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError
from skillbank.store.files import experiences as experience_journal  # the journal's appends
from skillbank.memories.experiences import portability as experience_portability
from skillbank.memories.experiences import ExperienceMemory
from skillbank.records import Lesson, Step


def open_bank(root: Path) -> Skillbank:
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          sync=False)
    bank.experiences.sync()
    return bank


@pytest.fixture
def banks(tmp_path):
    """Two empty banks: one written record by record, one with record_many."""
    one, many = open_bank(tmp_path / "one"), open_bank(tmp_path / "many")
    yield one.experiences, many.experiences
    one.close()
    many.close()


@pytest.fixture
def mem(tmp_path):
    bank = open_bank(tmp_path / "root")
    yield bank.experiences
    bank.close()


def journal(mem: ExperienceMemory) -> list[dict]:
    out = []
    for path in sorted(mem.folder.glob("*.jsonl")):
        out.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return out


def canonical(events: list[dict]) -> tuple[list[dict], dict[str, str]]:
    """Journal events with ids replaced by their order of first appearance, times dropped."""
    labels: dict[str, str] = {}

    def label(value):
        if isinstance(value, str) and value[:4] in ("exp-", "lsn-"):
            return labels.setdefault(value, f"#{len(labels)}")
        return value

    out = []
    for event in events:
        event = {k: v for k, v in event.items() if k != "at"}
        for key in ("id", "of"):
            if key in event:
                event[key] = label(event[key])
        if "record" in event:
            record = {k: v for k, v in event["record"].items() if k != "created"}
            record["id"], record["source"] = label(record["id"]), label(record["source"])
            event["record"] = record
        out.append(event)
    return out, labels


def index_state(mem: ExperienceMemory, labels: dict[str, str]) -> dict[str, dict]:
    """Every index entry's metadata, keyed by canonical id (times and journal offsets aside)."""
    state = {}
    for record_id in mem.index.ids():
        meta = dict(mem.index.metadata(record_id))
        meta.pop("created")
        meta.pop("loc")
        meta.pop("hash")  # of the journal line, which holds the id and the time
        meta["source"] = labels.get(meta.get("source"), meta.get("source"))
        meta.pop("parent")
        meta.pop("sb_owner", None)  # which root's index holds the entry: each bank its own
        state[labels[record_id]] = meta
    return state


def recalled(mem: ExperienceMemory, labels: dict[str, str], query: str, **kw) -> list[tuple]:
    return [(labels[h.id], round(h.score, 4), h.why)
            for h in mem.recall(query, k=10, count_use=False, **kw)]


RECORDS = [
    {"task": "Renew the TLS certificate", "outcome": "success", "feedback": "Use certbot renew.",
     "lessons": ["Check expiry dates weekly"], "tags": ["tls"]},
    {"task": "Deploy the billing service to staging", "outcome": "failure",
     "steps": [{"thought": "ship it", "action": "kubectl apply",
                "action_input": {"file": "billing.yaml"}, "observation": "migration missing"},
               Step(action="rollback", observation="ok")],
     "score": 0.2, "feedback": "Run migrations first.", "when_to_use": "Before deploys",
     "lessons": ["Run the migrations before the deploy",
                 Lesson(kind="failure_trigger", text="Never lock a hot table",
                        when_to_use="When altering big tables"),
                 {"text": "Check expiry dates weekly"}],
     "tags": ["deploy", "billing", "deploy", " "]},
    # a near-duplicate of the first (spacing and punctuation only): folded into it
    {"task": "Renew the TLS certificate ", "outcome": "success", "feedback": "use certbot renew",
     "lessons": ["Check expiry dates weekly."], "tags": ["tls"]},
    # same task, other namespace / outcome / feedback: new knowledge
    {"task": "Renew the TLS certificate", "outcome": "success", "feedback": "Use certbot renew.",
     "lessons": ["Check expiry dates weekly"], "namespace": "ops"},
    {"task": "Renew the TLS certificate", "outcome": "failure", "feedback": "Use certbot renew."},
    {"task": "Renew the TLS certificate", "outcome": "success",
     "feedback": "The DNS challenge failed."},
    {"messages": [{"role": "user", "content": "Summarise the incident report"},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "c1", "function": {"name": "read_file",
                                                "arguments": "{\"path\": \"incident.md\"}"}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "disk full at 03:00"},
                  {"role": "assistant", "content": "The disk filled up at 03:00."}],
     "outcome": "success", "when_to_use": "Incident write-ups"},
    {"task": "Write the weekly report", "outcome": "partial", "namespace": "ops"},
    # a second fold into the first, then one into a record of the batch in another namespace
    {"task": "Renew the TLS certificate", "outcome": "success", "feedback": "Use certbot renew.",
     "lessons": ["Check expiry dates weekly"]},
    {"task": "Write the weekly report", "outcome": "partial", "namespace": "ops"},
    {"task": "Vacuum the analytics database", "outcome": "unknown", "score": 3},
]

QUERIES = ["renew the tls certificate", "deploy billing migrations", "check expiry dates",
           "incident report disk", "weekly report", "hot table lock"]


def test_same_result_as_record_one_by_one(banks):
    one, many = banks
    ids_one = [one.record(**dict(r)) for r in RECORDS]
    ids_many = many.record_many([dict(r) for r in RECORDS])
    # the same positions fold into the same earlier records
    assert [ids_one.index(i) for i in ids_one] == [ids_many.index(i) for i in ids_many]
    assert ids_many[2] == ids_many[8] == ids_many[0] and ids_many[9] == ids_many[7]
    assert len(set(ids_many)) == len(RECORDS) - 3
    events_one, labels_one = canonical(journal(one))
    events_many, labels_many = canonical(journal(many))
    assert events_many == events_one
    assert [e["op"] for e in events_many].count("duplicate") == 3
    assert index_state(many, labels_many) == index_state(one, labels_one)
    for namespace in ("*", "ops", None):
        assert many.count(namespace) == one.count(namespace)
    assert many.get(ids_many[0]).duplicates == 2 and many.get(ids_many[7]).duplicates == 1
    assert many.get(ids_many[6]).task == "Summarise the incident report"
    for query in QUERIES:
        for namespace in (None, "ops"):
            assert recalled(many, labels_many, query, namespace=namespace) == \
                recalled(one, labels_one, query, namespace=namespace)
    # the full records read back the same
    for a, b in zip(ids_one, ids_many):
        left = one.get(a).model_dump(exclude={"id", "created", "usage", "source"})
        right = many.get(b).model_dump(exclude={"id", "created", "usage", "source"})
        assert left == right


def test_a_batch_after_existing_records_folds_into_them(banks):
    one, many = banks
    for mem in banks:
        mem.record(task="Rotate the API keys", outcome="success", feedback="Use the vault CLI.",
                   lessons=["Revoke the old key last"])
    batch = [{"task": "Rotate the API keys", "outcome": "success", "feedback": "use the vault CLI",
              "lessons": ["Revoke the old key last."]},
             {"task": "Rotate the API keys!", "outcome": "success", "feedback": "Use the vault CLI.",
              "lessons": ["Revoke the old key last"]},
             {"task": "Rotate the database passwords", "outcome": "success",
              "lessons": ["Revoke the old key last"]}]  # its lesson repeats an indexed lesson
    ids_one = [one.record(**r) for r in batch]
    ids_many = many.record_many(batch)
    first = many.list(kind="experience")[-1].id
    assert ids_many[:2] == [first, first]
    assert many.get(first).duplicates == 2
    assert canonical(journal(many))[0] == canonical(journal(one))[0]
    assert many.count(kind="lesson") == one.count(kind="lesson") == 1


def test_lessons_repeated_inside_one_batch_are_stored_once(mem):
    ids = mem.record_many([
        {"task": "Upgrade the Postgres cluster", "outcome": "success",
         "lessons": ["Take a snapshot first", "take a snapshot first!"]},
        {"task": "Upgrade the Redis cluster", "outcome": "success",
         "lessons": ["Take a snapshot first"]},
        {"task": "Upgrade the Kafka cluster", "outcome": "failure",
         "lessons": ["Take a snapshot first"]},  # another outcome: its own lesson record
    ])
    assert len(set(ids)) == 3
    lessons = mem.list(kind="lesson")
    assert sorted((l.outcome, l.source) for l in lessons) == [("failure", ids[2]),
                                                              ("success", ids[0])]


def test_namespaces_are_respected(mem):
    task = {"task": "Clean up the staging buckets", "outcome": "success",
            "feedback": "Empty them before deleting.", "lessons": ["List the buckets first"]}
    ids = mem.record_many([{**task, "namespace": "a"}, {**task, "namespace": "b"}, task,
                           {**task, "namespace": "a"}])
    assert len(set(ids)) == 3 and ids[3] == ids[0]
    assert mem.count("a") == mem.count("b") == mem.count() == 2
    for namespace, expected in (("a", ids[0]), ("b", ids[1]), (None, ids[2])):
        hits = mem.recall("clean up staging buckets", namespace=namespace, count_use=False)
        assert hits[0].id == expected
        assert all(h.record.namespace == (namespace or "default") for h in hits)
        assert mem.get(expected).namespace == (namespace or "default")
    assert mem.get(ids[0]).duplicates == 1 and mem.get(ids[1]).duplicates == 0


def test_one_embedding_call_one_append_one_upsert(mem, monkeypatch):
    embedding = mem.index.embedding_function
    calls = {"embed": [], "append": 0, "upsert": []}
    real_embed, real_upsert = embedding.embed, mem.index.upsert
    real_append = experience_journal.append_line

    def embed(texts):
        calls["embed"].append(len(texts))
        return real_embed(texts)

    def append(path, line):
        calls["append"] += 1
        return real_append(path, line)

    def upsert(items):
        calls["upsert"].append(len(items))
        return real_upsert(items)

    monkeypatch.setattr(embedding, "embed", embed)
    monkeypatch.setattr(experience_journal, "append_line", append)
    monkeypatch.setattr(mem.index, "upsert", upsert)
    records = [{"task": f"Migrate service {i} to the new cluster {i * 7}", "outcome": "success",
                "lessons": [f"Drain node pool {i} first"]} for i in range(40)]
    records.append(dict(records[0]))  # a duplicate: embedded, never stored twice
    ids = mem.record_many(records)
    assert ids[-1] == ids[0] and len(set(ids)) == 40
    # the duplicate's texts repeat the first record's: each distinct text is embedded once
    assert calls == {"embed": [80], "append": 1, "upsert": [80]}
    assert mem.count() == 80 and len(journal(mem)) == 81


def test_invalid_records_are_named_and_nothing_is_written(mem):
    mem.record(task="Existing record", outcome="success")
    before = {p.name: p.read_bytes() for p in mem.folder.iterdir() if p.is_file()}
    embedded = mem.index.embedding_function.calls
    good = {"task": "A fine record", "outcome": "success"}
    cases = [
        ([good, good, {"task": "t", "outcome": "comparative"}], r"records\[2\]: .*outcome"),
        ([good, {"task": ""}], r"records\[1\]: task is empty"),
        ([{"task": "t", "steps": [42]}], r"records\[0\]: steps\[0\]"),
        ([good, {"taks": "typo"}], r"records\[1\]: .*taks"),
        ([good, {"task": "t", "distill": True, "bogus": 1}], r"records\[1\]: .*bogus"),
        ([good, "Deploy the thing"], r"records\[1\]: is str"),
        ([good, {"task": "lone \ud800 surrogate"}], r"(?i)records\[1\]: .*unicode"),
        ([good, {"task": "t", "namespace": ""}], r"records\[1\]: invalid namespace"),
    ]
    for records, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            mem.record_many(records)
    for bad in ("not a list", {"task": "a dict"}, 42):
        with pytest.raises(InvalidInputError, match="records must be a list"):
            mem.record_many(bad)
    # the underlying findings travel with the error, as `record`'s do
    with pytest.raises(InvalidInputError) as caught:
        mem.record_many([good, {"task": "t", "outcome": "comparative"}])
    assert caught.value.findings and caught.value.findings[0].code == "invalid-outcome"
    after = {p.name: p.read_bytes() for p in mem.folder.iterdir() if p.is_file()}
    assert after == before
    assert mem.index.embedding_function.calls == embedded
    assert mem.count("*") == 1
    assert mem.record_many([]) == [] and mem.record_many(iter([])) == []
    assert mem.count("*") == 1


def test_generators_and_defaults(mem):
    ids = mem.record_many(dict(task=f"Task number {i} of the generator") for i in range(3))
    assert len(ids) == 3
    assert {mem.get(i).outcome for i in ids} == {"unknown"}
    assert [mem.get(i).task for i in ids] == [f"Task number {i} of the generator" for i in range(3)]


def test_reindex_after_record_many_gives_the_same_index(mem):
    ids = mem.record_many([dict(r) for r in RECORDS])
    mem.record_many([dict(r) for r in RECORDS[:3]])  # a second batch folds into the first
    assert mem.get(ids[0]).duplicates == 4
    snapshot = {i: dict(mem.index.metadata(i)) for i in mem.index.ids()}
    results = {q: [(h.id, h.score) for h in mem.recall(q, count_use=False)] for q in QUERIES}
    calls = mem.index.embedding_function.calls
    assert mem.sync().embedded == 0  # the checkpoint moved past the batch
    assert mem.index.embedding_function.calls == calls
    mem.index.reset()
    report = mem.sync()
    assert len(report.added) == len(snapshot) and not report.skipped
    assert {i: dict(mem.index.metadata(i)) for i in mem.index.ids()} == snapshot
    assert {q: [(h.id, h.score) for h in mem.recall(q, count_use=False)]
            for q in QUERIES} == results


def test_crash_after_the_journal_append_is_repaired_by_sync(mem, monkeypatch):
    def crash(items):
        raise RuntimeError("power cut")

    monkeypatch.setattr(mem.index, "upsert", crash)
    with pytest.raises(RuntimeError):
        mem.record_many([{"task": f"Batch task {i} about caching layers"} for i in range(5)])
    monkeypatch.undo()
    assert mem.count() == 0 and len(journal(mem)) == 5
    report = mem.sync()
    assert len(report.added) == 5 and report.embedded == 5
    assert mem.count() == 5


class ScriptedDistiller:
    def lessons_from_experience(self, experience, *, similar=()):
        return [Lesson(kind="note", text=f"Lesson from: {experience.task}")]


def test_distill_flag_per_record(tmp_path):
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False, distiller=ScriptedDistiller())
    try:
        mem = bank.experiences
        ids = mem.record_many([{"task": "Tune the cache", "outcome": "success", "distill": True},
                               {"task": "Tune the queue", "outcome": "success"}])
        lessons = mem.list(kind="lesson")
        assert [(l.source, l.task) for l in lessons] == [(ids[0], "Lesson from: Tune the cache")]
    finally:
        bank.close()


# ------------------------------------------------------------------------------------ import


def exported(tmp_path: Path) -> Path:
    """An export with lessons, duplicates, two namespaces, a retired record and a distillation."""
    bank = open_bank(tmp_path / "source")
    try:
        mem = bank.experiences
        mem.record_many([dict(r) for r in RECORDS])
        for i in range(12):
            mem.record(task=f"Rebuild search index shard {i} for tenant {i * 13}",
                       outcome="success" if i % 3 else "failure", feedback=f"took {i} minutes",
                       lessons=["Pause the writers while rebuilding"])
        eid = mem.record(task="Debug the memory leak", outcome="failure", feedback="heap dumps")
        mem.distill(eid)
        for _ in range(5):
            mem.usage.record(eid, use=1)  # recalled five times, never helped
        mem.mark(eid, helped=False)
        assert mem.prune(dry_run=False)
        path = tmp_path / "export.jsonl"
        mem.export(path)
        return path
    finally:
        bank.close()


def test_import_in_batches_equals_import_line_by_line(tmp_path, monkeypatch):
    path = exported(tmp_path)
    # the same file twice, shuffled in the second copy: every line of it folds or is renamed
    lines = path.read_text().splitlines()
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text("\n".join(lines + lines[::-1]) + "\n")
    results = []
    for size in (1, 4, 256):
        monkeypatch.setattr(experience_portability, "IMPORT_BATCH", size)
        bank = open_bank(tmp_path / f"import-{size}")
        try:
            mem = bank.experiences
            report = mem.import_(doubled)
            events, labels = canonical(journal(mem))
            results.append((len(report.added), report.unchanged, report.skipped, events,
                            index_state(mem, labels),
                            [recalled(mem, labels, q, namespace=ns)
                             for q in QUERIES for ns in (None, "ops")]))
            # the ids in the file were kept, and a retired record stays retired
            originals = [json.loads(l) for l in lines]
            assert {o["id"] for o in originals} <= set(report.added)
            retired = [o["id"] for o in originals if o["status"] == "retired"]
            assert retired and all(mem.get(i).status == "retired" for i in retired)
        finally:
            bank.close()
    assert results[0] == results[1] == results[2]
    # the second copy is the same records under the same ids: all skipped, the retired one
    # too (it used to be stored again under a new id on every import)
    added, unchanged = results[0][:2]
    assert (added, unchanged) == (len(lines), len(lines))


def test_import_keeps_renames_and_follows_sources_inside_one_batch(mem, tmp_path):
    taken = mem.record(task="Vacuum the analytics database", outcome="success")
    path = tmp_path / "in.jsonl"
    rows = [
        {"id": "exp-aaaaaaaaaaaa", "task": "Resize the worker pool", "outcome": "success",
         "lessons": ["Scale down slowly"]},
        {"id": "lsn-bbbbbbbbbbbb", "kind": "lesson", "task": "Scale down slowly",
         "lessons": [{"text": "Scale down slowly"}], "source": "exp-aaaaaaaaaaaa",
         "outcome": "success"},
        # the same id again with other content: kept once, then renamed
        {"id": "exp-aaaaaaaaaaaa", "task": "Rotate the TLS keys", "outcome": "failure"},
        {"id": "lsn-cccccccccccc", "kind": "lesson", "task": "Rotate keys before expiry",
         "source": "exp-aaaaaaaaaaaa", "outcome": "failure"},
        {"id": taken, "task": "A different task with a taken id", "outcome": "success"},
        {"task": "bad outcome", "outcome": "comparative"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    report = mem.import_(path)
    assert len(report.added) == 5 and report.skipped == ["in.jsonl:6"]
    assert "exp-aaaaaaaaaaaa" in report.added and "lsn-bbbbbbbbbbbb" in report.added
    assert mem.get("exp-aaaaaaaaaaaa").task == "Resize the worker pool"
    assert mem.get("lsn-bbbbbbbbbbbb").source == "exp-aaaaaaaaaaaa"
    renamed = next(e for e in mem.list(kind="experience") if e.task == "Rotate the TLS keys")
    assert renamed.id != "exp-aaaaaaaaaaaa"
    # a lesson after the renamed line follows the new id, as it did line by line
    assert mem.get("lsn-cccccccccccc").source == renamed.id
    assert mem.get(taken).task == "Vacuum the analytics database"
    # the file carries the first experience's lesson itself: no second lesson record
    assert [l.task for l in mem.list(kind="lesson")].count("Scale down slowly") == 1


def test_cli_import_batches_and_reports_as_before(tmp_path, monkeypatch):
    from skillbank.cli import app

    for name in list(os.environ):
        if name.startswith("SKILLBANK_") and name != "SKILLBANK_MODEL_DIR":
            monkeypatch.delenv(name)
    monkeypatch.setenv("SKILLBANK_EMBEDDING", "hash")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(experience_portability, "IMPORT_BATCH", 7)
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps({"task": f"Imported task {i} about topic {i * 31}",
                                        "outcome": "success"}) + "\n" for i in range(30)))
    runner = CliRunner()
    root = str(tmp_path / "root")
    result = runner.invoke(app, ["--json", "--root", root, "experiences", "import", str(path)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["file"] == str(path) and len(data["result"]["added"]) == 30
    again = runner.invoke(app, ["--root", root, "experiences", "import", str(path)])
    said = " ".join(again.stdout.split())
    assert again.exit_code == 0 and "imported" in said and str(path) in said
    listed = runner.invoke(app, ["--json", "--root", root, "experiences", "list", "--limit", "100"])
    assert len(json.loads(listed.stdout)) == 30


def test_distill_must_be_a_real_boolean(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        with pytest.raises(InvalidInputError, match=r"records\[1\].*distill"):
            bank.experiences.record_many([{"task": "a", "outcome": "success"},
                                          {"task": "b", "outcome": "success", "distill": "no"}])
        with pytest.raises(InvalidInputError, match="distill"):
            bank.experiences.record(task="c", outcome="success", distill="yes")
        assert bank.experiences.count() == 0  # nothing was written
