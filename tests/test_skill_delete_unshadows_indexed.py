"""Deleting or forgetting the bank's own skill that shadowed a third-party one of its name.

Session 33 (fix-skills #3): `delete` re-indexes the read-only skill the own copy shadowed
(`_unshadow`: a sync), and `forget skill:<name>` then erases the name's rows from Chroma's file
(`erase_from_chroma`: every write-ahead log row of that id and its sections). That order was
never checked: the index must hold the third-party skill, whole, and nothing of the deleted one,
in routing, the catalog and search, and again after a restart and a `reindex`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from owner_client import bank_for

NAME = "invoice-check"
OWN = "Check zebrafish invoices for duplicated zebrafish tank charges."
VENDOR = "Check walrus invoices for duplicated walrus tusk charges."


@pytest.fixture
def vendor(tmp_path) -> Path:
    folder = tmp_path / "vendor" / NAME
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {NAME}\ndescription: {VENDOR}\n---\n# Steps\n\n"
                                     "Match each walrus tusk line against the ledger.\n")
    return folder.parent


def served_is_the_vendors(bank, vendor: Path) -> None:
    skill = bank.skills.load(NAME)
    assert Path(skill.path).parent == vendor / NAME
    assert skill.description == VENDOR and "walrus tusk line" in skill.body
    hits = bank.skills.search("check walrus invoices for duplicated tusk charges", min_score=0)
    assert [Path(h.record.path).parent for h in hits if h.record.name == NAME] == [vendor / NAME]
    hits = bank.skills.search("match each tusk line against the ledger", min_score=0)
    assert [Path(h.record.path).parent for h in hits if h.record.name == NAME] == [vendor / NAME]
    for hit in bank.skills.search("zebrafish tank charges", min_score=0):
        assert "zebrafish" not in f"{hit.record.description} {hit.record.body}"
    catalog = bank.skills.catalog()
    assert [e.description for e in catalog.entries if e.name == NAME] == [VENDOR]
    assert "zebrafish" not in catalog.text
    context = bank.context_for("check walrus invoices for duplicated tusk charges")
    assert "walrus" in str(context) and "zebrafish" not in str(context)


@pytest.mark.parametrize("how", ["delete", "forget"])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_third_party_skill_is_served_whole_and_the_deleted_one_is_gone(tmp_path, vendor,
                                                                           remote, how):
    """Before the check nothing pinned this: after `forget`, the erase ran after the sync had
    indexed the third-party skill under the same id."""
    with bank_for(tmp_path, remote, skill_roots=(vendor,)) as bank:
        bank.skills.save(NAME, OWN, "Match each zebrafish tank line against the ledger.")
        assert "zebrafish" in bank.skills.load(NAME).description  # the own copy shadows it
        if how == "delete":
            bank.skills.delete(NAME)
        else:
            bank.forget(f"skill:{NAME}")
        served_is_the_vendors(bank, vendor)
    chroma = tmp_path / "root" / "chroma" / "chroma.sqlite3"
    assert b"walrus tusk" in chroma.read_bytes()  # the erase left the third-party rows
    with bank_for(tmp_path, remote, skill_roots=(vendor,)) as bank:  # a restart
        served_is_the_vendors(bank, vendor)
        bank.reindex()
        served_is_the_vendors(bank, vendor)
    if how == "forget":  # forget means gone: not in Chroma's file either
        for path in (tmp_path / "root").rglob("*"):
            if path.is_file() and ".trash" not in path.parts:
                with contextlib.suppress(OSError):
                    assert b"zebrafish" not in path.read_bytes(), path
