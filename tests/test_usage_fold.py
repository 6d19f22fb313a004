"""The usage log is folded once it passes a size, so opening a long-lived root stays fast
(hunt-exp #4, session 27).

A memory counts a use of every record it shows, one ~79-byte line each in
`usage/experiences.jsonl`, never rewritten and read whole at every open: ~600k recall hits made a
47 MB log and an 8-10 s open. Now the log's plain uses are summed per item (ratings, votes,
accepts, moves and resets kept line for line) once it passes `FOLD_BYTES`, at open or when a
write takes it past, with every count as it was; appends of other processes are never lost to
a fold (real processes on one file).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import skillbank.usage as usage_module
from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.skills.skill_trust_api import _counted_ratings, _lines
from skillbank.records import utcnow
from skillbank.usage import UsageLog

TASK = "Back up the wiki server"
HITS = 14_000  # ~1.1 MB of recall hits: past FOLD_BYTES


def hits(path, item: str, count: int) -> None:
    """`count` recall hits of `item`, as the log holds them (what a long-lived agent left)."""
    at = utcnow().isoformat()
    line = json.dumps({"id": item, "use": 1, "at": at}) + "\n"
    with path.open("a") as handle:
        handle.write(line * count)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_long_lived_roots_usage_log_is_folded_with_every_count(tmp_path, remote):
    path = tmp_path / "root" / "usage" / "experiences.jsonl"
    with bank_for(tmp_path, remote) as bank:
        eid = bank.experiences.record(task=TASK, outcome="success")
        bank.rate(eid, True)
        bank.flush()
    hits(path, eid, HITS)
    assert path.stat().st_size > 1 << 20  # past FOLD_BYTES
    with bank_for(tmp_path, remote) as bank:  # the open folds it
        usage = bank.experiences.get(eid).usage
        assert (usage.uses, usage.successes, usage.failures) == (HITS, 1, 0)
        assert path.stat().st_size < 1000
        assert [hit.id for hit in bank.experiences.recall(TASK, k=1)] == [eid]
        bank.flush()
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        usage = bank.experiences.get(eid).usage
        assert (usage.uses, usage.successes) == (HITS + 1, 1)
    assert path.stat().st_mode & 0o777 == 0o600  # as private as the log it replaced


def every_count(log: UsageLog, ids) -> dict:
    return {i: (log.get(i).model_dump(), log.untrusted(i).model_dump(), log.outside(i),
                sorted(log._users.get(i, ())))
            for i in ids}


def test_folding_keeps_every_count_vote_and_dated_rating(tmp_path, monkeypatch):
    """Runs of uses are summed only between the events that move or drop an item's counts."""
    path = tmp_path / "skills.jsonl"
    log = UsageLog(path)
    for round_ in range(3):
        for _ in range(40):
            log.record("a")
            log.record("b")
            log.record("a", trusted=False)
            log.record("d")
            log.record("a", outsider="carl")  # (counted once per item: hunt-trust #1)
            log.record("d", outsider="carol")
        log.record("a", ok=round_ != 1)
        log.record("a", ok=False, trusted=False)
        log.record("a", ok=round_ == 2, trusted=False, principal="bob")  # (hunt-trust #2)
        log.vote("b", "carol", ok=round_ == 0, use=1)
        if round_ == 1:
            log.accept("a")
            log.move("b", "d")  # d's own uses before it are replaced by b's
            log.reset("c")
        log.add("c", usage_module.Usage(uses=3, successes=2, failures=1))
        for _ in range(30):
            log.record("c")
    log.flush()
    ids = ["a", "b", "c", "d"]
    before, size = every_count(UsageLog(path), ids), path.stat().st_size
    ratings = _counted_ratings(_lines(path), set(ids))
    monkeypatch.setattr(usage_module, "FOLD_BYTES", 1000, raising=False)
    folded = UsageLog(path)
    assert path.stat().st_size * 4 < size
    assert every_count(folded, ids) == before
    assert every_count(UsageLog(path), ids) == before  # the folded file replays the same
    assert _counted_ratings(_lines(path), set(ids)) == ratings


WRITER = """
import sys
import skillbank.usage as usage
from pathlib import Path
usage.FOLD_BYTES, usage.FLUSH_EVERY = int(sys.argv[3]), 5
log = usage.UsageLog(Path(sys.argv[1]), shared=True)
for _ in range(int(sys.argv[2])):
    log.record("exp-from-the-child")
log.flush()
"""


def test_no_use_another_process_writes_is_lost_to_a_fold(tmp_path, monkeypatch):
    """Server mode: two processes count into one log, each folding it as it passes the size."""
    path, uses, fold_at = tmp_path / "experiences.jsonl", 2000, 16_000
    monkeypatch.setattr(usage_module, "FOLD_BYTES", fold_at, raising=False)
    monkeypatch.setattr(usage_module, "FLUSH_EVERY", 5)
    monkeypatch.setattr(usage_module, "REFRESH_SECONDS", 0.0)
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(uses), str(fold_at)])
    log = UsageLog(path, shared=True)
    for _ in range(uses):
        log.record("exp-from-the-parent")
    log.flush()
    assert child.wait(timeout=600) == 0
    for reader in (log, UsageLog(path)):  # this process's view, and a fresh open
        assert reader.get("exp-from-the-parent").uses == uses
        assert reader.get("exp-from-the-child").uses == uses
    assert path.stat().st_size < 3 * fold_at  # 4,000 lines would be ~300 KB


FOLDER = """
import sys
from pathlib import Path
import skillbank.usage as usage
usage.FOLD_BYTES = 1000
usage.UsageLog(Path(sys.argv[1]), shared=True)  # its open folds the log
"""


def test_a_reader_never_applies_a_folded_log_from_its_old_offset(tmp_path, monkeypatch):
    """A server-mode reader stats the log, then opens it by name: a fold by another process in
    between made it apply the folded file from its old offset, its run lines counted as new
    uses (35,001 for 30,001 until the next look; review2 #7, session 27). Forced here: the
    fold runs right after the reader's stat."""
    import pathlib

    monkeypatch.setattr(usage_module, "REFRESH_SECONDS", 0.0)
    path = tmp_path / "experiences.jsonl"
    at = utcnow().isoformat()
    with path.open("w") as handle:  # ratings, never folded
        for i in range(300):
            handle.write(json.dumps({"id": f"exp-r{i}", "use": 1, "at": at, "ok": True}) + "\n")
    reader = UsageLog(path, shared=True)
    hits(path, "exp-hot", 5000)
    assert reader.get("exp-hot").uses == 5000
    hits(path, "exp-hot", 25001)
    real_stat, armed = pathlib.Path.stat, [True]

    def stat(self, *args, **kwargs):
        info = real_stat(self, *args, **kwargs)
        if armed and self == path:
            armed.clear()
            subprocess.run([sys.executable, "-c", FOLDER, str(path)], check=True)
        return info

    monkeypatch.setattr(pathlib.Path, "stat", stat)
    assert reader.get("exp-hot").uses == 30001
    assert not armed  # the fold did run between the stat and the open
    monkeypatch.setattr(pathlib.Path, "stat", real_stat)
    assert path.stat().st_size < 100_000 and UsageLog(path).get("exp-hot").uses == 30001
