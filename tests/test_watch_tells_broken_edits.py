"""`skills watch` ("printing each change") tells an edit that breaks a SKILL.md, and its mend.

Such an edit changes no skill that is served (the last good version stays, or a read-only
folder's skill is left out), so the watcher reported nothing and the author saw their slip only
at the next `skills sync` (hunt-author #3, session 24). In process and as a client of an owner.
"""

from __future__ import annotations

import queue

import pytest

from conftest import watching, write_skill
from owner_client import bank_for



def broken(take: int) -> str:
    """A SKILL.md whose YAML does not parse; `take` comment lines move the error's line."""
    comments = "".join(f"# take {n}\n" for n in range(take))
    return f"---\nname: notes\n{comments}description: [Write release notes, oops\n---\n# v2\n"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_watcher_tells_a_broken_edit_and_its_mend(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        skill = write_skill(tmp_path / "root" / "skills", "notes", "Write release notes.")
        bank.skills.sync()
        with watching(bank) as reports:
            def until_told(edit, wanted):
                """Edit (again, a little differently each time: the watcher may take the first
                edit in as its starting state) until a report shows it; a ceiling for a loaded
                machine, not a speed."""
                for version in range(60):
                    edit(version)
                    try:
                        report = reports.get(timeout=5)
                    except queue.Empty:
                        continue
                    if wanted(report):
                        return report
                raise AssertionError("the watcher told nothing")

            told = until_told(lambda n: skill.write_text(broken(n)),
                              lambda r: any(f.severity == "error" for f in r.findings))
            assert not told.changed_anything  # the last good version is still served
            assert any("notes" in (f.path or "") for f in told.findings)

            mended = until_told(lambda n: write_skill(tmp_path / "root" / "skills", "notes",
                                                      f"Write release notes well, take {n}."),
                                lambda r: "notes" in r.changed)
            assert not any(f.severity == "error" for f in mended.findings)


def test_the_sync_summary_lists_served_skills_alone_as_flagged(tmp_path):
    """`skills sync` listed a shadowed copy (not served) and a SKILL.md that does not parse as
    "break the Agent Skills spec (…; served, flagged)" by their folder names, and sent the
    author to `skills validate` for shadowed skills, which never names them (hunt-author #5,
    session 24). Through the real CLI."""
    from typer.testing import CliRunner

    from skillbank.cli import app

    def sync(*args: str) -> str:
        result = CliRunner().invoke(app, ["--no-bundled", *args, "skills", "sync"])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    for folder, name, what in (("dA/csv-import", "csv-import", "A"),
                               ("dB/csv-import", "csv-import", "B"),
                               ("dB/other-folder", "csv-import", "B2")):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Import CSV files ({what}).\n---\n{what}\n")
    said = sync("--root", str(tmp_path / "r"), "--skills-dir", str(tmp_path / "dA"),
                "--skills-dir", str(tmp_path / "dB"))
    assert "served, flagged" not in said and "other-folder" not in said, said
    assert "2 skills shadowed" in said and "skills validate" not in said, said
    assert 'code "shadowed"' in said, said

    own = write_skill(tmp_path / "r2" / "skills", "notes", "Write release notes.")
    sync("--root", str(tmp_path / "r2"))
    own.write_text("---\nname: notes\ndescription: [broken\n---\nx\n")
    said = sync("--root", str(tmp_path / "r2"))
    assert "could not be loaded" in said and "served, flagged" not in said, said
