"""Forget means gone for skill drafts, whichever API forgets (docs/scope.md "Forget means gone").

- hunt-drafts #2 (session 26): `bank.experiences.forget(id)`, the experience API docs/api.md
  shows, left the drafts drawn from the experience, with its text, still adoptable: only the
  facade's `bank.forget` erased them.
- hunt-drafts #9: forgetting a lesson (`lsn-…`) left its text in the drafts whose Pitfalls
  quote it: a draft's `sources` name experiences only, never the lesson's id.
- hunt-drafts #4: a `kill -9` during `adopt` left the hidden `.adopt-*` staging copy of the
  draft in `<root>/skills/` for good, and forget never looked there.

Real banks and real Chroma, in this process and as a client of an owner process; the kill is
a real SIGKILL of a child process in the middle of its adopt.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.skills import drafts as drafts_module

WAYS = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
TABLES = ("orders", "users", "invoices")


def holders(root: Path, word: str) -> list[str]:
    """Files under `root` holding `word` (every byte read: hidden folders too)."""
    needle = word.encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and needle in p.read_bytes())


def csv_runs(bank: Any, word: str, tables: tuple[str, ...] = TABLES, *,
             failed: bool = False) -> list[str]:
    """Runs of one kind of task (a draft is proposed from three), each holding `word`: in
    its task, or (`failed`) only in its lesson."""
    return [bank.experiences.record(
        task=f"Import the {t} CSV file into a database table{'' if failed else ' ' + word}",
        outcome="failure" if failed else "success",
        when_to_use="Loading CSV exports into a database",
        steps=[{"action": "inspect the CSV header"}, {"action": "COPY the rows"}],
        lessons=[f"Use the {word}-{t} staging schema."] if failed else None)
        for t in tables]


@WAYS
def test_experiences_forget_deletes_the_drafts_drawn_from_them(tmp_path, minilm, remote):
    word = "ZEBRAWORD"
    with bank_for(tmp_path, remote, minilm) as bank:
        ids = csv_runs(bank, word)
        first = bank.skills.propose()
        assert [len(d.sources) for d in first] == [3]
        bank.skills.discard(first[0].name)  # a closed draft holds the text too
        ids += csv_runs(bank, word, ("payments", "refunds"))
        assert [d.name for d in bank.skills.propose()] == [first[0].name]
        for record_id in ids:
            assert bank.experiences.forget(record_id)["forgotten"] is True
        assert bank.skills.drafts() == []
    assert holders(tmp_path / "root", word) == []


@WAYS
@pytest.mark.parametrize("api", ["bank.forget", "experiences.forget"])
def test_forgetting_a_lesson_deletes_the_drafts_quoting_it(tmp_path, minilm, remote, api):
    word = "PLATYPUS"
    with bank_for(tmp_path, remote, minilm) as bank:
        csv_runs(bank, word, failed=True)
        [draft] = bank.skills.propose()
        assert word in Path(draft.path).read_text(encoding="utf-8")  # its Pitfalls quote them
        lessons = bank.experiences.list(kind="lesson")
        assert lessons
        forget = bank.forget if api == "bank.forget" else bank.experiences.forget
        for lesson in lessons:
            assert forget(lesson.id)["kind"] == "lesson"
        assert [len(e.lessons) for e in bank.experiences.list(kind="experience")] == [0, 0, 0]
        assert bank.skills.drafts() == []
    assert holders(tmp_path / "root", word) == []


KILLED_ADOPT = """
import os, signal, sys
from pathlib import Path
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.skills import drafts
root = Path(sys.argv[1])
real = drafts.os.replace
def replace(src, dst):
    if Path(dst).parent == root / 'skills':  # the staging copy is whole: kill -9 now
        os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst)
