"""`forget("skill:<name>")` deletes a bank-owned skill for good, and every description of it
says so.

The deletion is on purpose ("forget means gone", skillbank/forgetting.py and docs/scope.md):
`skills delete` is the removal that keeps a trash copy. The docs, the `Skillbank.forget`
docstring and, above all, the tool text a model reads said the skill moved to the trash, so an
agent would promise the user a restore that cannot happen. Checked in process and through a
client of an owner.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.tool_text import TOOL_DESCRIPTIONS

REPO = Path(__file__).resolve().parents[1]


def forget_a_skill(bank, root: Path) -> dict:
    bank.skills.create("release-notes", "Write release notes from merged changes.",
                       "# Steps\n\n1. Group by kind.\n",
                       resources={"references/style.md": "# Style\n"})
    kept = root / "skills" / "release-notes" / ".versions"  # earlier versions (adopt, restore)
    kept.mkdir()
    (kept / "20250101T000000.md").write_text("an earlier text\n")
    result = bank.forget("skill:release-notes")
    assert result["forgotten"] and "for good" in result["detail"]
    assert not (root / "skills" / "release-notes").exists()
    trash = root / ".trash"
    assert not trash.exists() or not any(trash.rglob("*")), "a copy was kept"
    return result


def test_forget_deletes_a_skill_for_good_in_process(tmp_path):
    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        share=False) as bank:
        forget_a_skill(bank, root)


def test_forget_deletes_a_skill_for_good_through_a_client(tmp_path):
    root = tmp_path / "root"
    with client_of_owner(root) as bank:
        forget_a_skill(bank, root)


#: How the descriptions used to put it (each one false: nothing goes to the trash).
TRASH_PROMISES = ("moved to the trash", "moves a bank-owned skill to the trash",
                  "skill:<name> to the trash", "goes to `<root>/.trash`",
                  "move a bank-owned skill to the trash", "file -> guidelines/.trash/",
                  "deletes (to the trash")


@pytest.mark.parametrize("where, text", [
    ("the tool text", lambda: TOOL_DESCRIPTIONS["forget"]),
    ("the Skillbank.forget docstring", lambda: Skillbank.forget.__doc__),
    ("docs/api.md", lambda: (REPO / "docs" / "api.md").read_text()),
    ("docs/mcp.md", lambda: (REPO / "docs" / "mcp.md").read_text()),
])
def test_no_description_of_forget_promises_the_trash(where, text):
    flat = " ".join(text().split())
    promising = [phrase for phrase in TRASH_PROMISES if phrase in flat]
    assert not promising, f"{where} says a forgotten item goes to the trash: {promising}"
    assert "for good" in flat or "gone" in flat, where


def test_the_tool_text_tells_the_agent_it_cannot_be_undone():
    text = TOOL_DESCRIPTIONS["forget"]
    assert "for good" in text and "skill:<name>" in text
    assert "cannot be undone" in text and "trash" not in text


def _renamed_then_forgotten(bank, root: Path) -> None:
    """A renamed skill's text was kept under its old name in `skill-last-good/` (the copy a
    half-saved file is served from) and in `.trash/` (the folder the rename moved away), and
    forgetting the new name left both there."""
    bank.skills.create("draft-notes", "Draft release notes from merged changes.",
                       "# Steps\n\n1. Quote the zebra-migration ticket.\n")
    bank.skills.rename("draft-notes", "release-digest")
    bank.forget("skill:release-digest")
    left = [p for p in root.rglob("*") if p.is_file() and "chroma" not in p.parts
            and b"zebra-migration" in p.read_bytes()]  # (Chroma's file: erase_from_chroma)
    assert not left, left


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_renamed_skill_forgotten_leaves_no_copy(tmp_path, remote):
    root = tmp_path / "root"
    opened = client_of_owner(root) if remote else Skillbank.open(
        root, embedding_function=HashEmbedding(), include_bundled=False, share=False)
    with opened as bank:
        _renamed_then_forgotten(bank, root)


def _removed_by_hand_then_forgotten(bank, root: Path) -> None:
    """The folder went by hand and `forget` ran before a sync: the kept copy of the text the
    skill was indexed from (`skill-last-good/`) stayed for good (review, session 20)."""
    import shutil

    from skillbank.errors import NotFoundError

    bank.skills.create("walrus-runbook", "Run the walrus-protocol drill.",
                       "# Steps\n\n1. Page the walrus-protocol owner.\n")
    shutil.rmtree(root / "skills" / "walrus-runbook")
    with pytest.raises(NotFoundError):
        bank.forget("skill:walrus-runbook")
    bank.skills.sync()
    left = [p for p in root.rglob("*") if p.is_file() and "chroma" not in p.parts
            and b"walrus-protocol" in p.read_bytes()]
    assert not left, left


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_removed_by_hand_then_forgotten_leaves_no_copy(tmp_path, remote):
    root = tmp_path / "root"
    opened = client_of_owner(root) if remote else Skillbank.open(
        root, embedding_function=HashEmbedding(), include_bundled=False, share=False)
    with opened as bank:
        _removed_by_hand_then_forgotten(bank, root)
