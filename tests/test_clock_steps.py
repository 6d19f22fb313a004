"""Nothing the bank decides may rest on the wall clock never stepping back (hunt-time, session 29):
a journal update written while the clock says an older month (#4), a skill version kept while
the clock is behind (#5). The stepped clock is the module's clock function, monkeypatched in
this process (no sleeps, no timing asserts); the write after the step is also made by a client
of an owner process, whose own clock is the normal one: the step is on disk already (a newer
month file, newer version stamps), which is what the owner must not write behind.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from owner_client import bank_for

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

BOTH = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def _turns(n: int) -> list[dict[str, str]]:
    messages = []
    for i in range(1, n + 1):
        messages += [{"role": "user", "content": f"Question {i} about renaming column c{i}"},
                     {"role": "assistant", "content": f"Answer {i}: ALTER TABLE t RENAME c{i}."}]
    return messages


def _open(root):
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)


# -- #4: the experience journal --------------------------------------------------------------------

@BOTH
def test_a_turn_written_after_the_clock_stepped_back_a_month_survives_reindex(
        tmp_path, monkeypatch, remote):
    from skillbank.store.files import experiences as journal_files

    ahead = datetime.now(timezone.utc) + timedelta(days=40)  # always a later month's file
    monkeypatch.setattr(journal_files, "utcnow", lambda: ahead)
    with _open(tmp_path / "root") as bank:
        first = bank.experiences.record_messages(_turns(1), thread="chat-42")
        assert len(bank.experiences.get(first).steps) == 1
    monkeypatch.undo()  # the clock is set right: this month is older than the file above

    with bank_for(tmp_path, remote) as bank:
        assert bank.experiences.record_messages(_turns(2), thread="chat-42") == first
        assert bank.flush(timeout=60)
        assert len(bank.experiences.get(first).steps) == 3

    with _open(tmp_path / "root") as bank:
        bank.reindex()  # replays the journal from its files
        assert len(bank.experiences.get(first).steps) == 3
        opened = bank.experiences.open_thread("chat-42")
        assert opened is not None and (opened.id, len(opened.steps)) == (first, 3)
    folder = tmp_path / "root" / "experiences"  # the turn went on into the newest month's file
    assert sorted(p.name for p in folder.glob("*.jsonl")) == [f"{ahead:%Y-%m}.jsonl"]


# -- #5: skill versions -------------------------------------------------------------------------

def _body(tag: object) -> str:
    return f"# Steps\n\nVersion {tag} of the steps.\n"


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


@BOTH
def test_a_save_made_while_the_clock_is_behind_keeps_the_replaced_text_as_the_newest_version(
        tmp_path, monkeypatch, remote):
    from skillbank.memories.skills import versions

    class Ahead(datetime):  # the clock of the saves before: a day ahead of the one after
        @classmethod
        def now(cls, tz=None):
            return datetime.now(tz) + timedelta(days=1)

    monkeypatch.setattr(versions, "datetime", Ahead)
    with _open(tmp_path / "root") as bank:
        for i in range(versions.MAX_KEPT + 2):  # the first save keeps nothing: 51 kept, 50 left
            bank.skills.save("deploy", "Deploy the web app to production.", _body(i))
    monkeypatch.undo()

    with bank_for(tmp_path, remote) as bank:
        bank.skills.save("deploy", "Deploy the web app to production.", _body("STEPPED"))
        kept = bank.skills.history("deploy")
        assert len(kept) == versions.MAX_KEPT
        newest = _last_line(open(kept[0].path, encoding="utf-8").read())
        assert newest == _last_line(_body(versions.MAX_KEPT + 1))  # what the save replaced
        assert [v.saved for v in kept] == sorted((v.saved for v in kept), reverse=True)
        bank.skills.restore("deploy", kept[0].version)  # docs/api.md: undo the last change
        replaced = _last_line(_body(versions.MAX_KEPT + 1))
        assert _last_line(bank.skills.load("deploy").body) == replaced


# -- #1 and #6: a person's edit of a rule file, told from the bank's writes ----------------------

def _file_of(root, gid):
    return next((root / "guidelines").rglob(f"{gid}.md"))


def _edit(path, *changes):
    import re

    text = path.read_text(encoding="utf-8")
    for pattern, replacement in changes:
        text, n = re.subn(pattern, replacement, text, flags=re.M)
        assert n == 1, pattern
    path.write_text(text, encoding="utf-8")


@BOTH
def test_a_vote_written_while_the_clock_was_behind_is_not_taken_for_a_hand_edit(
        tmp_path, monkeypatch, remote):
    """#1: A trusted, B untrusted (pending, supersedes A), a vote on A while the process clock
    is a minute behind the file system's, then a person approves B by hand: A is superseded."""
    from skillbank.memories.guidelines import review

    root = tmp_path / "root"
    with _open(root) as bank:
        a = bank.guidelines.learn("Keep functions under 50 lines.").entries[0].guideline_id
        b = bank.guidelines.learn("Keep functions under 40 lines.", trusted=False).entries[0]
        assert b.action != "reinforced"
        b = b.guideline_id
        behind = datetime.now(timezone.utc) - timedelta(minutes=1)
        monkeypatch.setattr(review, "utcnow", lambda: behind)
        bank.guidelines.vote(a, helpful=True)
        monkeypatch.undo()
    _edit(_file_of(root, b), (r"^status: pending$", "status: active"))  # approved by hand

    with bank_for(tmp_path, remote) as bank:
        bank.guidelines.sync()
        old, new = bank.guidelines.get(a), bank.guidelines.get(b)
        assert (new.status, new.supersedes, new.related) == ("active", [a], [])
        assert (old.status, old.superseded_by) == ("superseded", b)


