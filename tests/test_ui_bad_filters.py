"""A bad filter in the memory browser is a 400 that names it and shows nothing unfiltered.

hunt-browser #4 (session 31): docs/ui.md says "a bad filter is a 400", but every bad filter
answered 200. `/guidelines?status=bogus` said "No bogus guidelines." (a typo read as an empty
list); `/experiences?outcome=fail` named the problem and then showed every record ("Showing 3
of 3 records") as if they matched; `/audit?action=frob` showed the newest 500 events
unfiltered.
"""

from __future__ import annotations

import html

import pytest

from test_ui_security import client
from test_ui_support import seed


@pytest.fixture
def seeded(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", skill_roots=[tmp_path / "skills"],
                        embedding_function=HashEmbedding(), sync=False) as bank:
        yield bank, seed(bank, tmp_path / "skills")

BAD = [("/guidelines?status=bogus", "unknown status 'bogus'"),
       ("/guidelines?status=Active", "unknown status 'Active'"),
       ("/experiences?outcome=fail", "unknown outcome 'fail'"),
       ("/experiences?kind=lessons", "unknown kind 'lessons'"),
       ("/experiences?since=2026-13-01", "since must be a date"),
       ("/experiences?until=soon&q=table", "until must be a date"),
       ("/audit?since=garbage", "invalid time"),
       ("/audit?action=frob", "unknown action 'frob'"),
       ("/audit?trusted=maybe", "trusted must be yes, no or empty"),
       # hunt-ui #6 (session 37): answered 200 here, a 500 on PostgreSQL (team test beside).
       ("/audit?principal=%00", "principal must not contain control characters"),
       ("/audit?id=%00x", "id must not contain control characters")]


@pytest.mark.parametrize("url,named", BAD, ids=[u for u, _ in BAD])
def test_a_bad_filter_is_a_400_that_shows_nothing_unfiltered(seeded, url, named):
    """Fails before: 200, and (but for guidelines) the unfiltered rows under the message."""
    bank, ids = seeded
    c, _ = client(bank)
    page = c.get(url)
    assert page.status_code == 400, page.text[-1500:]
    assert named in html.unescape(page.text)
    for item in (ids["failed"], ids["new_rule"]):
        assert f'data-id="{item}"' not in page.text and f"<code>{item}</code>" not in page.text
    assert "No bogus guidelines" not in page.text and "No experiences match" not in page.text


def test_good_filters_still_answer(seeded):
    bank, ids = seeded
    c, _ = client(bank)
    for url in ("/guidelines?status=all", "/guidelines?status=retired", "/experiences?outcome=failure",
                "/experiences?kind=lesson&since=2020-01-01", "/audit?since=7d&trusted=yes",
                "/audit?action=record"):
        assert c.get(url).status_code == 200, url
    assert ids["failed"] in c.get("/experiences?outcome=failure").text


def test_an_outcome_or_kind_in_capitals_filters_as_the_library_reads_it(seeded):
    """Review 3 (session 31): `/experiences?outcome=Failure` was a 400, "unknown outcome", for
    a value `recall(outcome=...)` accepts (it reads outcomes and kinds in any case)."""
    bank, ids = seeded
    c, _ = client(bank)
    page = c.get("/experiences?outcome=Failure&kind=Experience")
    assert page.status_code == 200, page.text[-1500:]
    assert ids["failed"] in page.text
