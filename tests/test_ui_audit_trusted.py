"""The memory browser's audit page shows whether each call ran trusted, and filters by it.

An untrusted call (an HTTP client of a server without --trust, an adapter marked untrusted) may
run under the server's own principal, the local user's: the audit log keeps `trusted` so it
does not read as if that person had done it (`skillbank audit` marks it "(untrusted)"). The
page showed neither the field nor a way to find those calls: the two rows below looked alike.
Run on the bank that owns the root and on a client of another process owning it (the page then
reads the root's log files).
"""

from __future__ import annotations

import contextlib
import re

import pytest

from skillbank import scope as scopes

LOCAL = scopes.Scope(principal="alice", namespace="default", role="admin", face="test")
UNTRUSTED = scopes.Scope(principal="alice", namespace="default", role="contributor",
                         trusted=False, face="mcp-http")


def _row(page: str, item: str) -> str:
    """The cells of the table row that names `item`, as text."""
    rows = [r for r in re.findall(r"<tr>(.*?)</tr>", page, re.S) if item in r]
    assert len(rows) == 1, (item, rows)
    return " ".join(re.sub(r"<[^>]+>", " ", rows[0]).split())


@pytest.mark.parametrize("where", ["owner", "client"])
def test_the_audit_page_shows_and_filters_trusted(tmp_path, where):
    import httpx

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import Guard, create_app
    from test_ui_support import served

    root = tmp_path / "root"
    if where == "owner":
        opened = contextlib.closing(Skillbank.open(root, embedding_function=HashEmbedding(),
                                                   include_bundled=False, sync=False))
    else:
        from owner_client import client_of_owner

        opened = client_of_owner(root)
    with opened as bank:
        with scopes.using(LOCAL):
            mine = bank.experiences.record(task="Rotate the keys", outcome="success")
        with scopes.using(UNTRUSTED):
            theirs = bank.experiences.record(task="Rotate the certificates", outcome="success")
        guard = Guard()
        with served(create_app(bank, guard)) as url:
            headers = {"host": url.split("//")[1]}
            cookies = {}
            if guard.token:
                cookies = dict(httpx.get(f"{url}/audit?token={guard.token}",
                                         follow_redirects=True).cookies)

            def page(query: str = "", status: int = 200) -> str:
                answer = httpx.get(f"{url}/audit{query}", cookies=cookies, headers=headers,
                                   timeout=60)
                assert answer.status_code == status, answer.text[-2000:]
                return answer.text

            shown = page()
            assert "<th>trusted</th>" in shown
            assert _row(shown, mine).endswith(f"{mine} yes"), _row(shown, mine)
            assert _row(shown, theirs).endswith(f"{theirs} no"), _row(shown, theirs)

            untrusted_only = page("?trusted=no")
            assert theirs in untrusted_only and mine not in untrusted_only
            assert 'value="no" selected' in untrusted_only  # the filter as chosen stays shown
            trusted_only = page("?trusted=yes&principal=alice")
            assert mine in trusted_only and theirs not in trusted_only

            bad = page("?trusted=maybe", status=400)  # a bad filter is a 400 (hunt-browser #4,
            assert "trusted must be yes, no or empty" in bad  # session 31): named, and the
            assert mine not in bad and theirs not in bad  # events it did not filter not shown
