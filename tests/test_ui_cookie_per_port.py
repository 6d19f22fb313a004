"""Token mode: the cookie is named for the port and holds a per-process session value.

hunt-ui #2 (session 37): the cookie `skillbank_ui_token` held the master token. Cookies ignore
ports (and SameSite=Strict treats other ports as the same site), so a second token-mode UI on
another port of the host overwrote it (the first then answered 401), and every other web server
on that host name was sent the token. httpx's cookie jar, like a browser's, ignores ports.
"""

from __future__ import annotations

import contextlib

import httpx

from test_ui_support import served


def _ui(bank, token: str, stack: contextlib.ExitStack) -> str:
    from skillbank.ui import Guard, create_app

    guard = Guard(host="0.0.0.0", token=token)
    # No port given (an app served by any ASGI server, review 1, session 37): the cookie is
    # named after the port the request reached.
    return stack.enter_context(served(create_app(bank, guard)))


def test_two_token_uis_on_one_host_keep_their_own_cookie_and_never_hold_the_token(tmp_path):
    """Fails before: UI A answers 401 after UI B's exchange; the jar holds token B."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    token_a, token_b = "a" * 32, "b" * 32
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        sync=False) as bank, contextlib.ExitStack() as stack:
        url_a, url_b = _ui(bank, token_a, stack), _ui(bank, token_b, stack)
        with httpx.Client(timeout=60) as browser:
            assert browser.get(f"{url_a}/stats?token={token_a}",
                               follow_redirects=True).status_code == 200
            assert browser.get(f"{url_b}/stats?token={token_b}",
                               follow_redirects=True).status_code == 200
            again = browser.get(f"{url_a}/stats")
            assert again.status_code == 200, again.text[:200]
            assert browser.get(f"{url_b}/stats").status_code == 200
            held = {c.name: c.value for c in browser.cookies.jar}
            assert len(held) == 2, held  # one cookie per port
            assert not any(t in v for v in held.values() for t in (token_a, token_b)), held
            # A's session value opens A alone; the token still works as a bearer.
            stolen = {name: value for name, value in held.items()
                      if name.endswith(url_a.rsplit(":", 1)[1])}
            with httpx.Client(timeout=60) as other:
                for name, value in stolen.items():
                    other.cookies.set(name.replace(url_a.rsplit(":", 1)[1],
                                                   url_b.rsplit(":", 1)[1]), value)
                assert other.get(f"{url_b}/stats").status_code == 401
            assert httpx.get(f"{url_a}/stats", timeout=60, headers={
                "authorization": f"Bearer {token_a}"}).status_code == 200
