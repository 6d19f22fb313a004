"""What a curator writes in a guideline file by hand survives the memory's own later writes.

hunt-curator #2 (session 25): a person revived a superseded rule by hand (``status: active``,
``superseded_by: null``) and kept the newer rule too; the next vote on the newer rule (an
untrusted one included) rewrote its file, and the next sync took the newer file for a crash
that had left both active and superseded the revived rule again.

hunt-curator #6 (session 25): any vote (an untrusted one included) rendered the whole rule file
anew, dropping the curator's YAML comments, the keys skillbank does not know and the body's
paragraph breaks.
"""

from __future__ import annotations

import difflib
import os
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.guidelines import GuidelineMemory
from skillbank.memories.guidelines.file_rewrite import rewrite_guideline
from skillbank.memories.guidelines.files import parse_guideline

OLD, NEW = "Keep functions under 50 lines.", "Keep functions under 40 lines."
HAND_ADDED = "---\nstatus: active\n---\nName every index after its table.\n"


def front(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1])


def set_written(path: Path, seconds_ago: float) -> None:
    """The file's write time, set: which file is newer must not hang on a clock tick."""
    when = time.time() - seconds_ago
    os.utime(path, (when, when))


def written_a_minute_ago(text: str) -> str:
    """The file as the bank wrote it a minute ago (its ``updated:``): a person's edit comes
    after the bank's write, and a file's write time well past its ``updated`` is such an edit."""
    when = (datetime.now(timezone.utc) - timedelta(seconds=60)).isoformat()
    return re.sub(r"(?m)^updated: .*$", f"updated: '{when}'", text, count=1)


def revive(path: Path, new: str) -> None:
    """What a curator does to bring a superseded rule back (a minute after the supersede)."""
    text = written_a_minute_ago(path.read_text(encoding="utf-8"))
    path.write_text(text.replace("status: superseded", "status: active").replace(
        f"superseded_by: {new}", "superseded_by: null"), encoding="utf-8")


def vote(bank, gid: str, helpful: bool, trusted: bool) -> None:
    if trusted:
        bank.guidelines.vote(gid, helpful=helpful)
    else:  # what an adapter with trusted=False or an untrusted MCP client sends
        bank.rate(gid, helpful=helpful, trusted=False)


# A superseded rule revived by hand stays active (#2) ---------------------------------------------


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted-vote", "untrusted-vote"])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_rule_revived_by_hand_stays_active_after_votes_on_the_newer_rule(
        tmp_path, remote, trusted):
    with bank_for(tmp_path, remote) as bank:
        old = bank.guidelines.add(OLD, topic="python").guideline_id
        new = bank.guidelines.add(NEW, topic="python", replaces=old).guideline_id
        assert bank.guidelines.get(old).status == "superseded"
        old_path, new_path = Path(bank.guidelines.get(old).path), Path(bank.guidelines.get(new).path)
        revive(old_path, new)

        vote(bank, new, helpful=True, trusted=trusted)  # rewrites the newer rule's file
        (old_path.parent / "gl-0123456789ab.md").write_text(HAND_ADDED, encoding="utf-8")
        statuses = {g.id: g.status for g in bank.guidelines.list()}  # re-reads the files

        assert statuses == {old: "active", new: "active", "gl-0123456789ab": "active"}
        assert front(old_path)["status"] == "active" and front(old_path)["superseded_by"] is None
        # The decision is recorded in the newer rule: no later write can make it look like a crash.
        newer = bank.guidelines.get(new)
        assert old not in newer.supersedes and old in newer.related
        assert old not in front(new_path)["supersedes"]
        set_written(old_path, 30)
        vote(bank, new, helpful=True, trusted=trusted)
        (old_path.parent / "gl-0123456789ab.md").unlink()
        assert bank.guidelines.get(old).status == "active"
        assert bank.guidelines.get(new).status == "active"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_revived_rule_stays_active_when_the_curator_then_edits_the_newer_one(tmp_path, remote):
    """Which file was written last decided a revival: a note added to the newer rule after
    reviving the old one superseded it again at the next sync (review F2, session 25)."""
    with bank_for(tmp_path, remote) as bank:
        old = bank.guidelines.add(OLD, topic="python").guideline_id
        new = bank.guidelines.add(NEW, topic="python", replaces=old).guideline_id
        old_path, new_path = Path(bank.guidelines.get(old).path), Path(bank.guidelines.get(new).path)
        revive(old_path, new)
        new_path.write_text(new_path.read_text(encoding="utf-8").replace(
            "status: active", "status: active  # reviewed: both rules stay"), encoding="utf-8")
        assert {g.id: g.status for g in bank.guidelines.list()} == {old: "active", new: "active"}
        assert front(old_path)["status"] == "active"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_untrusted_vote_on_the_old_rule_is_no_revival_of_it(tmp_path, remote):
    """A replacement proposed untrusted and approved by hand (pending -> active in its file):
    an untrusted vote on the old rule meanwhile made the sync take the old rule for revived by
    a person, and both stayed active for good (review F1, session 25). The old one is
    superseded, as without the vote."""
    with bank_for(tmp_path, remote) as bank:
        old = bank.guidelines.add(OLD, topic="python").guideline_id
        new = bank.guidelines.add(NEW, topic="python", replaces=old,
                                  trusted=False).guideline_id
        assert bank.guidelines.get(new).status == "pending"
        bank.rate(old, helpful=True, trusted=False)  # any later vote on the old rule
        new_path = Path(bank.guidelines.get(new).path)
        new_path.write_text(written_a_minute_ago(new_path.read_text(encoding="utf-8")).replace(
            "status: pending", "status: active"), encoding="utf-8")  # the curator approves
        statuses = {g.id: g.status for g in bank.guidelines.list()}
        assert statuses == {old: "superseded", new: "active"}, statuses
        assert bank.guidelines.get(new).supersedes == [old]


