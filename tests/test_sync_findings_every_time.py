"""`skills sync` reports a skill that breaks the spec on every sync, not only the first.

Any earlier command indexes a folder first (a `skills list`, `skillbank serve`, the CLI's
background owner), and unchanged files are not parsed again: their findings were dropped, so a
person never saw "N skills break the Agent Skills spec" while `skills validate` found them.
They are kept with the index entry. In process and through a client.
"""

from __future__ import annotations

from pathlib import Path

from owner_client import client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def _library(base: Path) -> Path:
    for folder, name in (("folder-a", "name-b"), ("neon", "Neon Automation")):
        (base / folder).mkdir(parents=True)
        (base / folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: A skill whose name breaks the spec.\n---\nbody\n")
    return base


def _codes(report) -> list[str]:
    return sorted(f.code for f in report.findings)


def test_findings_on_every_sync(tmp_path):
    skills = _library(tmp_path / "skills")
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False, skill_roots=[skills]) as bank:
        first = bank.skills.sync()
        second = bank.skills.sync()
    assert _codes(first) == _codes(second) and {"name-chars", "name-mismatch"} <= set(
        _codes(first))
    assert second.unchanged == 2


def test_findings_on_every_sync_through_a_client(tmp_path):
    skills, root = _library(tmp_path / "skills"), tmp_path / "root"
    with owner_process(root, (skills,)), client_bank(root) as bank:
        first, second = bank.skills.sync(), bank.skills.sync()
        assert _codes(first) == _codes(second) and "name-chars" in _codes(first)
