"""A crash in the middle of `forget` is finished by the next open (crash hunt, session 18).

A process killed after its `forget` event was journaled and before the erasure ended left the
"forgotten" text in the journal and in Chroma's file for good: reopening only hid the id, and
`forget` again answered "no experience with id". Real processes, killed (`os._exit`) at each
point of the erasure; then every file under the root is searched for the text.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import NotFoundError
from test_mcp_transports import base_env

SECRET = "the staging database password is hunter2-zebra"
CHILD = r'''
import os, sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
import skillbank.forgetting as forgetting
import skillbank.memories.experiences.review as review
bank = Skillbank.open(sys.argv[1], embedding_function=HashEmbedding(), include_bundled=False)
eid = bank.experiences.record(task="Connect to staging", outcome="failure", feedback=sys.argv[2])
print(eid, flush=True)
die = lambda *a, **k: os._exit(9)
where = sys.argv[3]
if where == "before-the-event":
    bank.experiences._append = die
elif where == "after-the-event":
    review.erase = die
else:  # after the journal is erased, before Chroma's file is
    forgetting.erase_from_chroma = die
bank.forget(eid)
'''


def holding(root: Path, text: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and text.encode() in p.read_bytes())


def crash_during_forget(root: Path, where: str) -> str:
    done = subprocess.run([sys.executable, "-c", CHILD, str(root), SECRET, where],
                          capture_output=True, text=True, env=base_env(), timeout=300)
    assert done.returncode == 9, done.stderr[-2000:]
    return done.stdout.split()[0]


@pytest.mark.parametrize("where", ["after-the-event", "in-the-erasure"])
def test_the_next_open_finishes_an_erasure_a_crash_cut_short(tmp_path, where):
    root = tmp_path / "root"
    eid = crash_during_forget(root, where)
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        with pytest.raises(NotFoundError):
            bank.experiences.get(eid)
        assert bank.experiences.recall("connect to staging") == []
    assert holding(root, SECRET) == []
    assert holding(root, "hunter2") == []


def test_a_crash_before_the_forget_event_forgets_nothing(tmp_path):
    root = tmp_path / "root"
    eid = crash_during_forget(root, "before-the-event")
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        assert bank.experiences.get(eid).feedback == SECRET  # the forget never happened
        assert bank.forget(eid)["forgotten"]  # and can be asked again
    assert holding(root, SECRET) == []


LESSON = "Use the wolfberry-ledger export, never the raw accounts table"
LESSON_CHILD = r'''
import os, sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
import skillbank.forgetting as forgetting
import skillbank.memories.experiences.review as review
from skillbank.store.files.experiences import FileExperienceLog
bank = Skillbank.open(sys.argv[1], embedding_function=HashEmbedding(), include_bundled=False)
eid = bank.experiences.record(task="Close the quarter's books", outcome="success",
                              lessons=[sys.argv[2], "Reconcile the ledgers first."])
lesson = next(r.id for r in bank.experiences.list(kind="lesson", limit=10) if "wolfberry" in r.task)
print(eid, lesson, flush=True)
die = lambda *a, **k: os._exit(9)
where = sys.argv[3]
if where == "after-the-event":
    review.erase = die
elif where == "between-parent-and-lesson":  # the parent rewritten, the lesson's lines not yet
    FileExperienceLog.erase = die
else:  # both journal copies gone, Chroma's file not yet
    forgetting.erase_from_chroma = die
bank.forget(lesson)
'''


@pytest.mark.parametrize("where", ["after-the-event", "between-parent-and-lesson",
                                   "in-the-erasure"])
def test_a_crash_while_forgetting_a_lesson_leaves_no_copy_in_its_experience(tmp_path, where):
    """The lesson's text is repeated in its experience's `lessons` field. A crash while it was
    forgotten erased the lesson record's lines but left the experience holding the text for
    good (the erasure mark covered ids only; session 18's left item)."""
    root = tmp_path / "root"
    done = subprocess.run([sys.executable, "-c", LESSON_CHILD, str(root), LESSON, where],
                          capture_output=True, text=True, env=base_env(), timeout=300)
    assert done.returncode == 9, done.stderr[-2000:]
    eid, lesson = done.stdout.split()[:2]
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        with pytest.raises(NotFoundError):
            bank.experiences.get(lesson)
        assert [l.text for l in bank.experiences.get(eid).lessons] == [
            "Reconcile the ledgers first."]
    assert holding(root, "wolfberry") == []
