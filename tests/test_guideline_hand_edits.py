"""A rule a person rewrites, retires or deletes by hand is served as the file says at once.

The files are the truth, yet `guidelines.search()` and `context_for()` served the old text of
a rule retired, rewritten or deleted on disk until some other call (a get, a list, a write)
happened to read the files again: forever, in an agent that only reads. In process and
through a client of an owner process.
"""

from __future__ import annotations

from pathlib import Path

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
