"""A skill named `.` or `..` can be opened, read and accepted from /review in a real browser.

hunt-ui #4 (session 37): its link was `/skills/%2E%2E?version=…` (or `/skills/%2E`), and
browsers read `%2E`/`%2E%2E` as dot segments (WHATWG URL): Chromium opened the library (or a
Problem page), so no Accept button was ever reachable. `url_name` now writes `!..` / `!.`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_ui_support import served

CHROMIUM = Path("/usr/bin/chromium")
#: Every spelling WHATWG URL parsing treats as a `.` or `..` segment (case-insensitive).
DOT_SEGMENTS = {".", "%2e", "..", ".%2e", "%2e.", "%2e%2e"}


def _chromium_reads(segment: str) -> str:
    """The segment as Chromium canonicalises it: it decodes %-escapes of unreserved characters."""
    def unreserved(m: re.Match[str]) -> str:
        char = chr(int(m.group(1), 16))
        return char if char.isascii() and (char.isalnum() or char in "-._~") else m.group(0)

    return re.sub(r"%([0-9a-fA-F]{2})", unreserved, segment)


@pytest.mark.parametrize("name", [".", "..", "!..", "!.", "~..", "%2E%2E", "a.."])
def test_dot_names_are_no_dot_segment_and_read_back(name):
    """Fails before: `..` -> `%2E%2E`, a dot segment."""
    from skillbank.ui.render import name_of, skill_path, url_name

    segment = url_name(name)
    assert segment.lower() not in DOT_SEGMENTS
    assert _chromium_reads(segment).lower() not in DOT_SEGMENTS
    assert name_of(segment) == name and name_of(_chromium_reads(segment)) == name
    assert skill_path(segment) == (name, None)
    assert skill_path(segment + "/files/SKILL.md") == (name, "SKILL.md")


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium")
def test_a_skill_named_dot_dot_is_read_and_accepted_in_chromium(tmp_path):
    """Fails before: the link opened /skills (the library); no Accept button."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import Guard, create_app
    from skillbank.ui.render import url_name

    vendor = tmp_path / "tp"
    for folder, name in (("dd", ".."), ("d", ".")):
        (vendor / folder).mkdir(parents=True)
        (vendor / folder / "SKILL.md").write_text(
            f'---\nname: "{name}"\ndescription: Deploy the billing service, named {name}.\n'
            "---\n# Steps\nrun it\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text('[skill_policy.third-party]\nunscanned = "hold"\n')
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        skill_roots=[str(vendor)], sync=False) as bank:
        bank.skills.sync()
        assert {s.name for s in bank.skills.review_queue()} == {".", ".."}
        with served(create_app(bank, Guard())) as url, sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            try:
                tab = browser.new_page()
                tab.on("dialog", lambda d: d.accept())
                for name in ("..", "."):
                    tab.goto(url + "/review")
                    tab.locator(f'a.read-decide[href^="/skills/{url_name(name)}?"]').click()
                    tab.wait_for_load_state()
                    assert tab.locator("h1").first.inner_text().strip().startswith(name), \
                        (name, tab.url)
                    assert f"named {name}." in tab.content(), tab.url
                    tab.locator("text=Accept and pin").click()
                    tab.wait_for_load_state()
                    assert f"Accepted skill {name}." in tab.content(), tab.url
                assert not bank.skills.review_queue()
            finally:
                browser.close()
