"""Team mode: `experiences.forget` on one worker deletes the drafts drawn from the experiences
for the whole deployment (hunt-drafts #2 and #9, session 26: only the facade's `bank.forget`
erased drafts, and a forgotten lesson's never). Real PostgreSQL and `chroma run`, two workers
with their own roots (`two_machines`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from team_worker import until

pytest.importorskip("psycopg")

WORD = "KOALAWORD"


def holders(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "drafts").rglob("*")
                  if p.is_file() and WORD.encode() in p.read_bytes())


def runs(bank, failed: bool = False) -> list[str]:
    return [bank.experiences.record(
        f"Rebuild the search index of shop {n}{'' if failed else ' ' + WORD}",
        "failure" if failed else "success", when_to_use="When rebuilding a shop's search index",
        steps=[{"action": "pause_writes"}, {"action": "reindex"}],
        lessons=[f"Pause the {WORD} writers of shop {n} first."] if failed else None)
        for n in range(3)]


@pytest.mark.parametrize("what", ["experiences", "lessons"])
def test_forgetting_on_one_worker_deletes_the_drafts_for_both(two_machines, what):
    a, b = two_machines
    runs(a, failed=what == "lessons")
    [draft] = a.skills.propose(min_support=3)
    assert until(lambda: [d.name for d in b.skills.drafts()] == [draft.name])
    assert holders(Path(a.root)) and holders(Path(b.root))
    kind = "experience" if what == "experiences" else "lesson"
    for record in b.experiences.list(kind=kind):
        b.experiences.forget(record.id)
    assert b.skills.drafts() == []
    assert until(lambda: a.skills.drafts() == []), "worker A still lists the draft"
    assert holders(Path(b.root)) == []
    assert until(lambda: holders(Path(a.root)) == []), "A's working copy kept the text"
