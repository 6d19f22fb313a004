"""A skill whose `name:` differs from its folder is fixed by renaming it to its folder's name
(hunt session 20).

Users met `skills rename changelog changelog-writer` refused "skill 'changelog-writer' already
exists" (that folder was the skill itself), and `skills update changelog -d ...` refused "name
does not match its folder" without saying how to fix it. Now the rename rewrites `name:` in place
(atomic, the old file kept as a version, usage carried) and the refusal names the fix. In
process and through a client of another process owning the root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError


def _check(bank) -> None:
    bank.skills.save("changelog-writer", "Write a changelog from merged PRs.", "# Steps\n")
    path = Path(bank.skills.load("changelog-writer").path)
    path.write_text(path.read_text().replace("name: changelog-writer", "name: changelog"))
    bank.skills.sync()
    assert "changelog" in bank.skills.names()
    bank.rate("skill:changelog", helpful=True)
    with pytest.raises(InvalidInputError,
                       match="skillbank skills rename changelog changelog-writer"):
        bank.skills.update("changelog", description="Write a changelog.")
    renamed = bank.skills.rename("changelog", "changelog-writer")
    assert renamed.name == "changelog-writer" and Path(renamed.path) == path
    assert "name: changelog-writer" in path.read_text()
    assert "changelog" not in bank.skills.names()
    assert renamed.usage.successes == 1  # its rating went with it
    assert (path.parent / ".versions").is_dir()  # the old file is kept, as for any edit
    bank.skills.update("changelog-writer", description="Write a changelog.")  # valid again


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_rename_to_its_own_folder(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank)
