"""Approving an untrusted proposal worded as an active rule: a replace, or a restatement folded.

hunt-ui #7 (session 27): an untrusted `add(T's wording, replaces=T, when_to_use=<new>)` waits as
pending P, and the queue says "approving it stops serving T". Approving P folded it into T as a
restatement: T stayed active with its old when_to_use, and P (approved) was retired. The same
call made trusted is a real replace (docs/api.md: "with a new `when_to_use` it is a replace like
any other"). Now approving P does what the trusted call does: P active, T superseded by P.

hunt-ui #1: approving a real restatement (folded into the active rule) made the browser say
"Approved P; it is now active." of a proposal the fold had retired, and no page showed the
`related` link the fold leaves between the two rules. Now the flash says it was folded (the
CLI's words, `tool_text.folded_note`), and both rules' pages and `guidelines show` name the
other under related.

Through the API (in process and as a client of an owner process), the browser over HTTP, and
the CLI.
"""

from __future__ import annotations

import contextlib

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_ui_security import SAME, client

RULE = "Run the linter before committing."
OLD_WHEN = "When committing Python code"
NEW_WHEN = "When committing any code, in every language"


def _pending_replace(bank) -> tuple[str, str]:
    old = bank.guidelines.add(RULE, topic="code", when_to_use=OLD_WHEN).guideline_id
    pending = bank.guidelines.add(RULE, topic="code", replaces=old, when_to_use=NEW_WHEN,
                                  trusted=False, source="mcp-client")
    assert pending.action == "pending"
    return old, pending.guideline_id


def _pending_restatement(bank) -> tuple[str, str]:
    held = bank.guidelines.add("Never put SQL in f-strings.", topic="sql").guideline_id
    pending = bank.guidelines.add("Never put SQL in f-strings.", topic="sql", trusted=False)
    assert pending.action == "pending"
    return held, pending.guideline_id


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_approving_a_same_wording_replace_with_a_new_when_to_use_replaces(tmp_path, remote):
    """Fails before: approve returned T (active, old when_to_use) and retired P."""
    with bank_for(tmp_path, remote) as bank:
        old, proposed = _pending_replace(bank)
        approved = bank.guidelines.approve(proposed)
        assert approved.id == proposed and approved.status == "active"
        assert approved.when_to_use == NEW_WHEN
        replaced = bank.guidelines.get(old)
        assert replaced.status == "superseded" and replaced.superseded_by == proposed
        assert [g.id for g in bank.guidelines.list(status="active")] == [proposed]
        # a restatement of the rule now active, with its own when_to_use, is still folded in
        again = bank.guidelines.add(RULE, topic="code", trusted=False).guideline_id
        assert bank.guidelines.approve(again).id == proposed


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_browser_approves_the_replace_and_says_a_fold_was_a_fold(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        old, proposed = _pending_replace(bank)
        held, restated = _pending_restatement(bank)
        c, guard = client(bank)
        done = c.post(f"/guidelines/{proposed}/approve",
                      data={"csrf": guard.csrf, "next": "/guidelines"}, headers=SAME)
        assert f"Approved {proposed}; it is now active." in done.text
        assert bank.guidelines.get(old).superseded_by == proposed
        assert bank.guidelines.get(proposed).when_to_use == NEW_WHEN

        folded = c.post(f"/guidelines/{restated}/approve",
                        data={"csrf": guard.csrf, "next": "/guidelines"}, headers=SAME)
        said = " ".join(folded.text.split())
        assert f"Approved {restated}: folded into {held}, an active rule that says the same " \
               f"(reinforced); {restated} is retired." in said
        assert "it is now active" not in said
        proposal_page = c.get(f"/guidelines/{restated}").text
        related = proposal_page[proposal_page.index('id="related"'):]
        assert f'href="/guidelines/{held}"' in related
        held_page = c.get(f"/guidelines/{held}").text  # the link is shown from both ends
        assert f'href="/guidelines/{restated}"' in held_page[held_page.index('id="related"'):]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_cli_approves_the_replace_and_shows_the_fold_link(cli_root, remote):
    from conftest import cli_words as cli
    from owner_client import owner_process

    cli_root.mkdir(parents=True, exist_ok=True)
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        old, proposed = _pending_replace(bank)
        held, restated = _pending_restatement(bank)
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        approved = cli("guidelines", "approve", proposed)
        assert f"{proposed}: active" in approved and f"{old} superseded" in approved
        assert "folded" not in approved
        cli("guidelines", "approve", restated)
        shown = cli("guidelines", "show", restated)
        assert f"related {held} (active)" in shown
        assert f"related {restated} (retired)" in cli("guidelines", "show", held)
