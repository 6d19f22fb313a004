"""Integrity of skill files (issue #11): every case here failed before its fix.

Names from frontmatter never become paths, links are never written through, a folder never
ends up holding another skill's SKILL.md (not even after a crash inside rename), the watcher's
sync never drops a skill that is being written, odd files never hang or slow a load, and bad
arguments are refused with InvalidInputError.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import AlreadyExistsError, InvalidInputError, NotFoundError
from skillbank.memories.skills import authoring as library_module
from skillbank.memories.skills.skill_file import read_skill_file


def open_bank(root: Path) -> Skillbank:
    return Skillbank.open(root, skill_roots=[], embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False)


@pytest.fixture
def bank(tmp_path):
    bank = open_bank(tmp_path / "root")
    yield bank
    bank.close()


def folder_names_agree(skills_dir: Path) -> list[str]:
    """Folders whose SKILL.md names a different skill (the state that loses a skill)."""
    wrong = []
    for skill_md in skills_dir.glob("*/SKILL.md"):
        doc, _ = read_skill_file(skill_md)
        if doc is not None and doc.frontmatter.get("name") != skill_md.parent.name:
            wrong.append(f"{skill_md.parent.name} holds {doc.frontmatter.get('name')!r}")
    return wrong


# --------------------------------------------------------------------------------- paths and links

def test_delete_with_a_hostile_frontmatter_name_stays_inside_the_root(tmp_path, bank):
    skills = bank.root / "skills"
    write_skill(skills, "evil", "Looks harmless. Use for nothing.")
    (skills / "evil" / "SKILL.md").write_text(
        "---\nname: ../../../escaped\ndescription: Looks harmless. Use for nothing.\n---\nBody.\n")
    bank.skills.sync()
    assert "../../../escaped" in bank.skills.names()  # loaded leniently, with a warning
    trash = bank.skills.delete("../../../escaped")
    root = bank.root.resolve()
    assert root in Path(trash).resolve().parents
    assert not (tmp_path / "escaped").exists() and not list(tmp_path.parent.glob("escaped*"))
    assert not any(p.name.startswith("escaped") for p in tmp_path.rglob("*")
                   if root not in p.resolve().parents and p.resolve() != root)
    assert (Path(trash) / "SKILL.md").is_file() and not (skills / "evil").exists()


def test_rename_refuses_a_symlinked_skill_folder(tmp_path, bank):
    outside = tmp_path / "outside"
    target = write_skill(outside, "linked", "A skill that lives outside. Use for tests.")
    before = target.read_bytes()
    (bank.root / "skills").mkdir(parents=True, exist_ok=True)
    os.symlink(outside / "linked", bank.root / "skills" / "linked")
    bank.skills.sync()
    with pytest.raises(InvalidInputError, match="link"):
        bank.skills.rename("linked", "renamed")
    assert target.read_bytes() == before
    assert (bank.root / "skills" / "linked").is_symlink()
    assert not (bank.root / "skills" / "renamed").exists()


# --------------------------------------------------------------------- a folder holds one skill

def test_save_refuses_a_folder_that_holds_another_skill(bank):
    skills = bank.root / "skills"
    write_skill(skills, "foo", "The bar skill, in folder foo. Use for bar things.")
    path = skills / "foo" / "SKILL.md"
    path.write_text(path.read_text().replace("name: foo", "name: bar"))
    bank.skills.sync()
    before = path.read_bytes()
    with pytest.raises((AlreadyExistsError, InvalidInputError), match="bar"):
        bank.skills.save("foo", "A new foo skill. Use for foo.", "Steps.\n")
    assert path.read_bytes() == before


class Crash(BaseException):
    """Stands in for a kill: not an Exception, so no handler swallows it."""


@pytest.mark.parametrize("step", ["replace", "write", "remove", "index"])
def test_a_crash_anywhere_inside_rename_never_leaves_a_folder_naming_another_skill(
        tmp_path, monkeypatch, step):
    root = tmp_path / "root"
    bank = open_bank(root)
    bank.skills.create("old-name", "Old skill. Use for renaming tests.", "Steps.\n",
                       resources={"notes.md": "kept\n"})
    calls = {"replace": os.replace, "write": library_module.atomic_write,
             "remove": library_module.shutil.rmtree}

    def crashing(original):
        def run(*args, **kwargs):
            raise Crash(step)
        return run

    if step == "index":
        monkeypatch.setattr(bank.skills.index, "delete", crashing(None))
    elif step == "replace":
        monkeypatch.setattr(library_module.os, "replace", crashing(calls["replace"]))
    elif step == "write":
        monkeypatch.setattr(library_module, "atomic_write", crashing(calls["write"]))
    else:  # removing the old folder once the new one is in place (no trash copy: forget)
        real_rmtree = calls["remove"]

        def removing(path, *args, **kwargs):  # dies half way through the old folder only
            if Path(path).name.startswith(".removing-"):
                victim = next(Path(path).rglob("notes.md"))
                victim.unlink()
                raise Crash(step)
            return real_rmtree(path, *args, **kwargs)

        monkeypatch.setattr(library_module.shutil, "rmtree", removing)
    with pytest.raises(Crash):
        bank.skills.rename("old-name", "new-name")
    monkeypatch.undo()
    bank.close()
    assert folder_names_agree(root / "skills") == []
    reopened = open_bank(root)
    report = reopened.skills.sync()
    assert not [f for f in report.findings if f.code == "name-mismatch"]
    names = reopened.skills.names()
    assert "old-name" in names or "new-name" in names  # never lost
    for name in names:
        assert reopened.skills.load(name).body == "Steps.\n"
    reopened.close()


def test_rename_still_works_and_keeps_resources(bank):
    bank.skills.create("first-name", "A skill to rename. Use for tests.", "Body.\n",
                       resources={"scripts/run.sh": "echo hi\n"})
    renamed = bank.skills.rename("first-name", "second-name")
    assert renamed.name == "second-name" and renamed.body == "Body.\n"
    assert [r.path for r in renamed.resources] == ["scripts/run.sh"]
    assert "first-name" not in bank.skills.names()
    assert not (bank.root / "skills" / "first-name").exists()
    assert folder_names_agree(bank.root / "skills") == []


# ------------------------------------------------------------------------ sync racing writes

def test_sync_racing_create_neither_drops_the_skill_nor_raises(bank, monkeypatch):
    """A create that lands between sync's scan and its removal pass used to be deleted from
    the index (and create then raised NotFoundError). The create is started from inside that
    window; with sync and writes serialised it simply waits for the sync to finish."""
    library = bank.skills
    library.create("already-there", "An existing skill. Use for tests.", "Body.\n")
    real_hashes = library.index.hashes
    outcome: dict[str, object] = {}
    started = threading.Event()

    def create_in_window():
        started.set()
        try:
            outcome["skill"] = library.create("raced-in", "Written while sync runs. Use it.", "B.\n")
        except BaseException as exc:  # noqa: BLE001 - the assertion reports it
            outcome["error"] = exc

    worker = threading.Thread(target=create_in_window)

    def hashes_with_a_race():
        if not worker.is_alive() and "skill" not in outcome and "error" not in outcome:
            worker.start()
            started.wait(5)
            worker.join(1.0)  # unserialised, the create finishes inside the window
        return real_hashes()

    monkeypatch.setattr(library.index, "hashes", hashes_with_a_race)
    library.sync()
    worker.join(30)
    assert not worker.is_alive()
    assert "error" not in outcome, outcome.get("error")
    assert "raced-in" in library.names()
    monkeypatch.undo()
    assert "raced-in" in library.names() and library.sync().removed == []


def test_create_never_raises_not_found_for_what_it_just_wrote(bank, monkeypatch):
    library = bank.skills
    stop = threading.Event()
    errors: list[BaseException] = []

    def syncing():
        while not stop.is_set():
            library.sync()

    thread = threading.Thread(target=syncing)
    thread.start()
    try:
        for i in range(15):
            try:
                library.create(f"skill-{i}", f"Skill number {i}. Use for tests.", "Body.\n")
            except NotFoundError as exc:
                errors.append(exc)
    finally:
        stop.set()
        thread.join(30)
    assert errors == []
    assert {f"skill-{i}" for i in range(15)} <= set(library.names())


# ------------------------------------------------------------------------------- odd resources

def test_a_fifo_in_a_skill_folder_does_not_hang_load(bank):
    bank.skills.create("with-pipe", "A skill with a named pipe beside it. Use for tests.", "B.\n",
                       resources={"notes.md": "n\n"})
    os.mkfifo(bank.root / "skills" / "with-pipe" / "pipe")
    result: dict[str, object] = {}
    thread = threading.Thread(target=lambda: result.setdefault("skill", bank.skills.load("with-pipe")),
                              daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "load() blocked on a FIFO"
    assert [r.path for r in result["skill"].resources] == ["notes.md"]


def test_a_huge_sparse_resource_is_listed_but_never_read_whole(bank, monkeypatch):
    from skillbank.memories.skills import resources as resources_module

    bank.skills.create("with-huge", "A skill with a 4 GiB sparse file. Use for tests.", "B.\n",
                       resources={"small.txt": "small\n"})
    huge = bank.root / "skills" / "with-huge" / "huge.bin"
    with open(huge, "wb") as handle:
        handle.truncate(4 << 30)
    read = {"bytes": 0}
    real_open = resources_module.open_for_hash

    def counting_open(path):
        handle = real_open(path)
        original = handle.read

        def read_counted(size=-1):
            data = original(size)
            read["bytes"] += len(data)
            return data
        handle.read = read_counted
        return handle

    monkeypatch.setattr(resources_module, "open_for_hash", counting_open)
    first = {r.path: r for r in bank.skills.load("with-huge").resources}
    assert first["huge.bin"].size == 4 << 30 and first["huge.bin"].sha256 == ""
    import hashlib
    assert first["small.txt"].sha256 == hashlib.sha256(b"small\n").hexdigest()
    assert read["bytes"] < resources_module.MAX_HASH_BYTES
    read["bytes"] = 0
    bank.skills.load("with-huge")
    assert read["bytes"] == 0  # unchanged files are not hashed again


# ---------------------------------------------------------------------------- argument checks

@pytest.mark.parametrize("call, words", [
    (lambda s: s.search("anything", k=-1), "k"),
    (lambda s: s.search("anything", k=0), "k"),
    (lambda s: s.search("anything", k=2.5), "k"),
    (lambda s: s.search("anything", k=True), "k"),
    (lambda s: s.search("anything", k="3"), "k"),
    (lambda s: s.search("anything", min_score="x"), "min_score"),
    (lambda s: s.search("anything", min_score=float("nan")), "min_score"),
    (lambda s: s.search(None), "task"),
    (lambda s: s.create("new-skill", "A description. Use it.", body=None), "body"),
    (lambda s: s.create("new-skill", None, "Body"), "description"),
    (lambda s: s.save("new-skill", "A description. Use it.", body=None), "body"),
    (lambda s: s.save("new-skill", "A description. Use it.", frontmatter="x"), "frontmatter"),
    (lambda s: s.update("present", body=3), "body"),
    (lambda s: s.record_use("present", success="no"), "success"),
    (lambda s: s.record_use("present", success=1), "success"),
    (lambda s: s.catalog(budget_tokens=-1), "budget_tokens"),
    (lambda s: s.catalog(budget_tokens=2.5), "budget_tokens"),
])
def test_bad_arguments_raise_invalid_input_with_the_argument_named(bank, call, words):
    bank.skills.create("present", "A skill that exists. Use for anything.", "Body.\n")
    with pytest.raises(InvalidInputError, match=words):
        call(bank.skills)
    assert bank.skills.usage.get("present").uses == 0
    assert bank.skills.names() == ["present"]


def test_search_k_one_keeps_the_best_hit(bank):
    bank.skills.create("present", "A skill that exists. Use for anything.", "Body.\n")
    assert [h.name for h in bank.skills.search("a skill that exists", k=1)] == ["present"]
