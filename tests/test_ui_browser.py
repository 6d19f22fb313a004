"""The memory browser in real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright).

A seeded root shows its skills and ranked search, a pending guideline is approved and becomes
active, an experience is filtered (and forgotten, where the bank can forget), and the context
preview stays within its budget. Every page must load only its own assets (no CDN) and raise
no console error (a Content-Security-Policy violation is one). Screenshots of each page go to
$SKILLBANK_SCREENSHOTS (default: a pytest temp folder), as CI artefacts.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from test_ui_support import seed, served

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium: run "
                       ".ci/install-browser (apt-get install chromium chromium-driver)"),
]


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("SKILLBANK_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One seeded bank served by the browser app for the whole module."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import Guard, create_app

    base = tmp_path_factory.mktemp("ui")
    skills_root = base / "skills"
    bank = Skillbank.open(base / "root", skill_roots=[skills_root],
                          embedding_function=HashEmbedding(), sync=False)
    ids = seed(bank, skills_root)
    with served(create_app(bank, Guard())) as url:
        yield {"bank": bank, "url": url, "ids": ids}
    bank.close()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh --user-data-dir
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=FLAGS,
            viewport={"width": 1280, "height": 900})
        yield context
        context.close()


@pytest.fixture
def page(browser_context, world):
    """A tab that fails the test on any request off the page's own origin or console error."""
    tab = browser_context.new_page()
    foreign: list[str] = []
    errors: list[str] = []
    tab.on("request", lambda r: None if r.url.startswith(world["url"]) or
           r.url.startswith("data:") else foreign.append(r.url))
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("dialog", lambda d: d.accept())
    yield tab
    tab.close()
    assert not foreign, f"the page fetched something that is not its own: {foreign}"
    assert not errors, f"console errors (CSP violations count): {errors}"


def test_skills_library_search_and_a_rendered_skill(page, world, shots):
    page.goto(world["url"] + "/skills")
    library = page.locator("#library")
    for name in ("pdf-forms", "slide-deck", "sql-migrations", "release-notes"):
        assert library.get_by_text(name, exact=True).count() == 1
    page.screenshot(path=str(shots / "ui-skills.png"), full_page=True)

    page.fill("input[name=q]", "fill in the fields of a PDF form")
    page.press("input[name=q]", "Enter")
    page.wait_for_url(re.compile(r"/skills\?q="))
    first = page.locator("#hits tbody tr").first
    assert first.locator("a.name").inner_text() == "pdf-forms"
    assert float(first.locator("td.num.strong").inner_text()) > 0
    assert first.locator(".badge").inner_text() in ("dense", "keyword", "both")
    page.screenshot(path=str(shots / "ui-search.png"), full_page=True)

    first.locator("a.name").click()
    page.wait_for_url(re.compile(r"/skills/pdf-forms$"))
    body = page.locator("#skill-body")
    assert body.locator("h1").inner_text() == "Filling PDF forms"
    assert body.locator("strong").first.inner_text() == "by name"
    assert "<script>" in body.inner_text()  # shown as text, never run
    assert page.locator("#skill-body script").count() == 0
    assert page.locator(".resources code").all_inner_texts() == ["scripts/fields.py"]
    page.locator(".resources a").click()
    page.wait_for_url(re.compile(r"/skills/pdf-forms/files/scripts"))
    assert page.locator("#resource-text").inner_text().strip() == "print('fields')"
    page.go_back()
    assert page.get_by_text("Valid Agent Skill: no findings.").count() == 1
    assert page.locator(".facts").get_by_text("3", exact=True).count() >= 1  # uses
    page.screenshot(path=str(shots / "ui-skill.png"), full_page=True)


