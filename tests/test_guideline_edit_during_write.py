"""A person's hand edit of a rule file survives a vote written in the same moment.

hunt-loop-shared #1 (session 31): a vote read the rule at its last stat check, then wrote that
record over the file; a hand edit landing after the check (or between the write's read of the
file and its rename) was overwritten, and one landing just after the rename was recorded as
the bank's own write (a stat taken after it), so the next vote reverted it. The edit is made
inside the write at each step by hooks (`edit_in_write.py`), in process and in an owner process
a client votes through: before the fix the file held the old `when_to_use:` / text again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import edit_in_write
from owner_client import client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

RULE = "Keep functions under 40 lines."
WHEN = "When reviewing code"
EDITS = {  # what a person changes: the `when_to_use:` line, or the rule's text (the body)
    "when_to_use": (f"when_to_use: {WHEN}", f"when_to_use: {WHEN}, edit number 1"),
    "text": (RULE, "Keep functions under 41 lines, or split them."),
}


def open_bank(tmp_path: Path, remote: bool, order: Path, stack) -> object:
    root = tmp_path / "root"
    if remote:
        root.mkdir()
        preamble = f"import edit_in_write; edit_in_write.install({str(order)!r})"
        stack.enter_context(owner_process(root, preamble=preamble))
        return stack.enter_context(client_bank(root))
    edit_in_write.install(order)
    return stack.enter_context(Skillbank.open(root, embedding_function=HashEmbedding(),
                                              include_bundled=False))


@pytest.fixture
def restore_hooks():
    import skillbank.store.files.guidelines as files
    saved = (files.FileGuidelineRecords.stale, files.rewrite_guideline, files.atomic_write)
    yield
    files.FileGuidelineRecords.stale, files.rewrite_guideline, files.atomic_write = saved


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
@pytest.mark.parametrize("step", edit_in_write.STEPS)
@pytest.mark.parametrize("what", sorted(EDITS))
def test_a_hand_edit_inside_a_vote_s_write_is_kept(tmp_path, remote, step, what,
                                                    restore_hooks):
    import contextlib

    order = tmp_path / "edit.json"
    with contextlib.ExitStack() as stack:
        bank = open_bank(tmp_path, remote, order, stack)
        gid = bank.guidelines.add(RULE, topic="python", when_to_use=WHEN).guideline_id
        path = Path(bank.guidelines.get(gid).path)
        old, new = EDITS[what]
        edit_in_write.order_edit(order, step, str(path), old, new)
        bank.guidelines.vote(gid, helpful=True)
        assert Path(f"{order}.done").exists(), "the edit was not made inside the vote"
        bank.guidelines.vote(gid, helpful=True)  # the next vote must not revert it either
        on_disk = path.read_text(encoding="utf-8")
        assert new in on_disk, f"the hand edit was undone ({step}):\n{on_disk}"
        g = bank.guidelines.get(gid)
        assert g.helpful == 2, "a vote was lost"
        served = g.when_to_use if what == "when_to_use" else g.text
        assert served == new.removeprefix("when_to_use: ")
