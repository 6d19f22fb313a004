"""`skills.list()` while a sync removes a skill (fix-watch's note, session 23).

`list()` read the names, then each name's record; a sync between the two (a `git checkout`
under the watcher, ~1 s of listing at 1,700 skills) made it raise `NotFoundError: no skill
named 'X'` on most branch switches. A skill gone meanwhile is simply not listed.
"""

from __future__ import annotations

import shutil

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def test_a_skill_removed_while_listing_is_left_out(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    write_skill(shared, "ring-bells", "Ring the bells at noon.")
    write_skill(shared, "feed-otters", "Feed the otters twice a day.")
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        skill_roots=[shared], include_bundled=False) as bank:
        real_names = bank.skills.names

        def names_then_removed() -> list[str]:
            listed = real_names()
            shutil.rmtree(shared / "feed-otters")
            bank.skills.sync()  # the watcher's sync, between the names and their records
            return listed

        monkeypatch.setattr(bank.skills, "names", names_then_removed)
        assert [s.name for s in bank.skills.list()] == ["ring-bells"]
