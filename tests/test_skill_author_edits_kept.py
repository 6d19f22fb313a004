"""An author's edit of an own skill is never undone by a draft or an update built on older text.

hunt-author #1 (session 24): `skills propose` drew a revision draft from `csv-load`; the author
then changed the skill (`skills update -b '... ## AUTHOR EDIT ...'`); `skills adopt csv-load`
wrote the draft, built on the OLD body, over it, silently (the edit survived in `.versions/`
only), and `skills drafts --diff` still showed the diff of propose time (`+` lines only), so the
reviewer was told nothing would be removed. Now a revision keeps the hash of the text it was
drawn from, its diff is against the skill as it is, adopting it once the skill changed is
refused, and `propose` draws an untouched stale revision again from the current text.

hunt-author #2: `skills update notes -d ...` of an own skill whose SKILL.md did not parse
(hand-edited, YAML slip) wrote the last good body over the hand-written one, exit 0. Now
`update` (and `rename`, which writes the renamed copy from the same text) refuse, naming the
parse error and the way out; `save` (a whole new text) still replaces it, keeping it as a version.

In process and through a client of another process that owns the root; the CLI and the browser
as people meet them.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from owner_client import bank_for, owner_process
from skillbank.errors import InvalidInputError

CSV = "csv-load"
CSV_DESCRIPTION = "Import CSV exports into a database table."
OLD_BODY = "# Steps\n\n1. COPY the rows.\n"
EDITED_BODY = OLD_BODY + "\n## AUTHOR EDIT\n\nAlways back up the table first.\n"
LESSON = "Truncate the staging table before COPY"
RUNS = itertools.count(1)

NOTES = "notes"
HAND_WRITTEN = ("---\nname: notes\ndescription: [Write release notes, now broken\n---\n"
                "# v2 NEW BODY written by hand\n")


def fail_twice(bank, name: str = CSV, lesson: str = LESSON) -> None:
    for table in ("shipments", "refunds"):
        bank.experiences.record(
            task=f"Import the {table} CSV into postgres (run {next(RUNS)})", outcome="failure",
            tags=[f"skill:{name}"], lessons=[{"kind": "failure_trigger",
                                              "text": f"{lesson} ({table})."}])


def revision(bank, name: str = CSV):
    (draft,) = [d for d in bank.skills.drafts() if d.revises == name]
    return draft


def skill_md(bank, name: str) -> Path:
    return Path(bank.root) / "skills" / name / "SKILL.md"


# ------------------------------------------------------------------ #1: a stale revision draft

@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_revision_drawn_before_the_author_s_edit_is_not_adopted_over_it(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.create(CSV, CSV_DESCRIPTION, OLD_BODY)
        fail_twice(bank)
        (proposed,) = bank.skills.propose()
        assert proposed.revises == CSV and not proposed.base_changed
        assert "\n-" not in proposed.diff  # only additions, against the text it was drawn from

        bank.skills.update(CSV, body=EDITED_BODY)  # the author, while the draft waits
        stale = revision(bank)
        assert stale.base_changed
        assert "-## AUTHOR EDIT" in stale.diff  # what adopting would remove is shown now
        versions_before = len(bank.skills.history(CSV))
        with pytest.raises(InvalidInputError) as refused:
            bank.skills.adopt(CSV)
        message = str(refused.value)
        assert "changed since this revision was drawn" in message
        assert "skillbank skills propose" in message and "edit-draft" in message
        assert "## AUTHOR EDIT" in skill_md(bank, CSV).read_text()  # nothing written
        assert len(bank.skills.history(CSV)) == versions_before
        assert revision(bank).name == CSV  # still pending

        # Drawn again from the skill as it is: adopting it keeps the edit and adds the lesson.
        (redrawn,) = bank.skills.propose()
        assert redrawn.revises == CSV and not revision(bank).base_changed
        assert "\n-" not in revision(bank).diff and "+- " + LESSON in revision(bank).diff
        adopted = bank.skills.adopt(CSV)
        assert "## AUTHOR EDIT" in adopted.body and LESSON in adopted.body
        assert bank.skills.drafts() == [] and bank.skills.propose() == []


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_person_s_draft_is_never_redrawn_and_is_adopted_once_written_on_the_current_text(
        tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.create(CSV, CSV_DESCRIPTION, OLD_BODY)
        fail_twice(bank)
        (proposed,) = bank.skills.propose()
        by_hand = Path(proposed.path).read_text().replace(LESSON, LESSON + ", every time")
        Path(proposed.path).write_text(by_hand)  # a reviewer's edit of the draft file
        bank.skills.update(CSV, body=EDITED_BODY)  # then the author's edit of the skill

        assert bank.skills.propose() == []  # a person's text is never written over
        assert Path(proposed.path).read_text() == by_hand
        with pytest.raises(InvalidInputError) as refused:
            bank.skills.adopt(CSV)
        assert "skills propose" not in str(refused.value)  # it would not redraw this one
        assert "## AUTHOR EDIT" in skill_md(bank, CSV).read_text()

        # The reviewer writes the revision onto the current text: that is what is adopted.
        current = skill_md(bank, CSV).read_text()
        merged = current.rstrip("\n") + f"\n\n## Pitfalls\n\n- {LESSON}, every time.\n"
        edited = bank.skills.edit_draft(CSV, merged)
        assert not edited.base_changed and "\n-" not in edited.diff
        adopted = bank.skills.adopt(CSV)
        assert "## AUTHOR EDIT" in adopted.body and f"{LESSON}, every time" in adopted.body


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_cli_and_the_browser_say_a_revision_is_stale(cli_root, tmp_path, remote):
    from starlette.testclient import TestClient

    from skillbank import Skillbank
    from skillbank.cli import app
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import Guard, create_app

    def cli(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, ["--no-bundled", *args])
        return result.exit_code, result.output

    cli_root.mkdir(parents=True, exist_ok=True)
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        assert cli("skills", "new", CSV, "-d", CSV_DESCRIPTION, "-b", OLD_BODY)[0] == 0
        for table in ("shipments", "refunds"):
            assert cli("experiences", "record", "--task", f"Import the {table} CSV into postgres",
                       "--outcome", "failure", "--tag", f"skill:{CSV}",
                       "--lesson", f"{LESSON} ({table}).")[0] == 0
        assert CSV in cli("skills", "propose")[1]
        assert cli("skills", "update", CSV, "-b", EDITED_BODY)[0] == 0
        code, out = cli("skills", "drafts", "--diff")
        assert code == 0 and "-## AUTHOR EDIT" in out, out
        assert "changed since this revision was drawn" in out, out
        code, out = cli("skills", "adopt", CSV)
        assert code == 2 and "changed since this revision was drawn" in out, out
        assert "## AUTHOR EDIT" in (cli_root / "skills" / CSV / "SKILL.md").read_text()
        listed = json.loads(cli("--json", "skills", "drafts")[1])
        assert [d["base_changed"] for d in listed["drafts"]] == [True]
    if not remote:  # the browser, on the bank of a person at the machine
        with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                            include_bundled=False) as bank:
            browser = TestClient(create_app(bank, Guard()), base_url="http://127.0.0.1:8765")
            page = browser.get(f"/drafts/{CSV}")
            assert page.status_code == 200 and 'id="draft-base-changed"' in page.text
            assert "-## AUTHOR EDIT" in page.text


# ------------------------------------------------------- #2: an update of a file that does not parse

@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_update_never_writes_the_last_good_version_over_a_hand_edit(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.create(NOTES, "Write release notes.", "# v1 old body\n")
        path = skill_md(bank, NOTES)
        path.write_text(HAND_WRITTEN)  # the author, mid-edit, with a slip in the YAML
        kept = len(bank.skills.history(NOTES))
        for change in ({"description": "Write release notes from merged PRs."},
                       {"body": "# v3\n"}):  # -b alone reverted the description the same way
            with pytest.raises(InvalidInputError) as refused:
                bank.skills.update(NOTES, **change)
            message = str(refused.value)
            assert "does not parse" in message and "(line " in message, message
            assert f"skillbank skills history {NOTES}" in message
            assert path.read_text() == HAND_WRITTEN  # nothing written
        with pytest.raises(InvalidInputError, match="does not parse"):
            bank.skills.rename(NOTES, "release-notes")  # built from the same last good text
        assert path.read_text() == HAND_WRITTEN
        assert not (path.parent.parent / "release-notes").exists()
        assert len(bank.skills.history(NOTES)) == kept

        # `save` sends a whole new text: it replaces the file, which is kept as a version.
        saved = bank.skills.save(NOTES, "Write release notes from merged PRs.", "# v3\n")
        assert saved.body == "# v3\n"
        assert Path(bank.skills.history(NOTES)[0].path).read_text() == HAND_WRITTEN


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_no_revision_is_drawn_on_the_last_good_text_of_a_skill_being_edited(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.create(NOTES, "Write release notes.", "# v1 old body\n")
        skill_md(bank, NOTES).write_text(HAND_WRITTEN)
        fail_twice(bank, NOTES, "Link every pull request in the notes")
        assert bank.skills.propose() == []  # adopting it would undo the edit under way
        skill_md(bank, NOTES).write_text(HAND_WRITTEN.replace("[Write", "Write"))  # fixed
        (draft,) = bank.skills.propose()
        assert draft.revises == NOTES and "+# v2 NEW BODY" not in draft.diff
        assert "# v2 NEW BODY" in bank.skills.adopt(NOTES).body


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_cli_update_refuses_and_says_how_to_go_on(cli_root, remote):
    from skillbank.cli import app

    runner = CliRunner()
    cli_root.mkdir(parents=True, exist_ok=True)
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        assert runner.invoke(app, ["--no-bundled", "skills", "new", NOTES, "-d",
                                   "Write release notes.", "-b", "# v1 old body\n"]).exit_code == 0
        path = cli_root / "skills" / NOTES / "SKILL.md"
        path.write_text(HAND_WRITTEN)
        result = runner.invoke(app, ["--no-bundled", "skills", "update", NOTES, "-d", "New."])
        assert result.exit_code == 2, result.output
        assert "does not parse" in result.output and f"skills history {NOTES}" in result.output
        assert path.read_text() == HAND_WRITTEN
