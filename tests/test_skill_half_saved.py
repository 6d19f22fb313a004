"""A half-saved SKILL.md keeps its skill routed and served as its last good version (hunt-skills,
session 20, #4).

An editor's save caught half way, a `git checkout` mid-way or a sync tool left the file
truncated; the watcher re-synced and the skill vanished: MCP `find_skills` returned [] and
`load_skill` said "no skill named 'recipe-scaler'", so an agent concluded it did not exist.
Now the index entry stays while the file at the same path does not parse (the sync reports the
parse error and a `kept-last-good` warning); `load` serves the bank's own skill from the text it
was indexed from, with a note; a team or third-party skill is never served from a copy (its
trust is judged on its files as they are: "being edited … try again", or held when pinned); a
skill that never parsed is reported and never served; the entry is replaced when the file
parses again and goes when the folder goes. In process, through a client of an owner process,
and with the owner's watcher doing the syncs.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from owner_client import bank_for, client_bank, owner_process
from skillbank.errors import HeldError, InvalidInputError, NotFoundError

NAME = "recipe-scaler"
TASK = "scale this recipe to 10 servings"


def _skill_md(root: Path) -> Path:
    return root / "skills" / NAME / "SKILL.md"


def _save(bank) -> str:
    bank.skills.save(NAME, "Scale a cooking recipe to a different number of servings.",
                     "# Steps\n1. Multiply every quantity.\n")
    return _skill_md(bank.root).read_text()


def _half_saved(bank, good: str):
    _skill_md(bank.root).write_text(good[:40])  # truncated inside the frontmatter
    return bank.skills.sync()


def _check_kept(bank, good: str) -> None:
    assert NAME in [h.name for h in bank.skills.search(TASK)]
    report = _half_saved(bank, good)
    codes = {f.code for f in report.findings if f.path == str(_skill_md(bank.root))}
    assert "kept-last-good" in codes and NAME not in report.removed
    assert NAME in bank.skills.names()
    assert NAME in [h.name for h in bank.skills.search(TASK)]  # still routed
    loaded = bank.skills.load(NAME)  # served: the last good version, and why
    assert "Multiply every quantity" in loaded.body
    assert any("being edited" in n for n in loaded.notes)


def _check_replaced_then_gone(bank, good: str) -> None:
    newer = good.replace("Scale a cooking recipe", "Scale a baking recipe")
    _skill_md(bank.root).write_text(newer)
    bank.skills.sync()
    loaded = bank.skills.load(NAME)
    assert loaded.description.startswith("Scale a baking recipe") and not loaded.notes
    _half_saved(bank, newer)  # broken again: the newer version is the last good one now
    assert bank.skills.load(NAME).description.startswith("Scale a baking recipe")
    shutil.rmtree(_skill_md(bank.root).parent)
    assert NAME in bank.skills.sync().removed
    with pytest.raises(NotFoundError):
        bank.skills.load(NAME)


def _check_never_parsed(bank) -> None:
    folder = bank.root / "skills" / "never-good"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: never-good\ndescription: [unclosed\n")
    report = bank.skills.sync()
    assert str(folder / "SKILL.md") in report.skipped
    assert not any(f.code == "kept-last-good" for f in report.findings)
    assert "never-good" not in bank.skills.names()
    with pytest.raises(NotFoundError):
        bank.skills.load("never-good")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_half_saved_skill_stays_served_as_its_last_good_version(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        good = _save(bank)
        _check_kept(bank, good)
        _check_replaced_then_gone(bank, good)
        _check_never_parsed(bank)


def test_a_bank_opened_while_the_file_is_broken_still_serves_it(tmp_path):
    """The kept text is on disk, so an owner started mid-edit (or a restart) serves it too."""
    with bank_for(tmp_path, False) as bank:
        good = _save(bank)
    _skill_md(tmp_path / "root").write_text(good[:40])
    with bank_for(tmp_path, False) as bank:
        assert "Multiply every quantity" in bank.skills.load(NAME).body


def test_a_stale_copy_is_never_served(tmp_path):
    """The copy is served only when it is the very text the index entry was made from."""
    from skillbank.memories.skills import last_good

    with bank_for(tmp_path, False) as bank:
        good = _save(bank)
        last_good.keep(bank.root, NAME, good.replace("Multiply", "Delete").encode())
        _half_saved(bank, good)
        with pytest.raises(InvalidInputError, match="being edited"):
            bank.skills.load(NAME)


def _vendor(tmp_path: Path) -> Path:
    folder = tmp_path / "vendor" / "csv-report"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: csv-report\ndescription: Summarise a CSV file "
                                     "into a short report.\n---\n# Steps\nTotal each column.\n")
    return folder / "SKILL.md"


@contextmanager
def _bank_with_vendor(tmp_path: Path, skill_md: Path):
    """A bank beside a third-party skill folder (no scanner: trust by the folder alone)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False, skill_roots=[str(skill_md.parents[1])],
                        sync=False) as bank:
        bank.skills.scanner_python = ""
        bank.skills.sync()
        yield bank


