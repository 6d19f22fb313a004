"""Deleting or renaming the bank's own copy of a skill brings back the read-only one it shadowed.

Hunt (report #5): `save("csv-report")` over a read-only `csv-report`, then `delete("csv-report")`
(or `rename`): `names()` lacked csv-report, a search for its task answered `[]` and
`load("csv-report")` raised NotFoundError, though the read-only skill was still on disk; only
the next sync brought it back. In process, and through a client of another process that owns
the root.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import write_skill
from owner_client import owner_process


@contextlib.contextmanager
def _bank(tmp_path: Path, shared: Path, remote: bool) -> Iterator[Any]:
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    root = tmp_path / "root"
    root.mkdir()
    with contextlib.ExitStack() as stack:
        if remote:
            stack.enter_context(owner_process(root, (shared,)))
        bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                              skill_roots=[str(shared)])
        stack.callback(bank.close)
        assert bank.is_remote == remote
        yield bank


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_shadowed_read_only_skill_comes_back_at_once(tmp_path, remote):
    shared = tmp_path / "team-skills"
    write_skill(shared, "csv-report", "Summarise a CSV file into a short report.")
    write_skill(shared, "pdf-merge", "Merge several PDF files into one.")
    with _bank(tmp_path, shared, remote) as bank:
        for name in ("csv-report", "pdf-merge"):
            bank.skills.save(name, f"My own version of {name}.", "# mine\n")
            assert bank.skills.load(name).writable
        bank.skills.delete("csv-report")
        bank.skills.rename("pdf-merge", "pdf-merge-mine")
        for name in ("csv-report", "pdf-merge"):
            skill = bank.skills.load(name)
            assert not skill.writable and Path(skill.path).parent.parent == shared
            assert name in bank.skills.names()
        hits = bank.skills.search("summarise a CSV file into a short report")
        assert hits and hits[0].name == "csv-report"
        assert bank.skills.load("pdf-merge-mine").writable
