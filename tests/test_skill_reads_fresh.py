"""A long-running process sees the skill folders as they are: skills added, edited and removed
on disk reach its agent within seconds, and an edited skill is never shown half old, half new.

Why (hunt-author #4, session 24): a LangChain agent set up as the README shows
(`Skillbank.open(root, skill_roots=[dir])`, `SkillbankMiddleware(bank)`, one process) never saw
a skill the author added between two runs, and showed an edited one with its old description
under "Skills that may apply" and its new body under "Skill instructions". Only a file watcher
kept the index current, and nothing in such a process started one. Now a skill read re-checks
the folders when due (`skills_recheck_seconds`, default 2 s) and a search whose hits changed on
disk syncs first (skillbank/memories/skills/freshness.py).

Each test runs in this process and through a client of an owner process (which watches the
folders from its first client on); the switch and the listing cache are this process's own.
"""

from __future__ import annotations

import itertools
import shutil
import time
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank import Skillbank

WAIT = 60  # generous: a loaded CI machine; the re-check is due 2 s after the last one
PDF_TASK = "Fill the PDF form from my spreadsheet"
SVG_TASK = "Draw an SVG icon of a house"


def write(folder: Path, name: str, description: str, body: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# Steps\n\n1. {body}\n")


def first_versions(folder: Path) -> None:
    write(folder, "pdf-forms", "Fill PDF form fields from spreadsheet values. VERSION-ONE.",
          "Read each spreadsheet row and type it into the form. BODY-ONE")


def author_edits(folder: Path) -> None:
    """What the author does between two runs: a new skill, and a skill edited (description
    and body)."""
    write(folder, "svg-icons", "Draw small SVG icons by hand. NEW-SKILL.",
          "Write the path data by hand on a 24x24 grid. SVG-BODY")
    write(folder, "pdf-forms", "Fill PDF form fields from spreadsheet values. VERSION-TWO.",
          "Map the spreadsheet columns to the form's field names first. BODY-TWO")


def never_mixed(text: str) -> str:
    """A skill is shown as one version: never one description beside the other's body."""
    assert not ("VERSION-ONE" in text and "BODY-TWO" in text), text
    assert not ("VERSION-TWO" in text and "BODY-ONE" in text), text
    return text


def until(read, done, what: str):
    deadline = time.monotonic() + WAIT
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {WAIT} s; last seen: {value!r}")
        time.sleep(0.1)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_langchain_agent_sees_skills_added_and_edited_between_runs(tmp_path, remote, minilm):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from scripted import Scripted

    from skillbank.adapters.langchain import SkillbankMiddleware

    folder = tmp_path / "team-skills"
    first_versions(folder)
    with bank_for(tmp_path, remote, minilm, skill_roots=(folder,)) as bank:
        model = Scripted(messages=itertools.repeat("Done."))
        agent = create_agent(model, tools=[], middleware=[SkillbankMiddleware(bank)])

        def run(task: str) -> str:
            """One agent run; the text of the request the model was sent."""
            agent.invoke({"messages": [{"role": "user", "content": task}]})
            return never_mixed("\n".join(str(m.content) for m in model.seen[-1]))

        first = run(PDF_TASK)
        assert "VERSION-ONE" in first and "BODY-ONE" in first
        author_edits(folder)  # and the next run at once: one version or the other, never both
        edited = until(lambda: run(PDF_TASK), lambda text: "VERSION-TWO" in text,
                       "the edited description reaches the agent")
        assert "BODY-TWO" in edited and "VERSION-ONE" not in edited
        until(lambda: run(SVG_TASK), lambda text: "NEW-SKILL" in text,
              "the skill added on disk reaches the agent")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_context_and_search_in_a_loop_follow_the_folders(tmp_path, remote, minilm):
    folder = tmp_path / "team-skills"
    first_versions(folder)
    with bank_for(tmp_path, remote, minilm, skill_roots=(folder,)) as bank:
        assert "BODY-ONE" in bank.context_for(PDF_TASK).text
        author_edits(folder)
        never_mixed(bank.context_for(PDF_TASK).text)  # the very next block
        until(lambda: never_mixed(bank.context_for(PDF_TASK).text),
              lambda text: "VERSION-TWO" in text and "BODY-TWO" in text,
              "the edited skill in the block")
        found = until(lambda: [hit.name for hit in bank.skills.search(SVG_TASK)],
                      lambda names: "svg-icons" in names, "the added skill found")
        assert found[0] == "svg-icons"
        assert "svg-icons" in [skill.name for skill in bank.skills.list()]
        shutil.rmtree(folder / "svg-icons")
        until(lambda: [hit.name for hit in bank.skills.search(SVG_TASK)],
              lambda names: "svg-icons" not in names, "the removed skill gone from search")
        assert "svg-icons" not in [skill.name for skill in bank.skills.list()]


def test_skills_recheck_seconds_0_leaves_syncing_to_the_caller(tmp_path, minilm):
    """The switch: a process that syncs by itself (the CLI does, once per command) turns the
    re-check off; its reads answer from the index until it syncs."""
    folder = tmp_path / "team-skills"
    first_versions(folder)
    with Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=minilm,
                        skills_recheck_seconds=0) as bank:
        author_edits(folder)
        hits = bank.skills.search(PDF_TASK)
        assert "VERSION-ONE" in hits[0].record.description
        assert bank.skills.sync().added == ["svg-icons"]
        assert "VERSION-TWO" in bank.skills.search(PDF_TASK)[0].record.description


