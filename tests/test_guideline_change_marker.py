"""The MCP change poll costs one guideline view per distinct listing, and none while nothing
changed (review F3, session 24).

The poll thread (every second) recomputed every topic's playbook for every connected token:
200 rules in 20 topics cost 24 ms per token, 1.2 s a poll with 50 tokens of one namespace,
longer than the interval. Now tokens that read the same namespaces share one view
(`Scope.listing_key`), a view is one pass over the rules (`playbook_digests`), and it is kept
while `change_marker` has not moved. The marker must move for every change a client could
read, also one another process made (a client of the owner, the CLI, a hand edit), or a
notification would be missed. Speed is measured apart (`notify_cost.py`, figures in the
commit); these tests check what is computed and that no change goes unseen.
"""

from __future__ import annotations

import hashlib
import types
from pathlib import Path
from typing import Any

import pytest

from owner_client import bank_for
from test_multiprocess import python
from skillbank import Skillbank
from skillbank import scope as scopes
from skillbank.embeddings import HashEmbedding
from skillbank.mcp_server.notify import ChangeMonitor
from skillbank.scope import Role, Scope

TOPIC = "skillbank://guidelines/"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_marker_moves_with_every_change_and_only_then(tmp_path: Path, remote: bool) -> None:
    with bank_for(tmp_path, remote) as bank:
        marks = [bank.guidelines.change_marker()]
        assert bank.guidelines.change_marker() == marks[-1]  # nothing changed
        gid = bank.guidelines.add("Quote every shell variable.", topic="shell").guideline_id
        marks.append(bank.guidelines.change_marker())
        bank.guidelines.vote(gid, helpful=True)
        marks.append(bank.guidelines.change_marker())
        path = Path(bank.guidelines.get(gid).path)  # a hand edit, as a person or script does
        path.write_text(path.read_text().replace("Quote every", "Always quote each"))
        marks.append(bank.guidelines.change_marker())
        assert "Always quote each" in bank.guidelines.playbook("shell")
        bank.guidelines.forget(gid)
        marks.append(bank.guidelines.change_marker())
        assert len(set(marks)) == len(marks), marks
        assert bank.guidelines.change_marker() == marks[-1]


def test_another_process_writing_through_the_owner_moves_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        before = bank.guidelines.change_marker()
        python(root, "from workers.common import open_bank\n"
                     "b = open_bank(__import__('os').environ['SKILLBANK_ROOT'])\n"
                     "assert b.is_remote\n"
                     "b.guidelines.add('Pin every dependency.', topic='deps')\n"
                     "b.close()\n")
        assert bank.guidelines.change_marker() != before
        assert "deps" in bank.guidelines.playbook_digests()


def test_digests_are_those_of_the_playbooks_each_scope_reads(tmp_path: Path) -> None:
    """One pass gives what `topics()` then `playbook(topic)` gave: a topic holding only a
    pending rule is listed to no one, reviewer included (its playbook said no active rule:
    hunt-mcp-longlived #1, session 31)."""
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.add("Quote every shell variable.", topic="shell")
        bank.guidelines.add("Write the changelog entry first.", topic="release")
        bank.guidelines.add("Pin every dependency.", topic="deps", trusted=False)  # pending
        bank.guidelines.add("Team rule on naming.", topic="naming", namespace="team")
        reviewer = Scope(principal="rita", namespace="default", role=Role.REVIEWER)
        writer = Scope(principal="will", namespace="default", reads=("team",),
                       role=Role.CONTRIBUTOR)
        for scope, topics in ((reviewer, ["release", "shell"]),
                              (writer, ["naming", "release", "shell"])):
            with scopes.using(scope):
                digests = bank.guidelines.playbook_digests()
                assert list(digests) == bank.guidelines.topics() == topics
                assert digests == {t: hashlib.sha256(bank.guidelines.playbook(t).encode())
                                   .hexdigest() for t in topics}


def test_the_poll_computes_one_view_per_listing_and_none_while_nothing_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        bank.guidelines.add("Quote every shell variable.", topic="shell")
        bank.guidelines.add("Team rule on naming.", topic="naming", namespace="team")
        views: list[Any] = []
        real = bank.guidelines.playbook_digests

        def counted() -> dict[str, str]:
            views.append(scopes.active())
            return real()

        monkeypatch.setattr(bank.guidelines, "playbook_digests", counted)
        server = types.SimpleNamespace(
            handle=types.SimpleNamespace(is_ready=lambda stage: True, bank=bank),
            manifests=types.SimpleNamespace(all=lambda b: []))
        monitor = ChangeMonitor(server)
        same = {Scope(principal=f"user{k}", namespace="default", role=Role.CONTRIBUTOR,
                      face="mcp" if k % 2 else "http") for k in range(20)}
        team = Scope(principal="tess", namespace="team", role=Role.CONTRIBUTOR)
        audiences = same | {team}

        first = monitor.snapshot(audiences)
        assert len(views) == 2  # one for the 20 principals of `default`, one for `team`
        assert all(first[s] == {TOPIC + "shell": first[s][TOPIC + "shell"]} for s in same)
        assert set(first[team]) == {TOPIC + "naming"}

        views.clear()
        assert monitor.snapshot(audiences) == first and views == []  # nothing changed

        bank.guidelines.add("Use set -euo pipefail.", topic="shell")
        changed = monitor.snapshot(audiences)
        assert len(views) == 2
        assert all(changed[s][TOPIC + "shell"] != first[s][TOPIC + "shell"] for s in same)
        assert changed[team] == first[team]
