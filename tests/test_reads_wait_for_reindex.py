"""Reads wait while `reindex` rebuilds, never answering from the emptied indexes
(hunt-mcp-longlived #2, session 31).

`skillbank reindex` on a served root empties every index and then fills it again; the owner
serves reads side by side, and the reads that came in between got `experiences: []` for an exact
task, no rules and "No skill fits", with no note, for 1-4 s. Now a search waits at its start until
the rebuild ends (`skillbank.index_rebuild`). The embedding holds while the rebuild embeds a rule
naming "otters" (`held_embedding.py`), so the read is made while the indexes are empty, whatever
the machine's speed; the answer is checked, not how long it took.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from held_embedding import HeldEmbedding
from owner_client import client_bank, owner_process

TASK = "Count the otters along the river bank"


@contextlib.contextmanager
def _banks(tmp_path: Path, remote: bool) -> Iterator[tuple[Any, Any]]:
    """(the bank that reindexes, the bank that reads): one bank in process, or two clients of
    an owner process whose embedding holds."""
    from skillbank import Skillbank

    root, folder = tmp_path / "root", tmp_path / "held"
    folder.mkdir()
    if not remote:
        with Skillbank.open(root, embedding_function=HeldEmbedding(folder),
                            include_bundled=False) as bank:
            yield bank, bank
        return
    root.mkdir()
    with owner_process(root, held=folder), client_bank(root) as one, client_bank(root) as two:
        yield one, two


def _until(path: Path) -> None:
    deadline = time.monotonic() + 300  # a bound for a broken test, not an assertion on speed
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_read_during_a_reindex_answers_from_the_rebuilt_index(tmp_path, remote):
    held = tmp_path / "held"
    with _banks(tmp_path, remote) as (rebuilder, reader):
        eid = rebuilder.experiences.record(task=TASK, outcome="success",
                                           steps=[{"action": "walk the bank"}, {"action": "tally each otter"}])
        gid = rebuilder.guidelines.add("Count otters at dawn, when they are out.",
                                       topic="survey").guideline_id
        assert [h.id for h in reader.experiences.recall(TASK)] == [eid]
        (held / "hold").touch()
        done: dict[str, Any] = {}
        rebuild = threading.Thread(target=lambda: done.setdefault("reindex",
                                                                   rebuilder.reindex()))
        rebuild.start()
        _until(held / "embedding")  # the indexes are emptied; the rule is being embedded
        answers: dict[str, Any] = {}

        def read() -> None:
            answers["recall"] = [h.id for h in reader.experiences.recall(TASK)]
            answers["rules"] = [h.id for h in reader.guidelines.search("count the otters")]

        reading = threading.Thread(target=read)
        reading.start()
        reading.join(timeout=2)  # before: answered at once, from the emptied indexes
        (held / "hold").unlink()
        rebuild.join()
        reading.join()
        assert "reindex" in done
        # Before: recall [] and no rule, with no note saying why.
        assert answers == {"recall": [eid], "rules": [gid]}


def test_a_skill_write_during_a_reindex_waits_for_it_and_is_kept(tmp_path, monkeypatch):
    """Session 31's review: a skill write that came in while a reindex was embedding took the
    library's sync lock and the write lock, then waited on the closed gate (`load` re-checks
    the folders); the rebuild needed the write lock for the experiences: both stuck for
    REBUILD_WAIT (120 s), every search with them, and the write then failed on the emptied
    index. Now the rebuild holds the skill library's sync lock throughout, so the write waits
    for it and lands after it. Fails before: the write has not returned by the join's bound."""
    import skillbank.index_rebuild as index_rebuild
    from skillbank import Skillbank

    monkeypatch.setattr(index_rebuild, "REBUILD_WAIT", 1200.0)  # a deadlock stays one
    held = tmp_path / "held"
    held.mkdir()
    with Skillbank.open(tmp_path / "root", embedding_function=HeldEmbedding(held),
                        include_bundled=False) as bank:
        bank.skills.create("otter-count", "Count the otters along a river", "Walk and tally.")
        bank.skills.create("csv-import", "Import a CSV file into the database", "Steps.")
        bank.experiences.record(task=TASK, outcome="success")
        (held / "hold").touch()
        done: dict[str, Any] = {}
        rebuild = threading.Thread(target=lambda: done.setdefault("reindex", bank.reindex()))
        rebuild.start()
        _until(held / "embedding")  # the indexes are emptied; the skills are being embedded

        def write() -> None:
            try:
                done["update"] = bank.skills.update("csv-import", body="New steps.")
            except Exception as exc:  # noqa: BLE001 - reported below
                done["error"] = exc

        writing = threading.Thread(target=write, daemon=True)
        writing.start()
        writing.join(timeout=1)
        (held / "hold").unlink()
        rebuild.join(timeout=300)
        writing.join(timeout=300)
        assert not writing.is_alive() and not rebuild.is_alive(), "the write and the rebuild hang"
        assert "error" not in done, done
        assert "reindex" in done and "New steps." in bank.skills.load("csv-import").body
