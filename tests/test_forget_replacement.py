"""Forgetting a rule that replaced others hands its place back to them.

hunt-ui #6 (session 27): T = "Use merge commits."; N replaces T; forgetting N left T
"superseded" by an id that no longer existed: T was served by no rule, its page said "This rule
replaced none and was not replaced." beside a superseded badge, and `guidelines show` printed
the dangling id. Now (docs/api.md, Guidelines) the memory goes on as if N had not replaced them:
T is superseded by the rule that replaced N in turn, if one exists (the chain skips the
forgotten link); else active again when N was active (pending again when only untrusted callers
taught it), retired when N served no more either. The answer's `detail`, the browser's flash
and the CLI say which. A link left dangling by an older version is said as such.

Through the API (in process and as a client of an owner process), the browser over HTTP and
the CLI.
"""

from __future__ import annotations

import contextlib

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_ui_security import SAME, client

OLD = "Use merge commits."
NEW = "Use squash merges instead of merge commits."
NEWEST = "Use rebase merges instead of squash merges."


def _replaced(bank, *, trusted_old: bool = True, texts: tuple[str, str] = (OLD, NEW)
              ) -> tuple[str, str]:
    g = bank.guidelines
    old = g.add(texts[0], topic="git", trusted=trusted_old).guideline_id
    if not trusted_old:
        g.approve(old)
    new = g.add(texts[1], topic="git", replaces=old).guideline_id
    assert g.get(old).superseded_by == new
    return old, new


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_forgetting_the_active_replacement_serves_the_old_rule_again(tmp_path, remote):
    """Fails before: T stayed superseded by a rule that no longer exists, served by none."""
    with bank_for(tmp_path, remote) as bank:
        old, new = _replaced(bank)
        result = bank.forget(new)
        assert result["forgotten"] and old in result["detail"] and "active again" in \
            result["detail"]
        back = bank.guidelines.get(old)
        assert back.status == "active" and back.superseded_by is None
        assert [h.id for h in bank.guidelines.search("merge commits")] == [old]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_rule_whose_wording_was_taught_again_is_not_served_twice(tmp_path, remote):
    """review2 #6 (session 27): T's wording taught again after N replaced it (a new active rule
    T2); forgetting N made T active again beside T2, two active rules of one wording."""
    rule = "Run the full test suite before every merge."
    with bank_for(tmp_path, remote) as bank:
        g = bank.guidelines
        old = g.add(rule, topic="ci").guideline_id
        new = g.add("Run only the affected tests before a merge; the nightly job runs the full "
                    "suite.", topic="ci", replaces=old).guideline_id
        again = g.add(rule, topic="ci").guideline_id
        assert again != old and g.get(new).status == "active"
        result = bank.forget(new)
        assert f"superseded by {again}" in result["detail"]
        assert (g.get(old).status, g.get(old).superseded_by) == ("superseded", again)
        assert old in g.get(again).supersedes
        assert [x.id for x in g.list(status="active") if x.text == rule] == [again]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_forgetting_a_middle_link_keeps_the_chain(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        g = bank.guidelines
        old, new = _replaced(bank)
        newest = g.add(NEWEST, topic="git", replaces=new).guideline_id
        detail = bank.forget(new)["detail"]
        assert f"superseded by {newest}" in detail
        kept = g.get(old)
        assert kept.status == "superseded" and kept.superseded_by == newest
        assert old in g.get(newest).supersedes and new not in g.get(newest).supersedes
        assert [x.id for x in g.list(status="active")] == [newest]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_rule_only_untrusted_callers_taught_comes_back_for_review(tmp_path, remote):
    """Untrusted input never becomes active unreviewed: an approved untrusted rule, or a
    proposal a trusted restatement superseded, comes back pending, not active."""
    with bank_for(tmp_path, remote) as bank:
        old, new = _replaced(bank, trusted_old=False)
        assert "pending again" in bank.forget(new)["detail"]
        assert bank.guidelines.get(old).status == "pending"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_forgetting_a_retired_replacement_retires_what_it_replaced(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        old, new = _replaced(bank)
        bank.guidelines.retire(new)  # nothing serves in T's place: T stays unserved
        assert "retired" in bank.forget(new)["detail"]
        back = bank.guidelines.get(old)
        assert back.status == "retired" and back.superseded_by is None


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_browser_says_what_became_of_the_replaced_rule(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        old, new = _replaced(bank)
        c, guard = client(bank)
        done = c.post(f"/guidelines/{new}/forget",
                      data={"csrf": guard.csrf, "next": "/guidelines"}, headers=SAME)
        assert done.status_code == 200
        assert f"Forgot {new}. {old}, which it had replaced, is now active again" in done.text
        page = c.get(f"/guidelines/{old}").text
        assert 'class="badge active"' in page and new not in page


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_cli_says_it_and_a_dangling_link_is_named_as_such(cli_root, remote):
    """A link an older version left (the replacement's file gone, the old rule still
    superseded by its id) is said as gone by `guidelines show` and by the rule's page, never
    shown as a bare id or as "replaced none and was not replaced"."""
    from pathlib import Path

    from owner_client import client_bank, owner_process
    from skillbank.ui import create_app
    from starlette.testclient import TestClient

    from conftest import cli_words as cli

    cli_root.mkdir(parents=True, exist_ok=True)
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        old, new = _replaced(bank)
        stranded, gone = _replaced(bank, texts=("Tag every release.",
                                                "Tag releases from the CI job only."))
        Path(bank.guidelines.get(gone).path).unlink()  # what an older version's forget left
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        said = cli("forget", "--yes", new)
        assert f"forgot {new} (guideline) for good" in said
        assert f"{old}, which it had replaced, is now active again" in said
        shown = cli("guidelines", "show", stranded)
        assert f"superseded by {gone}, which no longer exists (forgotten)" in shown
        opened = client_bank(cli_root) if remote else Skillbank.open(
            cli_root, embedding_function=HashEmbedding(), include_bundled=False)
        with opened as bank:
            page = TestClient(create_app(bank), base_url="http://127.0.0.1:8766").get(
                f"/guidelines/{stranded}").text
        assert "replaced none and was not replaced" not in page
        assert f"Superseded by {gone}, which no longer exists (forgotten)" in " ".join(
            page.split())
