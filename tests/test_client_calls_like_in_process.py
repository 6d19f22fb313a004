"""Calls that behaved otherwise through a client of an owner process than in process (found by
using every memory operation both ways):

- an owner-side FileNotFoundError was taken for a missing socket: the client sent the call
  again without end (a hang, the call re-run 7-15 times a second);
- `skills.sync(progress=...)` and `skillbank skills sync` failed ("a SyncProgress cannot be
  sent to the process that owns the memory root");
- `recall(since=timedelta(...))` was refused ("a datetime.timedelta cannot be sent").
"""

from __future__ import annotations

import os
import subprocess
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from owner_client import client_of_owner, owner_process
from skillbank.sharing import client as sharing_client
from test_multiprocess import BIN, env_for


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_an_owner_side_file_not_found_is_raised_once(tmp_path, monkeypatch):
    sent: list[int] = []
    real = sharing_client._Connection.call
    monkeypatch.setattr(sharing_client._Connection, "call",
                        lambda self, payload: sent.append(1) or real(self, payload))
    with client_of_owner(tmp_path / "root") as bank:
        bank.experiences.record(task="Rotate the staging keys", outcome="success")
        outcome: list[BaseException] = []
        worker = threading.Thread(target=lambda: _export(bank, outcome), daemon=True)
        worker.start()
        worker.join(120)
        assert not worker.is_alive(), f"the call did not return; sent {len(sent)} times"
        assert len(outcome) == 1 and isinstance(outcome[0], FileNotFoundError), outcome
        assert len(sent) == 2  # the record, then the export: once


def _export(bank, outcome: list) -> None:
    try:
        bank.experiences.export("/proc/no-such-folder/x.jsonl")
    except BaseException as exc:  # noqa: BLE001 - the test looks at it
        outcome.append(exc)


def test_sync_with_progress_and_recall_since_a_timedelta(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        eid = bank.experiences.record(task="Rotate the staging keys", outcome="success")
        seen: list[tuple[int, int]] = []
        report = bank.skills.sync(progress=lambda done, total: seen.append((done, total)),
                                  sections_progress=lambda done, total: None)
        assert report.added == [] and report.findings == []
        bank.skills.fill_dense(None, threading.Event())
        assert [h.id for h in bank.experiences.recall("Rotate the staging keys",
                                                      since=timedelta(days=1))] == [eid]
        assert bank.experiences.recall("Rotate the staging keys",
                                       since=timedelta(days=-1)) == []


def test_the_cli_syncs_a_served_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root):
        done = subprocess.run([str(BIN / "skillbank"), "skills", "sync"], env=env_for(root),
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "cannot be sent" not in done.stderr


def test_a_drafter_of_this_process_is_not_sent_and_the_owner_drafts(tmp_path, caplog):
    """`skills.propose(drafter=LLMDrafter(...))` on a client failed ("an LLMDrafter cannot be
    sent"), and so did MCP propose_skills on a second server whose client offers sampling."""
    import logging

    from skillbank.memories.skills.drafting import LLMDrafter

    asked: list[str] = []
    with client_of_owner(tmp_path / "root") as bank:
        for table in ("orders", "users", "invoices"):
            bank.experiences.record(task=f"Import the {table} CSV file into a database table",
                                    outcome="success",
                                    when_to_use="Loading CSV exports into a database")
        with caplog.at_level(logging.WARNING, logger="skillbank.sharing"):
            drafts = bank.skills.propose(min_support=3,
                                         drafter=LLMDrafter(lambda p: asked.append(p) or "{}"))
    assert drafts and all(d.drafted_by == "rules" for d in drafts), drafts
    assert asked == []  # this process's model was not asked: the owner drafted
    assert "is not used" in caplog.text and "its drafter" in caplog.text


@pytest.mark.parametrize("error", [FileExistsError, NotADirectoryError, IsADirectoryError])
def test_an_owner_side_os_error_type_survives_the_wire(error):
    from skillbank.sharing.wire import decode_error, encode_error

    back = decode_error(encode_error(error(17, "File exists", "/somewhere")))
    assert type(back) is error and "File exists" in str(back)


@pytest.mark.skipif(not os.path.isfile("/proc/self/mem"), reason="needs Linux's /proc")
def test_an_owner_side_os_error_keeps_its_type(tmp_path):
    """An OSError the owner raised arrived as a plain SkillbankError, so `except OSError`
    caught it in process and not through a client (an export under a regular file was the
    trigger; that one is an InvalidInputError now)."""
    with client_of_owner(tmp_path / "root") as bank:
        with pytest.raises(OSError):
            bank.experiences.import_("/proc/self/mem")  # EIO reading it


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_deleting_a_skill_whose_folder_was_removed_by_hand(tmp_path, through):
    """A raw FileNotFoundError from moving the missing folder to the trash (and through a
    client, the trigger of the retry loop above)."""
    import contextlib
    import shutil

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.errors import NotFoundError

    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        sync=False) as bank:
        folder = bank.skills.save("slide-deck", "Turn meeting notes into a slide deck.",
                                  "# Steps\n\nOne idea per slide.\n")
        folder = Path(folder.path).parent
        if through == "in-process":
            shutil.rmtree(folder)
            with pytest.raises(NotFoundError, match="already removed"):
                bank.skills.delete("slide-deck")
            assert "slide-deck" not in bank.skills.names()
            return
    with client_of_owner(root) as bank:
        shutil.rmtree(folder)
        with pytest.raises(NotFoundError):  # the owner's watcher may have seen it first
            bank.skills.delete("slide-deck")
        assert "slide-deck" not in bank.skills.names()


