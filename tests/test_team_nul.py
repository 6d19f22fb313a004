"""A NUL character in what an agent writes (issue 24): the embedded default stores it (JSON
escapes it), but PostgreSQL's text and jsonb refuse it. Team mode refused such an experience
with a raw psycopg error and such a rule with "PostgreSQL refused the write ... check the
database" (nothing wrong with the database). The PostgreSQL column now keeps the record with
U+FFFD in its place. Real PostgreSQL and a real `chroma run` server.
"""

from __future__ import annotations

import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

pytest.importorskip("psycopg")


def test_a_nul_in_a_record_is_kept_in_team_mode(tmp_path, postgres, chroma_server):
    bank = Skillbank.open(tmp_path / "w", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=chroma_server,
                          database_url=postgres.url, deployment=uuid.uuid4().hex[:16])
    try:
        eid = bank.experiences.record("Fix the\x00 flaky build", "success",
                                      feedback="Pin\x00 the cache.", lessons=["Clear\x00 it."])
        assert bank.experiences.get(eid).task == "Fix the\ufffd flaky build"
        gid = bank.guidelines.learn("Never\x00 skip the flaky build's retry.").ids()[0]
        assert "\x00" not in bank.guidelines.get(gid).text
        assert bank.experiences.recall("fix the flaky build", k=1)[0].id == eid
    finally:
        bank.close()
