"""The watcher follows the files while the model embeds what changed (hunt-git #5, session 23).

The watcher embedded a change's skills in its own thread before it looked at the files again:
`git checkout main` made right after a branch change that touched 300 skills was listed 8-21 s
later (1.8 s for the first switch), and list and search served the left branch's names
meanwhile. Here the model holds on the branch's first change (`held_embedding.py`) until the
test lets it go: the second change must be listed and found by keyword while it still holds,
and the held skill, gone since, is never served once the vectors are in. In process, and as
another process's watching owner seen through a client.
"""

from __future__ import annotations

import time
from pathlib import Path

from conftest import write_skill
from held_embedding import HeldEmbedding
from owner_client import client_bank, owner_process
from skillbank import Skillbank

DEADLINE = 90.0  # generous: a loaded CI machine; the watcher ticks every 0.5 s


def until(check, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def described(bank, name: str) -> str:
    return next((s.description for s in bank.skills.list() if s.name == name), "")


def switch_back_while_the_model_holds(team: Path, gate: Path, bank) -> None:
    # A branch change: one skill added (the model holds on it), one edited.
    write_skill(team, "feed-otters", "Feed the otters at noon.")
    write_skill(team, "ring-bells", "Ring the bells at dawn.")
    until(lambda: (gate / "embedding").exists(), "the watcher never embedded feed-otters")
    # The switch back, while the model still holds: the added skill goes, the edit is undone,
    # and a skill of the old branch comes back.
    (team / "feed-otters" / "SKILL.md").unlink()
    (team / "feed-otters").rmdir()
    write_skill(team, "ring-bells", "Ring the bells at dusk.")
    write_skill(team, "groom-herons", "Groom the herons on Fridays.")
    names = {"count-bison", "ring-bells", "groom-herons"}
    until(lambda: set(bank.skills.names()) == names and
          described(bank, "ring-bells") == "Ring the bells at dusk.",
          f"the switch back was not followed: {sorted(bank.skills.names())}")
    assert [h.name for h in bank.skills.search("groom herons Fridays", k=1)] == ["groom-herons"]
    assert not (gate / "embedded").exists()  # all of it while the model held
    (gate / "hold").unlink()  # the model goes on
    until(lambda: bank.skills.search("feed otters noon").dense_complete,
          "the vectors never filled")
    assert "feed-otters" not in {h.name for h in bank.skills.search("feed otters noon")}
    assert set(bank.skills.names()) == names


def team_and_gate(tmp_path: Path) -> tuple[Path, Path]:
    team, gate = tmp_path / "team-skills", tmp_path / "gate"
    write_skill(team, "count-bison", "Count the bison every morning.")
    write_skill(team, "ring-bells", "Ring the bells at dusk.")
    gate.mkdir()
    (gate / "hold").touch()
    return team, gate


def test_a_change_made_while_the_watcher_embeds_is_followed_in_process(tmp_path):
    team, gate = team_and_gate(tmp_path)
    try:
        with Skillbank.open(tmp_path / "root", skill_roots=[team], include_bundled=False,
                            embedding_function=HeldEmbedding(gate)) as bank:
            bank.watch()
            switch_back_while_the_model_holds(team, gate, bank)
    finally:
        (gate / "hold").unlink(missing_ok=True)  # a failed test lets a held model go


def test_a_change_made_while_the_owner_embeds_is_followed_by_a_client(tmp_path):
    team, gate = team_and_gate(tmp_path)
    root = tmp_path / "root"
    root.mkdir()
    try:
        with owner_process(root, (team,), watch=True, held=gate), client_bank(root) as bank:
            switch_back_while_the_model_holds(team, gate, bank)
    finally:
        (gate / "hold").unlink(missing_ok=True)
