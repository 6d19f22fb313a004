"""A watching process follows a skill folder that is replaced (crash hunt, session 18).

After `rm -rf team-skills && git clone …` (or `mv new skills`) the running watcher was still on
the old folder's inode: the new folder's skills never reached the index while the MCP server,
the CLI's owner or `bank.watch()` ran. In process, and as another process's watching owner
seen through a client.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from owner_client import client_bank
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_multiprocess import env_for

DEADLINE = 90.0  # generous: a loaded CI machine; the watcher ticks every 0.5 s


def put(folder: Path, name: str, description: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# Steps\n\n1. {description}\n")


def until_listed(bank, names: set[str]) -> None:
    deadline = time.monotonic() + DEADLINE
    while set(bank.skills.names()) != names:
        assert time.monotonic() < deadline, (sorted(bank.skills.names()), sorted(names))
        time.sleep(0.2)


def replace_and_recreate(team: Path, bank) -> None:
    put(team, "feed-otters", "Feed the otters at noon.")
    until_listed(bank, {"feed-otters"})
    shutil.rmtree(team)  # a re-clone: the folder goes and comes back
    put(team, "groom-herons", "Groom the herons on Fridays.")
    until_listed(bank, {"groom-herons"})
    put(team, "count-bison", "Count the bison every morning.")  # an edit after it came back
    until_listed(bank, {"groom-herons", "count-bison"})
    fresh = team.parent / "new-copy"  # a new copy moved into place
    put(fresh, "ring-bells", "Ring the bells at dusk.")
    shutil.rmtree(team)
    os.rename(fresh, team)
    until_listed(bank, {"ring-bells"})
    put(team, "tune-harps", "Tune the harps before the concert.")
    until_listed(bank, {"ring-bells", "tune-harps"})


def test_a_replaced_folder_is_followed_in_process(tmp_path):
    team = tmp_path / "team-skills"
    team.mkdir()
    with Skillbank.open(tmp_path / "root", skill_roots=[team], embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.watch()
        replace_and_recreate(team, bank)


OWNER = """
import sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
bank = Skillbank.open(sys.argv[1], skill_roots=[sys.argv[2]], embedding_function=HashEmbedding(),
                      include_bundled=False)
bank.watch()
print('ready', flush=True)
for line in sys.stdin:
    pass
bank.close()
"""


def test_a_replaced_folder_is_followed_by_an_owner_seen_through_a_client(tmp_path):
    team, root = tmp_path / "team-skills", tmp_path / "root"
    team.mkdir()
    root.mkdir()
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(root), str(team)],
                             env=env_for(root), text=True, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    try:
        assert owner.stdout.readline().startswith("ready")
        with client_bank(root) as bank:
            replace_and_recreate(team, bank)
    finally:
        owner.stdin.close()
        owner.wait(timeout=60)
