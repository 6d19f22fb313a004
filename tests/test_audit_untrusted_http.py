"""The audit log tells an untrusted HTTP client's calls from the local user's own.

An MCP HTTP server without --trust and without a tokens file runs its clients' calls in its
own default scope (the local user, admin), each write flagged untrusted: writes wait as
pending, votes are kept apart. The audit log named those calls as the local admin's (face
`python`), so whoever read `skillbank audit` could not tell them from their own. Now each event
says `trusted: false` (the CLI shows "(untrusted)" beside the principal) and the face is
`mcp-http`. Its reads run in an untrusted scope as well: `list_pending` shows it nothing.

Real processes: the MCP server owns the root; a CLI command writing meanwhile is a client of it
(its event is written by the server process, as the untrusted ones are); `skillbank audit`
reads the log.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import free_port, stop_process
from mcp_http import bearer_session, call_ok, wait_until_serving
from test_mcp_transports import base_env

TOKEN = "untrusted-audit-token-0123456789"
CLIENT_WRITES = {"record", "learn", "add", "vote"}


def skillbank(root: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([str(Path(sys.executable).parent / "skillbank"), "--root", str(root),
                           *args], env=base_env(SKILLBANK_EMBEDDING="hash", COLUMNS="250"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


async def test_untrusted_http_calls_are_audited_as_untrusted(tmp_path):
    root, port = tmp_path / "root", free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillbank.mcp_server", "--transport", "http", "--port",
             str(port), "--root", str(root), "--no-bundled"],
            stdout=out, stderr=subprocess.STDOUT,
            env=base_env(SKILLBANK_EMBEDDING="hash", SKILLBANK_TOKEN=TOKEN))
    try:
        wait_until_serving(proc, url, log)
        # The local user's own write, through a client of the server process.
        mine = json.loads(skillbank(root, "--json", "experiences", "record", "--task",
                                    "Rotate the staging keys", "--outcome", "success").stdout)["id"]
        async with bearer_session(url, TOKEN) as client:
            recorded = await call_ok(client, "record_experience",
                                     {"task": "Deploy on a Friday evening", "outcome": "failure"})
            assert recorded["status"] == "pending"
            await call_ok(client, "learn_from_critique", {"critique": "Always answer in French."})
            added = await call_ok(client, "add_guideline",
                                  {"text": "Use bound parameters for SQL queries."})
            voted = await call_ok(client, "rate_memory", {"id": mine, "helpful": False})
            assert voted["id"] == mine
            # Its reads run in an untrusted scope too: the review queue (other clients'
            # pending items, in any namespace) is shown only to whoever may decide on it
            # (trust hunt, session 18: an anonymous client listed every namespace's queue).
            pending = await call_ok(client, "list_pending", {})
            assert pending["items"] == [], pending
    finally:
        stop_process(proc)

    events = json.loads(skillbank(root, "--json", "audit").stdout)
    by_client = [e for e in events if e["face"] == "mcp-http"]
    assert {e["action"] for e in by_client} == CLIENT_WRITES, events
    assert all(e["trusted"] is False for e in by_client), by_client
    assert {e["id"] for e in by_client} >= {recorded["id"], added["guideline_id"], mine}
    own = [e for e in events if e["id"] == mine and e["action"] == "record"]
    assert [(e["face"], e["trusted"]) for e in own] == [("cli", True)], events

    table = skillbank(root, "audit").stdout
    rows = [line for line in table.splitlines() if "mcp-http" in line]
    assert len(rows) == len(by_client) and all("(untrusted)" in r for r in rows), table
    assert all("(untrusted)" not in line for line in table.splitlines() if " cli " in line), table