def test_a_third_party_skill_is_never_served_from_an_older_version(tmp_path):
    """Trust is judged on a third-party skill's files as they are: while its SKILL.md does not
    parse it stays routed but `load` says "being edited"; an accepted (pinned) one is held."""
    skill_md = _vendor(tmp_path)
    good = skill_md.read_text()
    with _bank_with_vendor(tmp_path, skill_md) as bank:
        assert "Total each column" in bank.skills.load("csv-report").body
        skill_md.write_text(good[:30])
        bank.skills.sync()
        assert "csv-report" in bank.skills.names()
        with pytest.raises(InvalidInputError, match="being edited.*third-party"):
            bank.skills.load("csv-report")
        assert not (bank.root / "skill-last-good").exists()  # never copied
        skill_md.write_text(good)
        bank.skills.sync()
        bank.skills.review_skill("csv-report", "accept")
        skill_md.write_text(good[:30])
        bank.skills.sync()
        with pytest.raises(HeldError):
            bank.skills.load("csv-report")


def _until(check, what: str, seconds: float = 120.0):
    """Wait for the owner's watcher (no timing asserted: a generous deadline, then fail)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.2)
    raise AssertionError(f"the owner's watcher never got to: {what}")


def test_the_owners_watcher_keeps_a_half_saved_skill(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root, watch=True), client_bank(root) as bank:
        good = _save(bank)
        _skill_md(root).write_text(good[:40])
        marker = root / "skills" / "marker" / "SKILL.md"  # written after: seen by the same
        marker.parent.mkdir()  # sync as the truncation, or a later one
        marker.write_text("---\nname: marker\ndescription: Water the office plants.\n---\nOk.\n")
        _until(lambda: "marker" in bank.skills.names(), "the new skill")
        assert NAME in [h.name for h in bank.skills.search(TASK)]
        assert "Multiply every quantity" in bank.skills.load(NAME).body
        _skill_md(root).write_text(good.replace("Scale a cooking", "Scale a baking"))
        _until(lambda: bank.skills.load(NAME).description.startswith("Scale a baking"),
               "the repaired file")
        shutil.rmtree(_skill_md(root).parent)
        _until(lambda: NAME not in bank.skills.names(), "the removed folder")


def test_a_skill_indexed_before_copies_were_kept_gets_one_at_the_next_sync(tmp_path):
    """Second review: a skill indexed by the code before last-good copies existed had none
    until its file changed, so a half-save answered "being edited" instead of serving it."""
    with bank_for(tmp_path, False) as bank:
        good = _save(bank)
        shutil.rmtree(bank.root / "skill-last-good")  # as a root indexed by an older version
        assert bank.skills.sync().unchanged >= 1
        _check_kept(bank, good)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_skill_md_read_as_a_file_is_the_version_load_serves(tmp_path, remote):
    """Session 20 left: `load` served the last good body while a read of the same SKILL.md as
    a resource (MCP `skill://NAME/SKILL.md`, the adapters' resource tools) returned the torn
    file. A person reviewing (`include_held`, `skills show -r`) still sees the file as it is."""
    with bank_for(tmp_path, remote) as bank:
        good = _save(bank)
        assert bank.skills.read_resource(NAME, "SKILL.md") == good
        _half_saved(bank, good)
        assert bank.skills.read_resource(NAME, "SKILL.md") == good
        assert bank.skills.read_resource(NAME, "SKILL.md", include_held=True) == good[:40]


async def test_an_mcp_client_reads_the_last_good_skill_md_and_a_vendor_one_is_refused(tmp_path):
    from mcp import Client

    from skillbank.mcp_server import build_server

    vendor_md = _vendor(tmp_path)
    vendor_good = vendor_md.read_text()
    with _bank_with_vendor(tmp_path, vendor_md) as bank:
        good = _save(bank)
        _half_saved(bank, good)
        vendor_md.write_text(vendor_good[:30])
        bank.skills.sync()
        async with Client(build_server(bank, trusted=True), mode="legacy") as client:
            read = await client.read_resource(f"skill://{NAME}/SKILL.md")
            assert read.contents[0].text == good
            # The listing describes the bytes a read serves (review: it gave the torn file's).
            listed = next(r for r in (await client.list_resources()).resources
                          if str(r.uri) == f"skill://{NAME}/SKILL.md")
            served = good.encode("utf-8")
            assert listed.size == len(served)
            assert (listed.meta or {})["skillbank/digest"] == \
                "sha256:" + hashlib.sha256(served).hexdigest()
            tool = await client.call_tool("read_skill_resource", {"name": NAME, "path": "SKILL.md"})
            assert "Multiply every quantity" in json.dumps(tool.structured_content or {}) + str(
                tool.content)
            from mcp.shared.exceptions import MCPError

            with pytest.raises(MCPError, match="being edited"):
                await client.read_resource("skill://csv-report/SKILL.md")
