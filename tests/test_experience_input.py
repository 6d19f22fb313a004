"""Experience memory refuses lax input with InvalidInputError and a useful message (issue #11).

Each case was accepted, or failed with a raw Python error, before: `record(namespace="*")` stored
a record in a namespace named "*", `export()` to a directory raised IsADirectoryError, importing
the same export again stored a new retired copy each time (and counted active lines as
duplicates), `mark(helped="no")` counted as helpful, `recall(min_score="x")` raised a bare
ValueError.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError


@pytest.fixture
def mem(tmp_path):
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False)
    bank.experiences.sync()
    yield bank.experiences
    bank.close()


def test_the_every_namespace_wildcard_is_not_a_namespace_to_write(mem):
    with pytest.raises(InvalidInputError, match=r'"\*" means every namespace'):
        mem.record(task="Rotate the keys", outcome="success", namespace="*")
    with pytest.raises(InvalidInputError, match=r"records\[0\].*every namespace"):
        mem.record_many([{"task": "Rotate the keys", "namespace": "*"}])
    with pytest.raises(InvalidInputError, match="every namespace"):
        mem.recall("Rotate the keys", namespace="*")
    assert mem.count("*") == 0
    mem.record(task="Rotate the keys", outcome="success", namespace="ops")
    assert mem.count("*") == 1 and len(mem.list(namespace="*")) == 1  # still lists everything


def test_export_to_a_directory_is_refused_with_a_file_to_use(mem, tmp_path):
    mem.record(task="Rotate the keys", outcome="success")
    folder = tmp_path / "exports"
    folder.mkdir()
    with pytest.raises(InvalidInputError, match=r"is a directory.*experiences\.jsonl"):
        mem.export(folder)
    assert list(folder.iterdir()) == []
    with pytest.raises(InvalidInputError, match="is a directory"):
        mem.import_(folder)
    with pytest.raises(InvalidInputError, match="file path"):
        mem.export(None)  # type: ignore[arg-type]
    assert mem.export(folder / "experiences.jsonl") == 1


def test_importing_the_same_export_again_adds_nothing(mem, tmp_path):
    first = mem.record(task="Deploy the billing service", outcome="failure",
                       feedback="forgot the migration", lessons=["Run migrations first"])
    mem.record(task="Renew the TLS certificate", outcome="success", feedback="certbot renew")
    for _ in range(5):
        mem.usage.record(first, use=1)
    mem.mark(first, helped=False)
    assert [r.id for r in mem.prune(dry_run=False)] == [first]
    path = tmp_path / "export.jsonl"
    lines = mem.export(path)
    before = [(r.id, r.status, r.duplicates)
              for r in mem.list(namespace="*", include_retired=True, limit=100)]
    for _ in range(3):
        report = mem.import_(path)
        assert report.added == [] and report.unchanged == lines and report.skipped == []
    after = [(r.id, r.status, r.duplicates)
             for r in mem.list(namespace="*", include_retired=True, limit=100)]
    assert after == before  # no retired copy, no duplicate count raised


def test_a_changed_record_under_a_known_id_is_still_imported(mem, tmp_path):
    eid = mem.record(task="Rotate the keys", outcome="success")
    path = tmp_path / "other.jsonl"
    path.write_text(f'{{"id": "{eid}", "task": "Rotate the database password", '
                    '"outcome": "failure"}\n')
    report = mem.import_(path)
    assert len(report.added) == 1 and report.added[0] != eid  # a new id: this one is taken
    assert mem.get(eid).task == "Rotate the keys"


def test_mark_needs_a_real_boolean(mem):
    eid = mem.record(task="Rotate the keys", outcome="success")
    for helped in ("no", "false", 0, 1, None):
        with pytest.raises(InvalidInputError, match="helped must be true or false"):
            mem.mark(eid, helped=helped)  # type: ignore[arg-type]
    usage = mem.get(eid).usage
    assert usage.successes == usage.failures == 0  # nothing was counted
    assert mem.mark(eid, helped=False).usage.failures == 1


@pytest.mark.parametrize("k", [-1, 2.5, True, "3", None, 10_000])
def test_recall_k_must_be_an_integer_in_range(mem, k):
    mem.record(task="Rotate the keys", outcome="success")
    with pytest.raises(InvalidInputError, match="k must be an integer"):
        mem.recall("Rotate the keys", k=k)  # type: ignore[arg-type]


@pytest.mark.parametrize("field,value", [("min_score", "x"), ("min_score", float("nan")),
                                         ("min_score", True), ("count_use", "no")])
def test_recall_options_are_checked(mem, field, value):
    mem.record(task="Rotate the keys", outcome="success")
    with pytest.raises(InvalidInputError, match=field):
        mem.recall("Rotate the keys", **{field: value})


def test_list_and_prune_flags_are_checked(mem):
    with pytest.raises(InvalidInputError, match="limit"):
        mem.list(limit=True)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="status"):
        mem.list(status="deleted")
    with pytest.raises(InvalidInputError, match="dry_run"):
        mem.prune(dry_run="no")  # type: ignore[arg-type]


def test_nothing_is_written_by_a_refused_call(mem, tmp_path: Path):
    with pytest.raises(InvalidInputError):
        mem.record(task="Rotate the keys", namespace="*")
    assert not any(p.stat().st_size for p in mem.folder.glob("*.jsonl"))
