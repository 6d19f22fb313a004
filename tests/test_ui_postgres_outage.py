"""The memory browser during a PostgreSQL outage: 503 and the plain message on every page.

hunt-pg #5, session 28: the store-backed pages answered 409 Conflict (a skillbank error's
default) and /audit a 500 "Unexpected error" with a traceback in the log, while /readyz and the
workers' tool errors name PostgreSQL and what to check. A dependency that does not answer is a
503 (what a monitor expects), with the same message, and nothing "unexpected" is logged.
The cluster is stopped for real under an in-process team bank (the browser's own process owns
a team root: no client of another process serves a team bank).
"""

from __future__ import annotations

import logging
import uuid

import httpx

from team_worker import open_bank


def test_pages_answer_503_naming_postgresql_while_it_is_down(
        tmp_path, chroma_server, own_postgres, caplog):
    from skillbank.ui import Guard, create_app
    from test_ui_support import served

    bank = open_bank(tmp_path / "root", chroma_server, own_postgres.url,
                     "d" + uuid.uuid4().hex[:12])
    try:
        bank.experiences.record(task="Rotate the Quillon keys", outcome="success")
        guard = Guard()
        with served(create_app(bank, guard)) as url:
            headers = {"host": url.split("//")[1]}
            cookies = {}
            if guard.token:
                cookies = dict(httpx.get(f"{url}/audit?token={guard.token}",
                                         follow_redirects=True, timeout=60).cookies)
            for path in ("/experiences", "/guidelines", "/audit"):
                up = httpx.get(f"{url}{path}", cookies=cookies, headers=headers, timeout=60)
                assert up.status_code == 200, (path, up.text[-1000:])
            own_postgres.stop()
            try:
                with caplog.at_level(logging.ERROR):
                    for path in ("/experiences", "/guidelines", "/audit"):
                        down = httpx.get(f"{url}{path}", cookies=cookies, headers=headers,
                                         timeout=120)
                        assert down.status_code == 503, (path, down.status_code,
                                                         down.text[-1000:])
                        assert "PostgreSQL at" in down.text, (path, down.text[-1000:])
                        assert "check that PostgreSQL is running" in down.text
                        assert "Unexpected error" not in down.text
                assert "Traceback" not in caplog.text
            finally:
                own_postgres.start()
    finally:
        bank.close()
