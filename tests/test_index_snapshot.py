"""The keyword snapshot: a fresh process reuses the last one's mirror and BM25, never a stale one."""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.index import _Keyword

QUERY = "deploy the billing service to staging"


def _open(root, **kw):
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False, **kw)


def _fill(bank, n=120):
    # Distinct words per task: near-identical texts give Chroma equal distances, and which of
    # those ties it returns differs between its in-memory index and the one it loads from disk
    # (a reopen releases Chroma's cached system, as a new process would).
    import random

    from workers.common import words

    rng = random.Random(3)
    return bank.experiences.record_many(
        [{"task": f"deploy the {words(rng, 3)} service {i} to staging", "feedback": f"note {i}",
          "outcome": "success" if i % 3 else "failure"} for i in range(n)]
        + [{"task": "deploy the billing service to staging", "outcome": "failure",
            "feedback": "forgot the migration"}])


def _recall(bank):
    # Ids in rank order: scores also carry the usage prior, which moves when buffered use
    # counts reach the files at close, independently of the keyword side under test here.
    return [h.id for h in bank.experiences.recall(QUERY, k=5, count_use=False)]


def _folder(root):
    return root / ".cache" / "index" / "skillbank_experiences"


class _NoRebuild:
    """Fails the test if BM25 is built from texts (what the snapshot is there to skip)."""

    def __init__(self, monkeypatch):
        self.builds = 0
        original = _Keyword.__init__

        def counting(keyword, ids, texts):
            self.builds += 1
            original(keyword, ids, texts)

        monkeypatch.setattr(_Keyword, "__init__", counting)


def test_a_fresh_process_restores_the_same_keyword_side(tmp_path, monkeypatch):
    root = tmp_path / "root"
    with _open(root) as bank:
        _fill(bank)
        before = _recall(bank)
    assert (_folder(root) / "CURRENT").exists() and not (_folder(root) / "DIRTY").exists()

    builds = _NoRebuild(monkeypatch)
    with _open(root) as bank:
        index = bank.index("experiences")
        monkeypatch.setattr(index._collection, "get",
                            lambda *a, **k: pytest.fail("paged Chroma"))
        assert _recall(bank) == before
    assert builds.builds == 0  # neither the experience BM25 nor a mirror read from Chroma


def test_writes_after_a_restore_are_searchable_now_and_in_the_next_process(tmp_path):
    root = tmp_path / "root"
    with _open(root) as bank:
        _fill(bank)
        _recall(bank)
    with _open(root) as bank:
        _recall(bank)  # restored
        new = bank.experiences.record(task="deploy the billing service to staging twice",
                                      outcome="success", feedback="ran the migration first")
        assert (_folder(root) / "DIRTY").exists()  # until this process saves
        assert new in [h.id for h in bank.experiences.recall(QUERY, k=5, count_use=False)]
    assert not (_folder(root) / "DIRTY").exists()
    with _open(root) as bank:
        restored = _recall(bank)
        assert new in restored
        # This process wrote after its BM25 was built: only the mirror was saved, never the
        # in-process delta approximation, so results equal a build from scratch.
        assert not bank.index("experiences")._live.changed
    import shutil

    shutil.rmtree(root / ".cache")
    with _open(root) as bank:
        assert _recall(bank) == restored


def test_a_crash_after_a_write_leaves_the_snapshot_unused(tmp_path, monkeypatch):
    root = tmp_path / "root"
    with _open(root) as bank:
        _fill(bank)
        _recall(bank)
    crashed = _open(root)
    _recall(crashed)
    new = crashed.experiences.record(task="deploy the billing service to staging at night",
                                     outcome="failure", feedback="the pager was off")
    crashed._owner_lock.release()  # the process dies: no close, no save
    assert (_folder(root) / "DIRTY").exists()

    builds = _NoRebuild(monkeypatch)
    with _open(root) as bank:
        found = [h.id for h in bank.experiences.recall(QUERY, k=10, count_use=False)]
    assert new in found and builds.builds >= 1  # rebuilt from Chroma, the write included
    assert not (_folder(root) / "DIRTY").exists()  # and saved afresh


