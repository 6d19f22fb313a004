"""The memory browser's skill search over the length limit says it was refused, and only that
(hunt-routing #9, session 28): the page also said "No skill fits this task (the search
abstains rather than guess)", as if the search had run. The bank runs in this process and as
a client of another process that owns the root."""

from __future__ import annotations

import pytest

from conftest import write_skill
from owner_client import bank_for

ABSTAINED = "the search abstains rather than guess"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_refused_skill_search_is_not_also_an_empty_answer(tmp_path, remote):
    from starlette.testclient import TestClient

    from skillbank.ui import Guard, create_app

    folder = tmp_path / "skills"
    write_skill(folder, "git-pushing", "Stage, commit, and push git changes.")
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        browser = TestClient(create_app(bank, Guard()), base_url="http://127.0.0.1:8766")
        refused = browser.get("/skills", params={"q": "commit and push " * 3200})
        assert refused.status_code == 400
        assert "skill search takes requests of at most 50,000" in refused.text
        assert ABSTAINED not in refused.text and "Ranked for" not in refused.text
        # a search that ran and found nothing still says so; one that found a skill lists it;
        # one with nothing to search for says why (session 34: it said "abstains" then too)
        empty = browser.get("/skills", params={"q": "zebra migration patterns"})
        assert empty.status_code == 200 and ABSTAINED in empty.text
        wordless = browser.get("/skills", params={"q": "🙂"})
        assert wordless.status_code == 200 and ABSTAINED not in wordless.text
        assert "No skill was looked for: the request has no letters or digits" in wordless.text
        found = browser.get("/skills", params={"q": "commit and push my changes"})
        assert "Ranked for" in found.text and "git-pushing" in found.text
