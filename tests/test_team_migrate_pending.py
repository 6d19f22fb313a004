"""`skillbank migrate` and what awaits review (issue 24): pending skill drafts and guidelines.

The state imported must match the root's, on every run: a draft the laptop adopted, discarded
or edited after a first run is closed (or edited) in the deployment by the next run, instead
of staying pending there with its first text; a draft the team adopted or discarded is not
brought back by a rerun; a guideline approved or rejected on the laptop is active or retired in
the deployment, one the team approved stays approved; and a third run changes nothing. Real
private PostgreSQL cluster and `chroma run`; the team side is a worker of the deployment.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from team_worker import open_bank

pytest.importorskip("psycopg")

TASKS = {
    "tapes": ("Rotate the backup tapes of rack {n}", "When rotating a rack's backup tapes",
              ["eject", "label"]),
    "certs": ("Renew the TLS certificate of host {n}", "When a host's certificate expires",
              ["issue", "install"]),
    "wiki": ("Restore the wiki snapshot of space {n}", "When a wiki space must be restored",
             ["stop_wiki", "restore"]),
    "dns": ("Move the DNS zone of domain {n}", "When moving a domain's DNS zone",
            ["export_zone", "import_zone"]),
}


def _open(root: Path) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)


def _drafts_by_topic(bank: Skillbank) -> dict[str, str]:
    found = {}
    for draft in bank.skills.drafts():
        text = Path(draft.path).read_text(encoding="utf-8")
        for topic, (_, _, steps) in TASKS.items():
            if steps[0] in text:
                found[topic] = draft.name
    return found


def _team(tmp_path, chroma_server, postgres, deployment):
    return open_bank(tmp_path / f"worker-{uuid.uuid4().hex[:6]}", chroma_server, postgres.url,
                     deployment)


def test_pending_drafts_and_guidelines_follow_the_root_on_every_run(tmp_path, postgres,
                                                                    chroma_server):
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    bank = _open(laptop)
    try:
        for topic, (task, when, steps) in TASKS.items():
            for n in range(3):
                bank.experiences.record(task.format(n=n), "success", when_to_use=when,
                                        steps=[{"action": s} for s in steps])
        bank.skills.propose(min_support=3)
        drafts = _drafts_by_topic(bank)
        assert set(drafts) == set(TASKS), drafts
        rules = {name: bank.guidelines.add(text, trusted=False).guideline_id for name, text in (
            ("approved", "Announce a database failover in the incident channel first."),
            ("rejected", "Always reboot the router on Fridays."),
            ("team-approves", "Keep one spare tape per rack."))}
        assert {bank.guidelines.get(g).status for g in rules.values()} == {"pending"}
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)

    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        assert set(_drafts_by_topic(team)) == set(TASKS)
        assert {team.guidelines.get(g).status for g in rules.values()} == {"pending"}
        team.skills.discard(drafts["dns"])  # the team decides one draft and one rule
        team.guidelines.approve(rules["team-approves"])
    finally:
        team.close()

    bank = _open(laptop)  # the laptop moves on: adopts, discards, edits; approves, rejects
    try:
        bank.skills.adopt(drafts["tapes"])
        bank.skills.discard(drafts["certs"])
        path = Path(bank.skills.draft(drafts["wiki"]).path)
        path.write_text(path.read_text(encoding="utf-8").rstrip()
                        + "\n\n## Pitfalls\n\n- Tell the editors before the restore.\n",
                        encoding="utf-8")
        bank.guidelines.approve(rules["approved"])
        bank.guidelines.reject(rules["rejected"])
    finally:
        bank.close()

    second = migrate_root(laptop, postgres.url, deployment=deployment)
    assert second.changed
    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        pending = _drafts_by_topic(team)
        assert "tapes" not in pending, "a draft adopted on the root stays pending in the team"
        assert "certs" not in pending, "a draft discarded on the root stays pending in the team"
        assert "dns" not in pending, "a draft the team discarded came back from the root"
        assert list(pending) == ["wiki"]
        assert "Tell the editors" in Path(team.skills.draft(pending["wiki"]).path).read_text(
            encoding="utf-8"), "the root's edit of a pending draft was not carried"
        assert team.guidelines.get(rules["approved"]).status == "active"
        assert team.guidelines.get(rules["rejected"]).status == "retired"
        assert team.guidelines.get(rules["team-approves"]).status == "active"
        assert team.skills.propose(min_support=3) == []  # decided drafts are not proposed again
    finally:
        team.close()

    third = migrate_root(laptop, postgres.url, deployment=deployment)
    assert not third.changed, third.imported


def _imported_then_discarded_by_the_team(tmp_path, postgres, chroma_server, kind: str):
    """A laptop drafts a skill from three runs of `kind`, a first migrate imports the draft,
    and the team discards it: (laptop root, deployment, the laptop's draft)."""
    from skillbank.team.migrate import migrate_root

    task, when, steps = TASKS[kind]
    laptop = tmp_path / "laptop"
    bank = _open(laptop)
    try:
        for n in range(3):
            bank.experiences.record(task.format(n=n), "success", when_to_use=when,
                                    steps=[{"action": s} for s in steps])
        [first] = bank.skills.propose(min_support=3)
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)

    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        assert [d.name for d in team.skills.drafts()] == [first.name]
        team.skills.discard(first.name)
    finally:
        team.close()
    return laptop, deployment, first


