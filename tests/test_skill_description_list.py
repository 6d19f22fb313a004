"""A `description:` that is a YAML list or mapping (hunt-corpus #7, session 30).

It loaded with a warning and was served as Python text, "['one', 'two']", to search, list and
the agents' context; `skills show --json` gave the list; `skills validate` called it an error.
One rule now: it does not parse (an error `description-type`), so it is reported and never
served, by sync and validate alike."""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for
from test_cli import Run

LISTED = "\n  - one way to groom a parrot\n  - another way"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_list_description_is_reported_and_not_served(tmp_path, remote):
    """Fails before: the skill was served, its description "['one way …', 'another way']"."""
    folder = tmp_path / "extra"
    path = write_skill(folder, "desclist", LISTED)
    write_skill(folder, "plain", "Groom a parrot's feathers.")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        report = bank.skills.sync()
        assert "desclist" not in bank.skills.names() and "plain" in bank.skills.names()
        [finding] = [f for f in report.findings if f.path == str(path)]
        assert (finding.severity, finding.code) == ("error", "description-type"), finding
        assert "YAML list" in finding.message and "not served" in finding.message
        assert str(path) in report.skipped
        hits = bank.skills.search("groom a parrot one way", k=5)
        assert all("['" not in hit.record.description for hit in hits), hits


def test_validate_and_sync_agree(cli_root, tmp_path):
    folder = tmp_path / "extra"
    path = write_skill(folder, "desclist", LISTED)
    run = Run()
    checked = run.json("skills", "validate", path, code=2)
    assert [f["code"] for f in checked["files"][0]["findings"]] == ["description-type"]
    report = run.json("--no-bundled", "--skills-dir", folder, "skills", "sync")
    assert [(f["severity"], f["code"]) for f in report["findings"] if f["path"] == str(path)] \
        == [("error", "description-type")]
    run("skills", "show", "desclist", code=3)