def test_a_crash_left_both_active_is_repaired_even_when_the_newer_rule_was_voted_first(
        tmp_path, monkeypatch):
    """A vote in the crashed process before any re-read rewrote the newer file: still a crash
    (the old file is older than the supersede), so the next open finishes it."""
    root = tmp_path / "root"
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    old = bank.guidelines.add(OLD, topic="python").guideline_id
    monkeypatch.setattr(GuidelineMemory, "_mark_superseded",
                        lambda self, old_id, new_id, now: None)  # the mark never written
    new = bank.guidelines.add(NEW, topic="python", replaces=old).guideline_id
    monkeypatch.undo()
    assert bank.guidelines.get(old).status == "active"  # both active, as a kill leaves them
    bank.guidelines.vote(new, helpful=True)  # no re-read before it: nothing changed by hand
    bank.close()
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as again:
        repaired = again.guidelines.get(old)
        assert repaired.status == "superseded" and repaired.superseded_by == new
        assert again.guidelines.get(new).supersedes == [old]


# A vote keeps the curator's lines (#6) ---------------------------------------------------------

CURATOR_LINES = ("status: active  # reviewed by carol 2026-12-01, keep\n"
                 "reviewed_by: carol\n"
                 "# ask carol before retiring this one\n")
EXAMPLE = '\nExample: cursor.execute("SELECT * FROM t WHERE id = %s", (id,))\n'


