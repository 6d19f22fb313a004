"""A `kill -9` in the middle of `skills rename` leaves no hidden copy of the skill for good.

hunt-procs #2 (session 28): rename builds the renamed copy in `<skills>/.rename-<new>-XXXX/`
and moves it into place; a process killed in between left that folder, a whole copy of the
skill, which no later open, sync, rename or `forget` removed: the skill's text outlived
"forget means gone" (README). The kill is a real SIGKILL of a child process mid-rename; the
root is then used in this process and as a client of an owner process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

WAYS = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
WORD = "PANGOLINWORD"

KILLED_RENAME = """
import os, signal, sys
from pathlib import Path
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.skills import authoring
root = Path(sys.argv[1])
real = authoring.os.replace
def replace(src, dst):
    if Path(dst) == root / 'skills' / 'renamed-skill':  # the staged copy is whole: kill -9 now
        os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst)
authoring.os.replace = replace
bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
bank.skills.rename('first-skill', 'renamed-skill')
"""


def staging(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "skills").iterdir() if p.name.startswith(".rename-"))


def holders(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and WORD.encode() in p.read_bytes())


def killed_mid_rename(root: Path) -> None:
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        bank.skills.save("first-skill", description=f"Tame the {WORD} pipeline when it stalls.",
                         body=f"# First\n\nRestart the {WORD} workers one at a time.\n")
    child = subprocess.run([sys.executable, "-c", KILLED_RENAME, str(root)],
                           env=os.environ.copy(), capture_output=True, text=True, timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert len(staging(root)) == 1  # what hunt-procs #2 left for good


@WAYS
def test_a_rename_killed_mid_copy_leaves_no_staging_copy_once_the_root_is_used(tmp_path, remote):
    killed_mid_rename(tmp_path / "root")
    with bank_for(tmp_path, remote) as bank:
        assert [s.name for s in bank.skills.list()] == ["first-skill"]  # it never happened
        assert staging(tmp_path / "root") == []
        assert bank.skills.rename("first-skill", "renamed-skill").name == "renamed-skill"
        bank.forget("skill:renamed-skill")
    assert staging(tmp_path / "root") == []
    assert holders(tmp_path / "root") == []
