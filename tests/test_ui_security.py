"""The memory browser's guards, over HTTP without a browser: Host, token, origin, CSRF, escaping,
and `skillbank ui` as a real process (port, token when not on loopback, clear errors)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time

import httpx
import pytest

from test_ui_support import seed

BASE = "http://127.0.0.1:8766"
SAME = {"origin": BASE}


@pytest.fixture
def seeded(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    bank = Skillbank.open(tmp_path / "root", skill_roots=[tmp_path / "skills"],
                          embedding_function=HashEmbedding(), sync=False)
    ids = seed(bank, tmp_path / "skills")
    yield bank, ids
    bank.close()


def client(bank, **guard):
    from starlette.testclient import TestClient

    from skillbank.ui import Guard, create_app

    app = create_app(bank, Guard(**guard))
    return TestClient(app, base_url=BASE), app.state.guard


def test_every_page_renders_with_strict_headers(seeded):
    bank, ids = seeded
    c, _ = client(bank)
    for url in ("/skills", "/skills?q=pdf+form", "/skills/pdf-forms", "/guidelines",
                f"/guidelines/{ids['pending']}", "/guidelines?status=all", "/experiences",
                f"/experiences/{ids['failed']}", "/experiences?q=table&outcome=failure",
                "/context", "/stats"):
        response = c.get(url)
        assert response.status_code == 200, url
        assert "script-src 'self'" in response.headers["content-security-policy"]
        assert response.headers["x-frame-options"] == "DENY"
        assert not re.search(r"<script>(?!\s*$)|https?://(?!127\.0\.0\.1)", response.text
                             .replace('http://www.w3.org/2000/svg', '')), url


def test_skill_bodies_are_escaped_and_links_are_safe(tmp_path):
    from skillbank.ui.render import markdown

    html = str(markdown("<img src=x onerror=alert(1)> [x](javascript:alert(1)) **ok**"))
    assert "<img" not in html and "&lt;img" in html
    assert 'href="javascript:' not in html
    assert "<strong>ok</strong>" in html


def test_guidelines_filter_by_status_topic_and_namespace(seeded):
    bank, ids = seeded
    other = bank.guidelines.add("Cite the source of every figure.", topic="writing",
                                namespace="research").guideline_id
    c, _ = client(bank)

    def shown(query: str) -> set[str]:
        html = c.get(f"/guidelines?{query}").text
        topics = html.split('<form class="filters"')[1]  # the rules below the review queue
        return set(re.findall(r'class="rule" data-id="([^"]+)"', topics))

    assert other in shown("") and ids["new_rule"] in shown("")
    assert shown("namespace=research") == {other}
    assert ids["new_rule"] not in shown("namespace=research")
    assert shown("status=superseded") == {ids["old_rule"]}
    assert other not in shown("topic=python")
    assert ids["pending"] in shown("status=pending")


def test_memory_text_is_escaped_on_every_page(seeded):
    bank, _ = seeded
    entry = bank.guidelines.add("Never call <script>alert(1)</script> eval on input.",
                                topic="security")
    eid = bank.experiences.record(task="Check <img src=x onerror=alert(2)> handling",
                                  outcome="failure", feedback="<script>alert(3)</script>")
    c, _ = client(bank)
    for url in ("/guidelines", f"/guidelines/{entry.guideline_id}", "/experiences",
                f"/experiences/{eid}"):
        html = c.get(url).text
        assert "<script>alert" not in html and "<img src=x" not in html, url
        assert "&lt;script&gt;" in html or "&lt;img" in html, url


def test_a_records_page_shows_what_the_agent_ran_its_score_and_tags(seeded):
    """The page hid each step's `action_input` (the command the agent ran), the score and the
    tags (hunt, session 17); the input is escaped like every memory text."""
    bank, _ = seeded
    eid = bank.experiences.record(
        task="Roll out the web tier", outcome="failure", score=0.25, tags=["deploy", "k8s"],
        steps=[{"action": "shell", "action_input": {"cmd": "kubectl apply -f prod.yaml > log"},
                "observation": "error: forbidden"},
               {"action": "note", "action_input": "<script>alert(4)</script>"}])
    c, _ = client(bank)
    html = c.get(f"/experiences/{eid}").text
    assert "kubectl apply -f prod.yaml &gt; log" in html
    assert "&lt;script&gt;alert(4)" in html and "<script>alert(4)" not in html
    assert "0.25" in html and "deploy, k8s" in html


def test_a_skill_whose_name_has_a_slash_or_dots_opens_from_its_link(tmp_path):
    """A read-only root served `name: team/deploy` (and `../dotty`): listed, but the links were
    a bare "Not Found" and its review form unreachable (hunt, session 17)."""
    import re

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    shared = tmp_path / "shared"
    for folder, name in (("deploy", "team/deploy"), ("dotty", "../dotty")):
        (shared / folder).mkdir(parents=True)
        (shared / folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Deploy the service the team way.\n---\n# Steps\n")
        (shared / folder / "notes.md").write_text("Ask in #deploys first.\n")
    with Skillbank.open(tmp_path / "root", skill_roots=[shared], embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        assert {"team/deploy", "../dotty"} <= set(bank.skills.names())
        c, _ = client(bank)
        listing = c.get("/skills").text
        links = re.findall(r'href="(/skills/[^"]+)" class="name"', listing)
        # one path segment each, `/` encoded (hunt-browser #2, session 31: tests/test_ui_skill_review.py)
        assert sorted(links) == ["/skills/..%2Fdotty", "/skills/team%2Fdeploy"]
        for link, name in zip(sorted(links), ("../dotty", "team/deploy")):
            page = c.get(link)
            assert page.status_code == 200 and name in page.text, link
            resource = re.search(r'href="(/skills/[^"]+/files/[^"]+)"', page.text).group(1)
            assert "Ask in #deploys" in c.get(resource).text, resource


def test_writes_need_the_csrf_token_and_our_origin(seeded):
    bank, ids = seeded
    c, guard = client(bank)
    gid = ids["pending"]
    url = f"/guidelines/{gid}/approve"
    assert c.post(url, data={"csrf": "forged"}, headers=SAME).status_code == 403
    assert c.post(url, data={}, headers=SAME).status_code == 403
    assert c.post(url, data={"csrf": guard.csrf},
                  headers={"origin": "http://evil.example"}).status_code == 403
    assert c.post(url, data={"csrf": guard.csrf}).status_code == 403  # no Origin, no Referer
    assert c.post(url, data={"csrf": guard.csrf},
                  headers={"referer": "http://evil.example/x"}).status_code == 403
    assert bank.guidelines.get(gid).status == "pending"
    assert c.get(url).status_code == 405  # a link can never write
    assert c.put(url, data={"csrf": guard.csrf}, headers=SAME).status_code == 405
    done = c.post(url, data={"csrf": guard.csrf, "next": "//evil.example/"}, headers=SAME,
                  follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"].startswith("/guidelines?")
    assert bank.guidelines.get(gid).status == "active"
    shown = c.get(done.headers["location"]).text
    assert f"Approved {gid}; it is now active." in shown
    assert "Approved" not in c.get(done.headers["location"]).text  # shown once
    assert "Run curl" not in c.get("/skills?msg=Run+curl&done=Run+curl").text  # no injection
    by_referer = c.post(f"/guidelines/{gid}/retire", data={"csrf": guard.csrf},
                        headers={"referer": f"{BASE}/guidelines"}, follow_redirects=False)
    assert by_referer.status_code == 303 and bank.guidelines.get(gid).status == "retired"


def test_dns_rebinding_is_refused(seeded):
    bank, _ = seeded
    c, _ = client(bank)
    assert c.get("/skills", headers={"host": "attacker.example:8766"}).status_code == 421
    assert c.get("/skills", headers={"host": "localhost:8766"}).status_code == 200


def test_a_token_guards_every_page_and_becomes_a_cookie(seeded):
    bank, _ = seeded
    token = "t" * 24
    c, _ = client(bank, host="0.0.0.0", token=token)
    assert c.get("/skills").status_code == 401
    assert c.get("/skills?token=wrong").status_code == 401
    first = c.get(f"/skills?q=pdf&token={token}", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/skills?q=pdf"
    assert "httponly" in first.headers["set-cookie"].lower()
    assert "samesite=strict" in first.headers["set-cookie"].lower()
    assert c.get("/skills?q=pdf").status_code == 200  # the cookie now
    fresh, _ = client(bank, host="0.0.0.0", token=token)
    assert fresh.get("/stats", headers={"authorization": f"Bearer {token}"}).status_code == 200


def test_bad_input_is_a_clear_message_and_nothing_changes(seeded):
    bank, ids = seeded
    c, guard = client(bank)
    missing = c.get("/skills/no-such-skill")
    assert missing.status_code == 404 and "no skill named" in missing.text
    assert c.get("/guidelines/gl-000000000000").status_code == 404
    assert c.get("/skills/pdf-forms/files/scripts/fields.py").status_code == 200
    outside = c.get("/skills/pdf-forms/files/..%2Fslide-deck%2FSKILL.md")  # another folder
    assert outside.status_code == 400 and "meeting notes" not in outside.text
    bad = c.post("/context", data={"csrf": guard.csrf, "task": "x", "budget": "lots"},
                 headers=SAME)
    assert bad.status_code == 400 and "whole number of tokens" in bad.text
    dates = c.get("/experiences?since=yesterday")
    assert dates.status_code == 400 and "since must be a date" in dates.text  # hunt-browser #4
    rate = c.post("/rate", data={"csrf": guard.csrf, "id": "nope", "helpful": "1"},
                  headers=SAME)
    assert rate.status_code == 400 and "unknown id" in rate.text
    assert c.post(f"/guidelines/{ids['pending']}/explode", data={"csrf": guard.csrf},
                  headers=SAME).status_code == 400
    assert bank.guidelines.get(ids["pending"]).status == "pending"


def test_context_preview_is_the_facade_block(seeded):
    bank, _ = seeded
    c, guard = client(bank)
    task = "Write a migration that adds a column to the users table"
    page = c.post("/context", data={"csrf": guard.csrf, "task": task, "budget": "250"},
                  headers=SAME)
    tokens = int(re.search(r'id="ctx-tokens">(\d+)<', page.text).group(1))
    expected = bank.context_for(task, budget_tokens=250)
    assert tokens == expected.tokens and 0 < tokens <= 250
    assert all(i in page.text for i in expected.ids)


# ------------------------------------------------------------------- `skillbank ui` as a process


def _start(args, env, tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "from skillbank.cli import main; main()",
                             *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = ""
    deadline = time.monotonic() + 120  # generous bound for a loaded machine
    while time.monotonic() < deadline and proc.poll() is None:
        line = proc.stdout.readline()
        if "http://" in line:
            break
    return proc, line


@pytest.fixture
def ui_env(cli_root):
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.mark.slow
def test_cli_serves_loopback_without_a_token(ui_env, tmp_path):
    proc, line = _start(["--no-bundled", "ui", "--port", "0", "--no-browser"], ui_env,
                        tmp_path)
    try:
        url = re.search(r"(http://127\.0\.0\.1:\d+/)\s", line).group(1)
        response = httpx.get(url + "skills", timeout=30)
        assert response.status_code == 200 and "Skills" in response.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_cli_on_all_interfaces_makes_up_a_token(ui_env, tmp_path):
    proc, line = _start(["--no-bundled", "ui", "--host", "0.0.0.0", "--port", "0",
                         "--no-browser"], ui_env, tmp_path)
    try:
        match = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", line)
        assert match, line
        port, token = match.groups()
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(base + "/skills", timeout=30).status_code == 401
        ok = httpx.get(base + "/skills", headers={"authorization": f"Bearer {token}"},
                       timeout=30)
        assert ok.status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_cli_busy_port_is_a_clear_error(cli_root):
    from typer.testing import CliRunner

    from skillbank.cli import app

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["--no-bundled", "ui", "--port", str(port),
                                          "--no-browser"])
    assert result.exit_code == 1
    assert "cannot listen on 127.0.0.1" in result.output and "--port" in result.output


def test_cli_refuses_a_short_token(cli_root):
    from typer.testing import CliRunner

    from skillbank.cli import app

    result = CliRunner().invoke(app, ["ui", "--token", "short", "--no-browser"])
    assert result.exit_code == 2 and "at least 16 characters" in result.output


def test_every_page_and_a_write_work_on_a_client_bank(tmp_path):
    """The page uses only the public API, so a client bank (another process's root, issue #10;
    here the second open of a root this process owns) serves it the same."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    root, skills = tmp_path / "root", tmp_path / "skills"
    owner = Skillbank.open(root, skill_roots=[skills], embedding_function=HashEmbedding(),
                           sync=False)
    try:
        ids = seed(owner, skills)
        remote = Skillbank.open(root, skill_roots=[skills], embedding_function=HashEmbedding(),
                                sync=False)
        if not getattr(remote, "is_remote", False):
            remote.close()
            pytest.skip("this skillbank has no client banks (issue #10) yet")
        try:
            c, guard = client(remote)
            for url in ("/skills", "/skills?q=pdf+form", "/skills/pdf-forms", "/guidelines",
                        f"/guidelines/{ids['new_rule']}", "/experiences",
                        "/experiences?outcome=failure", f"/experiences/{ids['failed']}",
                        "/context", "/stats"):
                assert c.get(url).status_code == 200, url
            preview = c.post("/context", data={"csrf": guard.csrf, "task": "migrate a table",
                                               "budget": "400"}, headers=SAME)
            assert preview.status_code == 200 and "ctx-tokens" in preview.text
            done = c.post(f"/guidelines/{ids['pending']}/approve", data={"csrf": guard.csrf},
                          headers=SAME, follow_redirects=False)
            assert done.status_code == 303
            assert owner.guidelines.get(ids["pending"]).status == "active"
        finally:
            remote.close()
    finally:
        owner.close()


