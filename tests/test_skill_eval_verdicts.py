"""`skills eval` verdicts agree with what `skills search` shows (hunt-routing, session 28):
a hit scored 0.000 is no trigger (#8), `routed_to` holds every hit the verdict was taken on
(#4), and one pretty-printed eval object is read as the one-line object is (#5).

Routing runs in this process and through a client of another process that owns the root."""

from __future__ import annotations

import json
import random

import pytest

from conftest import write_skill
from owner_client import bank_for
from skillbank.errors import InvalidInputError
from skillbank.memories.skills import trigger_evals

BOTH = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def table_rows(hits) -> list[str]:
    """The names the `skills search` table shows: it leaves out rows scored 0.000."""
    return [h.name for h in hits if round(float(h.score), 3) > 0]


def made_up_library(folder, count: int = 150) -> list[str]:
    """`count` skills named by made-up words, each sharing no word but "polish"/"tune" with
    another: a query for one leaves the rest with no evidence (scores ~1e-4 and below)."""
    rng = random.Random(7)

    def word() -> str:
        return "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3))

    names = []
    for _ in range(count):
        first, second = word(), word()
        write_skill(folder, f"{first}-{second}", f"Polish the {first} and tune the {second}.")
        names.append(f"{first}-{second}")
    return names


@BOTH
def test_a_hit_scored_zero_is_not_a_trigger(tmp_path, remote):
    """Fails before: every returned hit counted, so a should-not query "fired" on a skill
    scored ~0 that `skills search` does not show, and `--fail-on-miss` failed CI."""
    folder = tmp_path / "skills"
    names = made_up_library(folder)
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        checked = 0
        for target in names[:5]:
            first, second = target.split("-")
            query = f"polish the {first} and tune the {second}"
            hits = bank.skills.search(query, k=3)
            shown = table_rows(hits)
            assert shown[:1] == [target]
            for hit in hits:
                cases = [trigger_evals.Case(query, False, "zero.json: item 1")]
                [result] = trigger_evals.run(bank.skills, hit.name, cases, "zero.json", k=3).results
                assert result.triggered == (hit.name in shown), (hit.name, hit.score)
                assert result.routed_to == shown
                checked += hit.name not in shown
        assert checked, "no hit scored 0.000: the library no longer shows the case"


@BOTH
def test_routed_to_holds_every_hit_the_verdict_was_taken_on(tmp_path, remote):
    """Fails before: `routed_to` kept 3 hits, so at -k 5 a false trigger at rank 4 or 5 was
    reported with a list that did not hold the skill that fired."""
    folder = tmp_path / "skills"
    write_skill(folder, "git-pushing", "Stage, commit, and push git changes.")
    for n in range(1, 5):
        write_skill(folder, f"pad-{n}", f"Commit and push helper number {n} for git repositories.")
    query = "commit my changes and push them to the remote"
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        shown = table_rows(bank.skills.search(query, k=5))
        assert len(shown) == 5, shown
        cases = [trigger_evals.Case(query, False, "k5.json: item 1")]
        for rank, name in enumerate(shown, 1):
            report = trigger_evals.run(bank.skills, name, cases, "k5.json", k=5)
            [result] = report.results
            assert result.triggered and not result.passed
            assert result.routed_to == shown, rank
            assert report.as_dict()["results"][0]["routed_to"] == shown
        # k=1: a miss still shows where the query went (the first three)
        [miss] = trigger_evals.run(bank.skills, shown[4], [trigger_evals.Case(
            query, True, "k1.json: item 1")], "k1.json", k=1).results
        assert not miss.triggered and miss.routed_to == shown[:3]


@pytest.mark.parametrize("layout", ["one line", "pretty-printed", "array"])
def test_one_eval_object_reads_the_same_however_it_is_laid_out(tmp_path, layout):
    """Fails before (pretty-printed): a valid JSON document was re-read line by line and
    refused with one "not JSON" per line, while the same object on one line passed."""
    case = {"query": "commit and push my changes", "should_trigger": True}
    text = {"one line": json.dumps(case) + "\n", "pretty-printed": json.dumps(case, indent=2),
            "array": json.dumps([case], indent=2)}[layout]
    path = tmp_path / "evals.json"
    path.write_text(text)
    [loaded] = trigger_evals.load(path)
    assert (loaded.query, loaded.should_trigger) == (case["query"], True)


def test_a_pretty_printed_object_with_a_bad_entry_is_named_once(tmp_path):
    """Still a clear error, about the entry, not one "not JSON" per line."""
    path = tmp_path / "evals.json"
    path.write_text(json.dumps({"query": "commit and push", "should_trigger": "yes"}, indent=2))
    with pytest.raises(InvalidInputError) as raised:
        trigger_evals.load(path)
    assert "\"should_trigger\" must be true or false" in str(raised.value)
    assert "not JSON" not in str(raised.value)
