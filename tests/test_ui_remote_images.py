"""An image in a skill body is a link to it, not an `<img>` the page's CSP refuses.

hunt-browser #7 (session 31): `![track](http://evil.example/pixel.png)` in a SKILL.md became
`<img src="http://evil.example/pixel.png">`; the CSP (`img-src 'self' data:`) stopped the fetch,
but every such page logged a CSP violation, which docs/ui.md counts as a console error. Now a
body's images are links (`image: ALT`), but for inline `data:image/...` ones, which the CSP
allows; an image inside a link is its words.
"""

from __future__ import annotations

import re

from conftest import write_skill
from test_ui_security import client

BODY = ("# Steps\n\n![track](http://evil.example/pixel.png) and ![diagram](images/flow.png)\n\n"
        "[![build](https://ci.example/badge.svg)](https://ci.example/job)\n\n"
        "![dot](data:image/png;base64,iVBORw0KGgo=)\n")


def test_images_are_links_but_inline_ones(tmp_path):
    """Fails before: the page had `<img src="http://evil.example/pixel.png" ...>`."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    write_skill(tmp_path / "skills", "probe-img", "A skill whose body has images.", BODY)
    with Skillbank.open(tmp_path / "root", skill_roots=[tmp_path / "skills"],
                        embedding_function=HashEmbedding(), include_bundled=False) as bank:
        c, _ = client(bank)
        page = c.get("/skills/probe-img")
        assert page.status_code == 200
        body = page.text.split('id="skill-body"', 1)[1].split("</article>", 1)[0]
        assert re.findall(r'<img src="([^"]+)"', body) == ["data:image/png;base64,iVBORw0KGgo="]
        assert '<a href="http://evil.example/pixel.png" class="image-link" ' \
               'rel="noopener noreferrer">image: track</a>' in body
        assert '<a href="images/flow.png" class="image-link"' in body
        assert '<a href="https://ci.example/job">image: build</a>' in body  # no nested link
        assert "img-src 'self' data:" in page.headers["content-security-policy"]
