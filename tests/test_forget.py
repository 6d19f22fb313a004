"""Forget means gone: after forget and close, no file under the root holds the forgotten text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

# Distinctive words that occur nowhere else: any of them left in any file is a leak.
SECRET_TASK = "Quixotic Zanzibar vault combination for the Ophidian cluster"
SECRET_FEEDBACK = "The Marmalade passphrase leaked into the Xylophone channel"
SECRET_LESSON = "Never paste the Wolfberry token into Kumquat tickets"
SECRET_RULE = "Never mention the Persimmon-Glockenspiel bunker code"
SECRET_SKILL = "Unlock the Tamarind-Hurdygurdy safe"
WORDS = [b"Quixotic", b"Zanzibar", b"Ophidian", b"Marmalade", b"Xylophone", b"Wolfberry",
         b"Kumquat", b"Persimmon", b"Glockenspiel", b"Tamarind", b"Hurdygurdy"]


def leaks(root: Path) -> dict[str, list[str]]:
    """Every file under `root` that holds any of the words (case-insensitive, as bytes)."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes().lower()
            words = [w.decode() for w in WORDS if w.lower() in data]
            if words:
                found[str(path.relative_to(root))] = words
    return found


def open_bank(root: Path) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)


@pytest.mark.parametrize("reopen", [False, True], ids=["same-session", "after-reopen"])
def test_forget_leaves_no_byte_of_the_text_under_the_root(tmp_path, reopen):
    root = tmp_path / "root"
    bank = open_bank(root)
    keep = [bank.experiences.record(task=f"Rotate the keys of cluster {i}", outcome="success",
                                    feedback=f"Took {i} minutes.") for i in range(12)]
    eid = bank.experiences.record(task=SECRET_TASK, outcome="failure", feedback=SECRET_FEEDBACK,
                                  lessons=[SECRET_LESSON])
    gid = bank.guidelines.add(SECRET_RULE, topic="secrets").guideline_id
    bank.skills.save("safe-opening", SECRET_SKILL, f"# Steps\n\n1. {SECRET_SKILL}.\n")
    # Used the ways an agent uses memory: recall, context, ratings, keyword snapshots.
    assert any(h.id == eid for h in bank.experiences.recall(SECRET_TASK, k=5))
    assert eid in bank.context_for(SECRET_TASK).text or bank.context_for(SECRET_TASK).ids
    bank.rate(eid, True)
    bank.rate(gid, True)
    bank.rate("skill:safe-opening", True)
    if reopen:
        bank.close()
        assert leaks(root)  # the words are really written (the test can fail)
        bank = open_bank(root)
    journal = sorted((root / "experiences").glob("*.jsonl"))[0]
    size = journal.stat().st_size
    bank.forget(eid)
    bank.forget(gid)
    bank.forget("skill:safe-opening")
    # Still a working memory: other records, their pointers into the journal, search.
    assert bank.experiences.get(keep[5]).feedback == "Took 5 minutes."
    assert not any(h.id == eid for h in bank.experiences.recall(SECRET_TASK, k=5))
    later = bank.experiences.record(task="Rotate the keys once more", outcome="success")
    bank.close()
    assert leaks(root) == {}
    # The journal kept its length before the new record (same-length tombstones): every
    # offset the index and the checkpoint hold stays valid.
    with journal.open("rb") as handle:
        assert b'"op":"erased"' in handle.read(size)
    bank = open_bank(root)
    try:
        assert bank.experiences.get(later).task == "Rotate the keys once more"
        assert [e.id for e in bank.experiences.list(limit=100)].count(eid) == 0
        assert len(bank.experiences.recall("Rotate the keys of cluster", k=20)) >= 12
        bank.reindex()  # a rebuild from the files does not bring it back
        assert eid not in bank.experiences and gid not in bank.guidelines
    finally:
        bank.close()
    assert leaks(root) == {}


def test_forgotten_log_keeps_ids_only_and_old_trash_is_emptied(tmp_path):
    root = tmp_path / "root"
    bank = open_bank(root)
    try:
        trash = root / "guidelines" / ".trash"
        trash.mkdir(parents=True)
        # What an earlier version left: the text in the log and the file in the trash.
        (trash / "forgotten.jsonl").write_text(json.dumps(
            {"id": "gl-0123456789ab", "topic": "secrets", "text": SECRET_RULE,
             "at": "2026-01-01T00:00:00+00:00", "trash": "gl-0123456789ab-x.md"}) + "\n")
        (trash / "gl-0123456789ab-20260101T000000000000Z.md").write_text(SECRET_RULE)
        gid = bank.guidelines.add("Keep the Hurdygurdy notes short.", topic="notes").guideline_id
        result = bank.forget(gid)
        assert result["forgotten"] and "trash" not in result
        lines = [json.loads(l) for l in (trash / "forgotten.jsonl").read_text().splitlines()]
        assert [l["id"] for l in lines] == ["gl-0123456789ab", gid]
        assert all(set(l) == {"id", "kind", "at", "principal"} for l in lines)
        assert lines[-1]["kind"] == "guideline" and lines[-1]["principal"]
        assert list(trash.glob("*.md")) == []
    finally:
        bank.close()
    assert leaks(root) == {}