def test_add_skills_dir_on_a_served_root_says_it_is_not_indexed_yet(tmp_path):
    """It said "their skills are indexed now" while the owner (`skillbank serve`, an agent)
    went on serving what it was started with."""
    from conftest import write_skill

    root = tmp_path / "root"
    root.mkdir()
    extra = tmp_path / "coffee-skills"
    write_skill(extra, "pour-over", "Brew pour-over coffee.")
    with owner_process(root) as owner:
        done = subprocess.run([str(BIN / "skillbank"), "config", "add-skills-dir", str(extra)],
                              env=env_for(root), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stderr.split())
    assert "not indexed yet" in text and f"process {owner.pid}" in text, text
    assert "indexed now" not in text, text


def test_remove_skills_dir_and_bundled_off_on_a_served_root_say_they_wait(tmp_path):
    """They said the skills "leave the index now" while the owner went on serving them to
    every agent, the CLI included (hunt-procs #3, session 28)."""
    from conftest import write_skill

    root = tmp_path / "root"
    root.mkdir()
    extra = tmp_path / "coffee-skills"
    write_skill(extra, "pour-over", "Brew pour-over coffee.")

    def cli(*words: str) -> str:
        done = subprocess.run([str(BIN / "skillbank"), *words], env=env_for(root),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return " ".join(done.stderr.split())

    cli("config", "add-skills-dir", str(extra))  # no owner yet: indexed now
    with owner_process(root, (extra,), bundled=True) as owner:
        removed = cli("config", "remove-skills-dir", str(extra))
        assert "1 of its skills are still served" in removed, removed
        off = cli("config", "bundled", "off")
        assert "left out from now on, but not yet" in off, off
        for said in (removed, off):
            assert "leave the index now" not in said and f"pid {owner.pid}" in said, said
    with owner_process(root) as owner:  # started without them: nothing waits
        on = cli("config", "bundled", "on")
        assert "but not yet" in on and f"pid {owner.pid}" in on, on


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_a_bad_budget_is_a_clear_error_both_ways(tmp_path, through):
    """context_for(budget_tokens=-1) raised a bare ValueError, and True was taken as 1 token."""
    import contextlib

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.errors import InvalidInputError

    root = tmp_path / "root"
    opened = (client_of_owner(root) if through == "client-of-owner" else contextlib.closing(
        Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)))
    with opened as bank:
        for bad in (-1, True, 2.5):
            with pytest.raises(InvalidInputError, match="budget_tokens must be a whole number"):
                bank.context_for("Rotate the staging keys", budget_tokens=bad)
        assert bank.context_for("Rotate the staging keys", budget_tokens=300.0).budget_tokens == 300


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_a_guidelines_sources_keep_their_fields(tmp_path, through):
    """Through a client a source lost `rule`, `sentence` and `trusted` (it travelled as its
    base class), and reading `.trusted` raised AttributeError."""
    import contextlib

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    root = tmp_path / "root"
    opened = (client_of_owner(root) if through == "client-of-owner" else contextlib.closing(
        Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)))
    with opened as bank:
        gid = bank.guidelines.add("Keep slides to five bullets.", trusted=False).guideline_id
        [source] = bank.guidelines.get(gid).sources
        assert source.trusted is False and source.rule == "Keep slides to five bullets."


def test_an_export_nobody_can_receive_is_a_clear_error_through_a_client(tmp_path):
    """Through a client, the owner writes: a pipe nobody reads used to block the owner for
    good, and a path under a regular file came back as a bare FileExistsError."""
    from skillbank.errors import InvalidInputError

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "notes.txt").write_text("mine")
    with client_of_owner(tmp_path / "root") as bank:
        bank.experiences.record(task="Rotate the staging keys", outcome="success")
        outcome: list[BaseException] = []
        worker = threading.Thread(target=lambda: _export_to(bank, fifo, outcome), daemon=True)
        worker.start()
        worker.join(120)
        assert not worker.is_alive(), "the export into a pipe nobody reads did not return"
        assert len(outcome) == 1 and isinstance(outcome[0], InvalidInputError), outcome
        with pytest.raises(InvalidInputError, match="notes.txt"):
            bank.experiences.export(tmp_path / "notes.txt" / "out.jsonl")
        assert bank.experiences.export(tmp_path / "out.jsonl") == 1  # the owner still serves


def _export_to(bank, path: Path, outcome: list) -> None:
    try:
        bank.experiences.export(path)
    except BaseException as exc:  # noqa: BLE001 - the test looks at it
        outcome.append(exc)


def test_a_plain_enum_is_refused_through_a_client_as_in_process(tmp_path):
    """`record(outcome=MyEnum.S)` was refused in process but stored through a client (the wire
    sent the enum's value); a str enum, as the CLI passes, is its value both ways."""
    import enum

    from skillbank.errors import InvalidInputError

    class Plain(enum.Enum):
        S = "success"

    class Text(str, enum.Enum):
        S = "success"

    with client_of_owner(tmp_path / "root") as bank:
        with pytest.raises(InvalidInputError):
            bank.experiences.record(task="Rotate the staging keys", outcome=Plain.S)
        eid = bank.experiences.record(task="Rotate the staging keys", outcome=Text.S)
        assert bank.experiences.get(eid).outcome == "success"
        assert bank.experiences.list(kind="experience") and len(
            bank.experiences.list(kind="experience")) == 1
