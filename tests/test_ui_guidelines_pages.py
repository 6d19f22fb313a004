"""The browser's guidelines page comes in pages, as the timeline's rows are counted.

The scale hunt (session 18): `/guidelines?status=all` was 1.47 MB of HTML for 1,281 rules,
every rule with its vote forms, on one page. Now a page holds `TIMELINE_SIZE` rules, says how
many of how many it shows, and links the next and previous pages with the filters kept. Over
HTTP without a browser, as the other UI tests; a small page size stands in for a year of rules.
"""

from __future__ import annotations

import re

import pytest

from skillbank.ui import views
from test_ui_security import client

TOPICS = ["sql", "writing", "python"]


@pytest.fixture
def many_rules(tmp_path, monkeypatch):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    monkeypatch.setattr(views, "TIMELINE_SIZE", 7)
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False)
    ids = [bank.guidelines.add(f"Rule {n} of the {name} kvq{n}x handbook.",
                               topic=TOPICS[n % 3]).guideline_id for n, name in
           enumerate(["red", "green", "blue", "amber", "teal", "plum", "rust", "jade", "sand",
                      "pine", "iris", "coal", "rose", "mint", "opal", "wren", "lark", "moss"])]
    bank.guidelines.retire(ids[0])
    yield bank, ids
    bank.close()


def rules_on(html: str) -> list[str]:
    below = html.split('<form class="filters"')[1]  # the rules below the review queue
    return re.findall(r'class="rule" data-id="([^"]+)"', below)


def next_link(html: str) -> str | None:
    found = re.search(r'<a href="(/guidelines\?[^"]*)">next', html)
    return found.group(1).replace("&amp;", "&") if found else None


@pytest.mark.parametrize("query", ["", "status=all", "status=all&topic=sql"])
def test_every_rule_is_on_exactly_one_page(many_rules, query):
    bank, ids = many_rules
    c, _ = client(bank)
    wanted = {g.id for g in bank.guidelines.list(namespace="*")
              if ("status=all" in query or g.status == "active")
              and ("topic=sql" not in query or g.topic == "sql")}
    seen: list[str] = []
    url: str | None = "/guidelines?" + query
    pages = 0
    while url:
        html = c.get(url).text
        on_page = rules_on(html)
        assert 0 < len(on_page) <= 7
        assert f"Showing {len(on_page)} of {len(wanted)} " in html
        seen += on_page
        pages += 1
        url = next_link(html)
        if url:
            for kept in query.split("&") if query else []:
                assert kept in url  # the filters stay on the next page
    assert len(seen) == len(set(seen)) and set(seen) == wanted  # none twice, none lost
    assert pages == -(-len(wanted) // 7) and pages >= 2 or "topic=sql" in query


def test_a_second_page_is_reachable_and_a_vote_returns_to_it(many_rules):
    bank, _ = many_rules
    c, guard = client(bank)
    first = c.get("/guidelines?status=all").text
    assert "page 1 of 3" in first and "previous" not in first
    second = c.get(next_link(first)).text
    assert "page 2 of 3" in second and "← previous" in second
    assert not set(rules_on(first)) & set(rules_on(second))
    assert 'name="next" value="/guidelines?status=all&amp;page=2"' in second
    assert "page 3 of 3" in c.get("/guidelines?status=all&page=99").text  # the last one
    assert "page 1 of 3" in c.get("/guidelines?status=all&page=x").text