def test_journal_erase_is_same_length_and_keeps_other_lines(tmp_path):
    from skillbank.forgetting import erase_journal_lines

    folder = tmp_path / "experiences"
    folder.mkdir()
    lines = [
        json.dumps({"op": "add", "record": {"id": "exp-000000000001", "task": "Zanzibar"}}),
        json.dumps({"op": "add", "record": {"id": "exp-000000000002", "task": "keep me"}}),
        json.dumps({"op": "forget", "id": "exp-000000000001", "lessons": []}),
        '{"op": "add", "record": {"id": "exp-000000000001", "ta',  # a torn last line
    ]
    path = folder / "2026-12.jsonl"
    path.write_text("\n".join(lines))
    before = path.read_bytes()
    assert erase_journal_lines(folder, ["exp-000000000001"]) == [path]
    after = path.read_bytes()
    assert len(after) == len(before) and b"Zanzibar" not in after
    kept = after.splitlines()
    assert kept[1:3] == [l.encode() for l in lines[1:3]] and kept[3] == lines[3].encode()
    assert json.loads(kept[0]) == {"op": "erased", "id": "exp-000000000001"}
    assert erase_journal_lines(folder, ["exp-00000000ffff"]) == []


def test_a_crash_after_forget_leaves_no_text_in_the_keyword_snapshot(tmp_path):
    """No close after the forget (a crash): the snapshot saved earlier must not keep the text."""
    root = tmp_path / "root"
    bank = open_bank(root)
    eid = bank.experiences.record(task=SECRET_TASK, outcome="failure", feedback=SECRET_FEEDBACK)
    bank.experiences.record(task="Rotate the keys", outcome="success")
    bank.experiences.recall("Rotate the keys", k=3)
    bank.close()
    cache = root / ".cache"
    assert any(w.lower() in p.read_bytes().lower() for p in cache.rglob("*") if p.is_file()
               for w in WORDS)  # the snapshot really held it
    bank = open_bank(root)
    bank.experiences.recall("Rotate the keys", k=3)
    bank.forget(eid)
    assert leaks(root) == {}  # before any close
    bank.close()
    assert leaks(root) == {}


def test_skill_drafts_drawn_from_a_forgotten_experience_are_deleted(tmp_path):
    root = tmp_path / "root"
    bank = open_bank(root)
    try:
        ids = [bank.experiences.record(
            task=f"Export the monthly invoices to CSV for client {n}", outcome="success",
            when_to_use="When exporting invoices to CSV",
            steps=[{"action": "query_invoices"}, {"action": "write_csv"}],
            lessons=[SECRET_LESSON if n == 0 else "Quote every CSV field."]) for n in range(4)]
        drafts = bank.skills.propose(min_support=3)
        assert drafts, "a draft is proposed from the recurring task"
        assert any(w.lower() in p.read_bytes().lower() for p in (root / "drafts").rglob("*")
                   if p.is_file() for w in WORDS)  # the draft really holds the lesson
        bank.forget(ids[0])
        assert bank.skills.drafts() == [] or all(ids[0] not in d.sources
                                                 for d in bank.skills.drafts())
    finally:
        bank.close()
    assert leaks(root) == {}


def test_forgetting_a_lesson_removes_its_text_from_its_experience_too(tmp_path):
    root = tmp_path / "root"
    bank = open_bank(root)
    try:
        eid = bank.experiences.record(task="Close the quarter's books", outcome="success",
                                      lessons=[SECRET_LESSON, "Reconcile the ledgers first."])
        lesson = next(r.id for r in bank.experiences.list(kind="lesson", limit=10)
                      if "Wolfberry" in r.task)
        other = bank.experiences.get(eid)
        bank.forget(lesson)
        kept = bank.experiences.get(eid)
        assert [l.text for l in kept.lessons] == ["Reconcile the ledgers first."]
        assert kept.task == other.task and kept.status == "active"
        assert any(h.id == eid for h in bank.experiences.recall("Close the quarter's books"))
    finally:
        bank.close()
    assert leaks(root) == {}
    bank = open_bank(root)
    try:
        assert [l.text for l in bank.experiences.get(eid).lessons] == [
            "Reconcile the ledgers first."]
        bank.reindex()
        assert [l.text for l in bank.experiences.get(eid).lessons] == [
            "Reconcile the ledgers first."]
    finally:
        bank.close()


@pytest.mark.parametrize("through", ["in-process", "client-of-owner"])
def test_forget_removes_what_a_write_cut_short_left_of_the_rule(tmp_path, through):
    """A process killed mid-write leaves `atomic_write`'s temp file beside the guideline, with
    the rule's text in it; forget deletes it too (before, the text outlived the forget)."""
    import contextlib
    import tempfile

    from owner_client import client_of_owner

    root = tmp_path / "root"
    bank = open_bank(root)
    gid = bank.guidelines.add(SECRET_RULE, topic="secrets").guideline_id
    path = Path(bank.guidelines.get(gid).path)
    keep = bank.guidelines.add("Answer in plain English.", topic="style").guideline_id
    bank.close()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with open(fd, "wb") as handle:  # what a write killed before its rename leaves
        handle.write(path.read_bytes())
    other = path.parent / f".{keep}.md.0a1b2c3d.tmp"  # another rule's leftover: not ours
    other.write_text("Answer in plain English.")
    with (client_of_owner(root) if through == "client-of-owner"
          else contextlib.closing(open_bank(root))) as bank:
        bank.forget(gid)
        assert bank.guidelines.get(keep).text == "Answer in plain English."
    assert leaks(root) == {}
    assert not Path(tmp).exists() and other.exists()
