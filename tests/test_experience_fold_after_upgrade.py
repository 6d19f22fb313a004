"""A run recorded again folds into its record after an upgrade that changed `content_key`
(hunt-upgrade #1, session 23).

Folding compares the index's `content` metadata verbatim. The code of 2026-12-03/04 (5cdb80f,
63d5db6) keyed feedback by its a-z0-9 words only; de6191f keys the words of every script. The
sync on open saw a journal all indexed and kept the old keys, so after the upgrade a run with
German or Japanese feedback, recorded again, was stored a second time until a manual reindex.
The checkpoint now records `CONTENT_KEY_VERSION`; an index keyed by another one is re-keyed on
open (metadata only, nothing embedded again).

The stale state is built here as the old code left it: the records' `content` overwritten with
the key 5cdb80f computed, and a checkpoint without `content_key` at the end of the journal.
"""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.memories.experiences.indexing import CONTENT_KEY_VERSION, content_key
from skillbank.records import Experience

RUNS = [dict(task="Übersetze die Release-Notes ins Deutsche", outcome="success",
             feedback="Bitte immer die Sie-Form verwenden. Umlaute nicht ersetzen (ä, ö, ü, ß).",
             lessons=["Umlaute nie durch ae, oe, ue umschreiben."]),
        dict(task="リリースノートを日本語に翻訳する", outcome="partial",
             feedback="敬語を使ってください。技術用語は英語のままにしてください。"),
        dict(task="Migrate the orders table 42", outcome="success",
             feedback="Took a backup first and ran in a transaction.")]


def _key_of_5cdb80f(record: Experience) -> str:
    """`content_key` as 5cdb80f computed it: only a-z0-9 words of the feedback and lessons."""
    text = " | ".join([record.feedback or ""] + [lesson.text for lesson in record.lessons])
    numbers = re.findall(r"\d+", record.task)
    if numbers:
        text += " | #" + " ".join(numbers)
    words = " ".join(re.findall(r"[a-z0-9]+", text.lower()))
    return hashlib.sha256(words.encode()).hexdigest()[:16]


def _root_left_by_the_old_code(root, embedding) -> dict[str, str]:
    """A root whose experiences carry 5cdb80f's keys, with that code's checkpoint; returns the
    ids of the runs by task."""
    with Skillbank.open(root, embedding_function=embedding, include_bundled=False) as bank:
        mem = bank.experiences
        ids = {run["task"]: str(mem.record(**run)) for run in RUNS}
        for record_id in ids.values():
            mem.index.update_metadata(record_id, content=_key_of_5cdb80f(mem.get(record_id)))
        checkpoint = json.loads(mem.checkpoint_path.read_text())
        checkpoint.pop("content_key", None)
        mem.checkpoint_path.write_text(json.dumps(checkpoint))
        stale = {i for i in ids.values()
                 if mem.index.metadata(i)["content"] != content_key(mem.get(i))}
    # The German and Japanese keys changed (the English one did not): the defect's premise.
    assert stale == {ids[RUNS[0]["task"]], ids[RUNS[1]["task"]]}
    return ids


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_runs_recorded_again_after_the_upgrade_fold(tmp_path, minilm, remote):
    ids = _root_left_by_the_old_code(tmp_path / "root", minilm)
    with bank_for(tmp_path, remote, minilm) as bank:
        for run in RUNS:
            again = bank.experiences.record(**run)
            assert again == ids[run["task"]] and again.folded, run["task"]
        for run in RUNS:
            same = [e for e in bank.experiences.list(limit=100) if e.task == run["task"]]
            assert [(e.id, e.duplicates) for e in same] == [(ids[run["task"]], 1)]


def test_the_rekey_on_open_embeds_nothing_and_happens_once(tmp_path, minilm):
    ids = _root_left_by_the_old_code(tmp_path / "root", minilm)
    with Skillbank.open(tmp_path / "root", embedding_function=minilm, include_bundled=False,
                        sync=False) as bank:
        report = bank.experiences.sync()
        assert report.embedded == 0
        assert set(report.changed) == {ids[RUNS[0]["task"]], ids[RUNS[1]["task"]]}
        assert bank.experiences.sync().changed == []
        assert json.loads(bank.experiences.checkpoint_path.read_text())["content_key"] == CONTENT_KEY_VERSION