def test_approving_a_pending_guideline_makes_it_active(page, world, shots):
    gid = world["ids"]["pending"]
    bank = world["bank"]
    assert bank.guidelines.get(gid).status == "pending"
    page.goto(world["url"] + "/guidelines")
    item = page.locator(f'#pending li[data-id="{gid}"]')
    assert "f-strings" in item.locator(".rule-text").inner_text()
    page.screenshot(path=str(shots / "ui-guidelines-pending.png"), full_page=True)

    item.get_by_role("button", name="Approve").click()
    page.wait_for_selector(".flash")
    assert f"Approved {gid}; it is now active." in page.locator(".flash").inner_text()
    assert page.locator(f'#pending li[data-id="{gid}"]').count() == 0
    active = page.locator(f'.topic li[data-id="{gid}"]')
    assert active.locator(".badge").inner_text() == "active"
    assert bank.guidelines.get(gid).status == "active"
    page.screenshot(path=str(shots / "ui-guidelines.png"), full_page=True)

    page.goto(world["url"] + f"/guidelines/{gid}")
    assert "web-page" in page.locator("blockquote footer").first.inner_text()


def test_supersede_chain_is_shown(page, world, shots):
    old, new = world["ids"]["old_rule"], world["ids"]["new_rule"]
    page.goto(world["url"] + "/guidelines")
    chain = page.locator(f'.topic li[data-id="{new}"] .chain')
    assert "British spelling" in chain.inner_text()
    page.goto(world["url"] + f"/guidelines/{new}")
    steps = page.locator(".chainlist li")
    assert steps.count() == 2
    assert "American" in steps.nth(0).inner_text() and "this rule" in steps.nth(0).inner_text()
    assert "British" in steps.nth(1).inner_text() and "superseded" in steps.nth(1).inner_text()
    assert "Write the install guide" in page.locator("blockquote").first.inner_text()
    page.screenshot(path=str(shots / "ui-guideline-chain.png"), full_page=True)


def test_experience_timeline_filters(page, world, shots):
    ids = world["ids"]
    page.goto(world["url"] + "/experiences")
    timeline = page.locator("#timeline")
    for key in ("failed", "ok", "other"):
        assert timeline.locator(f'li[data-id="{ids[key]}"]').count() == 1
    page.screenshot(path=str(shots / "ui-experiences.png"), full_page=True)

    page.select_option("select[name=outcome]", "failure")
    page.click("#timeline-filters button[type=submit]")
    page.wait_for_url(re.compile(r"outcome=failure"))
    shown = page.locator("#timeline > li")
    kinds = {e.get_attribute("data-id"): e.get_attribute("class") for e in shown.all()}
    assert ids["failed"] in kinds and len(kinds) == 2  # the failure and its distilled lesson
    assert [c for i, c in kinds.items() if i != ids["failed"]] == ["entry lesson"]
    page.select_option("select[name=kind]", "experience")
    page.click("#timeline-filters button[type=submit]")
    page.wait_for_url(re.compile(r"kind=experience"))
    assert [e.get_attribute("data-id") for e in shown.all()] == [ids["failed"]]
    assert "Lock the table before altering it" in shown.first.inner_text()
    page.screenshot(path=str(shots / "ui-experiences-filtered.png"), full_page=True)

    page.goto(world["url"] + "/experiences?namespace=research")
    assert [e.get_attribute("data-id") for e in page.locator("#timeline > li").all()] == \
        [ids["other"]]
    page.goto(world["url"] + "/experiences?tag=deploy")
    assert [e.get_attribute("data-id") for e in page.locator("#timeline > li").all()] == \
        [ids["ok"]]
    page.goto(world["url"] + "/experiences?since=2999-01-01")
    assert page.locator("#timeline > li").count() == 0
    assert page.get_by_text("No experiences match.").count() == 1


def test_approving_a_pending_experience(page, world, shots):
    bank, eid = world["bank"], world["ids"]["untrusted"]
    if not eid:
        pytest.skip("this bank records no untrusted (pending) experiences yet")
    page.goto(world["url"] + "/experiences")
    assert page.locator(f'#timeline li[data-id="{eid}"]').count() == 0  # not served yet
    item = page.locator(f'#pending-experiences li[data-id="{eid}"]')
    assert "TLS certificate" in item.inner_text()
    page.screenshot(path=str(shots / "ui-experiences-pending.png"), full_page=True)
    item.get_by_role("button", name="Approve").click()
    page.wait_for_selector(".flash")
    assert f"Approved {eid}." in page.locator(".flash").inner_text()
    assert page.locator(f'#timeline li[data-id="{eid}"]').count() == 1
    assert page.locator("#pending-experiences").count() == 0
    assert bank.experiences.get(eid).status == "active"