def test_a_reindexed_collection_or_a_changed_count_is_not_restored(tmp_path, monkeypatch):
    root = tmp_path / "root"
    with _open(root) as bank:
        ids = _fill(bank)
        _recall(bank)
    with _open(root) as bank:  # an outside change the snapshot cannot know about
        bank.index("experiences")._collection.delete(ids=[ids[0]])
        bank.index("experiences")._snapshot = None  # ...made behind skillbank's back
    builds = _NoRebuild(monkeypatch)
    with _open(root) as bank:
        assert bank.index("experiences").count() == len(ids) - 1
        _recall(bank)
    assert builds.builds >= 1
    with _open(root) as bank:
        bank.reindex()
        after = _recall(bank)
    with _open(root) as bank:
        assert _recall(bank) == after


def test_a_damaged_snapshot_is_ignored_and_replaced(tmp_path):
    root = tmp_path / "root"
    with _open(root) as bank:
        _fill(bank)
        before = _recall(bank)
    current = (_folder(root) / "CURRENT").read_bytes()
    import orjson

    snap = _folder(root) / orjson.loads(current)["snapshot"]
    (snap / "mirror.json").write_bytes(b"\x00not json")
    with _open(root) as bank:
        assert _recall(bank) == before
    with _open(root) as bank:
        assert _recall(bank) == before
    assert (_folder(root) / "CURRENT").read_bytes() != current


def test_no_snapshot_when_other_processes_may_write(tmp_path, chroma_server):
    root = tmp_path / "root"
    with _open(root, chroma_url=chroma_server, namespace="snapshot-test") as bank:
        _fill(bank, n=5)
        _recall(bank)
        assert bank.index("experiences")._snapshot is None
    assert not (root / ".cache").exists()


def test_a_failed_write_is_never_snapshotted(tmp_path, monkeypatch):
    root = tmp_path / "root"
    with _open(root) as bank:
        _fill(bank)
        _recall(bank)
    with _open(root) as bank:
        index = bank.index("experiences")
        _recall(bank)

        def broken(**kwargs):
            raise RuntimeError("disk full")

        monkeypatch.setattr(index._collection, "upsert", broken)
        with pytest.raises(Exception):
            bank.experiences.record(task="deploy the billing service once more", outcome="success")
        monkeypatch.undo()
    assert (_folder(root) / "DIRTY").exists()  # Chroma and the mirror may differ: not saved
    with _open(root) as bank:
        assert bank.index("experiences").count() == len(bank.experiences.list(namespace="*", limit=10_000))


def test_a_later_good_write_does_not_launder_a_failed_one(tmp_path, monkeypatch):
    root = tmp_path / "root"
    with _open(root) as bank:
        ids = _fill(bank)
        _recall(bank)
    with _open(root) as bank:
        index = bank.index("experiences")
        _recall(bank)
        monkeypatch.setattr(index._collection, "upsert",
                            lambda **kw: (_ for _ in ()).throw(RuntimeError("disk full")))
        with pytest.raises(Exception):
            bank.experiences.record(task="deploy the billing service at dawn", outcome="success")
        monkeypatch.undo()
        bank.experiences.mark(ids[0], helped=True)  # a later write that succeeds
    assert (_folder(root) / "DIRTY").exists()


def test_a_bank_on_its_own_client_invalidates_but_never_trusts_the_snapshot(tmp_path):
    from skillbank.index import make_client

    root = tmp_path / "root"
    with _open(root) as bank:
        _fill(bank, n=10)
        _recall(bank)
    other = _open(root, client=make_client(path=root / "chroma"))
    assert other.index("experiences")._snapshot.saves is False
    new = other.experiences.record(task="deploy the billing service on Friday",
                                   outcome="failure", feedback="nobody was on call")
    other.close()
    assert (_folder(root) / "DIRTY").exists()
    with _open(root) as bank:
        assert new in [h.id for h in bank.experiences.recall(QUERY, k=10, count_use=False)]


def test_a_snapshot_from_another_tokenizer_is_rebuilt(tmp_path, monkeypatch):
    import skillbank.index as index_module

    root = tmp_path / "root"
    with _open(root) as bank:
        _fill(bank)
        before = _recall(bank)
    import skillbank.keyword as keyword_module

    monkeypatch.setattr(keyword_module, "TOKENIZER_VERSION", keyword_module.TOKENIZER_VERSION + 1)
    builds = _NoRebuild(monkeypatch)
    with _open(root) as bank:
        assert _recall(bank) == before
    assert builds.builds >= 1
