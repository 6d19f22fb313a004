"""A long skill body neither stalls the memory browser nor is rendered as markdown.

hunt-browser #3 (session 31): a third-party SKILL.md with a 900 KB body of `![` (under the 1 MiB
limit) took 22-26 s to render as markdown, on the event loop: the skill's page and every other
request meanwhile, its stylesheet too, waited that long. Now pages are rendered in a worker
thread, and a body over `render.MARKDOWN_LIMIT` characters is shown as plain text, saying so.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx

from conftest import write_skill
from test_ui_security import client
from test_ui_support import served


def _bank(tmp_path, body: str):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    write_skill(tmp_path / "skills", "probe-big", "A skill with a very long body.", body)
    return Skillbank.open(tmp_path / "root", skill_roots=[tmp_path / "skills"],
                          embedding_function=HashEmbedding(), include_bundled=False)


def test_a_body_over_the_limit_is_shown_as_plain_text(tmp_path):
    """Fails before: the page rendered all of it as markdown (no word of plain text)."""
    from skillbank.ui.render import MARKDOWN_LIMIT

    body = "Start <script>alert(1)</script> here.\n" + "![" * (MARKDOWN_LIMIT // 2 + 10)
    with _bank(tmp_path, body) as bank:
        c, _ = client(bank)
        page = c.get("/skills/probe-big")
        assert page.status_code == 200
        assert f"more than the {MARKDOWN_LIMIT:,} rendered as markdown" in page.text
        assert "shown as plain text" in page.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text and "<script>alert" not in page.text
        assert page.text.count("![") >= MARKDOWN_LIMIT // 2  # all of it is there to read


def test_rendering_a_page_does_not_stall_other_requests(tmp_path, monkeypatch):
    """Fails before: the stylesheet waited until the skill page's markdown was rendered (here:
    for ever, so the wait below times out)."""
    from skillbank.ui import create_app, render

    started, release = threading.Event(), threading.Event()
    real = render._markdown()

    class Held:
        def render(self, text: str) -> str:
            started.set()
            release.wait(120)  # held until the stylesheet has been served
            return real.render(text)

    monkeypatch.setattr(render, "_markdown", lambda: Held())
    with _bank(tmp_path, "# Steps\n\nDo it.\n") as bank, served(create_app(bank)) as base, \
            ThreadPoolExecutor(1) as pool:
        try:
            skill = pool.submit(httpx.get, f"{base}/skills/probe-big", timeout=180)
            assert started.wait(120), "the skill page was never rendered"
            css = httpx.get(f"{base}/static/style.css", timeout=60)  # a bound, not a speed test
            assert css.status_code == 200
            assert not skill.done()  # it was still rendering meanwhile
        finally:
            release.set()
        assert skill.result().status_code == 200