def test_stats_of_a_large_memory_are_drawn_in_the_background(seeded):
    bank, _ = seeded
    c, _ = client(bank)
    cache = c.app.state.stats_cache
    cache.sync_limit = 0  # treat the seeded memory as large
    first = c.get("/stats")
    assert first.status_code == 200 and 'id="stats-drawing"' in first.text
    assert '<meta http-equiv="refresh"' in first.text
    assert cache.wait(timeout=120)  # a bound for a loaded machine, not a timing assertion
    done = c.get("/stats")
    assert done.text.count('class="chart"') == 3 and "refresh" not in done.text
    bank.experiences.record(task="One more deploy", outcome="success")  # memory changed
    stale = c.get("/stats")
    assert 'id="stats-updating"' in stale.text and stale.text.count('class="chart"') == 3
    assert cache.wait(timeout=120)
    assert 'id="stats-updating"' not in c.get("/stats").text


def test_an_unexpected_failure_is_a_page_not_a_stack_trace(seeded, monkeypatch):
    from starlette.testclient import TestClient

    from skillbank.ui import create_app

    bank, _ = seeded

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(bank.skills, "list", broken)  # fault injection into a real bank
    c = TestClient(create_app(bank), base_url=BASE, raise_server_exceptions=False)
    response = c.get("/skills")
    assert response.status_code == 500
    assert "Unexpected error: disk on fire (RuntimeError)" in response.text
    assert "Traceback" not in response.text
    # Answered outside the guard layer, it still carries the security headers.
    assert response.headers["x-frame-options"] == "DENY"
    assert "content-security-policy" in response.headers


