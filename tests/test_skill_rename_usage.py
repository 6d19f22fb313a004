"""A renamed skill keeps its usage; a deleted one leaves none for the next of its name (hunt
session 20).

Usage is keyed by skill name. Users met `skills.rename("gamma-skill", "delta-skill")` leaving
delta at zero uses while a new, unrelated `gamma-skill` saved later inherited the five "did not
help" and went straight into the review queue ("used often, rarely helpful"). Now a rename
carries counts, outsiders' votes and the outcome timeline to the new name, and a delete or
forget resets the name. Checked in process, through a client of another process owning the
root, on both store columns (the root's usage log and team mode's PostgreSQL rows), and in
outcome rollback's reading of the log.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.records import Usage
from skillbank.store import open_store


def _counts(bank, name: str) -> tuple[int, int]:
    usage = bank.skills.load(name).usage
    return usage.uses, usage.failures


def _check(bank) -> None:
    bank.skills.save("gamma-skill", "Sort the gamma reports by date.", "# Steps\n1. Sort.\n")
    for _ in range(5):
        bank.rate("skill:gamma-skill", helpful=False)
    bank.flush()
    assert _counts(bank, "gamma-skill") == (5, 5)
    bank.skills.rename("gamma-skill", "delta-skill")
    assert _counts(bank, "delta-skill") == (5, 5)  # the renamed skill keeps its record
    bank.skills.save("gamma-skill", "Plan the team offsite agenda.", "# Steps\n1. Plan.\n")
    assert _counts(bank, "gamma-skill") == (0, 0)  # a new skill of the old name starts clean
    queued = [r.name for r in bank.skills.review(min_uses=5, max_help_rate=0.2)]
    assert queued == ["delta-skill"]
    bank.skills.delete("delta-skill")
    bank.skills.save("delta-skill", "Draft the quarterly budget.", "# Steps\n1. Draft.\n")
    assert _counts(bank, "delta-skill") == (0, 0)  # a deleted skill's name starts at zero
    bank.rate("skill:delta-skill", helpful=True)
    bank.forget("skill:delta-skill")
    bank.skills.save("delta-skill", "Book the meeting room.", "# Steps\n1. Book.\n")
    assert _counts(bank, "delta-skill") == (0, 0)  # forget too


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_rename_carries_and_delete_resets_usage(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _check(bank)
    with bank_for(tmp_path, False) as bank:  # what the log says when read again from disk
        assert _counts(bank, "gamma-skill") == (0, 0)
        assert not bank.skills.review(min_uses=1, max_help_rate=1.0)


@pytest.fixture(params=["files", "postgres"])
def usage(request, tmp_path):
    """The skills' usage counters of one deployment, on each store column."""
    if request.param == "files":
        store = open_store(tmp_path / "root")
    else:
        store = open_store(None, request.getfixturevalue("postgres").url,
                           deployment=uuid.uuid4().hex)
    yield store.usage("skills")
    store.close()


def test_store_move_and_reset(usage):
    usage.record("old", ok=False)
    usage.record("old", ok=True, trusted=False)
    usage.vote("old", "carol", False, use=1)
    usage.add("new", Usage(uses=9, successes=9))  # stale counts of a skill deleted by hand
    usage.move("old", "new")
    # Replaced, not added to (second review, session 20: adding let one outsider count twice;
    # a rename onto a name in use is refused before the move); the outsider: his sign.
    assert (usage.get("new").uses, usage.get("new").successes, usage.get("new").failures) == (
        2, 0, 2)
    assert usage.untrusted("new").successes == 1
    assert usage.outside("new") == {"carol": -1}
    assert usage.get("old") == Usage() and usage.outside("old") == {}
    usage.reset("new")
    assert usage.get("new") == Usage() and usage.untrusted("new") == Usage()
    assert usage.outside("new") == {}
    if hasattr(usage, "path"):  # the files column: summed again from the log
        from skillbank.usage import UsageLog

        usage.record("old", ok=True)
        usage.move("old", "new")
        again = UsageLog(usage.path)
        assert again.get("new").successes == 1 and again.get("old") == Usage()


def test_outcome_timeline_follows_the_rename(tmp_path):
    """Outcome rollback reads dated ratings by name: after a rename the ratings before it are
    the new name's, and after a delete none are."""
    from skillbank.memories.skills.skill_trust_api import _counted_ratings, _timeline
    from skillbank.usage import UsageLog

    log = UsageLog(tmp_path / "skills.jsonl")
    log.record("a", ok=False)
    log.move("a", "b")
    log.record("b", ok=True)
    log.reset("c")
    log.flush()
    lines = [__import__("json").loads(x) for x in (tmp_path / "skills.jsonl").read_text().splitlines()]
    ratings = _counted_ratings(lines, {"a", "b"})
    assert [ok for _, ok, _ in ratings["b"]] == [False, True] and "a" not in ratings
    timeline = tmp_path / "timeline.jsonl"
    timeline.write_text("\n".join([
        '{"name": "a", "version": "v1", "at": "2026-01-01T00:00:00+00:00"}',
        '{"name": "a", "version": "v2", "at": "2026-01-02T00:00:00+00:00"}',
        '{"name": "b", "from": "a", "at": "2026-01-03T00:00:00+00:00"}',
        '{"name": "c", "version": "v1", "at": "2026-01-03T00:00:00+00:00"}',
        '{"name": "c", "reset": true, "at": "2026-01-04T00:00:00+00:00"}']) + "\n")
    assert [v for v, _ in _timeline(timeline)["b"]] == ["v1", "v2"]
    assert set(_timeline(timeline)) == {"b"}


def _rename_by_hand(bank, old: str, new: str, *, sync_between: bool) -> None:
    """What a curator does: move the folder, edit `name:` (a sync between the two, or not)."""
    folder = Path(bank.skills.load(old).path).parent
    moved = folder.rename(folder.parent / new)
    if sync_between:
        bank.skills.sync()
    skill_md = moved / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace(f"name: {old}", f"name: {new}"))
    bank.skills.sync()


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
@pytest.mark.parametrize("sync_between", [False, True], ids=["one-sync", "two-syncs"])
def test_a_hand_rename_carries_usage(tmp_path, remote, sync_between):
    """Users met `press-release` renamed by hand to `press-announcement` losing its ratings."""
    with bank_for(tmp_path, remote) as bank:
        bank.skills.save("press-release", "Write a press release for a launch.", "# Steps\n")
        bank.skills.save("other-skill", "Plan the team offsite agenda.", "# Steps\n")
        bank.rate("skill:press-release", helpful=True)
        bank.rate("skill:press-release", helpful=False)
        _rename_by_hand(bank, "press-release", "press-announcement", sync_between=sync_between)
        assert "press-release" not in bank.skills.names()
        assert _counts(bank, "press-announcement") == (2, 1)
        bank.skills.save("press-release", "Write a press release for a launch.", "# New\n")
        assert _counts(bank, "press-release") == (0, 0)
