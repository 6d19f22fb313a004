"""The Experiences page's review queue says how many wait and pages through all of them.

hunt-ui #3 (session 37): with 105 untrusted records waiting, the page said "Waiting for review
100" and listed the newest 100: no "of 105", no next page, the older ones out of sight. /review
says "Showing 100 of N" with pages; so does this queue now. (The page size is made small here.)
"""

from __future__ import annotations

import re

import pytest

from test_ui_security import client


@pytest.fixture
def queued(tmp_path, monkeypatch):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import views

    monkeypatch.setattr(views, "TIMELINE_SIZE", 5)
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        sync=False) as bank:
        ids = [bank.experiences.record(task=f"Untrusted run number {i}", outcome="success",
                                       trusted=False) for i in range(7)]
        yield bank, ids


def _queue(page: str) -> str:
    return re.search(r'id="pending-experiences".*?</section>', page, re.S).group(0)


def _listed(section: str) -> set[str]:
    return set(re.findall(r'/experiences/(exp-[0-9a-f]+)/approve', section))


def test_the_queue_says_of_n_and_pages_through_every_pending_record(queued):
    """Fails before: "Waiting for review 5", no "of 7", no page 2 (2 records never shown)."""
    bank, ids = queued
    c, _ = client(bank)
    first = _queue(c.get("/experiences").text)
    assert '<span class="count">7</span>' in first, first[:600]
    assert "Showing 5 of 7 (page 1 of 2)" in first
    assert "/experiences?pending_page=2" in first
    second = _queue(c.get("/experiences?pending_page=2").text)
    assert "Showing 2 of 7 (page 2 of 2)" in second
    assert len(_listed(first)) == 5 and len(_listed(second)) == 2
    assert _listed(first) | _listed(second) == set(ids)
    # Deciding on page 2 comes back to page 2, where the rest of that page waits.
    assert 'name="next" value="/experiences?pending_page=2"' in second


def test_a_short_queue_has_no_pager(queued):
    bank, ids = queued
    for eid in ids[:3]:
        bank.experiences.approve(eid)
    c, _ = client(bank)
    section = _queue(c.get("/experiences?pending_page=9").text)
    assert '<span class="count">4</span>' in section and "Showing" not in section
    assert _listed(section) == set(ids[3:])