def test_a_context_link_fills_the_form_in_and_counts_nothing(seeded):
    """(#27) `/context?task=…` showed an empty form. It fills the form in; the preview stays a
    POST (it counts a recall, which a link must not do)."""
    import html

    bank, _ = seeded
    c, _guard = client(bank)
    task = "Write a migration that adds a column to the users table"
    before = bank.stats()
    page = c.get("/context", params={"task": task, "budget": "300"})
    assert page.status_code == 200
    assert f'value="{html.escape(task, quote=True)}"' in page.text and 'value="300"' in page.text
    assert 'id="ctx-prefilled"' in page.text and 'id="ctx-text"' not in page.text
    assert bank.stats()["experiences"] == before["experiences"]


def test_non_ascii_secrets_and_overflowing_spans_are_refusals_not_500s(seeded):
    """`hmac.compare_digest` raises TypeError on a non-ASCII str: `Bearer é` gave anyone who
    reached the port a 500; `/audit?since=99999999d` overflowed."""
    bank, _ = seeded
    token = "t" * 24
    c, _ = client(bank, host="0.0.0.0", token=token)
    assert c.get("/skills", headers={"authorization": "Bearer \u00e9".encode()}).status_code == 401
    assert c.get("/skills?token=%C3%A9").status_code == 401
    c, guard = client(bank)
    refused = c.post("/rate", data={"csrf": "\u00e9", "id": "x", "helpful": "1"}, headers=SAME)
    assert refused.status_code == 403
    span = c.get("/audit?since=99999999d")
    assert span.status_code in (200, 400) and "before year 1" in span.text