def test_folders_listed_once_still_show_what_changed_in_them(tmp_path, monkeypatch, minilm):
    """A re-check lists only folders whose mtime or ctime moved since the last one; every
    listing is kept here (none counts as racy), so the kept ones are what answers."""
    from skillbank.memories.skills import freshness

    monkeypatch.setattr(freshness, "RACY_NS", -(10 ** 18))
    folder = tmp_path / "team-skills"
    first_versions(folder / "documents")
    write(folder / "drawing", "raster-crop", "Crop raster images to a bounding box.",
          "Open the image and crop it. CROP-BODY")
    with Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=minilm,
                        skills_recheck_seconds=0.01) as bank:
        names = lambda: sorted(skill.name for skill in bank.skills.list())  # noqa: E731
        assert until(names, lambda seen: bool(bank.skills.freshness._listings._kept),
                     "the folders' listings kept") == ["pdf-forms", "raster-crop"]
        author_edits(folder / "drawing")  # a new folder in a listed group; a new skill there
        shutil.rmtree(folder / "drawing" / "raster-crop")
        (folder / "drawing" / "pdf-forms").rename(folder / "documents" / "pdf-forms-v2")
        shutil.rmtree(folder / "documents" / "pdf-forms")
        until(names, lambda seen: seen == ["pdf-forms", "svg-icons"],
              "added, removed and moved skills listed")
        assert "VERSION-TWO" in bank.skills.load("pdf-forms").description


def test_an_edit_between_the_search_and_the_body_load_shows_one_version(tmp_path, minilm):
    """The block's skill line and its instructions come from one file version, also when the
    author saves between the block's search and its load of the top skill's body (session 24's
    leftover: a millisecond window showed VERSION-ONE's description beside BODY-TWO).
    In process only: the edit is put exactly into that window by wrapping this bank's load."""
    folder = tmp_path / "team-skills"
    first_versions(folder)
    with Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=minilm) as bank:
        assert "VERSION-ONE" in bank.context_for(PDF_TASK).text
        real_load = bank.skills.load

        def load_after_an_edit(name, *args, **kwargs):
            if name == "pdf-forms":
                author_edits(folder)  # saved after the search ranked VERSION-ONE's record
            return real_load(name, *args, **kwargs)

        bank.skills.load = load_after_an_edit
        text = never_mixed(bank.context_for(PDF_TASK).text)
        assert "BODY-TWO" in text and "VERSION-TWO" in text, text
