"""Team mode: a NUL in an Audit filter is a 400 naming the filter, not a 500.

hunt-ui #6 (session 37): `/audit?principal=%00` and `/audit?id=%00x` on a team root reached
PostgreSQL, which refused the NUL: "Unexpected error … (DataError)", a 500 with a psycopg
traceback in the log (the same requests answered 200 on a file log). docs/ui.md: a bad filter
is a 400 that names it.
"""

from __future__ import annotations

import html
import logging
import uuid

import httpx

from team_worker import open_bank


def test_a_nul_in_an_audit_filter_is_a_named_400_on_postgresql(
        tmp_path, chroma_server, postgres, caplog):
    from skillbank.ui import Guard, create_app
    from test_ui_support import served

    bank = open_bank(tmp_path / "root", chroma_server, postgres.url,
                     "d" + uuid.uuid4().hex[:12])
    try:
        eid = bank.experiences.record(task="Rotate the Quillon keys", outcome="success")
        with served(create_app(bank, Guard())) as url:  # loopback: no token
            headers = {"host": url.split("//")[1]}
            with caplog.at_level(logging.ERROR):
                for query, named in (("principal=%00", "principal must not contain control"),
                                     ("id=%00x", "id must not contain control")):
                    page = httpx.get(f"{url}/audit?{query}", headers=headers,
                                     timeout=60)
                    assert page.status_code == 400, (query, page.status_code, page.text[-1500:])
                    assert named in html.unescape(page.text)
                    assert "Unexpected error" not in page.text and eid not in page.text
            assert "Traceback" not in caplog.text
            ok = httpx.get(f"{url}/audit?id={eid}", headers=headers, timeout=60)
            assert ok.status_code == 200 and eid in ok.text
    finally:
        bank.close()
