"""The token exchange redirects to the path as it was sent, and never to another host.

hunt-ui #5 (session 37): `/skills/x%2Ffiles%2FSKILL.md?token=T` (the page of the skill named
`x/files/SKILL.md`) was redirected to the decoded `/skills/x/files/SKILL.md`, skill `x`'s file
page (the confusion hunt-browser #2 fixed). And a path `//host` would redirect off-site.
Over a real server (uvicorn), which passes `raw_path` as a browser sent it.
"""

from __future__ import annotations

import httpx
import pytest

TOKEN = "t" * 32


@pytest.fixture
def token_ui(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import Guard, create_app
    from test_ui_support import served

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        sync=False) as bank:
        with served(create_app(bank, Guard(host="0.0.0.0", token=TOKEN))) as url:
            yield url


def _exchange(url: str, path: str) -> str:
    answer = httpx.get(f"{url}{path}", follow_redirects=False, timeout=60)
    assert answer.status_code == 303, (path, answer.status_code, answer.text[:300])
    assert "skillbank_ui_" in answer.headers["set-cookie"]
    assert TOKEN not in answer.headers["set-cookie"]  # a session value (hunt-ui #2)
    return answer.headers["location"]


def test_the_exchange_keeps_an_encoded_slash(token_ui):
    """Fails before: Location /skills/x/files/SKILL.md."""
    assert _exchange(token_ui, f"/skills/x%2Ffiles%2FSKILL.md?token={TOKEN}&version=v%2F1") \
        == "/skills/x%2Ffiles%2FSKILL.md?version=v%2F1"
    assert _exchange(token_ui, f"/skills?q=pdf&token={TOKEN}") == "/skills?q=pdf"


@pytest.mark.parametrize("path", ["//evil.example/x", "//evil.example", "/%2F/ok"])
def test_the_exchange_never_leaves_the_site(token_ui, path):
    location = _exchange(token_ui, f"{path}?token={TOKEN}")
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location