drafts.os.replace = replace
bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
bank.skills.adopt(sys.argv[2])
"""


def staging(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "skills").iterdir() if p.name.startswith(".adopt-"))


def killed_mid_adopt(root: Path, word: str) -> tuple[str, list[str]]:
    """A root where an adopt was SIGKILLed with its staging copy written: the draft's name
    and its source experiences."""
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        ids = csv_runs(bank, word)
        [draft] = bank.skills.propose()
    child = subprocess.run([sys.executable, "-c", KILLED_ADOPT, str(root), draft.name],
                           env=os.environ.copy(), capture_output=True, text=True, timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert len(staging(root)) == 1 and holders(root / "skills", word)  # what #4 left for good
    return draft.name, ids


@WAYS
def test_an_adopt_killed_mid_copy_leaves_no_staging_copy_once_the_root_is_used(tmp_path, remote):
    name, _ = killed_mid_adopt(tmp_path / "root", "QUOKKAWORD")
    with bank_for(tmp_path, remote) as bank:
        assert [d.name for d in bank.skills.drafts()] == [name]  # the adopt never happened
        assert staging(tmp_path / "root") == []
        assert bank.skills.adopt(name).name == name
    assert staging(tmp_path / "root") == []


@WAYS
def test_forgetting_the_sources_and_the_skill_leaves_no_text_of_a_killed_adopt(tmp_path, remote):
    word = "WOMBATWORD"
    name, ids = killed_mid_adopt(tmp_path / "root", word)
    with bank_for(tmp_path, remote) as bank:
        for record_id in ids:
            bank.experiences.forget(record_id)
        assert bank.skills.drafts() == []
    assert holders(tmp_path / "root", word) == []


class Killed(BaseException):
    """What a kill -9 leaves: the staging copy written, no `finally` run."""


def adopt_killed_in_process(bank: Any, root: Path, name: str, monkeypatch: Any) -> None:
    real = drafts_module.os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).parent == root / "skills":
            raise Killed()
        real(src, dst)
    monkeypatch.setattr(drafts_module.os, "replace", replace)
    monkeypatch.setattr(drafts_module.shutil, "rmtree", lambda *a, **k: None)
    try:
        with pytest.raises(Killed):
            bank.skills.adopt(name)
    finally:
        monkeypatch.undo()
    assert len(staging(root)) == 1


def test_forget_and_adopt_remove_a_staging_copy_left_while_the_bank_was_open(tmp_path,
                                                                            monkeypatch):
    """A process that shares the root through a Chroma server can die mid-adopt while this
    one stays open: its next adopt, or next forget, removes the copy (open cannot).
    In process only: the death is simulated inside the adopt (the other tests kill a real
    process, whose leftover the next open already removes)."""
    root = tmp_path / "root"
    word = "NUMBATWORD"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        ids = csv_runs(bank, word)
        ids += [bank.experiences.record(
            task=f"Deploy the {s} service to the staging cluster with kubectl {word}",
            outcome="success", when_to_use="Rolling out a service with kubectl",
            steps=[{"action": "kubectl apply"}, {"action": "kubectl rollout status"}])
            for s in ("billing", "search", "auth")]
        drafts = bank.skills.propose()
        assert len(drafts) == 2
        first, second = (d.name for d in drafts)
        adopt_killed_in_process(bank, root, first, monkeypatch)
        assert bank.skills.adopt(first).name == first  # the next adopt removes the copy
        assert staging(root) == []
        adopt_killed_in_process(bank, root, second, monkeypatch)
        for record_id in ids:
            bank.experiences.forget(record_id)  # removes it too
        assert staging(root) == []
        assert bank.skills.drafts() == []
        bank.forget(f"skill:{first}")
    assert holders(root, word) == []


CRASHED_FORGET = """
import os, sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
bank = Skillbank.open(sys.argv[1], embedding_function=HashEmbedding(), include_bundled=False)
ids = [bank.experiences.record(
    task=f'Import the {t} CSV file into a database table ' + sys.argv[2], outcome='success',
    when_to_use='Loading CSV exports into a database',
    steps=[{'action': 'inspect the CSV header'}, {'action': 'COPY the rows'}])
    for t in ('orders', 'users', 'invoices')]
assert len(bank.skills.propose()) == 1
bank.experiences.on_forgotten = lambda ids: os._exit(9)  # killed before the drafts go
bank.experiences.forget(ids[0])
"""


@WAYS
def test_the_next_open_deletes_the_drafts_a_crashed_forget_left(tmp_path, remote):
    """A process killed after the journal's erasure and before the drafts': the next open
    finishes the erasure (`finish_erasures`), the drafts with it."""
    word = "ECHIDNAWORD"
    root = tmp_path / "root"
    root.mkdir()
    child = subprocess.run([sys.executable, "-c", CRASHED_FORGET, str(root), word],
                           env=os.environ.copy(), capture_output=True, text=True, timeout=300)
    assert child.returncode == 9, child.stderr[-2000:]
    assert any(p.startswith("drafts/") for p in holders(root, word))
    with bank_for(tmp_path, remote) as bank:
        assert bank.skills.drafts() == []
    assert [p for p in holders(root, word) if p.startswith("drafts/")] == []
