"""When the skill that fits is held for review or needs tools the agent lacks, the answer is
"no skill fits", not what is left behind it: an unrelated `sql-migrate` (score 0.11, below the
0.5 floor a first hit needs) was returned and listed under "Skills that may apply"."""

from __future__ import annotations

from pathlib import Path

from owner_client import client_bank, owner_process
from skillbank import Skillbank

TASK = "create a neon postgres branch"


def _skill(base: Path, name: str, description: str, extra: str = "") -> None:
    (base / name).mkdir(parents=True)
    (base / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n# Steps\n\n1. Do it.\n")


def _library(base: Path, neon: bool = True) -> Path:
    _skill(base, "pdf-merge", "Merge several PDF files into one document.")
    _skill(base, "csv-report", "Summarise a CSV file into a markdown report.")
    _skill(base, "sql-migrate", "Write and run SQL schema migrations for a database.")
    if neon:
        _skill(base, "neon-ops", "Create and manage Neon serverless Postgres database branches.",
               "allowed-tools: Bash\n")
    return base


def _gated(bank) -> None:
    assert bank.skills.search(TASK)[0].name == "neon-ops"
    hits = bank.skills.search(TASK, available_tools=["Read"])
    assert list(hits) == [] and hits.missing_tools == {"neon-ops": ["bash"]}


def test_a_gated_best_match_leaves_no_poor_one(tmp_path, minilm):
    with Skillbank.open(tmp_path / "root", embedding_function=minilm, include_bundled=False,
                        skill_roots=[_library(tmp_path / "skills")]) as bank:
        _gated(bank)


def test_a_held_best_match_leaves_nothing_in_the_context(tmp_path, minilm):
    root = tmp_path / "root"
    _library(root / "skills", neon=False)
    _skill(tmp_path / "ext", "neon-ops", "Create and manage Neon serverless Postgres database branches.")
    root.joinpath("skillbank.toml").write_text('[skill_policy.third-party]\nunscanned = "hold"\n')
    with Skillbank.open(root, embedding_function=minilm, include_bundled=False,
                        skill_roots=[tmp_path / "ext"]) as bank:
        held = {s.name: s.held for s in bank.skills.list(include_held=True)}
        assert held["neon-ops"] is True  # found, and held: the case under test
        assert list(bank.skills.search(TASK)) == []
        assert not any(i.startswith("skill:") for i in bank.context_for(TASK).ids)


def test_a_gated_best_match_through_a_client(tmp_path):
    skills = _library(tmp_path / "skills")
    root = tmp_path / "root"
    with owner_process(root, (skills,)), client_bank(root) as bank:
        _gated(bank)
