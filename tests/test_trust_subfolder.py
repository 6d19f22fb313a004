"""A trust level set on a subfolder of an added folder decides for the skills inside it.

Users met it with docs/trust.md's own `[skill_trust]` example: `"~/work/team-skills" = "team"`
and `"~/work/team-skills/vendored" = "third-party"` (held until scanned). A skill under
`vendored/` was served as `team`: the level was taken from the folder that was added, never
from the skill's own folder. The example is read from the docs as written.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import write_skill
from owner_client import client_bank, owner_process

REPO = Path(__file__).resolve().parents[1]


def _docs_example() -> str:
    """The first toml block of docs/trust.md (the one under "Set levels")."""
    text = (REPO / "docs" / "trust.md").read_text()
    block = re.search(r"```toml\n(.*?)```", text, re.S)
    assert block and "[skill_trust]" in block.group(1), "docs/trust.md has no [skill_trust] example"
    return block.group(1)


@pytest.fixture
def example(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """A root configured as the docs say, `~` a home under tmp_path: (root, team folder)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    team = home / "work" / "team-skills"
    write_skill(team, "deploy-service", "Deploy the service to production with a canary release.")
    write_skill(team / "vendored", "csv-report",
                "Summarise a CSV file into a short markdown report with totals per column.")
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text(_docs_example())
    return root, team


def _check(bank) -> None:
    skills = {s.name: s for s in bank.skills.list(include_held=True)}
    assert skills["deploy-service"].trust == "team"
    vendored = skills["csv-report"]
    assert vendored.trust == "third-party"
    if vendored.scan in ("not scanned", "scan pending") or vendored.scan.startswith("scan failed"):
        # `unscanned = "hold"`: kept from the agent until scanned or accepted
        assert vendored.held and vendored.review.startswith("pending")
        assert "csv-report" not in [h.name for h in bank.skills.search(
            "summarise a CSV file into a report", k=3)]
        assert "csv-report" in [s.name for s in bank.skills.review_queue()]
    assert not skills["deploy-service"].held


def test_the_docs_example_in_process(example):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    root, team = example
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        skill_roots=[str(team)]) as bank:
        _check(bank)


def test_the_docs_example_through_a_client_of_an_owner(example):
    root, team = example
    with owner_process(root, (team,)), client_bank(root) as bank:
        _check(bank)


def test_the_most_specific_folder_wins_both_ways(tmp_path):
    """A subfolder can also be trusted more than the folder added around it."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    vendor = tmp_path / "vendor"
    write_skill(vendor, "pdf-merge", "Merge PDF files into one document.")
    write_skill(vendor / "reviewed" / "deep", "csv-report", "Summarise a CSV file.")
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text(
        f'[skill_trust]\n"{vendor}" = "third-party"\n"{vendor / "reviewed"}" = "team"\n')
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        skill_roots=[str(vendor)]) as bank:
        levels = {s.name: s.trust for s in bank.skills.list(include_held=True)}
    assert levels == {"pdf-merge": "third-party", "csv-report": "team"}
