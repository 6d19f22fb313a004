"""A proposal's network time holds no lock of the memory root (issue 24, review).

A skill saved in git mode is a commit pushed to the remote; the push can take as long as the
forge takes. It touches nothing the root's write lock guards (the served checkout stays as it
is), so the bank's other writes — an experience recorded meanwhile, on this worker or on another
worker sharing the root — must not wait for it (they used to, then fail with BusyError after
write_lock_timeout). Real git: the bare remote's pre-receive hook holds the push until the test
lets it go."""

from __future__ import annotations

import shutil
import threading
import time

import pytest

from skillbank import Skillbank
from skillbank import scope as scopes
from skillbank.embeddings import HashEmbedding
from test_skills_repo import remote  # noqa: F401 - a fixture: a bare skills repository

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ADA = scopes.Scope(principal="ada", namespace="ada", role="contributor")


def test_other_writes_go_on_while_a_proposal_is_pushed(tmp_path, remote):  # noqa: F811
    entered, release = tmp_path / "push-entered", tmp_path / "push-release"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\ntouch '{entered}'\n"
                    f"i=0; while [ ! -e '{release}' ] && [ $i -lt 600 ]; do sleep 0.1; "
                    "i=$((i+1)); done\nexit 0\n")
    hook.chmod(0o755)
    bank = Skillbank.open(tmp_path / "root", skill_roots=[], embedding_function=HashEmbedding(),
                          include_bundled=False, share=False, skills_repo=str(remote),
                          skills_follow_seconds=0, write_lock_timeout=5)
    outcome: dict = {}

    def propose() -> None:
        try:
            with scopes.using(ADA):
                outcome["skill"] = bank.skills.save(
                    "deploy-app", "Deploy the app to staging safely.", "# Steps\n\nDeploy.\n")
        except Exception as exc:  # noqa: BLE001 - checked below
            outcome["error"] = exc

    worker = threading.Thread(target=propose)
    worker.start()
    try:
        deadline = time.monotonic() + 120
        while not entered.exists():
            assert time.monotonic() < deadline and worker.is_alive(), outcome
            time.sleep(0.05)
        # The push is in flight: the root's write lock is free for everyone else.
        bank.experiences.record(task="Rotate the staging database password",
                                outcome="success")
        bank.flush()
        with bank.write_lock:
            pass
    finally:
        release.touch()
        worker.join(120)
        bank.close()
    assert "error" not in outcome, outcome
    assert outcome["skill"].proposal is not None and outcome["skill"].proposal.changed