@pytest.mark.parametrize("updated", ["2099-01-01", "2099-01-01 09:30"])
@BOTH
def test_a_hand_revival_with_a_typed_updated_in_the_future_stays(tmp_path, remote, updated):
    """#6: a person revives a superseded rule and types `updated:` on their own clock (local
    time east of UTC, read as UTC: in the future); no waiting, as nothing rests on the time."""
    root = tmp_path / "root"
    with _open(root) as bank:
        a = bank.guidelines.learn("Keep functions under 50 lines.").entries[0].guideline_id
        b = bank.guidelines.learn("Keep functions under 40 lines.").entries[0].guideline_id
        assert bank.guidelines.get(a).superseded_by == b
    _edit(_file_of(root, a), (r"^status: superseded$", "status: active"),
          (r"^superseded_by: .*$", "superseded_by: null"),
          (r"^updated: .*$", f"updated: {updated}"))

    with bank_for(tmp_path, remote) as bank:
        bank.guidelines.sync()
        old, new = bank.guidelines.get(a), bank.guidelines.get(b)
        assert (old.status, old.superseded_by) == ("active", None)
        assert (new.status, new.supersedes, new.related) == ("active", [], [a])
    assert "status: active" in _file_of(root, a).read_text(encoding="utf-8")


def test_an_interrupted_supersession_is_still_finished(tmp_path):
    """What the marker must not break (a guard, passes before the fix too): the new rule
    written, the old one never marked (a kill between the two writes) is taken for the bank's
    own state and finished at the next open, not for a person's revival."""
    from skillbank.store.files.guidelines import FileGuidelineRecords

    root = tmp_path / "root"
    with _open(root) as bank:
        a = bank.guidelines.learn("Keep functions under 50 lines.").entries[0].guideline_id
        digest = FileGuidelineRecords(root / "guidelines").written_path(a)
        kept = [(p, p.read_bytes()) for p in (_file_of(root, a), digest)]
        b = bank.guidelines.learn("Keep functions under 40 lines.").entries[0].guideline_id
    for path, data in kept:  # A as the bank last wrote it before the kill
        path.write_bytes(data)
    with _open(root) as bank:
        old, new = bank.guidelines.get(a), bank.guidelines.get(b)
        assert (old.status, old.superseded_by) == ("superseded", b)
        assert (new.supersedes, new.related) == ([a], [])


# -- #9: the browser's kept context preview --------------------------------------------------------

@BOTH
def test_a_forget_stamped_before_the_preview_by_the_clock_still_drops_it(tmp_path, monkeypatch,
                                                                       remote):
    """The browser's clock a minute ahead when it built the preview (a step back before the
    forget, or the owner's clock behind the browser's): the forget still drops the preview."""
    import re
    import time

    from test_ui_security import SAME, client

    secret = "SECRET-PASSPHRASE-walrus"
    task = "Rotate the API keys for billing"
    with bank_for(tmp_path, remote) as bank:
        eid = bank.experiences.record(task=task, outcome="failure",
                                      feedback=f"{secret} was pasted in the log.")
        assert bank.flush(timeout=60)
        c, guard = client(bank)
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() + 60)
        page = c.post("/context", data={"csrf": guard.csrf, "task": task, "budget": "1500"},
                      headers=SAME)
        monkeypatch.undo()
        assert secret in page.text
        key = re.search(r'name="preview" value="([^"]+)"', page.text).group(1)
        assert secret in c.get(f"/context?preview={key}").text  # kept: nothing forgotten yet
        bank.forget(eid)
        assert secret not in c.get(f"/context?preview={key}").text


# -- review of #1: a write the digest refuses saves nothing ----------------------------------------

def _failing_once(monkeypatch, suffix):
    import errno

    from skillbank.store.files import guidelines as files

    real, armed = files.atomic_write, {"on": True}

    def flaky(path, data, *args, **kwargs):
        if armed["on"] and str(path).endswith(suffix):
            armed["on"] = False
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data, *args, **kwargs)

    monkeypatch.setattr(files, "atomic_write", flaky)


@pytest.mark.parametrize("refused", [".sha256", ".md"], ids=["digest", "rule-file"])
def test_a_vote_whose_write_is_refused_saves_nothing_and_keeps_the_digest_true(
        tmp_path, monkeypatch, refused):
    """Review of #1 (session 29): the rule file was written before its digest, so a digest
    refused (a full disk between the two) failed a vote that had landed: a retry counted it
    twice, and the stale digest made the rule look edited by hand. Fails before ("digest")."""
    root = tmp_path / "root"
    with _open(root) as bank:
        gid = bank.guidelines.learn("Keep functions under 50 lines.").entries[0].guideline_id
        _failing_once(monkeypatch, refused)
        with pytest.raises(OSError):
            bank.guidelines.vote(gid, helpful=True)
        monkeypatch.undo()
        bank.guidelines.vote(gid, helpful=True)  # the retry the error invites
    with _open(root) as bank:
        rule = bank.guidelines.get(gid)
        assert rule.helpful == 1
        assert not bank.guidelines._records.edited_by_hand(rule)