def test_a_new_draft_under_the_name_of_one_the_team_closed_is_imported(tmp_path, postgres,
                                                                      chroma_server):
    """The team discards a draft a first run imported; on the laptop that draft is discarded
    too and proposed again from new runs, under the same name. The rerun skipped it (the name
    was imported once and the team had closed it: 'the team's decision stands'), so the new
    draft never reached the team. The root's ledger says it was proposed since: imported."""
    from skillbank.team.migrate import migrate_root

    laptop, deployment, first = _imported_then_discarded_by_the_team(
        tmp_path, postgres, chroma_server, "tapes")
    task, when, steps = TASKS["tapes"]

    bank = _open(laptop)  # the laptop discards it too, and later runs make a new draft of it
    try:
        bank.skills.discard(first.name)
        new_runs = [bank.experiences.record(task.format(n=n), "success", when_to_use=when,
                                            steps=[{"action": s} for s in steps])
                    for n in range(3, 6)]
        [second] = bank.skills.propose(min_support=3)
        assert second.name == first.name and set(new_runs) <= set(second.sources)
    finally:
        bank.close()

    assert migrate_root(laptop, postgres.url, deployment=deployment).changed
    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        drafts = team.skills.drafts()
        assert [d.name for d in drafts] == [second.name], "the new draft was not imported"
        assert set(new_runs) <= set(drafts[0].sources)
    finally:
        team.close()
    third = migrate_root(laptop, postgres.url, deployment=deployment)
    assert not third.changed, third.imported


def test_a_refresh_of_a_draft_the_team_discarded_does_not_bring_it_back(tmp_path, postgres,
                                                                        chroma_server):
    """The team discards a draft a first run imported; on the laptop it is still pending, and
    one new run of that kind of task refreshes it (the ledger notes `proposed` again, same
    name). That is an edit of the draft the team closed, not a new draft: the rerun must leave
    it closed (it wrote it as pending again, undoing the team's discard)."""
    from skillbank.team.migrate import migrate_root

    laptop, deployment, first = _imported_then_discarded_by_the_team(
        tmp_path, postgres, chroma_server, "certs")
    task, when, steps = TASKS["certs"]

    bank = _open(laptop)  # still pending here: one more run refreshes it under its name
    try:
        new_run = bank.experiences.record(task.format(n=3), "success", when_to_use=when,
                                          steps=[{"action": s} for s in steps])
        [refreshed] = bank.skills.propose(min_support=3)
        assert refreshed.name == first.name and new_run in refreshed.sources
        assert [d.name for d in bank.skills.drafts()] == [first.name]
    finally:
        bank.close()

    migrate_root(laptop, postgres.url, deployment=deployment)
    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        assert team.skills.drafts() == [], "the team's discard was undone by the root's refresh"
    finally:
        team.close()
    third = migrate_root(laptop, postgres.url, deployment=deployment)
    assert not third.changed, third.imported
