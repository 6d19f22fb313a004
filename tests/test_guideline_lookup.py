"""`learn` looks rules up in maps kept current on every change, not by walking every rule.

The scale hunt (session 18) measured learn at 100 ms per critique on a fresh root and 220-330 ms
at 1,281 rules, all of it under the write lock: it walked every rule for the same wording, for
the rules one critique wrote, and once per hop and rule reached for the `related` links of an
overruled rule, and stat'ed every rule file twice. The maps (`memories/guidelines/lookup.py`)
must answer exactly what those walks answered after every kind of change: learn, add, vote,
retire, forget, a hand edit picked up by a sync. The walks are kept here as the reference.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.guidelines.decisions import same_wording
from skillbank.memories.guidelines.files import IN_PLAY

CRITIQUES = [
    "Put currency codes in Terraform.", "Quote currency codes in slide decks.",
    "Log currency codes in SQL migrations.", "Validate currency codes in the React frontend.",
    "Keep error codes in the React frontend.", "Never use error codes in the React frontend.",
    "Always quote identifiers in generated SQL. Add an index for every foreign key.",
    "Always quote identifiers in generated SQL.", "Use type hints on public functions.",
]


def walk_twin(memory, text: str, namespace: str) -> str | None:
    return next((gid for gid, g in memory._items.items() if g.namespace == namespace
                 and g.status in IN_PLAY and same_wording(text, g.text)), None)


def walk_same_critique(memory, critique: str, namespace: str) -> set[str]:
    return {gid for gid, g in memory._items.items()
            if g.namespace == namespace and g.status in IN_PLAY
            and any(s.critique == critique for s in g.sources)}


def walk_closure(memory, gid: str, hops: int) -> list[str]:
    seen, frontier = {gid}, [gid]
    for _ in range(hops):
        found = [g.id for g in memory._items.values() if g.id not in seen and any(
            g.id in memory._items[f].related or f in g.related for f in frontier)]
        seen.update(found)
        frontier = found
        if not frontier:
            break
    seen.discard(gid)
    return sorted(seen)


def assert_maps_answer_as_walks(memory) -> None:
    items = list(memory._items.values())
    for g in items:
        for namespace in ("default", "team"):
            assert memory._twin(g.text, namespace) == walk_twin(memory, g.text, namespace)
        for source in g.sources:
            assert (memory._same_critique(source.critique, g.namespace)
                    == walk_same_critique(memory, source.critique, g.namespace))
        for hops in (1, 2):
            assert memory._related_closure(g.id, hops) == walk_closure(memory, g.id, hops)
    assert memory._twin("A rule nobody wrote.", "default") is None


def test_maps_answer_as_the_walks_did_after_every_change(tmp_path):
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False)
    try:
        memory = bank.guidelines
        for critique in CRITIQUES:
            bank.guidelines.learn(critique, task="review")
            assert_maps_answer_as_walks(memory)
        bank.guidelines.add("Put currency codes in Terraform.", namespace="team")
        bank.guidelines.add("Always quote identifiers in generated SQL!")  # a twin, reworded
        assert_maps_answer_as_walks(memory)
        assert any(g.related for g in memory._items.values())  # links to follow
        first, second, *_ = [g.id for g in bank.guidelines.list()]
        bank.guidelines.vote(first, helpful=False)
        bank.guidelines.retire(second)
        assert_maps_answer_as_walks(memory)
        linked = next(g for g in memory._items.values() if g.related)
        bank.guidelines.forget(linked.related[0])
        assert_maps_answer_as_walks(memory)
        # A hand edit (the files are the truth): the next sync reads the map again.
        edited = next(g for g in memory._items.values() if g.status == "active")
        path = tmp_path / "root" / "guidelines" / edited.topic / f"{edited.id}.md"
        path.write_text(path.read_text().replace(edited.text, "Sign every release tag."))
        bank.guidelines.sync()
        assert memory._twin("Sign every release tag.", "default") == edited.id
        assert_maps_answer_as_walks(memory)
    finally:
        bank.close()


def test_a_hand_edit_is_still_seen_by_the_stat_check(tmp_path):
    """`stale()` stats directory entries now, not `Path`s: an edit, a new file and a removed
    one are each still seen."""
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False)
    try:
        gid = bank.guidelines.add("Use type hints on public functions.").guideline_id
        records = bank.guidelines._records
        assert not records.stale()
        path = next((tmp_path / "root" / "guidelines").glob(f"*/{gid}.md"))
        path.write_text(path.read_text() + "\n")
        assert records.stale()
        bank.guidelines.sync()
        assert not records.stale()
        (path.parent / "gl-0123456789ab.md").write_text(path.read_text())
        assert records.stale()
        bank.guidelines.sync()
        path.unlink()
        assert records.stale()
    finally:
        bank.close()


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_same_wording_and_critique_are_found_after_forget_and_relearn(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        rule = "Always quote identifiers in generated SQL."
        first = bank.guidelines.learn(rule).entries[0]
        again = bank.guidelines.learn(rule).entries[0]
        assert first.action == "added" and again.guideline_id == first.guideline_id
        assert again.action == "merged"
        bank.guidelines.forget(first.guideline_id)
        third = bank.guidelines.learn(rule).entries[0]
        assert third.action == "added" and third.guideline_id != first.guideline_id
        assert bank.guidelines.learn(rule + "!").entries[0].guideline_id == third.guideline_id
