"""Skill writes that the file system refuses leave nothing behind, and a skills folder that is a
broken link is named (hunt-disk #4 and #6, session 29).

#4: on a full disk (ENOSPC) or past `ulimit -f` (EFBIG) each failed `skills update` still kept
a "before update" version of an update that never happened (a retry added one more, pushing
real history out of the 50 kept), and a failed `skills new` left an empty skill folder. In
process the write of a large SKILL.md raises ENOSPC (the library's `atomic_write`); through a
client, the owner process runs under a real file size limit (RLIMIT_FSIZE: EFBIG).

#6: `<root>/skills` a dangling symlink made every skill command and `stats` fail with
"[Errno 17] File exists", and `Skillbank.open` (which syncs every memory) failed with it too.
Now skill calls name the broken link and where it points, and the other memories keep working.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
from pathlib import Path
from typing import Any, Iterator

import pytest
from typer.testing import CliRunner

from owner_client import bank_for, client_bank, owner_process
from skillbank.errors import InvalidInputError

NAME = "pdf-tables"
DESCRIPTION = "Extract tables from PDF files into CSV. Use when asked for tabular data."
#: Writes of a file past this size fail; a big body is past it, the skills and index are not.
LIMIT = 600_000
BIG_BODY = "Step number filler text.\n" * 28_000  # 700 KB: under MAX_SKILL_BYTES, over LIMIT


@contextlib.contextmanager
def bank_whose_big_writes_fail(tmp_path: Path, remote: bool, monkeypatch) -> Iterator[Any]:
    """A bank where writing a SKILL.md over LIMIT fails: in process, with ENOSPC; through a
    client, in an owner process started under RLIMIT_FSIZE = LIMIT (EFBIG; Python ignores
    SIGXFSZ, so the write raises)."""
    if not remote:
        from skillbank.memories.skills import authoring

        real = authoring.atomic_write

        def full_disk(path, data, *args, **kwargs):
            if Path(path).name == "SKILL.md" and len(data) > LIMIT:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(path, data, *args, **kwargs)

        monkeypatch.setattr(authoring, "atomic_write", full_disk)
        with bank_for(tmp_path, False) as bank:
            yield bank
        return
    root = tmp_path / "root"
    root.mkdir()
    with contextlib.ExitStack() as stack:
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, hard))  # inherited by the owner
        try:
            stack.enter_context(owner_process(root))
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        yield stack.enter_context(client_bank(root))


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_failed_write_keeps_no_version_and_no_folder(tmp_path, remote, monkeypatch):
    with bank_whose_big_writes_fail(tmp_path, remote, monkeypatch) as bank:
        bank.skills.create(NAME, DESCRIPTION, "Use pdfplumber.")
        skill_md = bank.root / "skills" / NAME / "SKILL.md"
        before = skill_md.read_text()
        for _ in range(2):  # a retry adds nothing either
            with pytest.raises(OSError, match="No space left|File too large"):
                bank.skills.update(NAME, body=BIG_BODY)
        assert bank.skills.history(NAME) == []  # no "before update" of an update not made
        assert skill_md.read_text() == before
        assert "Use pdfplumber." in bank.skills.load(NAME).body
        with pytest.raises(OSError, match="No space left|File too large"):
            bank.skills.create("big-skill", "A big skill. Use when testing.", BIG_BODY)
        assert not (bank.root / "skills" / "big-skill").exists()  # no empty folder
        assert "big-skill" not in bank.skills.names()
        bank.skills.update(NAME, body="Use camelot.")  # a write that fits: one version, kept
        assert len(bank.skills.history(NAME)) == 1
        bank.skills.create("big-skill", "A big skill. Use when testing.", "Small now.")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_failed_write_at_the_version_cap_loses_no_version(tmp_path, remote, monkeypatch):
    """Left from hunt-disk (session 29): with MAX_KEPT versions kept, a failed update kept
    its "before update" version, which pushed the oldest out, then the write failed and that
    version was removed again: the oldest was lost for a write that never happened. Fails
    before: the oldest version is gone after the failed update."""
    from skillbank.memories.skills.versions import MAX_KEPT

    with bank_whose_big_writes_fail(tmp_path, remote, monkeypatch) as bank:
        bank.skills.create(NAME, DESCRIPTION, "Step 0.")
        for n in range(1, MAX_KEPT + 1):
            bank.skills.update(NAME, body=f"Step {n}.")
        history = bank.skills.history(NAME)
        assert len(history) == MAX_KEPT
        with pytest.raises(OSError, match="No space left|File too large"):
            bank.skills.update(NAME, body=BIG_BODY)
        assert [v.version for v in bank.skills.history(NAME)] == [v.version for v in history]
        versions = bank.root / "skills" / NAME / ".versions"
        assert sorted(p.stem for p in versions.glob("*.json")) == \
            sorted(p.stem for p in versions.glob("*.md"))  # no stray reason file
        bank.skills.update(NAME, body="Step last.")  # a write that lands: the oldest goes now
        after = bank.skills.history(NAME)
        assert len(after) == MAX_KEPT and history[-1].version not in {v.version for v in after}


def test_a_version_whose_text_cannot_be_written_leaves_no_reason_file(tmp_path, monkeypatch):
    """A full disk met by the version's own text left its `.json` reason behind (written
    first). Fails before: one stray `.json`."""
    from skillbank.memories.skills import versions

    real = versions.atomic_write

    def full_for_md(path, data, *args, **kwargs):
        if Path(path).suffix == ".md":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, data, *args, **kwargs)

    monkeypatch.setattr(versions, "atomic_write", full_for_md)
    with pytest.raises(OSError, match="No space left"):
        versions.keep_version(tmp_path, "---\nname: x\n---\n", "before update")
    assert list((tmp_path / versions.VERSIONS_DIR).iterdir()) == []


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_broken_link_for_the_skills_folder_is_named(tmp_path, remote):
    root = tmp_path / "root"
    root.mkdir()
    (root / "skills").symlink_to(tmp_path / "skills.gone")
    with bank_for(tmp_path, remote) as bank:  # opens: the other memories work
        bank.experiences.record(task="convert invoice pdf to csv", outcome="success",
                                feedback="worked fine")
        assert bank.experiences.list()
        for call in (lambda: bank.skills.list(),
                     lambda: bank.skills.create(NAME, DESCRIPTION, "Use pdfplumber.")):
            with pytest.raises(InvalidInputError) as caught:  # was "[Errno 17] File exists"
                call()
            message = str(caught.value)
            assert f"{root / 'skills'} is a broken link" in message
            assert str(tmp_path / "skills.gone") in message
    assert (root / "skills").is_symlink() and not (tmp_path / "skills.gone").exists()


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_broken_skills_link_leaves_the_memory_block_and_stats_their_other_memories(
        tmp_path, remote):
    """Review (session 29): with the link broken the bank opened, but `context_for` (what a
    middleware injects) and `stats` failed whole on the skill library, so an agent got no
    guidelines or experiences either. Fails before: PathBlockedError from both."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "skills").symlink_to(tmp_path / "skills.gone")
    with bank_for(tmp_path, remote) as bank:
        bank.guidelines.learn("Always run the tests before committing.")
        block = bank.context_for("run the tests before committing this change")
        stats = bank.stats()
    assert "Always run the tests before committing" in block.text and not block.skills
    assert "is a broken link" in stats["skills_error"] and stats["guidelines"]


def test_the_cli_names_a_broken_skills_link(cli_root, tmp_path, monkeypatch):
    from skillbank.cli import app

    monkeypatch.setenv("SKILLBANK_CLI_OWNER", "0")
    runner = CliRunner()
    assert runner.invoke(app, ["experiences", "record", "--task", "convert invoice pdf",
                               "--outcome", "success"]).exit_code == 0
    (cli_root / "skills").symlink_to(cli_root / "skills.gone")  # (no skill written yet)
    for args in (["skills", "list"], ["stats"], ["skills", "new", "dangle-skill", "-d",
                                                 "Made here. Use when testing.", "-b", "x"]):
        result = runner.invoke(app, ["--no-bundled", *args])
        assert result.exit_code == 2, (args, result.output)
        assert "is a broken link" in result.output and "Errno 17" not in result.output
    searched = runner.invoke(app, ["experiences", "search", "invoice pdf"])
    assert searched.exit_code == 0 and "convert invoice pdf" in searched.stdout
