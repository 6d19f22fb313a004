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

import uuid
import pytest

from skillbank import Skillbank, remember
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError
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
