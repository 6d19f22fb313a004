"""An owner opened with a relative root (hunt): `Skillbank.open("relroot")` published
`"socket": "relroot/.owner.sock"` in `.owner.json`, so a client started from another folder
(`skillbank --root ../relroot experiences export out.jsonl`) waited 10 s and failed with
BusyError, "its socket is gone". The root is made absolute where it is opened."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from owner_client import client_bank
from test_multiprocess import env_for

OWNER = """
import sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
bank = Skillbank.open("relroot", embedding_function=HashEmbedding(), include_bundled=False)
bank.experiences.record(task="Rotate the TLS certificates on the edge proxies", outcome="success")
print("ready", flush=True)
for line in sys.stdin:
    pass
bank.close()
"""


def test_a_client_in_another_folder_reaches_an_owner_opened_with_a_relative_root(tmp_path):
    env = env_for(tmp_path / "relroot")
    env.pop("SKILLBANK_ROOT")
    proc = subprocess.Popen([sys.executable, "-c", OWNER], env=env, cwd=tmp_path, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline().split()[:1] == ["ready"], "the owner did not start"
        published = json.loads((tmp_path / "relroot" / ".owner.json").read_text())
        assert Path(published["socket"]).is_absolute(), published["socket"]
        elsewhere = tmp_path / "sub"
        elsewhere.mkdir()
        before = os.getcwd()
        os.chdir(elsewhere)
        try:
            with client_bank(Path("..") / "relroot") as bank:
                tasks = [e.task for e in bank.experiences.list()]
        finally:
            os.chdir(before)
        assert tasks == ["Rotate the TLS certificates on the edge proxies"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