def annotate(path: Path) -> str:
    text = path.read_text(encoding="utf-8").replace("status: active\n", CURATOR_LINES)
    text = text.rstrip("\n") + "\n" + EXAMPLE
    path.write_text(text, encoding="utf-8")
    return text


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted-vote", "untrusted-vote"])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_vote_changes_only_the_counter_lines_of_an_annotated_rule_file(tmp_path, remote,
                                                                         trusted):
    with bank_for(tmp_path, remote) as bank:
        gid = bank.guidelines.add("Never put SQL in f-strings; use bound parameters.",
                                  topic="sql").guideline_id
        path = Path(bank.guidelines.get(gid).path)
        before = annotate(path)
        assert bank.guidelines.get(gid).status == "active"  # the annotated file reads

        vote(bank, gid, helpful=False, trusted=trusted)

        after = path.read_text(encoding="utf-8")
        diff = [line for line in difflib.ndiff(before.splitlines(), after.splitlines())
                if line[:2] in ("- ", "+ ")]
        counter = "harmful" if trusted else "untrusted_harmful"
        changed = sorted({line[2:].split(":")[0] for line in diff})
        assert changed == sorted([counter, "updated"]), diff
        assert f"+ {counter}: 1" in diff
        for kept in (*CURATOR_LINES.splitlines(), *EXAMPLE.splitlines()):
            assert kept in after.splitlines(), kept
        rule = bank.guidelines.get(gid)
        assert rule.text.endswith('(id,))') and rule.status == "active"
        assert (rule.harmful, rule.untrusted_harmful) == ((1, 0) if trusted else (0, 1))


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_status_change_by_votes_keeps_the_comment_on_the_status_line(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        gid = bank.guidelines.add("Never put SQL in f-strings; use bound parameters.",
                                  topic="sql").guideline_id
        path = Path(bank.guidelines.get(gid).path)
        annotate(path)
        for _ in range(3):  # the default retire margin
            bank.guidelines.vote(gid, helpful=False)
        assert bank.guidelines.get(gid).status == "retired"
        lines = path.read_text(encoding="utf-8").splitlines()
        assert "status: retired  # reviewed by carol 2026-12-01, keep" in lines
        assert "reviewed_by: carol" in lines and EXAMPLE.strip() in lines


# The file format's own checks (no memory operation) ---------------------------------------------


def parsed(text: str, gid: str = "gl-0123456789ab"):
    rule, findings = parse_guideline(text, path=f"/r/sql/{gid}.md", expected_id=gid,
                                     expected_topic="sql")
    assert rule is not None, findings
    return rule


def test_a_frontmatter_the_line_edit_cannot_follow_still_keeps_unknown_keys_and_the_body():
    """A quoted key is not a `key:` line: the whole frontmatter is written again, with the
    person's unknown keys and the body's paragraphs."""
    text = ('---\n"reviewed by": carol\nstatus: active\nhelpful: 2\n---\n'
            "Never put SQL in f-strings.\n\nUse bound parameters.\n")
    rule = parsed(text)
    out = rewrite_guideline(rule.model_copy(update={"helpful": 3}), text)
    assert front_of(out)["reviewed by"] == "carol" and front_of(out)["helpful"] == 3
    assert out.endswith("---\nNever put SQL in f-strings.\n\nUse bound parameters.\n")
    assert parsed(out).helpful == 3


def test_a_new_wording_replaces_the_body_and_a_crlf_file_stays_crlf():
    text = ("---\r\nid: gl-0123456789ab\r\nstatus: active  # keep\r\nhelpful: 0\r\n---\r\n"
            "Never put SQL in f-strings.\r\n\r\nUse bound parameters.\r\n")
    rule = parsed(text)
    same = rewrite_guideline(rule.model_copy(update={"helpful": 1}), text)
    assert same.startswith("---\r\nid: gl-0123456789ab\r\ntopic: sql\r\nwhen_to_use: ''\r\n"
                           "status: active  # keep\r\nhelpful: 1\r\n")  # missing keys added
    assert same.endswith("---\r\nNever put SQL in f-strings.\r\n\r\nUse bound parameters.\r\n")
    reworded = rewrite_guideline(rule.model_copy(update={"text": "Always bind SQL parameters."}),
                                 text)
    assert reworded.endswith("---\r\nAlways bind SQL parameters.\r\n")
    assert parsed(reworded).text == "Always bind SQL parameters."


def test_a_minimal_hand_written_file_gets_the_missing_keys_around_the_persons_lines():
    text = "---\n# carol's rule\nstatus: active\n---\nName every index after its table.\n"
    rule = parsed(text)
    out = rewrite_guideline(rule.model_copy(update={"helpful": 1}), text)
    assert out.startswith("---\n# carol's rule\nid: gl-0123456789ab\ntopic: sql\nwhen_to_use: ''\n"
                          "status: active\nhelpful: 1\n")
    again = parsed(out)
    assert (again.helpful, again.created, again.updated) == (1, rule.created, rule.updated)


def front_of(text: str) -> dict:
    return yaml.safe_load(text.split("---\n")[1])


def test_an_id_line_naming_another_rule_is_rewritten_to_the_files_own():
    """A file copied by hand to a new name kept the other rule's `id:` through every write, so
    its id-mismatch warning never went away (review F7, session 25); `topic:` was already
    rewritten to the folder's. The person's other lines stay."""
    gid, other = "gl-0123456789ab", "gl-ffffffffffff"
    text = (f"---\nid: {other}\ntopic: python\nstatus: active  # keep\nhelpful: 1\nharmful: 0\n"
            "---\nKeep functions short.\n")
    path = f"/x/python/{gid}.md"
    old, findings = parse_guideline(text, path=path, expected_id=gid, expected_topic="python")
    assert [f.code for f in findings] == ["id-mismatch"]
    written = rewrite_guideline(old.model_copy(update={"helpful": 2, "path": path}), text)
    assert f"id: {gid}" in written and "status: active  # keep" in written
    _, findings = parse_guideline(written, path=path, expected_id=gid, expected_topic="python")
    assert [f.code for f in findings] == []
