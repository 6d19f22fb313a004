"""Issue 24: separate roots (deployments) on one Chroma never delete each other's index entries.

Before ownership, opening a second root on the same Chroma made the shared collections match
that root's files and deleted everything else: the first user's skills, guidelines and
experiences vanished from the index while their running process went on answering "no skill
fits". Each case here opens root A, fills it, opens root B on the same Chroma (which syncs),
writes to B, and checks that A's entries are all still in Chroma and still found by A.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.index import HybridIndex, IndexItem, make_client
from skillbank.index_ownership import IDENTITY_FILE, OWNER_KEY, database_for, root_identity

A_SKILLS = {
    "slide-deck": "Turn meeting notes into a short slide deck with one idea per slide.",
    "sql-tuning": "Speed up a slow SQL query by reading its plan and adding an index.",
}
B_SKILLS = {
    "release-notes": "Write release notes from merged pull requests, grouped by area.",
    # The same name in both roots: ids collide unless the roots live apart.
    "slide-deck": "Make slides for a conference talk from an outline.",
}


def _open(root: Path, **kw) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False, **kw)


def _fill(bank: Skillbank, skills: dict[str, str], rule: str, task: str) -> dict[str, list[str]]:
    for name, description in skills.items():
        bank.skills.save(name, description, f"# Steps\n\n1. {description}\n")
    gids = bank.guidelines.learn(rule).ids()
    eid = bank.experiences.record(task=task, outcome="failure", feedback="it went wrong")
    return {"skills": sorted(skills), "guidelines": sorted(gids), "experiences": [eid]}


def _indexed(root: Path, **kw) -> dict[str, list[str]]:
    """What Chroma holds for a root, read by a fresh bank that does not sync (no repair)."""
    with _open(root, sync=False, share=False, **kw) as view:
        return {kind: sorted(view.index(kind).ids())
                for kind in ("skills", "guidelines", "experiences")}


def _check_a_intact(a: Skillbank, a_root: Path, expected: dict[str, list[str]], **kw) -> None:
    assert _indexed(a_root, **kw) == expected
    for name, description in A_SKILLS.items():
        hits = a.skills.search(description, k=1)
        assert hits and hits[0].name == name
        assert hits[0].record.description == description  # A's text, not B's same-named skill
    for gid in expected["guidelines"]:
        assert gid in a.index("guidelines").ids()


def _two_roots(tmp_path: Path, **kw) -> None:
    a_root, b_root = tmp_path / "a", tmp_path / "b"
    a = _open(a_root, **kw)
    try:
        expected = _fill(a, A_SKILLS, "Use British spelling in user-facing text.",
                         "Migrate the users table without locking it")
        b = _open(b_root, **kw)  # opening syncs B's (different) files into the index
        try:
            _fill(b, B_SKILLS, "Never put SQL in f-strings.", "Rotate the API keys")
            b.sync()
            b.reindex()  # B rebuilding its own index drops only its own entries
            assert _indexed(b_root, **kw)["skills"] == sorted(B_SKILLS)
            _check_a_intact(a, a_root, expected, **kw)
        finally:
            b.close()
    finally:
        a.close()


def test_two_embedded_roots_on_one_callers_client_keep_their_entries(tmp_path):
    client = make_client(path=str(tmp_path / "shared-chroma"))
    _two_roots(tmp_path, client=client)


def test_two_roots_on_one_chroma_server_keep_their_entries(tmp_path, chroma_server):
    _two_roots(tmp_path, chroma_url=chroma_server)


def test_each_root_gets_its_own_database_on_a_server(tmp_path, chroma_server):
    from chromadb.api.client import AdminClient

    with _open(tmp_path / "a", chroma_url=chroma_server) as bank:
        bank.skills.save("slide-deck", A_SKILLS["slide-deck"], "# Steps\n")
        owner = root_identity(tmp_path / "a")
        assert (tmp_path / "a" / IDENTITY_FILE).read_text().strip() == owner
        assert bank.client.database == database_for(owner)
        meta = bank.index("skills")._collection.get(ids=["slide-deck"])["metadatas"][0]
        assert meta[OWNER_KEY] == owner
        admin = AdminClient.from_system(bank.client._system)
        assert admin.get_database(database_for(owner), tenant="default_tenant")


def test_one_deployment_at_two_paths_of_one_root_shares_its_entries(tmp_path, chroma_server):
    """`deployment` set alike on one root reached at two paths: one deployment. (Two root
    folders on one deployment are refused: tests/test_deployment_one_root.py.)"""
    with _open(tmp_path / "a", chroma_url=chroma_server, deployment="team-one") as a:
        a.skills.save("slide-deck", A_SKILLS["slide-deck"], "# Steps\n")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    embedding = HashEmbedding()
    with Skillbank.open(tmp_path / "b", embedding_function=embedding, include_bundled=False,
                        chroma_url=chroma_server, deployment="team-one", sync=False) as b:
        assert b.index("skills").ids() == ["slide-deck"] and embedding.calls == 0


def test_a_collection_shared_on_purpose_never_loses_anothers_entries(tmp_path):
    """Two owners configured onto one collection: each sees, syncs and deletes only its own."""
    client = make_client(path=str(tmp_path / "chroma"))
    embedding = HashEmbedding()

    def index(owner: str) -> HybridIndex:
        return HybridIndex(client, "shared_skills", embedding, owner=owner, adopt_untagged=False)

    def item(item_id: str, text: str) -> IndexItem:
        return IndexItem(id=item_id, embed_texts=[text], keyword_text=text, metadata={"hash": text})

    a, b = index("alice"), index("bob")
    a.upsert([item("a-1", "slow sql query plan"), item("a-2", "slide deck from notes")])
    b.upsert([item("b-1", "release notes from pull requests")])
    assert sorted(index("bob").ids()) == ["b-1"]
    assert [h.id for h in index("bob").search("slow sql query plan", k=5)] == ["b-1"]
    index("bob").reset()  # bob's reindex
    fresh = index("alice")
    assert sorted(fresh.ids()) == ["a-1", "a-2"]
    assert fresh.search("slow sql query plan", k=1)[0].why == "both"


def test_the_embedded_default_keeps_its_place(tmp_path):
    """A single user's embedded root stays in Chroma's default database: nothing moves."""
    with _open(tmp_path / "root") as bank:
        bank.skills.save("slide-deck", A_SKILLS["slide-deck"], "# Steps\n")
        assert bank.client.database == "default_database"
    plain = make_client(path=str(tmp_path / "root" / "chroma"))
    assert plain.get_collection("skillbank_skills").count() == 1
