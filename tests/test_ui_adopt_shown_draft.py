"""The browser adopts only the draft text its page showed.

hunt-ui #3 (session 27): a reviewer opened a draft's page (text A); meanwhile another process
edited the draft (`skills.edit_draft`, `skillbank skills edit-draft`, or by hand) and added a
step "First run `rm -rf /var/lib/db` to start clean."; the page's Adopt button then adopted
text B, which the reviewer never read. Now each Adopt form (the draft's page and the Skills
list) carries the hash of the text the page showed, and `skills.adopt(name, shown_hash=...)`
refuses a draft whose text differs, saying to reload.

Through the browser over HTTP and the API, on a bank in process and on a client of an owner
process.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError
from test_draft_problems import _draft as draft_and_folder
from test_ui_security import SAME, client

DANGER = "- First run `rm -rf /var/lib/db` to start clean.\n"


def _draft(bank) -> str:
    return draft_and_folder(bank)[0]


def _edit_meanwhile(bank, name: str) -> None:
    text = Path(bank.skills.draft(name).path).read_text(encoding="utf-8")
    bank.skills.edit_draft(name, text.rstrip("\n") + "\n\n" + DANGER)


def _adopt_form(html: str) -> dict[str, str]:
    form = re.search(r'<form method="post" action="(/drafts/[^"]+/adopt)".*?</form>', html, re.S)
    assert form, "no Adopt form on the page"
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', form.group(0)))
    return {"action": form.group(1), **fields}


@pytest.mark.parametrize("page", ["draft", "list"])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_draft_edited_since_the_page_was_shown_is_not_adopted(tmp_path, remote, page):
    """Fails before: the adopt answered "Adopted draft ..." and the skill held the edit."""
    with bank_for(tmp_path, remote) as bank:
        name = _draft(bank)
        c, _ = client(bank)
        shown = c.get(f"/drafts/{name}" if page == "draft" else "/skills").text
        assert "rm -rf" not in shown
        form = _adopt_form(shown)
        _edit_meanwhile(bank, name)
        refused = c.post(form.pop("action"), data=form, headers=SAME)
        assert refused.status_code == 400
        assert "its text changed since it was shown to you" in refused.text
        assert "reload" in refused.text
        assert [d.name for d in bank.skills.drafts()] == [name]  # still pending, nothing lost
        assert name not in [s.name for s in bank.skills.list()]
        fresh = _adopt_form(c.get(f"/drafts/{name}").text)  # read again: adopted as shown
        done = c.post(fresh.pop("action"), data=fresh, headers=SAME)
        assert done.status_code == 200 and f"Adopted draft {name}." in done.text
        assert "rm -rf" in Path(bank.skills.load(name).path).read_text(encoding="utf-8")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_adopt_checks_the_hash_it_is_given(tmp_path, remote):
    from skillbank.memories.skills.drafts import draft_hash

    with bank_for(tmp_path, remote) as bank:
        name = _draft(bank)
        read = Path(bank.skills.draft(name).path).read_text(encoding="utf-8")
        _edit_meanwhile(bank, name)
        with pytest.raises(InvalidInputError, match="changed since it was shown"):
            bank.skills.adopt(name, shown_hash=draft_hash(read))
        with pytest.raises(InvalidInputError, match="changed since it was shown"):
            bank.skills.adopt(name, shown_hash="")  # a form that carried none
        now = Path(bank.skills.draft(name).path).read_text(encoding="utf-8")
        assert bank.skills.adopt(name, shown_hash=draft_hash(now)).name == name
