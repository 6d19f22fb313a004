"""A skill folder replaced by a plain file of the same name (hunt-watch #3, session 33).

`rm -rf skills/release-notes` and then a tool writing a plain file `skills/release-notes`:
search and list dropped the skill, but `load` and `create` raised `UnreadableError`
"…/release-notes/SKILL.md cannot be read (not a directory) … give this user read access",
while `sync` and `unreadable_files()` said nothing (ENOTDIR was taken as a reason a file could
not be read). Now the skill is gone, as for a deleted SKILL.md: `load` says "no skill named",
`create` says the path is not a folder (no word of read access), and works once the file is
moved away.
"""

from __future__ import annotations

import shutil

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError, NotFoundError, UnreadableError

NAME = "release-notes"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_folder_replaced_by_a_file_is_a_gone_skill(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.save(NAME, "Write release notes from merged pull requests.", "# Steps\n")
        folder = bank.root / "skills" / NAME
        shutil.rmtree(folder)
        folder.write_text("not a folder\n")
        with pytest.raises(NotFoundError, match="no skill named") as gone:
            bank.skills.load(NAME)  # UnreadableError "... (not a directory) ... read access"
        assert not isinstance(gone.value, UnreadableError)
        assert bank.skills.unreadable_files() == []
        assert not [f for f in bank.skills.sync().findings if f.code == "unreadable"]
        with pytest.raises(InvalidInputError, match="is not a folder") as refused:
            bank.skills.create(NAME, "Write release notes.", "# Steps\n")
        assert "read access" not in str(refused.value)
        folder.unlink()
        bank.skills.create(NAME, "Write release notes.", "# Steps\n")
        assert bank.skills.load(NAME).description == "Write release notes."
