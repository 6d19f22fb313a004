"""What `skills sync` and `skills versions` report is what happened.

Before session 16 a SKILL.md over the size limit (or unreadable) got a finding but was left
out of the sync's `skipped` list ("1 skipped" above two files named), and the current
version's "saved" time was the time of the question, not of the file. In process and through
a client of another process that owns the root.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest

from conftest import write_skill
from owner_client import client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.skills.library import MAX_SKILL_BYTES


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_every_file_not_loaded_is_skipped_and_versions_say_when_the_file_was_saved(
        tmp_path, remote):
    shared = tmp_path / "shared"
    (shared / "huge").mkdir(parents=True)
    (shared / "huge" / "SKILL.md").write_text(
        "---\nname: huge\ndescription: Too big.\n---\n" + "x" * (MAX_SKILL_BYTES + 10))
    (shared / "nofm").mkdir()
    (shared / "nofm" / "SKILL.md").write_text("# no frontmatter\n")
    kept = write_skill(shared, "csv-report", "Summarise a CSV file into a short report.")
    written = datetime(2026, 11, 1, 9, 30, tzinfo=timezone.utc).timestamp()
    os.utime(kept, (written, written))
    root = tmp_path / "root"
    root.mkdir()

    def check(bank) -> None:
        report = bank.skills.sync()
        assert sorted(report.skipped) == sorted([str(shared / "huge" / "SKILL.md"),
                                                 str(shared / "nofm" / "SKILL.md")])
        current = bank.skills.skill_versions("csv-report")[0]
        assert current.saved == datetime.fromtimestamp(written, timezone.utc)

    if remote:
        with owner_process(root, (shared,)), client_bank(root) as bank:
            check(bank)
    else:
        with Skillbank.open(root, skill_roots=[shared], embedding_function=HashEmbedding(),
                            include_bundled=False) as bank:
            check(bank)