def test_a_refused_experience_query_is_echoed_shortened(seeded):
    bank, _ = seeded
    c, _ = client(bank)
    huge = c.get("/experiences", params={"q": "x" * 60_000})
    assert huge.status_code == 400 and len(huge.text) < 30_000


def test_ui_refuses_a_missing_skills_dir_and_remembers_nothing(cli_root, tmp_path):
    from typer.testing import CliRunner

    from skillbank.cli import app

    result = CliRunner().invoke(app, ["ui", "--skills-dir", str(tmp_path / "typo"),
                                      "--no-browser"])
    assert result.exit_code == 2 and "does not exist" in result.output
    toml = cli_root / "skillbank.toml"
    assert not toml.exists() or "typo" not in toml.read_text()


def test_rating_from_a_preview_comes_back_to_it_without_building_it_again(seeded):
    """Each rating landed on an empty form, and building the preview again for the next id
    counted another recall of every experience in it (uses 1 -> 4 for one preview's ids)."""
    bank, _ = seeded
    c, guard = client(bank)
    task = "Migrate the users table to add an email column"
    page = c.post("/context", data={"csrf": guard.csrf, "task": task, "budget": "800"},
                  headers=SAME)
    key = re.search(r'name="preview" value="([^"]+)"', page.text).group(1)
    ids = re.findall(r'name="id" value="([^"]+)"', page.text)
    experience = next(i for i in ids if i.startswith("exp-"))
    uses = bank.experiences.usage.get(experience).uses
    for item in dict.fromkeys(ids):
        back = c.post("/rate", data={"csrf": guard.csrf, "id": item, "helpful": "1",
                                     "preview": key, "next": "/context"}, headers=SAME)
        assert back.status_code == 200 and f"<code>{item}</code>" in back.text
        assert 'id="ctx-text"' in back.text  # the same block, shown again
    assert "rated: helped" in back.text
    assert bank.experiences.usage.get(experience).uses == uses  # no recall counted again


def test_a_kept_preview_is_dropped_when_memory_is_forgotten(seeded):
    """Forget means gone: a kept preview showed a forgotten experience again (review)."""
    bank, ids = seeded
    c, guard = client(bank)
    page = c.post("/context", data={"csrf": guard.csrf, "task": "Migrate the users table to "
                                    "add an email column", "budget": "800"}, headers=SAME)
    key = re.search(r'name="preview" value="([^"]+)"', page.text).group(1)
    assert "Forgot to lock the table" in page.text
    forgot = c.post(f"/experiences/{ids['failed']}/forget", data={"csrf": guard.csrf},
                    headers=SAME)
    assert forgot.status_code == 200
    again = c.get(f"/context?preview={key}")
    assert again.status_code == 200 and "Forgot to lock the table" not in again.text
