"""An in-process team bank records its root as a team root (hunt-lxteam #4, session 37).

Users met this: an app opening its team bank in-process (`Skillbank.open(root,
database_url=..., chroma_url=...)`, LlamaIndex workers, no `skillbank server`) never wrote
`team = true`; the CLI in a shell without SKILLBANK_DATABASE_URL then opened the root embedded,
said "No guidelines" and learnt rules into `<root>/guidelines` that no agent saw. Now the team
open records it, so that embedded open is refused as on a worker's root. A root that holds
embedded memory is left unmarked (marked, that memory could no longer be opened or migrated).
Real PostgreSQL (tests/pg_cluster.py) and a `chroma run` server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from skillbank import Skillbank, remember
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError
from mcp_http import team_env
from team_worker import open_bank

pytest.importorskip("psycopg")


def test_a_team_open_marks_the_root_and_an_embedded_open_is_then_refused(
        tmp_path, chroma_server, postgres):
    root = tmp_path / "root"
    with open_bank(root, chroma_server, postgres.url, uuid.uuid4().hex[:16]) as bank:
        bank.guidelines.add("Always sign the release tarball.", namespace="alice")
        assert remember.is_team(root)
        with pytest.raises(InvalidInputError, match="SKILLBANK_DATABASE_URL"):
            Skillbank.open(root, embedding_function=HashEmbedding(), share=False)
    assert not (root / "guidelines").exists()  # nothing written where no worker reads
    assert remember.is_team(root)


def test_a_root_with_embedded_memory_is_not_marked_and_keeps_opening_embedded(
        tmp_path, chroma_server, postgres):
    root = tmp_path / "personal"
    with Skillbank.open(root, embedding_function=HashEmbedding(), share=False) as bank:
        bank.guidelines.add("Always sign the release tarball.")
    with open_bank(root, chroma_server, postgres.url, uuid.uuid4().hex[:16]):
        pass
    assert not remember.is_team(root)
    with Skillbank.open(root, embedding_function=HashEmbedding(), share=False) as bank:
        assert [g.text for g in bank.guidelines.list()] == ["Always sign the release tarball."]


def test_a_settings_file_that_cannot_be_written_does_not_stop_the_team_open(
        tmp_path, chroma_server, postgres):
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    (root / remember.LOCK).mkdir()  # the settings file's lock cannot be taken (as read-only)
    with open_bank(root, chroma_server, postgres.url, uuid.uuid4().hex[:16]) as bank:
        assert bank.guidelines.add("Always sign the release tarball.").guideline_id
    assert not remember.is_team(root)


def test_the_deployment_given_in_process_is_recorded_and_another_is_refused(
        tmp_path, chroma_server, postgres):
    """hunt-teamvotes #2, session 38: `team = true` alone was recorded, so the CLI on the root
    (same SKILLBANK_DATABASE_URL and SKILLBANK_CHROMA_URL) opened the root-id deployment: "No
    guidelines", and a rule it learnt was one the app never saw."""
    root = tmp_path / "root"
    deployment = "prod-" + uuid.uuid4().hex[:8]
    with open_bank(root, chroma_server, postgres.url, deployment) as bank:
        gid = bank.guidelines.add("Never run database migrations on Fridays.").guideline_id
    assert remember.deployment(root) == deployment and remember.is_team(root)
    env = {**team_env(), "SKILLBANK_DATABASE_URL": postgres.url,
           "SKILLBANK_CHROMA_URL": chroma_server}
    listed = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root),
                             "--json", "guidelines", "list"], env=env, capture_output=True,
                            text=True, timeout=180)
    assert listed.returncode == 0, listed.stderr
    assert gid in {g["id"] for g in json.loads(listed.stdout)}
    with pytest.raises(InvalidInputError, match=f"deployment = '{deployment}'"):
        open_bank(root, chroma_server, postgres.url, "another")  # as the server refuses
    refused = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root),
                              "guidelines", "learn", "Always announce deploys."],
                             env={**env, "SKILLBANK_DEPLOYMENT": "another"},
                             capture_output=True, text=True, timeout=180)
    assert refused.returncode == 2 and "one root is one deployment" in refused.stderr
    assert remember.deployment(root) == deployment
    with open_bank(root, chroma_server, postgres.url, deployment) as bank:
        assert [g.text for g in bank.guidelines.list(namespace="*")] == [
            "Never run database migrations on Fridays."]


def test_two_first_opens_with_different_deployments_one_is_refused(
        tmp_path, chroma_server, postgres, monkeypatch):
    """Review 2, session 38: two first opens of a new root both passed the check at the start
    of the open (nothing recorded yet); the one that recorded second served a deployment the
    root's file does not name. Here the other open records first, between this open's check
    and its mark: this one is refused and closes its bank."""
    from skillbank import opening

    root = tmp_path / "root"
    first, second = "prod-" + uuid.uuid4().hex[:8], "prdo-" + uuid.uuid4().hex[:8]
    checked = opening._refuse_another_deployment

    def check_then_lose_the_race(settings):
        checked(settings)  # passes: nothing is recorded yet
        remember.mark_team(root)
        remember.keep_setting(root, remember.DEPLOYMENT, first)  # the other open's mark

    monkeypatch.setattr(opening, "_refuse_another_deployment", check_then_lose_the_race)
    with pytest.raises(InvalidInputError, match=f"deployment = '{first}'"):
        open_bank(root, chroma_server, postgres.url, second)
    monkeypatch.setattr(opening, "_refuse_another_deployment", checked)
    assert remember.deployment(root) == first
    with open_bank(root, chroma_server, postgres.url, first) as bank:  # the root is free
        assert bank.guidelines.add("Never run database migrations on Fridays.").guideline_id