def test_forgetting_an_experience(page, world):
    from skillbank.ui.views import can_forget

    bank, eid = world["bank"], world["ids"]["ok"]
    if not can_forget(bank):
        pytest.skip("this bank has no forget yet (bank.forget / experiences.forget): the page "
                    "hides the button")
    page.goto(world["url"] + "/experiences?tag=deploy")
    entry = page.locator(f'#timeline li[data-id="{eid}"]')
    entry.get_by_role("button", name="Forget").click()
    page.wait_for_selector(".flash")
    assert f"Forgot {eid}." in page.locator(".flash").inner_text()
    assert page.locator(f'#timeline li[data-id="{eid}"]').count() == 0
    assert eid not in {e.id for e in bank.experiences.list(namespace="*", limit=100)}


def test_context_preview_within_budget_and_rating(page, world, shots):
    page.goto(world["url"] + "/context")
    page.fill("input[name=task]", "Write a migration that adds a column to the users table")
    page.fill("input[name=budget]", "300")
    page.click("#context-form button[type=submit]")
    page.wait_for_selector("#ctx-tokens")
    tokens = int(page.locator("#ctx-tokens").inner_text())
    assert 0 < tokens <= 300
    block = page.locator("#ctx-text").inner_text()
    assert block.startswith("<skillbank-memory>") and block.rstrip().endswith("</skillbank-memory>")
    from skillbank.tokens import count_tokens

    assert count_tokens(block) == tokens
    ids = [c.inner_text() for c in page.locator("#ctx-ids code").all()]
    assert ids and all(f"[{i}]" in block or i.startswith("skill:") for i in ids)
    page.screenshot(path=str(shots / "ui-context.png"), full_page=True)

    rated = ids[0]
    page.locator("#ctx-ids li").first.get_by_role("button", name="Helped").click()
    page.wait_for_selector(".flash")
    assert f"Rated {rated} as helpful." in page.locator(".flash").inner_text()


def test_stats_pictures(page, world, shots):
    page.goto(world["url"] + "/stats")
    charts = page.locator("svg.chart")
    assert charts.count() == 3
    assert "pdf-forms" in charts.nth(2).inner_html()  # most-used skill
    assert page.locator("svg.chart polyline, svg.chart circle").count() >= 1  # growth
    page.screenshot(path=str(shots / "ui-stats.png"), full_page=True)


def test_a_draft_is_shown_and_adopted(page, world, shots):
    bank = world["bank"]
    if not callable(getattr(bank.skills, "drafts", None)):
        pytest.skip("this bank has no skill drafts yet (bank.skills.drafts): the page hides "
                    "the section")
    drafts = bank.skills.drafts()
    assert drafts, "the seeded CSV imports should have given a draft"
    name = drafts[0].name
    page.goto(world["url"] + "/skills")
    row = page.locator("section.drafts tr", has_text=name)
    row.locator("a.name").click()
    page.wait_for_url(re.compile(rf"/drafts/{re.escape(name)}$"))
    assert page.locator("#draft-body h1, #draft-body h2").count() >= 1
    assert page.get_by_text("Valid Agent Skill: no findings.").count() == 1
    assert set(drafts[0].sources) <= set(page.locator(".resources code").all_inner_texts())
    page.screenshot(path=str(shots / "ui-draft.png"), full_page=True)
    page.locator("#draft-actions").get_by_role("button", name="Adopt into the library").click()
    page.wait_for_selector(".flash")
    # drawn from the seeded namespace, not the bank's: the draft is named apart from the skill
    # adopting it writes (hunt-untrusted #3, session 27)
    skill = drafts[0].skill
    assert f"Adopted draft {name} as skill {skill}." in page.locator(".flash").inner_text()
    assert skill in bank.skills.names() and name not in bank.skills.names()
    assert page.locator("section.drafts tr", has_text=name).count() == 0
    assert page.locator("#library").get_by_text(skill, exact=True).count() == 1
