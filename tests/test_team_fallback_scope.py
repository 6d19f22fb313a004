"""Team mode, Chroma down (issue 24): the records' own full-text search answers, and it must
answer within the caller's namespaces. The SQL took its LIMIT (50 experiences, 200 rules)
over every namespace of the deployment and the caller's scope was applied after: another
namespace's matching records crowded the caller's own out, and a person's recall came back
empty while Chroma was down. Real PostgreSQL, a real `chroma run` server stopped mid-test.
"""

from __future__ import annotations

import uuid

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_chroma_outage import ChromaServer, own_chroma  # noqa: F401 - fixture

pytest.importorskip("psycopg")


def _worker(root, chroma_url, url, deployment) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          chroma_url=chroma_url, database_url=url, deployment=deployment)


def test_full_text_fallback_answers_within_the_callers_namespace(tmp_path, postgres,
                                                                   own_chroma):
    deployment = uuid.uuid4().hex[:16]
    bank = _worker(tmp_path / "a", own_chroma.url, postgres.url, deployment)
    try:
        mine = bank.experiences.record("Drain the print queue of the third floor", "success",
                                       namespace="team-a")
        rule = bank.guidelines.add("Pause the spooler before you drain a print queue.",
                                   namespace="team-a").guideline_id
        own_chroma.stop()
        # Another namespace's records, written meanwhile (another worker): the same words,
        # ids that sort first, so an unscoped LIMIT keeps only them.
        record = bank.experiences.get(mine)
        others = [{"op": "add", "record": record.model_copy(update={
            "id": f"exp-000000000{n:03x}", "namespace": "team-b", "usage": None}).model_dump(
                mode="json", exclude={"usage"})} for n in range(80)]
        bank.store.experiences().write(others)
        records = bank.store.guidelines()
        g = bank.guidelines.get(rule)
        for n in range(220):
            records.save(g.model_copy(update={"id": f"gl-000000000{n:03x}",
                                              "namespace": "team-b"}))

        hits = bank.experiences.recall("drain the third floor print queue", k=3,
                                       namespace="team-a")
        assert "full-text" in (getattr(hits, "note", "") or "")
        assert [h.id for h in hits] == [mine], "the caller's own record was crowded out"
        found = bank.guidelines.search("drain a print queue spooler", k=3, namespace="team-a")
        assert "full-text" in (getattr(found, "note", "") or "")
        assert [h.id for h in found] == [rule], "the caller's own rule was crowded out"
    finally:
        bank.close()
