"""A rule a person rewrites, retires or deletes by hand is served as the file says at once.

The files are the truth, yet `guidelines.search()` and `context_for()` served the old text of
a rule retired, rewritten or deleted on disk until some other call (a get, a list, a write)
happened to read the files again: forever, in an agent that only reads. In process and
through a client of an owner process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _hand_edits(bank) -> None:
    g = bank.guidelines
    gid = g.add("Keep slides to ten bullets.", topic="slides").guideline_id
    path = Path(g.get(gid).path)
    assert [h.id for h in g.search("make a slide deck with bullets", k=3)] == [gid]
    _edit(path, "\nKeep slides to ten bullets.", "\nKeep slides to three bullets.")
    assert [h.record.text for h in g.search("make a slide deck with bullets", k=3)] == [
        "Keep slides to three bullets."]
    _edit(path, "status: active", "status: retired")
    assert g.search("make a slide deck with bullets", k=3) == []
    assert gid not in bank.context_for("Make a slide deck with bullets").ids
    other = g.add("Never deploy on Fridays.", topic="deploys").guideline_id
    assert [h.id for h in g.search("deploy the release on friday", k=3)] == [other]
    Path(g.get(other).path).unlink()
    assert g.search("deploy the release on friday", k=3) == []


def test_hand_edits_are_served_at_once(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _hand_edits(bank)


def test_hand_edits_are_served_at_once_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        _hand_edits(bank)


def _broken_by_hand(bank) -> None:
    """A YAML slip in a hand edit: the rule is left out, and a reviewer is told which file and
    why (it vanished from every list with nothing naming the file)."""
    g = bank.guidelines
    gid = g.add("Keep slides to ten bullets.", topic="slides").guideline_id
    path = Path(g.get(gid).path)
    assert g.problems() == []
    _edit(path, "status: active", "status: [active")
    assert gid not in [x.id for x in g.list()]
    (problem,) = g.problems()
    assert problem.path and Path(problem.path).name == path.name and problem.message
    _edit(path, "status: [active", "status: active")
    assert g.problems() == [] and gid in [x.id for x in g.list()]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_file_a_hand_edit_broke_is_named(tmp_path, remote):
    from owner_client import bank_for

    with bank_for(tmp_path, remote) as bank:
        _broken_by_hand(bank)


def test_the_browser_and_the_cli_name_a_broken_guideline_file(tmp_path, cli_root):
    from starlette.testclient import TestClient
    from typer.testing import CliRunner

    from skillbank.cli import app
    from skillbank.ui import create_app

    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        gid = bank.guidelines.add("Keep slides to ten bullets.", topic="slides").guideline_id
        path = Path(bank.guidelines.get(gid).path)
        _edit(path, "status: active", "status: [active")
        page = TestClient(create_app(bank), base_url="http://127.0.0.1:8766").get("/guidelines")
        assert page.status_code == 200 and "could not be read" in page.text
        assert path.name in page.text
    result = CliRunner().invoke(app, ["--no-bundled", "guidelines", "list"])
    assert result.exit_code == 0 and f"could not read" in result.output
    assert path.name in result.output
