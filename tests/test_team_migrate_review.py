"""`skillbank migrate` rerun and a pending draft the team has under a name a run imported
(issue 24 review of a8703c3). The rerun closes in the deployment a draft the root adopted or
discarded since — but only the draft it imported: a draft the team proposed again under the same
name since (a revision of a skill is named after it, so names recur), or edited, is the team's
and stays pending. Before, the rerun deleted whichever row had the name. Real private
PostgreSQL cluster, `chroma run`, a worker of the deployment.
"""

from __future__ import annotations

import json
import uuid

import pytest

from test_team_migrate_pending import TASKS, _drafts_by_topic, _open, _team

pytest.importorskip("psycopg")


def test_a_rerun_closes_only_the_draft_it_imported(tmp_path, postgres, chroma_server):
    from skillbank.team.migrate import migrate_root

    laptop = tmp_path / "laptop"
    bank = _open(laptop)
    try:
        for topic in ("tapes", "certs"):
            task, when, steps = TASKS[topic]
            for n in range(3):
                bank.experiences.record(task.format(n=n), "success", when_to_use=when,
                                        steps=[{"action": s} for s in steps])
        bank.skills.propose(min_support=3)
        drafts = _drafts_by_topic(bank)
        assert set(drafts) == {"tapes", "certs"}, drafts
    finally:
        bank.close()
    deployment = uuid.uuid4().hex[:16]
    migrate_root(laptop, postgres.url, deployment=deployment)

    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        name = drafts["tapes"]
        team.skills.discard(name)  # the team decides; later it has a new draft of that name
        meta = {"name": name, "path": "", "description": "The team's own draft.",
                "sources": ["exp-team-1", "exp-team-2"], "namespaces": [team.settings.namespace]}
        text = (f"---\nname: {name}\ndescription: The team's own draft.\n---\n\n"
                "# Tapes\n\nThe team's steps.\n")
        team.skills.draft_store.put(name, {"SKILL.md": text,
                                           ".draft.json": json.dumps(meta) + "\n"}, meta["sources"])
        edited = team.skills.draft(drafts["certs"]).path
        team.skills.edit_draft(drafts["certs"], open(edited, encoding="utf-8").read().rstrip()
                               + "\n\n## Pitfalls\n\n- The team's edit.\n")
        assert {name, drafts["certs"]} <= {d.name for d in team.skills.drafts()}
    finally:
        team.close()

    bank = _open(laptop)  # the laptop discards both of its drafts
    try:
        bank.skills.discard(drafts["tapes"])
        bank.skills.discard(drafts["certs"])
    finally:
        bank.close()
    migrate_root(laptop, postgres.url, deployment=deployment)

    team = _team(tmp_path, chroma_server, postgres, deployment)
    try:
        names = [d.name for d in team.skills.drafts()]
        assert drafts["tapes"] in names, "the rerun deleted the team's new draft of that name"
        assert drafts["certs"] in names, "the rerun deleted a draft the team had edited"
        assert "The team's steps." in open(team.skills.draft(drafts["tapes"]).path,
                                           encoding="utf-8").read()
    finally:
        team.close()
