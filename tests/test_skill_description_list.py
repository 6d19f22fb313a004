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
    # Not served, and a read says why (exit 5, as for a SKILL.md it may not read), not "no
    # skill named" (hunt-mcpcorpus #1, session 38).
    shown = run("skills", "show", "desclist", code=5)
    assert "YAML list" in shown.stderr and "not served" in shown.stderr


def test_one_indexed_before_is_no_longer_served(tmp_path, monkeypatch):
    """An index made before kept serving such a skill: its file unchanged is not read again,
    and when read it did not parse, so the indexed copy was kept as its "last good" version.
    Fails before: the skill stayed served, as "['one way …', 'another way']". In process only:
    the index is made as the older version made it (its parse is stood in for here)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.memories.skills import library as library_module
    from skillbank.memories.skills.skill_file import parse_skill_text
    from skillbank.records import Finding

    folder = tmp_path / "extra"
    path = write_skill(folder, "desclist", LISTED)
    write_skill(folder, "plain", "Groom a parrot's feathers.")

    def as_before(entry):  # the older version: loaded, with a warning
        if entry.path != path:
            return parse_skill_text(entry.path.read_text(), path=str(entry.path),
                                    folder_name=entry.path.parent.name)
        doc, _ = parse_skill_text("---\nname: desclist\ndescription: stand-in\n---\nbody\n")
        doc.frontmatter["description"] = ["one way to groom a parrot", "another way"]
        return doc, [Finding(severity="warning", code="description-type", path=str(path),
                             message="'description' must be a string, got list")]

    root = tmp_path / "root"
    with monkeypatch.context() as patched:
        patched.setattr(library_module, "parse_found", as_before)
        with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                            skill_roots=[folder]) as bank:
            assert "desclist" in bank.skills.names()  # as the older version served it
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        skill_roots=[folder], sync=False) as bank:
        report = bank.skills.sync()
        assert report.removed == ["desclist"] and bank.skills.names() == ["plain"], report
        assert [f.code for f in report.findings if f.path == str(path)] == ["description-type"]
