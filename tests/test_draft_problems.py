"""A draft folder that cannot be read as a draft is named, with why, not left out in silence.

hunt-ui #8 (session 27): a damaged `drafts/<name>/.draft.json` (a hand edit, a half-written copy)
made the draft vanish from the browser's Skills page and from `skillbank skills drafts` without
a word (its page: "no pending draft named …"), its folder still there. Now
`skills.draft_problems()` names each such folder and why (as `guidelines.problems()` names rule
files), the Skills page lists them under "Draft folders that could not be read", the draft's
page says why it is not a draft, and `skillbank skills drafts` prints them.

Through the API (in process and as a client of an owner process), the browser over HTTP, and
the CLI.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_ui_security import client

CSV_TASKS = [
    "Import the sales CSV file into the orders database table",
    "Import the customers CSV file into the accounts database table",
    "Import the returns CSV file into the refunds database table",
]


def _draft(bank) -> tuple[str, Path]:
    for task in CSV_TASKS:
        bank.experiences.record(
            task=task, outcome="success", when_to_use="When loading CSV exports into a database",
            steps=[{"action": "detect_encoding"}, {"action": "copy_into_table"}],
            lessons=["Detect the file encoding before parsing."])
    [draft] = bank.skills.propose(min_support=3)
    return draft.name, Path(draft.path).parent


def _damage(folder: Path, how: str) -> str:
    meta = folder / ".draft.json"
    if how == "not-json":
        meta.write_text("{not json", encoding="utf-8")
        return ".draft.json is not valid JSON"
    if how == "not-a-record":
        meta.write_text(json.dumps({"name": folder.name}), encoding="utf-8")
        return ".draft.json is not a draft record"
    data = json.loads(meta.read_text(encoding="utf-8"))
    meta.write_text(json.dumps({**data, "name": "another-name"}), encoding="utf-8")
    return ".draft.json names the draft 'another-name'"


@pytest.mark.parametrize("how", ["not-json", "not-a-record", "other-name"])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_damaged_draft_record_is_named_with_why(tmp_path, remote, how):
    """Fails before: the draft was in no list and nothing named its folder."""
    with bank_for(tmp_path, remote) as bank:
        name, folder = _draft(bank)
        why = _damage(folder, how)
        assert bank.skills.drafts() == []
        [problem] = bank.skills.draft_problems()
        assert problem.path == str(folder) and problem.severity == "error"
        assert why in problem.message and f"draft {name!r}" in problem.message
        assert sorted(p.name for p in folder.iterdir()) == [".draft.json", "SKILL.md"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_browser_names_the_damaged_draft(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        name, folder = _draft(bank)
        why = _damage(folder, "not-json")
        c, _ = client(bank)
        page = c.get("/skills").text
        assert 'id="draft-problems"' in page and "Draft folders that could not be read" in page
        listed = page[page.index('id="draft-problems"'):]
        assert str(folder) in listed and why in listed
        draft_page = c.get(f"/drafts/{name}")
        assert draft_page.status_code == 404 and why in draft_page.text


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_skills_drafts_names_the_damaged_draft(cli_root, remote):
    from typer.testing import CliRunner

    from owner_client import owner_process
    from skillbank.cli import app

    cli_root.mkdir(parents=True, exist_ok=True)
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        name, folder = _draft(bank)
    why = _damage(folder, "not-json")
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        result = CliRunner().invoke(app, ["--no-bundled", "skills", "drafts"])
        assert result.exit_code == 0, result.output
        said = " ".join(result.output.split())
        assert f"could not read {folder}: draft {name!r}: {why}" in said
        as_json = CliRunner().invoke(app, ["--no-bundled", "--json", "skills", "drafts"])
        assert as_json.exit_code == 0, as_json.output
        [listed] = json.loads(as_json.output)["unreadable_drafts"]
        assert listed["path"] == str(folder) and why in listed["message"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_only_a_reviewer_of_the_banks_namespace_is_told(tmp_path, remote):
    """A record that cannot be read names no namespace: the folder is taken as the bank's
    namespace's (as a draft written before namespaces were recorded), so a reviewer of another
    namespace (`skillbank --namespace bob ui`) is told nothing of it, and a contributor may not
    ask."""
    from skillbank.errors import PermissionDeniedError
    from skillbank.scope import Scope

    bob_lead = Scope(principal="bob-lead", namespace="bob", role="reviewer", face="test")
    bob = Scope(principal="bob", namespace="bob", role="contributor", face="test")
    with bank_for(tmp_path, remote) as bank:
        _, folder = _draft(bank)
        _damage(folder, "not-json")
        assert len(bank.skills.draft_problems()) == 1  # the bank's own user reviews it
        assert bank.scoped(bob_lead).skills.draft_problems() == []
        with pytest.raises(PermissionDeniedError):
            bank.scoped(bob).skills.draft_problems()
        c, _ = client(bank.scoped(bob_lead))
        assert 'id="draft-problems"' not in c.get("/skills").text


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_readable_records_namespaces_decide_who_is_told(tmp_path, remote):
    """review2 #5 (session 27): a damaged draft whose record reads (its SKILL.md gone) went to
    whoever reviews the bank's namespace, another namespace's private draft name included, and
    to none of its own namespace's reviewers; a record naming a bad skill vanished unlisted."""
    from skillbank.scope import Scope

    bob_lead = Scope(principal="bob-lead", namespace="bob", role="reviewer", face="test")
    with bank_for(tmp_path, remote) as bank:
        bob = bank.scoped(bob_lead)
        _, folder = _draft(bob)
        (folder / "SKILL.md").unlink()
        lead = Scope(principal="lead", namespace="default", role="reviewer", face="test")
        assert bank.scoped(lead).skills.draft_problems() == []  # he may not read bob's runs
        [told] = bob.skills.draft_problems()
        assert "SKILL.md is missing" in told.message
        (folder / "SKILL.md").write_text("---\nname: x\ndescription: y\n---\n", encoding="utf-8")
        meta = folder / ".draft.json"
        meta.write_text(json.dumps({**json.loads(meta.read_text()), "skill": "Bad Name!"}))
        [told] = bob.skills.draft_problems()
        assert "names the skill 'Bad Name!'" in told.message
